#!/usr/bin/env node
// Profiling aid (not part of `npm run bench`): starts a server under `node --cpu-prof`, seeds it as
// bench/routes.js does, then loads ONE route of its table for BENCH_LOAD_SECONDS (no /health runs), so the
// profile written to BENCH_CPU_PROF_DIR (default ./profiles) holds little but that route.
//   BENCH_ROUTES='create site' node bench/profile-route.js
/* global process, console */
import path from 'node:path';
import { api, loadRun, startServer, tmp } from './common.js';
import { bearerOf, routesOf, seed } from './routes.js';

const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 50);
const dir = path.resolve(process.env.BENCH_CPU_PROF_DIR ?? 'profiles');
const server = await startServer(path.join(tmp, 'profile-data'), {
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
  env: { SVC_ACCESS_TOKEN_TTL_SECONDS: '7200', SVC_OUTBOUND_ALLOW: '127.0.0.1/32' },
});
try {
  const s = await seed(server.url);
  const [route] = routesOf(s);
  if (!route) throw new Error('BENCH_ROUTES names no route of the table');
  const key = await api(server.url, 'POST', '/api-keys', {
    token: s.token,
    body: { orgId: s.orgId, name: 'bench-profile', scopes: ['*'], rateLimit: 100_000 },
  });
  const headers = route.auth === 'key' ? { 'x-api-key': key.key } : bearerOf(route, s);
  const result = await loadRun(`${server.url}/api/v1${route.path}`, {
    connections: CONNECTIONS,
    seconds: SECONDS,
    headers,
    method: route.method,
    body: route.body,
  });
  console.log(`${route.name}: ${Math.round(result.rps)} req/s, ${result.responses} responses, ${JSON.stringify(result.statusCodes)}; profile in ${dir}`);
} finally {
  await server.stop();
}
