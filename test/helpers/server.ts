import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterEach, beforeEach, expect } from 'vitest';
import { buildApp, type BuiltApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { initDataDir } from '../../src/server/ops/init.js';
import { copyTemplate, templateFor } from './template.js';

export const ADMIN_EMAIL = 'admin@example.test';
export const ADMIN_PASSWORD = 'Admin-Passw0rd!';

export interface TestApp extends BuiltApp {
  dataDir: string;
  announced: string[];
  close(): Promise<void>;
  /** inject with a JSON body and an optional bearer token; returns status, headers and parsed JSON. */
  call(method: InjectOptions['method'], url: string, options?: { token?: string; apiKey?: string; body?: unknown; headers?: Record<string, string>; remoteAddress?: string }): Promise<{ status: number; headers: Record<string, unknown>; body: any; text: string }>;
}

/** A first start as `svc server init` does it, for a template data dir (test/helpers/template.ts). */
async function initTemplate(dir: string, env: Record<string, string>): Promise<void> {
  await initDataDir(loadConfig({ ...env, SVC_DATA_DIR: dir, SVC_LOG_LEVEL: 'silent' }), () => {});
}

/** A fresh app on a fresh SQLite file in its own temp dir (Fastify inject; no port). The data dir starts as a
 * copy of the run's first-started template for the same bootstrap settings, so nothing is migrated per test. */
export async function createTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  const settings = { SVC_DATA_DIR: dataDir, SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'silent', ...env };
  const template = settings.SVC_DATA_DIR === dataDir ? await templateFor(settings, 'app', initTemplate) : undefined;
  if (template) copyTemplate(template, dataDir);
  const config = loadConfig(settings);
  const announced: string[] = [];
  const built = await buildApp(config, { logger: false, announce: (m) => announced.push(m) });
  const app: FastifyInstance = built.app;
  return {
    ...built,
    dataDir,
    announced,
    async close() {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    async call(method, url, options = {}) {
      const headers: Record<string, string> = { ...(options.headers ?? {}) };
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.apiKey) headers['x-api-key'] = options.apiKey;
      const res = await app.inject({
        method,
        url,
        headers,
        ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}),
        ...(options.body !== undefined ? { payload: options.body as object } : {}),
      });
      let body: unknown;
      try {
        body = res.body ? JSON.parse(res.body) : undefined;
      } catch {
        body = undefined;
      }
      return { status: res.statusCode, headers: res.headers, body, text: res.body };
    },
  };
}

/** Signs in with a password (no MFA) and returns the access token. */
export async function loginAs(t: TestApp, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<string> {
  const res = await t.call('POST', '/api/v1/auth/login', { body: { email, password } });
  if (res.status !== 200 || !res.body.tokens) throw new Error(`login failed: ${res.status} ${res.text}`);
  return res.body.tokens.accessToken as string;
}

export type Answer = Awaited<ReturnType<TestApp['call']>>;

/**
 * Calls through the app of the test running now that keep every answer's text, so that the test can prove after
 * it ran that no secret left the server: `expectNoLeak('keyHash', storedHashes)` checks every answer, then forgets
 * them. `as` is `call` on an `/api/v1` path with a bearer token.
 */
export function recordedCalls(app: () => TestApp) {
  let seen: string[] = [];
  const call = async (...args: Parameters<TestApp['call']>): Promise<Answer> => {
    const res = await app().call(...args);
    seen.push(res.text);
    return res;
  };
  const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers?: Record<string, string>) =>
    call(method, `/api/v1${url}`, { token, ...(body !== undefined ? { body } : {}), ...(headers ? { headers } : {}) });
  const expectNoLeak = (field: string, hashes: readonly string[]) => {
    const answers = seen;
    seen = [];
    for (const text of answers) {
      expect(text).not.toContain(field);
      for (const hash of hashes) expect(text).not.toContain(hash);
    }
  };
  return { call, as, expectNoLeak };
}

/** Kept here too for the tests that import it from this file. */
export { totp, totpFor } from './totp.js';

/**
 * For tests that each start their own app (with their own settings): the function returned is createTestApp, and
 * every app it made is closed after the test.
 */
export function useTestApp(): (env?: Record<string, string>) => Promise<TestApp> {
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  return async (env) => {
    const app = await createTestApp(env);
    apps.push(app);
    return app;
  };
}

/** An answer with its JSON body and the cookies it set. */
export interface CookieReply {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  cookies: Map<string, string>;
}

/** inject from a client address (127.0.0.1 unless `ip`) with cookies, a bearer token and a JSON body (an object,
 * or text sent as it is); answers the parsed JSON body and the cookies set. */
export async function sendWithCookies(
  t: TestApp,
  method: 'GET' | 'POST',
  url: string,
  options: { ip?: string; body?: object | string; token?: string; cookies?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<CookieReply> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await t.app.inject({
    method,
    url,
    headers,
    remoteAddress: options.ip ?? '127.0.0.1',
    ...(options.cookies ? { cookies: options.cookies } : {}),
    ...(options.body !== undefined ? { payload: options.body } : {}),
  });
  const cookies = new Map(res.cookies.map((c) => [c.name, c.value]));
  return { status: res.statusCode, headers: res.headers, body: res.body ? JSON.parse(res.body) : undefined, cookies };
}

/** Before each test a fresh app and the first-start administrator's token (a password sign-in), handed to `ready`;
 * after it, the app is closed. */
export function useAdminApp(ready: (t: TestApp, token: string) => void): void {
  const start = useTestApp();
  beforeEach(async () => {
    const app = await start();
    ready(app, await loginAs(app));
  });
}
