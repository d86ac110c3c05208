#!/usr/bin/env node
// `node bench/cpu-routes.js` (after `npm run build`): what one request of each route of bench/routes.js costs the
// server, measured where a loaded machine does not move it: CPU time (process.cpuUsage) around N sequential
// Fastify inject calls in this process, and how many SQL statements each request builds and compiles.
//
//   1. A temp data dir, the app built in this process (dist/), listening on 127.0.0.1 for the seed only (the
//      same data as bench/routes.js, made over HTTP), and one API key with scope *.
//   2. Per route: BENCH_CPU_WARMUP calls (not counted), then BENCH_CPU_CALLS calls through `inject`.
//   3. Per route: CPU µs per request (user + system of this process, inject's own work included: the same for
//      every route, so compare routes and before/after, not with autocannon figures), statements built per
//      request (calls of the connection's `prepare`: drizzle builds every query not made with `.prepare()` on
//      each call and hands its SQL there) and statements compiled per request (better-sqlite3's own prepare:
//      SQLite parses and plans the text). After warm-up both should be 0.
//   4. GET /health first, measured the same way: the reference (issue 10: a read at ≤ 2× its CPU passes easily).
// Every authenticated GET answer is kept until the next write (http/bind.ts, at most a second), so a sequential
// loop mostly measures a kept answer being sent again. BENCH_CPU_UNCACHED=1 measures the read itself: the kept
// answers are never found (lookups of the answer cache, whose keys start with the method, come back empty).
// BENCH_CPU_CONCURRENCY=N sends the calls N at a time (as many connections would), so that writes share group
// commits (db/group-commit.ts) as they do under load; 1 (the default) sends them one after another.
// Environment: BENCH_CPU_CALLS (2000), BENCH_CPU_WARMUP (200), BENCH_ROUTES (a comma list of route names),
// BENCH_CPU_UNCACHED (0), BENCH_CPU_CONCURRENCY (1).
/* global process, console */
import Database from 'better-sqlite3';
import { api, distServer, startInProcessApp } from './common.js';
import { printColumns, printMachine, round } from './report.js';
import { bearerOf, routesOf, seed } from './routes.js';

const CALLS = Number(process.env.BENCH_CPU_CALLS ?? 2000);
const UNCACHED = process.env.BENCH_CPU_UNCACHED === '1';
const WARMUP = Number(process.env.BENCH_CPU_WARMUP ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CPU_CONCURRENCY ?? 1);
for (const [name, n] of Object.entries({ CALLS, WARMUP, CONCURRENCY })) {
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`BENCH_CPU_${name} must be an integer in 1..100000`);
}

// Counted before the app opens its connection: keepStatements (db/connection.ts) binds this prepare as its compiler.
let compiled = 0;
const compile = Database.prototype.prepare;
Database.prototype.prepare = function countedPrepare(...args) {
  compiled++;
  return compile.apply(this, args);
};

if (UNCACHED) {
  const { ReadCache } = await distServer('lib/read-cache.js');
  const lookup = ReadCache.prototype.lookup;
  ReadCache.prototype.lookup = function answerNotKept(key) {
    const kept = lookup.call(this, key);
    return key.startsWith('GET /') ? undefined : kept;
  };
}

printMachine('svc bench cpu-routes');
const { built, url } = await startInProcessApp('cpu-data');
const { app, db } = built;
let built_ = 0;
const connectionPrepare = db.$client.prepare;
db.$client.prepare = (source) => {
  built_++;
  return connectionPrepare(source);
};
// The job worker (as `svc server start` runs it) during the seed: its alert is raised by the pipeline.
built.worker.start();
const rows = [];
try {
  const s = await seed(url);
  // Stopped for the measurement: its polling would be counted in every route's CPU time.
  await built.worker.stop();
  const { key } = await api(url, 'POST', '/api-keys', {
    token: s.token,
    body: { orgId: s.orgId, name: 'bench-cpu', scopes: ['*'], rateLimit: 100_000 },
  });
  const health = { name: 'health', method: 'GET', path: '/health', auth: 'none', url: '/health' };
  for (const route of [health, ...routesOf(s)]) {
    const headers = route.auth === 'key' ? { 'x-api-key': key } : bearerOf(route, s);
    const url_ = route.url ?? `/api/v1${route.path}`;
    let bytes = 0;
    const call = async () => {
      const res = await app.inject({ method: route.method, url: url_, headers, payload: route.body });
      bytes = res.rawPayload.length;
      if (res.statusCode >= 300) throw new Error(`${route.name} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    };
    const calls = async (n) => {
      for (let i = 0; i < n; i += CONCURRENCY) await Promise.all(Array.from({ length: Math.min(CONCURRENCY, n - i) }, call));
    };
    await calls(WARMUP);
    const [b0, c0] = [built_, compiled];
    const cpu0 = process.cpuUsage();
    await calls(CALLS);
    const cpu = process.cpuUsage(cpu0);
    rows.push([
      `${route.method} ${route.path.replace(/[0-9a-f-]{36}/g, ':id')} (${route.name}, ${route.auth})`,
      String(round((cpu.user + cpu.system) / CALLS, 0)),
      String(round((built_ - b0) / CALLS, 2)),
      String(round((compiled - c0) / CALLS, 2)),
      String(bytes),
    ]);
    process.stderr.write(`  ${rows.at(-1).join('  ')}\n`);
  }
} finally {
  await app.close();
  db.$client.close();
}
console.log(
  `\n${CALLS} calls per route after ${WARMUP} warm-up calls, ${CONCURRENCY === 1 ? 'sequential' : `${CONCURRENCY} at a time`},` +
    ` Fastify inject in-process` +
    `${UNCACHED ? ', answers never kept (BENCH_CPU_UNCACHED)' : ''}\n`,
);
printColumns([['route', 'CPU µs/req', 'statements built/req', 'compiled/req', 'answer bytes'], ...rows]);
