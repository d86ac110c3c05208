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
// Environment: BENCH_CPU_CALLS (2000), BENCH_CPU_WARMUP (200), BENCH_ROUTES (a comma list of route names).
/* global process, console */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ADMIN_EMAIL, ADMIN_PASSWORD, ROOT, api, printColumns, printMachine, round, tmp } from './common.js';
import { routesOf, seed } from './routes.js';

const CALLS = Number(process.env.BENCH_CPU_CALLS ?? 2000);
const WARMUP = Number(process.env.BENCH_CPU_WARMUP ?? 200);
for (const [name, n] of Object.entries({ CALLS, WARMUP })) {
  if (!Number.isInteger(n) || n < 1 || n > 100_000) throw new Error(`BENCH_CPU_${name} must be an integer in 1..100000`);
}

// Counted before the app opens its connection: keepStatements (db/connection.ts) binds this prepare as its compiler.
let compiled = 0;
const compile = Database.prototype.prepare;
Database.prototype.prepare = function countedPrepare(...args) {
  compiled++;
  return compile.apply(this, args);
};

const dist = path.join(ROOT, 'dist', 'server');
if (!fs.existsSync(path.join(dist, 'app.js'))) throw new Error('dist/ is missing: run `npm run build` first');
const { buildApp } = await import(path.join(dist, 'app.js'));
const { loadConfig } = await import(path.join(dist, 'config.js'));
const { initDataDir } = await import(path.join(dist, 'ops', 'init.js'));

printMachine('svc bench cpu-routes');
const env = {
  SVC_DATA_DIR: path.join(tmp, 'cpu-data'),
  SVC_ADMIN_EMAIL: ADMIN_EMAIL,
  SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
  SVC_LOG_LEVEL: 'silent',
  SVC_ACCESS_TOKEN_TTL_SECONDS: '7200',
};
await initDataDir(loadConfig(env), () => {});
const built = await buildApp(loadConfig(env), { logger: false, announce: () => {} });
const { app, db } = built;
let built_ = 0;
const connectionPrepare = db.$client.prepare;
db.$client.prepare = (source) => {
  built_++;
  return connectionPrepare(source);
};
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const rows = [];
try {
  const s = await seed(url);
  const { key } = await api(url, 'POST', '/api-keys', {
    token: s.token,
    body: { orgId: s.orgId, name: 'bench-cpu', scopes: ['*'], rateLimit: 100_000 },
  });
  for (const route of routesOf(s)) {
    const headers = route.auth === 'key' ? { 'x-api-key': key } : { authorization: `Bearer ${s.token}` };
    const call = async () => {
      const res = await app.inject({ method: route.method, url: `/api/v1${route.path}`, headers, payload: route.body });
      if (res.statusCode >= 300) throw new Error(`${route.name} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    };
    for (let i = 0; i < WARMUP; i++) await call();
    const [b0, c0] = [built_, compiled];
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < CALLS; i++) await call();
    const cpu = process.cpuUsage(cpu0);
    rows.push([
      `${route.method} ${route.path.replace(/[0-9a-f-]{36}/g, ':id')} (${route.name}, ${route.auth})`,
      String(round((cpu.user + cpu.system) / CALLS, 0)),
      String(round((built_ - b0) / CALLS, 2)),
      String(round((compiled - c0) / CALLS, 2)),
    ]);
    process.stderr.write(`  ${rows.at(-1).join('  ')}\n`);
  }
} finally {
  await app.close();
  db.$client.close();
}
console.log(`\n${CALLS} calls per route after ${WARMUP} warm-up calls, sequential, Fastify inject in-process\n`);
printColumns([['route', 'CPU µs/req', 'statements built/req', 'compiled/req'], ...rows]);
