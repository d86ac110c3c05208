#!/usr/bin/env node
// `npm run bench`: start-up and footprint figures of svc, from one run on this machine. A benchmark, not a
// test: it prints what it measured and exits 0 whatever the figures are.
//
//   svc --version              wall time, median of RUNS after WARMUP, as a ratio to `node -e 0` (target ≤ 2.0×)
//   svc orgs list -o json      against a local server (SVC_TOKEN, nothing read from disk)      (target ≤ 3.0×)
//   cold start                 spawn of `svc server start` → first 200 on /health, existing data dir (< 1000 ms)
//   first start                the same on an empty data dir (migrations, keys, admin password hash); reported only
//   idle RSS                   VmRSS of the server after start, a few requests and 2 s idle      (target < 120 MB)
//
// The three commands are run interleaved (one of each per round) so that load changes on the machine hit them
// alike. Environment: BENCH_RUNS (default 15), BENCH_WARMUP (2), BENCH_STARTS (5).
/* global process, console, setTimeout, fetch */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'run.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const ADMIN_EMAIL = 'bench@example.test';
const ADMIN_PASSWORD = 'Bench-Passw0rd!';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-'));
const children = new Set();

function cleanup() {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
}
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round = (n, digits = 1) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : n);

/** An environment with its own HOME and XDG dirs: no profile, no keychain, no credentials file. */
function isolatedEnv(extra = {}) {
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

/** Wall time of one process run to its exit, in ms; throws if it fails. */
function timeRun(command, args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0)
    throw new Error(`${[command, ...args].join(' ')} exited ${result.status}: ${result.stderr.trim().slice(0, 500)}`);
  return { ms, stdout: result.stdout };
}

function freePort() {
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
function get(url) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Spawns `svc server start` and polls /health every 2 ms; resolves at the first 200 with the elapsed ms. */
async function startServer(dataDir) {
  const port = await freePort();
  const env = isolatedEnv({
    SVC_DATA_DIR: dataDir,
    SVC_ADMIN_EMAIL: ADMIN_EMAIL,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_LOG_LEVEL: 'warn',
  });
  const started = process.hrtime.bigint();
  const child = spawn(process.execPath, [BIN, 'server', 'start', '--port', String(port)], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let exited = false;
  child.once('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (exited) throw new Error(`svc server start exited early:\n${stderr}`);
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
      await done;
      children.delete(child);
    },
  };
}

function rssMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** Which of the files under dist/server a command loads (a resolve hook logs them): expected none. */
function serverModulesLoadedBy(args, env) {
  const log = path.join(tmp, `modules-${Math.random().toString(36).slice(2)}.log`);
  const hooks = `
    import fs from 'node:fs';
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      if (result.url.includes('/dist/server/')) fs.appendFileSync(${JSON.stringify(log)}, result.url + '\\n');
      return result;
    }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(register)}`, BIN, ...args], {
    env,
    cwd: ROOT,
    stdio: 'ignore',
  });
  return fs.existsSync(log) ? new Set(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)).size : 0;
}

async function main() {
  const raw = {};
  console.log(
    `svc bench: node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown cpu'}), ${os.platform()} ${os.release()}`,
  );
  console.log(
    `load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}; ${RUNS} runs after ${WARMUP} warm-ups per command, ${STARTS} server starts\n`,
  );

  // First start on an empty data dir (migrations, server keys, scrypt hash of the admin password), then a
  // cold start: a new process on the data dir that start left behind (what every restart costs). Interleaved,
  // so that load changes on the machine hit both alike.
  raw.firstStart = [];
  raw.coldStart = [];
  for (let i = 0; i < STARTS; i++) {
    const dir = path.join(tmp, `data-${i}`);
    const first = await startServer(dir);
    raw.firstStart.push(first.ms);
    await first.stop();
    const cold = await startServer(dir);
    raw.coldStart.push(cold.ms);
    await cold.stop();
  }
  const dataDir = path.join(tmp, 'data-0');

  const server = await startServer(dataDir);
  try {
    const login = await fetch(`${server.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    const body = await login.json();
    const token = body?.tokens?.accessToken;
    if (login.status !== 200 || typeof token !== 'string')
      throw new Error(`login failed: HTTP ${login.status} ${JSON.stringify(body)}`);
    const cliEnv = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: token });

    const listArgs = (() => {
      const probe = spawnSync(process.execPath, [BIN, 'orgs', 'list', '--help'], {
        env: cliEnv,
        cwd: ROOT,
        stdio: 'ignore',
      });
      return probe.status === 0 ? ['orgs', 'list', '-o', 'json'] : ['partners', 'list', '-o', 'json'];
    })();
    const listName = `svc ${listArgs.join(' ')}`;
    const commands = [
      { name: 'node -e 0', args: ['-e', '0'] },
      { name: 'svc --version', args: [BIN, '--version'] },
      { name: listName, args: [BIN, ...listArgs] },
    ];
    const listed = JSON.parse(timeRun(process.execPath, [BIN, ...listArgs], cliEnv).stdout);
    if (!Array.isArray(listed)) throw new Error(`${listName} did not print a JSON array`);
    for (const c of commands) raw[c.name] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (const c of commands) {
        const { ms } = timeRun(process.execPath, c.args, cliEnv);
        if (i >= WARMUP) raw[c.name].push(ms);
      }
    }

    // Idle RSS: after start, a few requests of each kind, and 2 s idle.
    for (let i = 0; i < 5; i++) {
      await get(`${server.url}/health`);
      await get(`${server.url}/health/ready`);
      await fetch(`${server.url}/api/v1/${listArgs[0] === 'orgs' ? 'orgs/organizations' : 'orgs/partners'}`, {
        headers: { authorization: `Bearer ${token}` },
      }).then((r) => r.arrayBuffer());
    }
    await new Promise((r) => setTimeout(r, 2000));
    raw.idleRssMb = [rssMb(server.child.pid)];

    const loaded = {
      'svc --version': serverModulesLoadedBy(['--version'], cliEnv),
      [listName]: serverModulesLoadedBy(listArgs, cliEnv),
    };

    const base = median(raw['node -e 0']);
    const rows = [
      { m: 'node -e 0', v: base, unit: 'ms', ratio: 1, target: '', pass: null },
      {
        m: 'svc --version',
        v: median(raw['svc --version']),
        unit: 'ms',
        ratio: median(raw['svc --version']) / base,
        target: '≤ 2.0× node',
        pass: median(raw['svc --version']) / base <= 2.0,
      },
      {
        m: listName,
        v: median(raw[listName]),
        unit: 'ms',
        ratio: median(raw[listName]) / base,
        target: '≤ 3.0× node',
        pass: median(raw[listName]) / base <= 3.0,
      },
      {
        m: 'server cold start → /health 200',
        v: median(raw.coldStart),
        unit: 'ms',
        ratio: null,
        target: '< 1000 ms',
        pass: median(raw.coldStart) < 1000,
      },
      {
        m: 'server first start (empty data dir)',
        v: median(raw.firstStart),
        unit: 'ms',
        ratio: null,
        target: '(reported)',
        pass: null,
      },
      {
        m: 'server idle RSS',
        v: raw.idleRssMb[0],
        unit: 'MB',
        ratio: null,
        target: '< 120 MB',
        pass: raw.idleRssMb[0] < 120,
      },
    ];
    const table = [['measurement', 'median', 'ratio', 'target', 'result']].concat(
      rows.map((r) => [
        r.m,
        `${round(r.v)} ${r.unit}`,
        r.ratio === null ? '' : `${round(r.ratio, 2)}×`,
        r.target,
        r.pass === null ? '' : r.pass ? 'pass' : 'FAIL',
      ]),
    );
    const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
    for (const row of table)
      console.log(
        row
          .map((cell, i) => cell.padEnd(widths[i]))
          .join('  ')
          .trimEnd(),
      );

    console.log('\nserver modules loaded at start (expected 0):');
    for (const [name, n] of Object.entries(loaded)) console.log(`  ${name}: ${n}`);
    console.log('\nraw (ms, in run order; RSS in MB):');
    for (const [name, values] of Object.entries(raw))
      console.log(`  ${name}: ${values.map((v) => round(v)).join(', ')}`);
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
});
