import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { execa, type ResultPromise } from 'execa';
import type { TestApp } from './server.js';
import { copyTemplate, templateFor } from './template.js';

/**
 * End-to-end plumbing: the built CLI (`bin/run.js`, so `dist/` must be built: `npm test` does it) run with
 * execa against a real `svc server start` process on a random loopback port.
 *
 * `SVC_E2E_ROOT` points the suite at another copy of the package (a private build while others rebuild
 * `dist/`); by default it is this repository.
 */
export const ROOT = path.resolve(process.env.SVC_E2E_ROOT ?? path.join(import.meta.dirname, '..', '..'));
export const BIN = path.join(ROOT, 'bin', 'run.js');

export const ADMIN = { email: 'admin@e2e.test', password: 'E2e-Admin-Passw0rd!' };

const CLI_TIMEOUT_MS = 20_000;
/** Per test: several CLI processes in a row, on a two-core machine that may be busy. */
export const E2E_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 30_000;

/** The start of an ANSI escape sequence (ESC [). */
export const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);

function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/** What every child gets: a PATH to find node, and nothing else from this process (no SVC_TOKEN leaking in). */
function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
}

export interface E2eServer {
  url: string;
  dataDir: string;
  stop(): Promise<void>;
  /** Stops the server process (SIGTERM, as an operator would) and, once `whileDown` has run, starts a new one on
   * the same data dir, environment and port (so `url` stays valid). */
  restart(whileDown?: () => Promise<void>): Promise<void>;
}

/** A template data dir made by the built CLI's own `svc server init` (test/helpers/template.ts). */
async function initTemplate(dir: string, env: Record<string, string>): Promise<void> {
  const result = await execa('node', [BIN, 'server', 'init'], {
    env: { ...baseEnv(), ...env, SVC_DATA_DIR: dir, SVC_LOG_LEVEL: 'silent' },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: START_TIMEOUT_MS,
  });
  if (result.exitCode !== 0) throw new Error(`svc server init exited ${String(result.exitCode)}:\n${String(result.stderr)}`);
}

/** Starts `svc server start --port 0` with its own data dir and reads the URL from its "listening" line. The
 * data dir starts as a copy of the run's first-started template, so the server migrates nothing. */
export async function startServer(env: Record<string, string> = {}): Promise<E2eServer> {
  const dataDir = tempDir('svc-e2e-data-');
  const home = tempDir('svc-e2e-server-home-');
  const settings: Record<string, string> = {
    SVC_DATA_DIR: dataDir,
    SVC_ADMIN_EMAIL: ADMIN.email,
    SVC_ADMIN_PASSWORD: ADMIN.password,
    SVC_LOG_LEVEL: 'silent',
    // The suite signs in more often than the sign-in throttle allows one person in five minutes.
    SVC_LOGIN_IP_LIMIT: '10000',
    SVC_LOGIN_EMAIL_LIMIT: '10000',
    SVC_LOGIN_LOCKOUT_FAILURES: '10000',
    SVC_MFA_LIMIT: '10000',
    ...env,
  };
  const template = settings.SVC_DATA_DIR === dataDir ? await templateFor(settings, `cli ${ROOT}`, initTemplate) : undefined;
  if (template) copyTemplate(template, dataDir);
  const childEnv = {
    ...baseEnv(),
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    ...settings,
  };
  const spawn = (port: string): ResultPromise =>
    execa('node', [BIN, 'server', 'start', '--port', port, '--host', '127.0.0.1'], { env: childEnv, extendEnv: false, stdin: 'ignore', reject: false, buffer: false });
  let child = spawn('0');
  const url = await listeningUrl(child);
  return {
    url,
    dataDir,
    async restart(whileDown) {
      child.kill('SIGTERM');
      await child;
      await whileDown?.();
      child = spawn(new URL(url).port);
      await listeningUrl(child);
    },
    async stop() {
      child.kill('SIGTERM');
      await child;
      fs.rmSync(dataDir, { recursive: true, force: true });
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Standard input (a stream: written when the test writes it); without it the child gets none (never a
   * terminal, never a hang). */
  input?: string | Readable;
  env?: Record<string, string>;
}

/** A CLI user with its own HOME and XDG dirs: profiles and credentials live only there. */
export interface CliUser {
  home: string;
  configDir: string;
  run(args: readonly string[], options?: RunOptions): Promise<RunResult>;
  /** `run` that fails the test unless the exit code is 0, returning stdout parsed as JSON. */
  json<T = any>(args: readonly string[], options?: RunOptions): Promise<T>;
  cleanup(): void;
}

export function cliUser(defaults: Record<string, string> = {}): CliUser {
  const home = tempDir('svc-e2e-home-');
  const configDir = path.join(home, '.config');
  const env = {
    ...baseEnv(),
    HOME: home,
    XDG_CONFIG_HOME: configDir,
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    CI: '1',
    ...defaults,
  };
  const run = async (args: readonly string[], options: RunOptions = {}): Promise<RunResult> => {
    const result = await execa('node', [BIN, ...args], {
      env: { ...env, ...options.env },
      extendEnv: false,
      reject: false,
      timeout: CLI_TIMEOUT_MS,
      cwd: home,
      ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  };
  return {
    home,
    configDir,
    run,
    async json(args, options) {
      const result = await run([...args, '--output', 'json'], options);
      if (result.exitCode !== 0) throw new Error(`svc ${args.join(' ')} exited ${result.exitCode}:\n${result.stderr}`);
      return JSON.parse(result.stdout);
    },
    cleanup() {
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/** `svc login` as the administrator, password on stdin. */
export async function login(user: CliUser, url: string, credentials = ADMIN, extra: string[] = []): Promise<RunResult> {
  return user.run(['login', '--base-url', url, '--email', credentials.email, '--password-stdin', ...extra], { input: credentials.password });
}

/** Direct HTTP to the server, for seeding many rows fast (no CLI process per row). */
export async function http(url: string, method: string, apiPath: string, options: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${url}/api/v1${apiPath}`, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body };
}

/** The `call` of test/helpers/server.ts over real HTTP to a server process (`url` is the full path, /api/v1
 * included), so the simulated agent of e2e tests talks to a real server. */
export function httpCaller(base: string): Pick<TestApp, 'call'> {
  return {
    async call(method, url, options = {}) {
      const headers: Record<string, string> = {};
      if (options.token) headers.authorization = `Bearer ${options.token}`;
      if (options.body !== undefined) headers['content-type'] = 'application/json';
      const res = await fetch(`${base}${url}`, { method: String(method), headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
      const text = await res.text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      return { status: res.status, headers: Object.fromEntries(res.headers), body, text };
    },
  };
}

export async function adminToken(url: string): Promise<string> {
  const res = await http(url, 'POST', '/auth/login', { body: ADMIN });
  if (res.status !== 200 || !res.body?.tokens) throw new Error(`admin login failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.tokens.accessToken as string;
}

/** Every file below a directory (to prove nothing was written). */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

/** The URL a `svc server start` child prints once it listens; rejects when it exits first or takes too long. */
export function listeningUrl(child: ResultPromise, timeoutMs = START_TIMEOUT_MS): Promise<string> {
  let stderr = '';
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start within ${timeoutMs} ms:\n${stderr}`)), timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = /svc server listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.stdout?.resume();
    void child.then((result) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${String(result.exitCode)}) before listening:\n${stderr}`));
    });
  });
}
