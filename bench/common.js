// What the benchmark scripts share: a temp dir and the child processes they start (both cleaned up at exit),
// an isolated environment, `svc server start` on a free loopback port and JSON calls to it (figures and tables:
// report.js).
/* global process, console, setTimeout, clearTimeout, fetch */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.join(ROOT, 'bin', 'run.js');
/** The node flags of bin/run.js's shebang (`#!/usr/bin/env -S node FLAGS`): what `./bin/run.js` runs with. */
export const NODE_FLAGS = (/\bnode\b(.*)$/.exec(fs.readFileSync(BIN, 'utf8').split('\n', 1)[0] ?? '')?.[1] ?? '')
  .trim()
  .split(/\s+/)
  .filter(Boolean);

/** The arguments of node that run `svc ARGS` as `./bin/run.js ARGS` does; nodeArgs (e.g. --cpu-prof) first. */
export const svcArgv = (args, nodeArgs = []) => [...nodeArgs, ...NODE_FLAGS, BIN, ...args];

export const ADMIN_EMAIL = 'bench@example.test';
export const ADMIN_PASSWORD = 'Bench-Passw0rd!';

/** This process's temp dir; removed, with every child still running killed, when the process exits (kept, and
 * named on stderr, with BENCH_KEEP_TMP=1: a seeded database to look into). */
export const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));

/** A module of dist/server (`npm run build` first), for the benches that run the app in their own process. */
export async function distServer(module) {
  const file = path.join(ROOT, 'dist', 'server', module);
  if (!fs.existsSync(file)) throw new Error(`${path.relative(ROOT, file)} is missing: run \`npm run build\` first`);
  return import(pathToFileURL(file).href);
}

/** The app of dist/ built in this process over a fresh data dir `name` under tmp (the settings bench/routes.js
 * seeds with: the seed's webhook points at loopback), listening on 127.0.0.1: `{ built, url }`. */
export async function startInProcessApp(name) {
  const { buildApp } = await distServer('app.js');
  const { loadConfig } = await distServer('config.js');
  const { initDataDir } = await distServer('ops/init.js');
  const env = {
    SVC_DATA_DIR: path.join(tmp, name),
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_LOG_LEVEL: 'silent',
    SVC_ACCESS_TOKEN_TTL_SECONDS: '7200',
    SVC_OUTBOUND_ALLOW: '127.0.0.1/32',
  };
  await initDataDir(loadConfig(env), () => {});
  const built = await buildApp(loadConfig(env), { logger: false, announce: () => {} });
  const url = await built.app.listen({ host: '127.0.0.1', port: 0 });
  return { built, url };
}
export const children = new Set();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  if (process.env.BENCH_KEEP_TMP) console.error(`bench: kept ${tmp}`);
  else fs.rmSync(tmp, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

/** An environment with its own HOME and XDG dirs: no profile, no keychain, no credentials file. */
export function isolatedEnv(extra = {}) {
  const home = path.join(tmp, 'home');
  fs.mkdirSync(home, { recursive: true });
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    CI: '1',
    NO_COLOR: '1',
    ...extra,
  };
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** GET on a fresh connection; resolves with the status, or rejects (e.g. ECONNREFUSED). */
export function get(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/**
 * Spawns `svc server start` on 127.0.0.1 and polls /health every 2 ms; resolves at the first 200 with the
 * elapsed ms. The log level is warn unless given; `env` adds to the server's environment; nodeArgs go to node
 * before the script (e.g. --cpu-prof).
 */
export async function startServer(dataDir, { logLevel = 'warn', logFile, nodeArgs = [], env = {} } = {}) {
  const port = await freePort();
  const serverEnv = isolatedEnv({
    SVC_DATA_DIR: dataDir,
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_LOG_LEVEL: logLevel,
    ...env,
  });
  // The server logs to stderr: into the file when one is given (a file, as `svc server start 2>svc.log`
  // would), otherwise into a pipe read here for the error message of a failed start.
  const logFd = logFile ? fs.openSync(logFile, 'a') : undefined;
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, svcArgv(['server', 'start', '--port', String(port)], nodeArgs), {
    env: serverEnv,
    cwd: ROOT,
    stdio: ['ignore', 'ignore', logFd ?? 'pipe'],
  });
  if (logFd !== undefined) fs.closeSync(logFd);
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  let exited = false;
  child.once('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (exited)
      throw new Error(`svc server start exited early:\n${logFile ? fs.readFileSync(logFile, 'utf8') : stderr}`);
    const status = await get(`${url}/health`).catch(() => 0);
    if (status === 200) break;
    if (Number(process.hrtime.bigint() - started) / 1e6 > 30_000)
      throw new Error(`no 200 on /health within 30 s:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return {
    ms,
    url,
    child,
    async stop() {
      if (exited) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(killer);
      children.delete(child);
    },
  };
}

/** JSON request against the bench's own server; throws unless the status is an expected one. */
export async function api(url, method, pathname, { token, body, expect = [200, 201] } = {}) {
  const res = await fetch(`${url}/api/v1${pathname}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json().catch(() => null);
  if (!expect.includes(res.status))
    throw new Error(`${method} ${pathname}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** An enrollment key of the organization (and site) and one Windows agent enrolled with it, over the API:
 * `{ key, agent }` as the two calls answer them. */
export async function enrollBenchAgent(url, token, { orgId, siteId, hostname = 'ws-bench-01' }) {
  const key = await api(url, 'POST', '/enrollment-keys', { token, body: { orgId, siteId, name: 'bench agents' } });
  const agent = await api(url, 'POST', '/agents/enroll', {
    body: {
      enrollmentKey: key.key,
      hostname,
      osType: 'windows',
      osVersion: '11',
      architecture: 'x86_64',
      agentVersion: '1.0.0',
    },
  });
  return { key, agent };
}

/**
 * One bounded autocannon run in a separate process (bench/load.js), so that the load generator does not share an
 * event loop with the bench; resolves with its JSON result. Bounded by `seconds`, or else by `amount` responses
 * and `maxSeconds`; `headers` and `body` travel in the environment (no secret in the process list). `rotate`, a
 * list of header sets (API keys), is taken in turn request by request on every connection.
 */
export function loadRun(url, { connections, seconds, amount, maxSeconds = 60, headers = {}, method = 'GET', body, rotate }) {
  return new Promise((resolve, reject) => {
    const args = [path.join(ROOT, 'bench', 'load.js'), '--url', url, '--connections', String(connections)];
    if (seconds === undefined) args.push('--amount', String(amount), '--max-seconds', String(maxSeconds));
    else args.push('--seconds', String(seconds));
    const json = body === undefined ? {} : { 'content-type': 'application/json' };
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        BENCH_LOAD_HEADERS: JSON.stringify({ ...headers, ...json }),
        BENCH_LOAD_REQUEST: JSON.stringify({
          method,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          ...(rotate === undefined ? {} : { requests: rotate.map((extra) => ({ headers: extra })) }),
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // A hard stop in case the load process itself hangs (it stops its own run in time).
    const killer = setTimeout(() => child.kill('SIGKILL'), ((seconds ?? maxSeconds) + 15) * 1000);
    child.once('exit', (code) => {
      clearTimeout(killer);
      children.delete(child);
      if (code !== 0) return reject(new Error(`bench/load.js exited ${code}: ${stderr.trim().slice(0, 500)}`));
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`bench/load.js printed no JSON: ${stdout.slice(0, 200)}`));
      }
    });
  });
}
