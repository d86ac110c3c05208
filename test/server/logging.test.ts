import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { InjectOptions } from 'fastify';
import { buildApp, type BuiltApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { loggerOptions, redactUrl } from '../../src/server/logging.js';
import { startServer } from '../../src/server/server.js';

const SECRETS = ['SECRET1', 'SECRET2', 'SECRET3', 'SECRET4', 'SECRET5', 'SECRET6', 'SECRET7', 'SECRET8', 'SECRET9', 'SECRET10', 'SECRET11'];

/** A pino destination that keeps every line in memory. */
function memoryStream(): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('request logging never carries credentials', () => {
  let built: BuiltApp | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await built?.app.close();
    built = undefined;
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['info', 'trace'])(
    'at level %s: no Authorization, X-API-Key, cookie, password, body or secret query value',
    async (level) => {
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-logging-'));
      const config = loadConfig({
        SVC_DATA_DIR: dataDir,
        SVC_ADMIN_EMAIL: 'admin@example.test',
        SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
      });
      const log = memoryStream();
      const options = loggerOptions(level);
      expect(typeof options).toBe('object');
      built = await buildApp(config, {
        logger: { ...(options as object), level, stream: log.stream },
        announce: () => {},
      });
      const { app } = built;

      const login = { method: 'POST', url: '/api/v1/auth/login' } as const;
      const requests: InjectOptions[] = [
        { method: 'GET', url: '/api/v1/users/me', headers: { authorization: 'Bearer SECRET1' } },
        { method: 'GET', url: '/api/v1/orgs/partners', headers: { 'x-api-key': 'svc_SECRET2' } },
        { method: 'POST', url: '/api/v1/auth/refresh', headers: { cookie: 'svc_refresh_token=SECRET3' } },
        { ...login, payload: { email: 'admin@example.test', password: 'SECRET4' } },
        { method: 'GET', url: '/health?token=SECRET5&x=1' },
        // A body that fails validation, and one that is not JSON at all: error paths log too.
        { ...login, payload: { email: 'not-an-email', password: 'SECRET6' } },
        { ...login, headers: { 'content-type': 'application/json' }, payload: '{"password":"SECRET7",' },
        // A successful login: the response carries tokens; the log must not.
        { ...login, url: '/api/v1/auth/login?refresh_token=SECRET8', payload: { email: 'admin@example.test', password: 'Admin-Passw0rd!' } },
        // The pages behind invitation and reset links: the token in the query, and in a form body.
        { method: 'GET', url: '/accept-invite?token=SECRET9' },
        {
          method: 'POST',
          url: '/reset-password',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'token=SECRET10&password=SECRET11&confirm=SECRET11',
        },
      ];
      const responses = [];
      for (const request of requests) responses.push(await app.inject(request));
      expect(responses.map((r) => r.statusCode)).toEqual([401, 401, 401, 401, 200, 400, 400, 200, 400, 400]);
      const tokens = JSON.parse(responses[7]?.body ?? '{}').tokens as { accessToken: string; refreshToken?: string };

      const text = log.text();
      // The requests were logged: the test would prove nothing if the log were empty.
      expect(text).toContain('/api/v1/auth/login');
      expect(text).toContain('/health?token=');
      expect(text).toContain('/accept-invite?token=');
      expect(text).toContain('/reset-password');
      for (const secret of [
        ...SECRETS,
        'Admin-Passw0rd!',
        tokens.accessToken,
        ...(tokens.refreshToken ? [tokens.refreshToken] : []),
      ]) {
        expect(text, `${secret} appears in the log`).not.toContain(secret);
      }
      expect(text).not.toMatch(/authorization|x-api-key|"cookie"|set-cookie/i);
    },
  );

  it('redacts secret-looking query values and keeps the others', () => {
    expect(redactUrl('/a?token=x&page=2&api_key=y&code=z')).toBe(
      '/a?token=%5Bredacted%5D&page=2&api_key=%5Bredacted%5D&code=%5Bredacted%5D',
    );
    expect(redactUrl('/a')).toBe('/a');
  });

  it('issue 9: `svc server start` logs to <data dir>/server.log (0600) by default, with no credential in it', async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-logging-'));
    const config = loadConfig({
      SVC_DATA_DIR: dataDir,
      PORT: '0',
      SVC_ADMIN_EMAIL: 'admin@example.test',
      SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
      SVC_LOG_LEVEL: 'trace',
    });
    const announced: string[] = [];
    const running = await startServer(config, { handleSignals: false, announce: (m) => announced.push(m) });
    let accessToken: string;
    try {
      expect(running.logFile).toBe(path.join(dataDir, 'server.log'));
      const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
        fetch(`${running.address}${url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
      await fetch(`${running.address}/api/v1/users/me`, { headers: { authorization: 'Bearer SECRET1' } });
      await post('/api/v1/auth/login', { email: 'admin@example.test', password: 'SECRET4' });
      await fetch(`${running.address}/health?token=SECRET5`);
      const ok = await post('/api/v1/auth/login?refresh_token=SECRET8', { email: 'admin@example.test', password: 'Admin-Passw0rd!' });
      accessToken = ((await ok.json()) as { tokens: { accessToken: string } }).tokens.accessToken;
    } finally {
      await running.close();
    }
    const file = path.join(dataDir, 'server.log');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('/api/v1/auth/login');
    for (const secret of ['SECRET1', 'SECRET4', 'SECRET5', 'SECRET8', 'Admin-Passw0rd!', accessToken])
      expect(text, `${secret} appears in the log`).not.toContain(secret);
    // The person's messages are not in the log: they went to `announce` (stderr).
    expect(text).not.toContain('svc: created');
  });
});
