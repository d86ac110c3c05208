#!/usr/bin/env node
// `npm run bench`: start-up and footprint figures of svc, from one run on this machine. A benchmark, not a
// test: it prints what it measured and exits 0 whatever the figures are.
//
//   svc --version              wall time, median of RUNS after WARMUP, as a ratio to `node -e 0` (target ≤ 2.0×)
//   svc orgs list -o json      against a local server (SVC_TOKEN, nothing read from disk)      (target ≤ 3.0×)
//                              and again as a signed-in user (profile and credentials file); reported only
//   cold start                 spawn of `svc server start` → first 200 on /health, existing data dir (< 1000 ms)
//   first start                the same on an empty data dir (migrations, keys, admin password hash); reported only
//   idle RSS                   VmRSS of the server after start, a few requests and 2 s idle      (target < 120 MB)
//                              and once it has settled (V8's memory reducer; up to 30 s more); reported only
//
// The three commands are run interleaved (one of each per round) so that load changes on the machine hit them
// alike. Environment: BENCH_RUNS (default 15), BENCH_WARMUP (2), BENCH_STARTS (5).
//
// Load (bench/load.js: autocannon in a second process, 127.0.0.1 only, every run bounded by count and time),
// once with SVC_LOG_LEVEL=warn and once with the default info (request log to a file):
//   GET /api/v1/orgs/sites      by X-API-Key, an organization of 20 sites  req/s ≥ 0.5× GET /health of the same
//                                                                          server; p99 < 25 ms at 50 connections
//   server RSS under load       VmRSS every 200 ms through the load                                (< 150 MB)
// Routes (bench/routes.js, in a process of its own): every list and get route of the contract and two writes, by
// API key, session or agent token, each against a /health run just before it, with fresh keys per route (its
// header lists what and how; some 22 minutes).
// Export (bench/export.js, in a process of its own): 1,000,000 elevation audit events, then
// `svc pam export --format csv --out FILE` against the local server: ≥ 100,000 rows/s end to end, and the CLI's and
// the server's peak RSS within 15% between 100,000 and 1,000,000 rows (its environment is described there).
// Environment: BENCH_PARTS (startup,load,routes,export,filters,webhooks,alerts), BENCH_LOAD_CONNECTIONS (50), BENCH_LOAD_AMOUNT (20000 requests per
// run), BENCH_LOAD_WARMUP (2000), BENCH_LOAD_ROUNDS (5), BENCH_LOAD_MAX_SECONDS (60 per run), BENCH_LOAD_LEVELS
// (warn,info), BENCH_CPU_PROF_DIR (when set, the loaded servers write a V8 CPU profile there: node --cpu-prof).
/* global process, console, setTimeout, setInterval, clearInterval, fetch */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, ROOT, api, get, isolatedEnv, loadRun, startServer, svcArgv, tmp } from './common.js';
import { median, printMachine, printTable, procStatus, round } from './report.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2);
const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const PARTS = (process.env.BENCH_PARTS ?? 'startup,load,routes,export,filters,webhooks,alerts').split(',').map((p) => p.trim());
const EXPORT_SCRIPT = path.join(ROOT, 'bench', 'export.js');
const ROUTES_SCRIPT = path.join(ROOT, 'bench', 'routes.js');
const LOAD_CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 50);
const LOAD_AMOUNT = Number(process.env.BENCH_LOAD_AMOUNT ?? 20_000);
const LOAD_WARMUP = Number(process.env.BENCH_LOAD_WARMUP ?? 2_000);
const LOAD_ROUNDS = Number(process.env.BENCH_LOAD_ROUNDS ?? 5);
const LOAD_MAX_SECONDS = Number(process.env.BENCH_LOAD_MAX_SECONDS ?? 60);
const LOAD_LEVELS = (process.env.BENCH_LOAD_LEVELS ?? 'warn,info').split(',').map((l) => l.trim());
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
const LOAD_SITES = 20;
const KEY_RATE_LIMIT = 100_000;

/** Wall time of one process run to its exit, in ms; throws if it fails. */
function timeRun(command, args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0)
    throw new Error(`${[command, ...args].join(' ')} exited ${result.status}: ${result.stderr.trim().slice(0, 500)}`);
  return { ms, stdout: result.stdout };
}

const rssMb = (pid) => procStatus(pid)?.rss ?? NaN;

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
  spawnSync(process.execPath, svcArgv(args, ['--import', `data:text/javascript,${encodeURIComponent(register)}`]), {
    env,
    cwd: ROOT,
    stdio: 'ignore',
  });
  return fs.existsSync(log) ? new Set(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)).size : 0;
}

// ---- Load: an authenticated list against /health of the same server ----

/**
 * A partner, an organization with LOAD_SITES sites, and `keys` API keys of that organization with the scope
 * sites:read and the highest rate limit (100000 an hour). Key management needs a session with MFA, so the admin
 * enables TOTP through the API (setup, then enable with a code computed here) and uses the session that returns.
 */
async function seedLoadData(url, keys) {
  const login = await api(url, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  let token = login?.tokens?.accessToken;
  if (typeof token !== 'string') throw new Error(`login did not return tokens: ${JSON.stringify(login)}`);
  const partner = await api(url, 'POST', '/orgs/partners', { token, body: { name: 'Bench MSP', slug: 'bench-msp' } });
  const org = await api(url, 'POST', '/orgs/organizations', {
    token,
    body: { name: 'Bench Org', slug: 'bench-org', partnerId: partner.id },
  });
  for (let i = 0; i < LOAD_SITES; i++) {
    const name = `Site ${String(i + 1).padStart(2, '0')}`;
    await api(url, 'POST', '/orgs/sites', {
      token,
      body: { orgId: org.id, name, timezone: 'Europe/Berlin', address: { city: 'Berlin', street: `Street ${i + 1}` } },
    });
  }

  const { Secret, TOTP } = await import('otpauth');
  const setup = await api(url, 'POST', '/auth/mfa/setup', { token });
  const code = new TOTP({
    secret: Secret.fromBase32(setup.secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
  }).generate();
  const enabled = await api(url, 'POST', '/auth/mfa/enable', { token, body: { code } });
  token = enabled.tokens.accessToken;

  const created = [];
  for (let i = 0; i < keys; i++) {
    const key = await api(url, 'POST', '/api-keys', {
      token,
      body: { orgId: org.id, name: `bench-load-${i + 1}`, scopes: ['sites:read'], rateLimit: KEY_RATE_LIMIT },
    });
    created.push(key.key);
  }
  // The list the load asks for, checked once: every seeded site, nothing else.
  const res = await fetch(`${url}/api/v1/orgs/sites`, { headers: { authorization: `Bearer ${token}` } });
  const listed = await res.json();
  if (res.status !== 200 || listed?.data?.length !== LOAD_SITES || listed?.pagination?.total !== LOAD_SITES)
    throw new Error(`GET /orgs/sites did not list the ${LOAD_SITES} sites: HTTP ${res.status}`);
  return { keys: created, bytes: JSON.stringify(listed).length };
}

/** VmRSS of a process every 200 ms until stopped; the peak and the samples. */
function sampleRss(pid) {
  const samples = [];
  const take = () => {
    try {
      samples.push(rssMb(pid));
    } catch {
      // The process is gone; the run reports what was sampled.
    }
  };
  take();
  const timer = setInterval(take, 200);
  return {
    samples,
    peak: () => Math.max(...samples),
    stop() {
      clearInterval(timer);
      take();
    },
  };
}

/** One run of LOAD_CONNECTIONS connections, bounded by `amount` responses and LOAD_MAX_SECONDS. */
const loadAmount = (url, amount, headers = {}) =>
  loadRun(url, { connections: LOAD_CONNECTIONS, amount, maxSeconds: LOAD_MAX_SECONDS, headers });

/**
 * The issue's load targets, per log level: req/s and latency of GET /api/v1/orgs/sites by API key against
 * GET /health of the same server in the same run, and the server's peak RSS while it is loaded. Every run is
 * bounded by a request count (and a time limit), on 127.0.0.1. A round is one run of each endpoint, back to back
 * (in alternating order, so that drift in the machine's load does not favour either); the ratio is the median
 * of the rounds' ratios, the other figures the medians of the rounds.
 *
 * The key's rate limit: 100000 requests an hour at most, fewer than a 10 s run at thousands of requests per
 * second would make. So runs are bounded by count, and every round of the list uses a fresh key (the first
 * round's key also carries the warm-up), whose total stays below the limit; a 429 would show as non-2xx.
 */
async function loadBench() {
  const perKey = LOAD_WARMUP + LOAD_AMOUNT;
  if (perKey > KEY_RATE_LIMIT)
    throw new Error(`BENCH_LOAD_WARMUP + BENCH_LOAD_AMOUNT (${perKey}) exceed one key's ${KEY_RATE_LIMIT} an hour`);
  console.log(
    `load: 127.0.0.1, autocannon in a separate process, ${LOAD_CONNECTIONS} connections, ${LOAD_AMOUNT} requests per run` +
      ` after ${LOAD_WARMUP} warm-up, ${LOAD_ROUNDS} rounds per log level (medians); a fresh API key per round` +
      ` (rate limit ${KEY_RATE_LIMIT}/h, at most ${perKey} requests each)`,
  );
  const dataDir = path.join(tmp, 'load-data');
  const levels = [
    { level: 'warn', label: 'warn' },
    { level: 'info', label: 'info, log to file', logFile: path.join(tmp, 'server-info.log') },
  ].filter((l) => LOAD_LEVELS.includes(l.level));
  const seeding = await startServer(dataDir);
  let seed;
  try {
    seed = await seedLoadData(seeding.url, levels.length * LOAD_ROUNDS);
  } finally {
    await seeding.stop();
  }

  const rows = [];
  const raw = {};
  let keyIndex = 0;
  for (const { level, label, logFile } of levels) {
    const nodeArgs = CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}`] : [];
    const server = await startServer(dataDir, { logLevel: level, logFile, nodeArgs });
    const health = `${server.url}/health`;
    const sites = `${server.url}/api/v1/orgs/sites`;
    const rss = sampleRss(server.child.pid);
    const rssBefore = rss.samples[0];
    const loadBefore = os.loadavg()[0];
    const runs = { health: [], sites: [] };
    try {
      let key = seed.keys[keyIndex++];
      await loadAmount(health, LOAD_WARMUP);
      await loadAmount(sites, LOAD_WARMUP, { 'x-api-key': key });
      for (let round = 0; round < LOAD_ROUNDS; round++) {
        if (round > 0) key = seed.keys[keyIndex++];
        const healthRun = () => loadAmount(health, LOAD_AMOUNT).then((r) => runs.health.push(r));
        const sitesRun = () => loadAmount(sites, LOAD_AMOUNT, { 'x-api-key': key }).then((r) => runs.sites.push(r));
        for (const run of round % 2 === 0 ? [healthRun, sitesRun] : [sitesRun, healthRun]) await run();
      }
    } finally {
      rss.stop();
      await server.stop();
    }

    const med = (runsOf, pick) => median(runsOf.map(pick));
    const healthRps = med(runs.health, (r) => r.rps);
    const sitesRps = med(runs.sites, (r) => r.rps);
    const ratios = runs.sites.map((r, i) => r.rps / (runs.health[i]?.rps ?? NaN));
    const ratio = median(ratios);
    const sitesP99 = med(runs.sites, (r) => r.latencyMs.p99);
    const failed = (r) => r.errors + r.timeouts + r.non2xx;
    const sitesFailed = runs.sites.reduce((n, r) => n + failed(r), 0);
    const healthFailed = runs.health.reduce((n, r) => n + failed(r), 0);
    const timeLimited = [...runs.health, ...runs.sites].some((r) => r.stoppedByTimeLimit);
    const peak = rss.peak();
    const tag = `[${label}]`;
    rows.push(
      { m: `GET /health ${tag}`, v: `${Math.round(healthRps)} req/s`, ratio: null, target: '', pass: null },
      {
        m: `GET /health p50 / p99 ${tag}`,
        v: `${round(med(runs.health, (r) => r.latencyMs.p50))} / ${round(med(runs.health, (r) => r.latencyMs.p99))} ms`,
        ratio: null,
        target: '',
        pass: null,
      },
      {
        m: `GET /api/v1/orgs/sites by key ${tag}`,
        v: `${Math.round(sitesRps)} req/s`,
        ratio,
        target: '≥ 0.50× /health',
        pass: ratio >= 0.5,
      },
      {
        m: `GET /api/v1/orgs/sites p50 ${tag}`,
        v: med(runs.sites, (r) => r.latencyMs.p50),
        unit: 'ms',
        ratio: null,
        target: '',
        pass: null,
      },
      {
        m: `GET /api/v1/orgs/sites p99 ${tag}`,
        v: sitesP99,
        unit: 'ms',
        ratio: null,
        target: `< 25 ms at ${LOAD_CONNECTIONS} conn.`,
        pass: sitesP99 < 25,
      },
      {
        m: `errors + timeouts + non-2xx ${tag}`,
        v: `${sitesFailed} sites, ${healthFailed} health`,
        ratio: null,
        target: '0',
        pass: sitesFailed === 0 && healthFailed === 0 && !timeLimited,
      },
      {
        m: `server peak RSS under load ${tag}`,
        v: peak,
        unit: 'MB',
        ratio: null,
        target: '< 150 MB',
        pass: peak < 150,
      },
    );
    for (const name of ['health', 'sites']) {
      raw[`${level} ${name} req/s`] = runs[name].map((r) => r.rps);
      raw[`${level} ${name} p99 ms`] = runs[name].map((r) => r.latencyMs.p99);
      raw[`${level} ${name} status codes`] = runs[name].map((r) => JSON.stringify(r.statusCodes));
    }
    raw[`${level} sites/health ratio`] = ratios;
    raw[`${level} RSS MB (before load, peak, ${rss.samples.length} samples every 200 ms)`] = [rssBefore, peak];
    raw[`${level} 1-min load average (before, after)`] = [loadBefore, os.loadavg()[0]];
    if (timeLimited) raw[`${level} runs stopped by the ${LOAD_MAX_SECONDS} s limit`] = ['yes'];
    if (logFile) raw[`${level} request log written (MB)`] = [fs.statSync(logFile).size / 1024 / 1024];
  }
  printTable(rows);
  console.log(`\nload raw (per round, in run order; the list is ${seed.bytes} bytes of JSON, ${LOAD_SITES} sites):`);
  for (const [name, values] of Object.entries(raw))
    console.log(
      `  ${name}: ${values.map((v) => (typeof v === 'number' ? round(v, name.includes('ratio') ? 2 : 1) : v)).join(', ')}`,
    );
}

/** CLI start-up, server cold start and idle footprint. */
async function startupBench() {
  const raw = {};
  console.log(`start-up: ${RUNS} runs after ${WARMUP} warm-ups per command, ${STARTS} server starts`);

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
      const probe = spawnSync(process.execPath, svcArgv(['orgs', 'list', '--help']), {
        env: cliEnv,
        cwd: ROOT,
        stdio: 'ignore',
      });
      return probe.status === 0 ? ['orgs', 'list', '-o', 'json'] : ['partners', 'list', '-o', 'json'];
    })();
    const listName = `svc ${listArgs.join(' ')}`;
    // The same list as a signed-in user runs it: the profile and the credentials file read from disk.
    const profileHome = path.join(tmp, 'home-profile');
    const profileEnv = isolatedEnv({
      HOME: profileHome,
      XDG_CONFIG_HOME: path.join(profileHome, '.config'),
      XDG_DATA_HOME: path.join(profileHome, '.local/share'),
      XDG_CACHE_HOME: path.join(profileHome, '.cache'),
    });
    const signIn = spawnSync(
      process.execPath,
      svcArgv(['login', '--base-url', server.url, '--email', ADMIN_EMAIL, '--password-stdin']),
      { env: profileEnv, cwd: ROOT, input: ADMIN_PASSWORD, encoding: 'utf8' },
    );
    if (signIn.status !== 0)
      throw new Error(`svc login exited ${signIn.status}: ${signIn.stderr.trim().slice(0, 500)}`);
    const profileListName = `${listName} (signed-in profile)`;
    const commands = [
      { name: 'node -e 0', args: ['-e', '0'], env: cliEnv },
      { name: 'svc --version', args: svcArgv(['--version']), env: cliEnv },
      { name: listName, args: svcArgv(listArgs), env: cliEnv },
      { name: profileListName, args: svcArgv(listArgs), env: profileEnv },
    ];
    for (const c of commands.slice(2)) {
      const listed = JSON.parse(timeRun(process.execPath, c.args, c.env).stdout);
      if (!Array.isArray(listed)) throw new Error(`${c.name} did not print a JSON array`);
    }
    for (const c of commands) raw[c.name] = [];
    for (let i = 0; i < WARMUP + RUNS; i++) {
      for (const c of commands) {
        const { ms } = timeRun(process.execPath, c.args, c.env);
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
    // The same server left idle longer: V8's memory reducer (its first pass some 8 s after the last collection)
    // gives back the young generation that start-up grew. Reported only: read every second until RSS has fallen
    // by a tenth and holds, or 30 s.
    raw.settledIdle = [];
    for (let s = 1; s <= 30; s++) {
      await new Promise((r) => setTimeout(r, 1000));
      raw.settledIdle.push(rssMb(server.child.pid));
      const [before, now] = raw.settledIdle.slice(-2);
      if (now < raw.idleRssMb[0] * 0.9 && Math.abs(now - before) < 1) break;
    }
    raw.settledIdleSeconds = [2 + raw.settledIdle.length];

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
        m: profileListName,
        v: median(raw[profileListName]),
        unit: 'ms',
        ratio: median(raw[profileListName]) / base,
        target: '(reported)',
        pass: null,
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
      {
        m: `server idle RSS, settled (${raw.settledIdleSeconds[0]} s idle)`,
        v: raw.settledIdle.at(-1),
        unit: 'MB',
        ratio: null,
        target: '(reported)',
        pass: null,
      },
    ];
    printTable(rows);

    console.log('\nserver modules loaded at start (expected 0):');
    for (const [name, n] of Object.entries(loaded)) console.log(`  ${name}: ${n}`);
    console.log('\nraw (ms, in run order; RSS in MB):');
    for (const [name, values] of Object.entries(raw))
      console.log(`  ${name}: ${values.map((v) => round(v)).join(', ')}`);
  } finally {
    await server.stop();
  }
}

/** A bench script in a process of its own: it seeds a database of its own, prints its table and cleans up. */
function scriptBench(script) {
  return () =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [script], { cwd: ROOT, stdio: 'inherit' });
      child.once('error', reject);
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`${path.relative(ROOT, script)} exited with ${code}`)),
      );
    });
}

async function main() {
  printMachine('svc bench');
  // Each part reports its own failure, so that one broken part does not hide the figures of the other.
  const parts = {
    startup: startupBench,
    load: loadBench,
    routes: scriptBench(ROUTES_SCRIPT),
    export: scriptBench(EXPORT_SCRIPT),
    filters: scriptBench(path.join(ROOT, 'bench', 'filters.js')),
    webhooks: scriptBench(path.join(ROOT, 'bench', 'webhooks.js')),
    alerts: scriptBench(path.join(ROOT, 'bench', 'alerts.js')),
  };
  const selected = PARTS.filter((name) => name in parts);
  for (const [i, name] of selected.entries()) {
    if (i > 0) console.log('');
    await parts[name]().catch((err) => {
      console.error(`bench ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
});
