#!/usr/bin/env node
// `node bench/cache-probe.js` (after `npm run build`): why a cheap read can fall behind /health in bench/routes.js,
// by counts, not timings. The app of dist/ in this process (the job worker running, as `svc server start` runs
// it), seeded as bench/routes.js seeds it; then
//   1. idle for BENCH_PROBE_IDLE_SECONDS (60): the database's change counters (`total_changes()` of the app's
//      connection, `PRAGMA data_version`) sampled each second, and every writing statement the app ran, by text;
//   2. per route (BENCH_ROUTES, default the reads issue 10 saw fail, plus one that passed): a load run of
//      BENCH_LOAD_SECONDS (5) with BENCH_LOAD_CONNECTIONS (50) through bench/load.js (a separate process, a fresh
//      API key as bench/routes.js uses), counting the answer cache's lookups, hits, misses, entries dropped by a
//      write or by age, and the writes in that time (statement texts).
// Prints counts only. Each loop is bounded in count and time.
/* global process, console, setTimeout */
import Database from 'better-sqlite3';
import { api, distServer, loadRun, startInProcessApp } from './common.js';
import { printColumns, printMachine } from './report.js';
import { routesOf, seed } from './routes.js';

const IDLE_SECONDS = Number(process.env.BENCH_PROBE_IDLE_SECONDS ?? 60);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 50);
const ONLY = (
  process.env.BENCH_ROUTES ??
  'one site,one filter,unread notifications,psa connections,one psa connection,one mobile device metrics,mobile summary'
)
  .split(',')
  .map((r) => r.trim())
  .filter(Boolean);
for (const [name, n] of Object.entries({ IDLE_SECONDS, SECONDS, CONNECTIONS })) {
  if (!Number.isInteger(n) || n < 0 || n > 600) throw new Error(`${name} must be an integer in 0..600`);
}

// Every statement that may write (better-sqlite3's `readonly` is false), counted by its text while `counting`.
let counting = false;
const writes = new Map();
const probe = new Database(':memory:');
const Statement = Object.getPrototypeOf(probe.prepare('SELECT 1'));
probe.close();
for (const method of ['run', 'get', 'all']) {
  const original = Statement[method];
  Statement[method] = function countedWrite(...args) {
    if (counting && !this.readonly) {
      const text = this.source.replace(/\s+/g, ' ').slice(0, 110);
      writes.set(text, (writes.get(text) ?? 0) + 1);
    }
    return original.apply(this, args);
  };
}
const takeWrites = () => {
  const taken = [...writes.entries()].sort((a, b) => b[1] - a[1]);
  writes.clear();
  return taken;
};

const { ReadCache } = await distServer('lib/read-cache.js');

// The answer cache's counts (the one keyed by 'GET /…'), by patching its methods on the prototype.
const cache = { lookups: 0, hits: 0, staleByAge: 0, dropsByWrite: 0, entriesDropped: 0, stores: 0, kept: 0 };
const { lookup, store } = ReadCache.prototype;
const unchanged = Object.getOwnPropertyDescriptor(ReadCache.prototype, 'unchanged')?.value;
ReadCache.prototype.unchanged = function countedUnchanged() {
  const entries = this.entries.size;
  const same = unchanged.call(this);
  if (!same && this.isAnswers && counting) {
    cache.dropsByWrite++;
    cache.entriesDropped += entries;
  }
  return same;
};
ReadCache.prototype.lookup = function countedLookup(key) {
  const answers = key.startsWith('GET /');
  if (answers) this.isAnswers = true;
  const had = answers && this.entries.has(key);
  const value = lookup.call(this, key);
  if (answers && counting) {
    cache.lookups++;
    if (value !== undefined) cache.hits++;
    else if (had && !this.entries.has(key) && this.entries.size > 0) cache.staleByAge++;
  }
  return value;
};
ReadCache.prototype.store = function countedStore(key, value, since) {
  const answers = key.startsWith('GET /');
  const value_ = store.call(this, key, value, since);
  if (answers && counting) {
    cache.stores++;
    if (this.entries.get(key)?.value === value) cache.kept++;
  }
  return value_;
};

printMachine('svc bench cache-probe');
const { built, url } = await startInProcessApp('probe-data');
const { app, db } = built;
built.worker.start();
const changesStmt = db.$client.prepare('SELECT total_changes()').pluck();
const versionStmt = db.$client.prepare('PRAGMA data_version').pluck();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
try {
  const s = await seed(url);
  // 1. Idle.
  counting = true;
  takeWrites();
  const samples = [];
  let [c0, v0] = [changesStmt.get(), versionStmt.get()];
  for (let i = 0; i < IDLE_SECONDS; i++) {
    await sleep(1000);
    const [c, v] = [changesStmt.get(), versionStmt.get()];
    samples.push([c - c0, v - v0]);
    [c0, v0] = [c, v];
  }
  const idleWrites = takeWrites();
  const changedSeconds = samples.filter(([c, v]) => c > 0 || v > 0).length;
  console.log(
    `\nidle ${IDLE_SECONDS} s, worker running: seconds with a change ${changedSeconds}, rows changed ${samples.reduce((n, [c]) => n + c, 0)}, other-connection commits ${samples.reduce((n, [, v]) => n + v, 0)}`,
  );
  for (const [text, n] of idleWrites) console.log(`  ${n}× ${text}`);

  // 2. Per route.
  const rows = [];
  const routes = routesOf(s).filter((r) => ONLY.includes(r.name));
  for (const route of routes) {
    counting = false;
    const { key } = await api(url, 'POST', '/api-keys', {
      token: s.token,
      body: { orgId: s.orgId, name: `probe-${route.name}`, scopes: ['*'], rateLimit: 100_000 },
    });
    const headers = route.auth === 'key' ? { 'x-api-key': key } : { authorization: `Bearer ${s.token}` };
    await sleep(1100);
    for (const k of Object.keys(cache)) cache[k] = 0;
    takeWrites();
    counting = true;
    const c1 = changesStmt.get();
    const result = await loadRun(`${url}/api/v1${route.path}`, { connections: CONNECTIONS, seconds: SECONDS, headers });
    const changed = changesStmt.get() - c1;
    counting = false;
    const w = takeWrites();
    const misses = cache.lookups - cache.hits;
    rows.push([
      `${route.name} (${route.auth})`,
      String(result.responses),
      String(cache.lookups),
      String(cache.hits),
      String(misses),
      String(cache.dropsByWrite),
      String(cache.staleByAge),
      String(cache.kept),
      String(changed),
      w.map(([t, n]) => `${n}× ${t.slice(0, 60)}`).join(' | ') || '-',
    ]);
    process.stderr.write(`  ${rows.at(-1).join('  ')}\n`);
  }
  console.log(`\n${CONNECTIONS} connections, ${SECONDS} s per route (bench/load.js), the app in this process`);
  printColumns([
    ['route', 'responses', 'lookups', 'hits', 'misses', 'drops by write', 'expired by age', 'stored', 'rows changed', 'writes'],
    ...rows,
  ]);
} finally {
  await built.worker.stop();
  await app.close();
  db.$client.close();
}
