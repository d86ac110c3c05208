#!/usr/bin/env node
// Filters, dynamic groups and search at 100,000 devices (issue 13). A benchmark: it prints what it measured and
// exits 0 whatever the figures are.
//
//   1. A fresh server on 127.0.0.1: the admin turns MFA on (TOTP, otpauth), creates a partner, an organization
//      and a site over the API; the server stops.
//   2. DEVICES devices (default 100,000) with inventory (OS, role, hardware, metrics, software) and tags are
//      written straight into the SQLite file (one prepared INSERT, one transaction per 20,000 rows).
//   3. The server starts again; the admin signs in (password + TOTP) and measures, each ROUNDS times:
//      - POST /filters/preview with a three-condition tree (osType, lastSeenAt notWithinLast, tags hasAny) p95 < 100 ms
//      - a dynamic group's re-evaluation: PATCH /groups/:id with its conditions, which re-evaluates the stored
//        membership in the request (the condition query over every device plus the membership diff)  p95 < 100 ms
//      - GET /search?q=… (devices, alerts, settings)                                                  p95 < 50 ms
//      - the server's peak RSS (VmHWM) through all of it                                                  < 200 MB
//      Beside each p95 (wall time, which a loaded machine moves): the server process's CPU ms per operation (user +
//      system from /proc/<pid>/stat around the ROUNDS calls, divided by ROUNDS; request handling included), which
//      the load on the machine does not move much.
// Environment: BENCH_FILTER_DEVICES (100000), BENCH_FILTER_ROUNDS (30). Bounded: every loop by count, the whole
// run by BENCH_FILTER_MAX_SECONDS (600).
/* global process, console, setTimeout */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Secret, TOTP } from 'otpauth';
import { ADMIN_EMAIL, ADMIN_PASSWORD, api, startServer, tmp } from './common.js';
import { cpuMs, printMachine, printTable, procStatus } from './report.js';

const DEVICES = Number(process.env.BENCH_FILTER_DEVICES ?? 100_000);
const ROUNDS = Number(process.env.BENCH_FILTER_ROUNDS ?? 30);
const MAX_SECONDS = Number(process.env.BENCH_FILTER_MAX_SECONDS ?? 600);
const BATCH = 20_000;

const totp = (secret, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * 30_000 });

async function mfaSession(url, secret) {
  const login = await api(url, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  for (const steps of [0, 1, 2]) {
    const verified = await api(url, 'POST', '/auth/mfa/verify', { body: { code: totp(secret, steps), tempToken: login.tempToken }, expect: [200, 400, 401, 403] });
    if (typeof verified?.tokens?.accessToken === 'string') return verified.tokens.accessToken;
  }
  throw new Error('MFA verification failed');
}

async function seedTenancy(url) {
  let token = (await api(url, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).tokens.accessToken;
  const setup = await api(url, 'POST', '/auth/mfa/setup', { token });
  token = (await api(url, 'POST', '/auth/mfa/enable', { token, body: { code: totp(setup.secret) } })).tokens.accessToken;
  const partner = await api(url, 'POST', '/orgs/partners', { token, body: { name: 'Filter MSP', slug: 'filter-msp' } });
  const org = await api(url, 'POST', '/orgs/organizations', { token, body: { name: 'Filter Org', slug: 'filter-org', partnerId: partner.id } });
  const site = await api(url, 'POST', '/orgs/sites', { token, body: { orgId: org.id, name: 'HQ' } });
  return { secret: setup.secret, partnerId: partner.id, orgId: org.id, siteId: site.id };
}

const OS = ['windows', 'linux', 'macos'];
const ROLES = ['workstation', 'server', 'workstation', 'nas'];
const TAGS = ['prod', 'web', 'db', 'lab', 'backup', 'eu', 'us'];

function seedDevices(dbFile, seed) {
  const db = new Database(dbFile);
  db.pragma('journal_mode = WAL');
  const insert = db.prepare(`INSERT INTO devices (id, org_id, partner_id, site_id, agent_id, agent_token_hash, hostname, display_name,
      os_type, os_version, architecture, agent_version, status, tags, custom_fields, last_seen_at, enrolled_at, last_user,
      device_role, hw_cpu_cores, hw_ram_total_mb, cpu_percent, ram_percent, disk_percent, software_names, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '10', 'x64', '2.0.0', ?, ?, '{}', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const now = Date.now();
  for (let start = 0; start < DEVICES; start += BATCH) {
    db.transaction(() => {
      for (let i = start; i < Math.min(DEVICES, start + BATCH); i++) {
        const seen = new Date(now - (i % 240) * 3_600_000).toISOString();
        const tags = JSON.stringify([TAGS[i % TAGS.length], TAGS[(i * 7) % TAGS.length]]);
        const host = `host-${String(i).padStart(6, '0')}`;
        insert.run(randomUUID(), seed.orgId, seed.partnerId, seed.siteId, randomUUID(), randomUUID(), host, host, OS[i % 3], i % 50 === 0 ? 'offline' : 'online', tags, seen,
          new Date(now - 86_400_000 * 100).toISOString(), `user${i % 500}`, ROLES[i % ROLES.length], 2 + (i % 16), 4096 * (1 + (i % 8)), i % 100, (i * 3) % 100, (i * 7) % 100,
          JSON.stringify(i % 3 === 0 ? ['backup agent', 'chrome'] : ['chrome']), seen, seen);
      }
    })();
  }
  db.close();
}

const p95 = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] ?? NaN;
};

/** Waits (at most 180 s) until the server's mark-offline job has worked through the seeded devices last seen hours
 * ago (in batches, after /health answers): the measurements below then see the same devices as a server that has
 * been running, and that job's CPU is not counted in them. */
async function settled(dbFile) {
  const db = new Database(dbFile, { readonly: true });
  try {
    const stale = db.prepare("SELECT count(*) AS n FROM devices WHERE status = 'online' AND last_seen_at < ?");
    for (let i = 0; i < 360 && stale.get(new Date(Date.now() - 3_600_000).toISOString()).n > 0; i++) await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    db.close();
  }
}

/** Wall ms of each call, and the server's CPU ms per call over all of them. */
async function timed(n, fn, pid) {
  const times = [];
  const cpu0 = cpuMs(pid);
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await fn(i);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const cpu1 = cpuMs(pid);
  times.cpu = cpu0 === null || cpu1 === null ? NaN : (cpu1 - cpu0) / n;
  return times;
}

const THREE = {
  operator: 'AND',
  conditions: [
    { field: 'osType', operator: 'equals', value: 'windows' },
    { field: 'lastSeenAt', operator: 'notWithinLast', value: { amount: 3, unit: 'days' } },
    { field: 'tags', operator: 'hasAny', value: ['prod', 'db'] },
  ],
};

async function filtersBench() {
  const dataDir = path.join(tmp, 'filters-data');
  const first = await startServer(dataDir);
  let seed;
  try {
    seed = await seedTenancy(first.url);
  } finally {
    await first.stop();
  }
  const seeded = Date.now();
  seedDevices(path.join(dataDir, 'svc.db'), seed);
  const seedSeconds = (Date.now() - seeded) / 1000;

  const server = await startServer(dataDir);
  let peak = 0;
  const sample = () => {
    const s = procStatus(server.child.pid);
    if (s && s.hwm > peak) peak = s.hwm;
  };
  const rows = [];
  try {
    const token = await mfaSession(server.url, seed.secret);
    const pid = server.child.pid;
    await settled(path.join(dataDir, 'svc.db'));
    const preview = await timed(ROUNDS, () => api(server.url, 'POST', `/filters/preview?orgId=${seed.orgId}`, { token, body: { conditions: THREE } }), pid);
    sample();
    const created = await api(server.url, 'POST', '/groups', { token, body: { orgId: seed.orgId, name: 'Stale prod Windows', filterConditions: THREE } });
    sample();
    const reevaluate = await timed(ROUNDS, () => api(server.url, 'PATCH', `/groups/${created.data.id}`, { token, body: { filterConditions: THREE } }), pid);
    sample();
    const queries = ['host-0421', 'HOST-09', 'user7', 'nothing-matches', 'settings'];
    const search = await timed(ROUNDS, (i) => api(server.url, 'GET', `/search?q=${encodeURIComponent(queries[i % queries.length])}`, { token }), pid);
    sample();
    const count = (await api(server.url, 'GET', `/groups/${created.data.id}`, { token })).data.deviceCount;
    const row = (m, values, target) => ({ m: `${m} (server CPU ${values.cpu.toFixed(1)} ms/op)`, v: p95(values), unit: 'ms', ratio: null, target: `< ${target} ms`, pass: p95(values) < target });
    rows.push(
      { m: `seeded devices (${seedSeconds.toFixed(1)} s)`, v: String(DEVICES), ratio: null, target: '', pass: null },
      row('filter preview, 3 conditions, p95', preview, 100),
      row(`dynamic group re-evaluation (${count} members), p95`, reevaluate, 100),
      row('GET /search, p95', search, 50),
      { m: 'server peak RSS', v: peak, unit: 'MB', ratio: null, target: '< 200 MB', pass: peak < 200 },
    );
  } finally {
    await server.stop();
  }
  printTable(rows, 'p95');
}

async function main() {
  printMachine('svc bench filters');
  const timer = setTimeout(() => {
    console.error(`bench filters: over ${MAX_SECONDS} s, stopped`);
    process.exit(0);
  }, MAX_SECONDS * 1000);
  timer.unref();
  await filtersBench();
}

main()
  .catch((err) => console.error(`bench filters failed: ${err instanceof Error ? err.message : String(err)}`))
  .finally(() => process.exit(0));
