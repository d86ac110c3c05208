#!/usr/bin/env node
// `npm run bench` (after bench/run.js): the elevation audit export at scale, from one run on this machine. A
// benchmark, not a test: it prints what it measured and exits 0 whatever the figures are.
//
//   1. A temp data dir; `svc server start` (SVC_EXPORT_SETTLE_SECONDS=0) creates the database and the admin.
//      Over HTTP on 127.0.0.1: a partner, an organization, a site, MFA (TOTP, otpauth) for the admin, an
//      enrollment key, one enrolled agent/device, REQUESTS elevation requests through the agent ingest
//      endpoint (a few approved, a few denied). The server stops.
//   2. BENCH_EXPORT_ROWS (1,000,000) elevation audit events go straight into svc.db with better-sqlite3 (one
//      prepared INSERT, a transaction per 50,000 rows), referencing those requests, recorded at a steady pace
//      over a past window (two events per second, so the first BENCH_EXPORT_SMALL_ROWS (100,000) events are a
//      window of their own), ids time-ordered, details ~100-200 bytes of JSON.
//   3. For the small window and then the whole one, a fresh `svc server start`; the admin signs in with
//      password + TOTP; `svc pam export --format csv --org-id … --from … --to … --out FILE` runs with SVC_TOKEN
//      and SVC_BASE_URL (no profile, nothing of the session on disk), timed from spawn to exit. VmHWM/VmRSS of
//      the CLI and of the server are polled every 100 ms (the server's VmHWM is read again after the export).
//      FILE is checked: rows + 1 lines, the header once, no checkpoint left.
//
// Targets (the issue): ≥ 100,000 rows/s end to end (judged on the 1,000,000-row export); the CLI's and the server's peak RSS the same (within 15%)
// for 100,000 and 1,000,000 rows. Environment: BENCH_EXPORT_ROWS, BENCH_EXPORT_SMALL_ROWS,
// BENCH_EXPORT_MAX_SECONDS (per export, default 180), BENCH_CPU_PROF_DIR (when set, the servers and the CLIs of
// the exports write V8 CPU profiles there: node --cpu-prof), BENCH_KEEP_TMP=1 (keep the temp dir with the
// seeded svc.db, named on stderr, for micro-benchmarks on real rows).
/* global process, console, setTimeout, setInterval, clearTimeout, clearInterval, fetch */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Secret, TOTP } from 'otpauth';
import { ADMIN_EMAIL, ADMIN_PASSWORD, ROOT, api, children, enrollBenchAgent, isolatedEnv, startServer, svcArgv, tmp } from './common.js';
import { printMachine, printTable, procStatus, round } from './report.js';

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const SMALL_ROWS = Number(process.env.BENCH_EXPORT_SMALL_ROWS ?? 100_000);
const MAX_EXPORT_SECONDS = Number(process.env.BENCH_EXPORT_MAX_SECONDS ?? 180);
const CPU_PROF_DIR = process.env.BENCH_CPU_PROF_DIR;
/** The whole bench, hard: seeding, both exports, verification. */
const MAX_TOTAL_SECONDS = 15 * 60;
const BATCH = 50_000;
const REQUESTS = 20;
const TARGET_ROWS_PER_SECOND = 100_000;
const TARGET_PEAK_RATIO = 0.15;
const POLL_MS = 100;
/** No settle delay: every seeded event is exportable at once. */
const SERVER_ENV = { SVC_EXPORT_SETTLE_SECONDS: '0' };
const EVENT_TYPES = [
  'requested',
  'approved',
  'session_started',
  'command_executed',
  'command_executed',
  'evidence_attached',
  'session_ended',
  'expired',
];

setTimeout(() => {
  console.error(`bench export: aborted after ${MAX_TOTAL_SECONDS} s`);
  process.exit(0);
}, MAX_TOTAL_SECONDS * 1000).unref();

const number = (n) => Math.round(n).toLocaleString('en-US');
/** 100000 → 100k, 1000000 → 1M. */
const short = (n) =>
  n >= 1e6 && n % 1e5 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 100 === 0 ? `${n / 1e3}k` : String(n);

/** The TOTP steps this bench has used: the server takes each step once per user (replay protection), and the
 * enable and every run's sign-in (a fresh server each, the same database) may fall within one minute. */
const usedSteps = new Set();
/** A code of a step not used yet, the current one or the next (the server accepts ±1 step); when both are
 * used, the next step's start is waited for (at most 30 s). */
async function freshCode(secret) {
  for (;;) {
    const now = Math.floor(Date.now() / 30_000);
    const step = [now, now + 1].find((s) => !usedSteps.has(s));
    if (step !== undefined) {
      usedSteps.add(step);
      return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: step * 30_000 });
    }
    await sleep((now + 1) * 30_000 - Date.now() + 100);
  }
}

/** Password, then TOTP: a session with MFA. */
async function signIn(url, secret) {
  const login = await api(url, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  if (!login?.mfaRequired || typeof login.tempToken !== 'string')
    throw new Error(`login did not ask for MFA: ${JSON.stringify(login).slice(0, 200)}`);
  const verified = await api(url, 'POST', '/auth/mfa/verify', { body: { code: await freshCode(secret), tempToken: login.tempToken } });
  const token = verified?.tokens?.accessToken;
  if (typeof token !== 'string') throw new Error(`MFA verification gave no access token: ${JSON.stringify(verified).slice(0, 200)}`);
  return token;
}

/** The organization, its agent and requests, over the API; returns what the seeding and the exports need. */
async function seedThroughApi(url) {
  let token = (await api(url, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).tokens
    .accessToken;
  const setup = await api(url, 'POST', '/auth/mfa/setup', { token });
  const enabled = await api(url, 'POST', '/auth/mfa/enable', { token, body: { code: await freshCode(setup.secret) } });
  token = enabled.tokens.accessToken;
  const me = await api(url, 'GET', '/users/me', { token });
  const userId = me?.id ?? me?.user?.id;

  const partner = await api(url, 'POST', '/orgs/partners', { token, body: { name: 'Export MSP', slug: 'export-msp' } });
  const org = await api(url, 'POST', '/orgs/organizations', {
    token,
    body: { name: 'Export Org', slug: 'export-org', partnerId: partner.id },
  });
  const site = await api(url, 'POST', '/orgs/sites', {
    token,
    body: { orgId: org.id, name: 'HQ', timezone: 'Europe/Berlin', address: { city: 'Berlin', street: 'Street 1' } },
  });
  const { agent: enrolled } = await enrollBenchAgent(url, token, { orgId: org.id, siteId: site.id });
  const requestIds = [];
  for (let i = 0; i < REQUESTS; i++) {
    const body =
      i % 4 === 3
        ? {
            subject_username: 'CORP\\alice',
            tool_name: 'execute_command',
            risk_tier: 2,
            action_digest: randomBytes(32).toString('hex'),
            target_executable_path: 'C:\\Windows\\System32\\cmd.exe',
            reason: `AI agent run ${i}: rotate the build cache`,
          }
        : {
            subject_username: `CORP\\user${i % 5}`,
            target_executable_path: `C:\\Program Files\\Vendor ${i}\\setup-${i}.exe`,
            target_executable_hash: randomBytes(32).toString('hex'),
            target_executable_signer: 'Vendor Inc',
            target_publisher: 'Vendor Inc',
            parent_image: 'C:\\Windows\\explorer.exe',
            command_line: `"C:\\Program Files\\Vendor ${i}\\setup-${i}.exe" --install --quiet, "=cmd"`,
            reason: `Install, update "vendor" tool #${i}`,
          };
    const res = await fetch(`${url}/api/v1/agents/${enrolled.agentId}/elevation-requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${enrolled.authToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = await res.json();
    if (res.status !== 201 || typeof answer.id !== 'string')
      throw new Error(`ingest answered ${res.status}: ${JSON.stringify(answer).slice(0, 200)}`);
    requestIds.push(answer.id);
  }
  // A few decided ones, so the request columns are not all empty.
  for (const [i, id] of requestIds.entries()) {
    if (i % 5 === 0)
      await api(url, 'POST', `/pam/elevation-requests/${id}/respond`, {
        token,
        body: { decision: 'approve', durationMinutes: 60, reason: 'ticket CHG-1234' },
      });
    else if (i % 5 === 1)
      await api(url, 'POST', `/pam/elevation-requests/${id}/respond`, {
        token,
        body: { decision: 'deny', reason: 'not on the approved software list' },
      });
  }
  return { orgId: org.id, userId: typeof userId === 'string' ? userId : null, requestIds, secret: setup.secret };
}

/** A time-ordered UUID (version 7 layout): ms timestamp, then a sequence, then random bits. */
function timeUuid(ms, seq, random) {
  const ts = ms.toString(16).padStart(12, '0');
  const r = random.toString('hex');
  return `${ts.slice(0, 8)}-${ts.slice(8, 12)}-7${(seq & 0xfff).toString(16).padStart(3, '0')}-${(
    0x8000 |
    (random.readUInt16BE(0) & 0x3fff)
  ).toString(16)}-${r.slice(4, 16)}`;
}

function details(type, i, requestId) {
  const session = `s-${(i >> 3).toString(36)}`;
  return { ...detailsOf(type, i, requestId, session), agentVersion: '1.0.0', host: 'ws-bench-01.corp.example' };
}

function detailsOf(type, i, requestId, session) {
  switch (type) {
    case 'requested':
      return { source: 'agent', subjectGroups: ['HelpDesk', 'Staff'], sessionId: session, requestId, sequence: i };
    case 'approved':
      return {
        decidedVia: 'api',
        assurance: 'session',
        durationMinutes: 60,
        ticket: `CHG-${i % 10_000}`,
        sessionId: session,
      };
    case 'session_started':
      return { sessionId: session, pid: 1000 + (i % 30_000), logonId: `0x${(i * 7919).toString(16)}` };
    case 'command_executed':
      return {
        sessionId: session,
        pid: 1000 + (i % 30_000),
        commandLine: `msiexec /i "C:\\Temp\\pkg-${i % 977}.msi" /qn REBOOT=ReallySuppress`,
        exitCode: i % 13 === 0 ? 1603 : 0,
      };
    case 'evidence_attached':
      return {
        sessionId: session,
        kind: 'screenshot',
        sha256: randomBytes(16).toString('hex'),
        bytes: 20_000 + (i % 90_000),
      };
    case 'session_ended':
      return { sessionId: session, durationSeconds: 30 + (i % 3600), reason: 'user_logoff' };
    default:
      return { reason: 'approval window elapsed', expiredBy: 'system', sessionId: session, sequence: i };
  }
}

/**
 * ROWS events straight into the database: two per second from `start`, so row i is recorded at
 * start + floor(i / 2) s and the first SMALL_ROWS rows are exactly the window [start, start + SMALL_ROWS / 2 s).
 */
function seedEvents(dbFile, { orgId, userId, requestIds }, start) {
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const insert = db.prepare(
    `INSERT INTO elevation_audit_events
       (id, org_id, elevation_request_id, event_type, actor, actor_user_id, occurred_at, created_at, details)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const random = randomBytes(8 * BATCH);
  let bytes = 0;
  const batch = db.transaction((from, to) => {
    randomBytes(8 * BATCH).copy(random);
    for (let i = from; i < to; i++) {
      const ms = start + Math.floor(i / 2) * 1000;
      const at = new Date(ms).toISOString();
      const type = EVENT_TYPES[i % EVENT_TYPES.length];
      const requestId = requestIds[Math.floor(i / EVENT_TYPES.length) % requestIds.length];
      const actor = type === 'approved' ? 'technician' : type === 'expired' ? 'system' : 'end_user';
      const json = JSON.stringify(details(type, i, requestId));
      bytes += json.length;
      insert.run(
        timeUuid(ms, i & 1, random.subarray((i - from) * 8, (i - from) * 8 + 8)),
        orgId,
        requestId,
        type,
        actor,
        type === 'approved' ? userId : null,
        new Date(ms - 250).toISOString(),
        at,
        json,
      );
    }
  });
  for (let from = 0; from < ROWS; from += BATCH) batch(from, Math.min(from + BATCH, ROWS));
  db.pragma('wal_checkpoint(TRUNCATE)');
  const count = db.prepare('SELECT count(*) AS n FROM elevation_audit_events WHERE org_id = ?').get(orgId).n;
  db.close();
  return { count, averageDetailsBytes: bytes / ROWS };
}

/** Polls VmHWM and VmRSS of a process every POLL_MS; the peak is the larger of the highest of either. */
function peakPoller(pid) {
  let peak = 0;
  let samples = 0;
  const take = () => {
    const s = procStatus(pid);
    if (!s) return;
    for (const v of [s.hwm, s.rss]) if (Number.isFinite(v) && v > peak) peak = v;
    samples++;
  };
  take();
  const timer = setInterval(take, POLL_MS);
  return {
    take,
    peak: () => peak,
    samples: () => samples,
    stop() {
      clearInterval(timer);
      take();
    },
  };
}

/** Counts lines and header lines of the export file as a stream (it can be about a gigabyte). */
async function verifyOutput(file, expectedRows) {
  let lines = 0;
  let headers = 0;
  let header = null;
  let partial = '';
  for await (const chunk of fs.createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const text = partial + chunk;
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      const line = text.slice(from, nl);
      if (header === null) header = line;
      if (line === header) headers++;
      lines++;
      from = nl + 1;
    }
    partial = text.slice(from);
  }
  const trailing = partial.length > 0;
  const ok =
    !trailing &&
    lines === expectedRows + 1 &&
    headers === 1 &&
    typeof header === 'string' &&
    header.startsWith('id,org_id,elevation_request_id,') &&
    !fs.existsSync(`${file}.cursor`);
  return { ok, lines, headers, trailing, bytes: fs.statSync(file).size };
}

/** One export against a fresh server: wall time of the CLI from spawn to exit, peaks of both processes. */
async function exportRun(dataDir, seed, window, rows, label) {
  const nodeArgs = (name) =>
    CPU_PROF_DIR
      ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(CPU_PROF_DIR)}`, `--cpu-prof-name=${name}-${label}.cpuprofile`]
      : [];
  const server = await startServer(dataDir, { nodeArgs: nodeArgs('server'), env: SERVER_ENV });
  try {
    const token = await signIn(server.url, seed.secret);
    const serverBefore = procStatus(server.child.pid);
    // The server's high-water mark from here on, not from its start (clear_refs 5 resets VmHWM to VmRSS).
    let hwmReset = true;
    try {
      fs.writeFileSync(`/proc/${server.child.pid}/clear_refs`, '5');
    } catch {
      hwmReset = false;
    }
    const out = path.join(tmp, `export-${label}.csv`);
    const args = svcArgv(
      [
        'pam',
        'export',
        '--format',
        'csv',
        '--org-id',
        seed.orgId,
        '--from',
        window.from,
        '--to',
        window.to,
        '--out',
        out,
      ],
      nodeArgs('cli'),
    );
    const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: token });
    const serverPeak = peakPoller(server.child.pid);
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const cliPeak = peakPoller(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    let timedOut = false;
    const killer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, MAX_EXPORT_SECONDS * 1000);
    const code = await new Promise((resolve) => child.once('exit', (c, signal) => resolve(c ?? signal)));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    clearTimeout(killer);
    children.delete(child);
    cliPeak.stop();
    serverPeak.stop();
    // A run that fails still reports its figures: the rows it had checkpointed, its time, its peaks.
    let failure = null;
    let exported = rows;
    if (timedOut || code !== 0) {
      failure = timedOut
        ? `killed after ${MAX_EXPORT_SECONDS} s (BENCH_EXPORT_MAX_SECONDS)`
        : `exited ${code}: ${stderr.trim().slice(0, 300)}`;
      try {
        exported = JSON.parse(fs.readFileSync(`${out}.cursor`, 'utf8')).rows;
      } catch {
        exported = 0;
      }
    }
    const verified = failure
      ? { ok: false, lines: NaN, headers: NaN, bytes: fs.existsSync(out) ? fs.statSync(out).size : 0 }
      : await verifyOutput(out, rows);
    fs.rmSync(out, { force: true });
    fs.rmSync(`${out}.cursor`, { force: true });
    return {
      rows,
      exported,
      failure,
      seconds,
      rowsPerSecond: exported / seconds,
      cliPeakMb: cliPeak.peak(),
      cliSamples: cliPeak.samples(),
      serverPeakMb: serverPeak.peak(),
      serverBeforeMb: serverBefore?.rss ?? NaN,
      serverStartHwmMb: serverBefore?.hwm ?? NaN,
      hwmReset,
      verified,
      summary: stdout.trim().slice(0, 300),
    };
  } finally {
    await server.stop();
  }
}

async function exportBench() {
  if (!(SMALL_ROWS > 0 && SMALL_ROWS < ROWS && SMALL_ROWS % 2 === 0 && ROWS % 2 === 0))
    throw new Error('BENCH_EXPORT_SMALL_ROWS must be even, positive and below BENCH_EXPORT_ROWS (even)');
  const dataDir = path.join(tmp, 'data');
  const setupStarted = Date.now();
  const seeding = await startServer(dataDir, { env: SERVER_ENV });
  let seed;
  try {
    seed = await seedThroughApi(seeding.url);
  } finally {
    await seeding.stop();
  }
  const setupSeconds = (Date.now() - setupStarted) / 1000;

  // A past window, whole seconds, well before the settle watermark: two events a second.
  const start = Math.floor((Date.now() - 30 * 86_400_000) / 86_400_000) * 86_400_000;
  const seedStarted = Date.now();
  const seeded = seedEvents(path.join(dataDir, 'svc.db'), seed, start);
  const seedSeconds = (Date.now() - seedStarted) / 1000;
  if (seeded.count < ROWS) throw new Error(`seeded ${seeded.count} events, expected at least ${ROWS}`);
  const dbMb = fs.statSync(path.join(dataDir, 'svc.db')).size / 1024 / 1024;
  const iso = (ms) => new Date(ms).toISOString();
  const windows = {
    small: { from: iso(start), to: iso(start + (SMALL_ROWS / 2) * 1000) },
    large: { from: iso(start), to: iso(start + (ROWS / 2) * 1000) },
  };
  console.log(
    `export: ${number(ROWS)} elevation audit events seeded in ${round(seedSeconds)} s (API setup ${round(setupSeconds)} s:` +
      ` 1 org, 1 device, ${REQUESTS} requests; details ${round(seeded.averageDetailsBytes, 0)} bytes on average;` +
      ` svc.db ${round(dbMb, 0)} MB); svc pam export --format csv --out FILE over 127.0.0.1, a fresh server per run,` +
      ` peaks polled every ${POLL_MS} ms`,
  );

  const small = await exportRun(dataDir, seed, windows.small, SMALL_ROWS, 'small');
  const large = await exportRun(dataDir, seed, windows.large, ROWS, 'large');

  // The rows/s target is the 1M export's; the 100k run is there for the memory comparison, and its rate (CLI
  // start-up is a larger share of a shorter run) is reported only.
  const rowsOf = (r, tag, { rateTarget }) => [
    {
      m: `export ${number(r.rows)} rows, wall (spawn → exit) ${tag}`,
      v: r.seconds,
      unit: 's',
      ratio: null,
      target: '',
      pass: null,
    },
    {
      m: `rows/s end to end ${tag}`,
      v: `${number(r.rowsPerSecond)} rows/s${r.failure ? ` (${number(r.exported)} rows done)` : ''}`,
      ratio: null,
      target: rateTarget ? `≥ ${number(TARGET_ROWS_PER_SECOND)} rows/s` : '(reported)',
      pass: rateTarget ? r.rowsPerSecond >= TARGET_ROWS_PER_SECOND : null,
    },
    {
      m: `output: lines, header lines ${tag}`,
      v: r.failure ? `none: ${r.failure.slice(0, 60)}` : `${number(r.verified.lines)}, ${r.verified.headers}`,
      ratio: null,
      target: `${number(r.rows + 1)}, 1`,
      pass: r.verified.ok,
    },
  ];
  const [smallTag, largeTag] = [short(SMALL_ROWS), short(ROWS)];
  /** The peak RSS of one process (FIELD of each result) for both windows: the large one within the target of the small. */
  const peakRowsOf = (what, field) => {
    const ratio = large[field] / small[field];
    return [
      { m: `${what} peak RSS [${smallTag}]`, v: small[field], unit: 'MB', ratio: null, target: '', pass: null },
      {
        m: `${what} peak RSS [${largeTag}]`,
        v: large[field],
        unit: 'MB',
        ratio,
        target: `within ${TARGET_PEAK_RATIO * 100}% of ${smallTag}`,
        pass: Math.abs(ratio - 1) <= TARGET_PEAK_RATIO,
      },
    ];
  };
  const rows = [
    ...rowsOf(small, `[${smallTag}]`, { rateTarget: false }),
    ...rowsOf(large, `[${largeTag}]`, { rateTarget: true }),
    ...peakRowsOf('CLI', 'cliPeakMb'),
    ...peakRowsOf('server', 'serverPeakMb'),
  ];
  printTable(rows, 'value');
  console.log('\nexport raw:');
  for (const [tag, r] of [
    [smallTag, small],
    [largeTag, large],
  ]) {
    console.log(
      `  ${tag}: ${round(r.seconds, 2)} s, file ${round(r.verified.bytes / 1024 / 1024)} MB, CLI peak ${round(r.cliPeakMb)} MB` +
        ` (${r.cliSamples} samples); server VmRSS ${round(r.serverBeforeMb)} MB after sign-in (VmHWM since start` +
        ` ${round(r.serverStartHwmMb)} MB${r.hwmReset ? ', reset before the export' : ', NOT reset: peak includes start-up'})` +
        ` → peak during the export ${round(r.serverPeakMb)} MB`,
    );
    if (r.failure) console.log(`  ${tag} failed: ${r.failure}`);
  }
}

async function main() {
  printMachine('svc bench export');
  await exportBench().catch((err) => {
    console.error(`bench export failed: ${err instanceof Error ? err.message : String(err)}`);
  });
}

main()
  .catch((err) => {
    console.error(`bench export failed: ${err instanceof Error ? err.message : String(err)}`);
  })
  .finally(() => process.exit(0));
