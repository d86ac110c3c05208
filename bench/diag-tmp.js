/* global process, console */
import path from 'node:path';
import { ADMIN_EMAIL, ADMIN_PASSWORD, ROOT, api, tmp } from './common.js';
import { routesOf, seed } from './routes.js';
const dist = path.join(ROOT, 'dist', 'server');
const { buildApp } = await import(path.join(dist, 'app.js'));
const { loadConfig } = await import(path.join(dist, 'config.js'));
const { initDataDir } = await import(path.join(dist, 'ops', 'init.js'));
const { ReadCache } = await import(path.join(dist, 'lib', 'read-cache.js'));
let hits = 0, misses = 0;
const lookup = ReadCache.prototype.lookup;
ReadCache.prototype.lookup = function (key) {
  const v = lookup.call(this, key);
  if (this.maxEntries === 128) { if (v) hits++; else misses++; if (process.env.NOCACHE) return undefined; }
  return v;
};
const env = { SVC_DATA_DIR: path.join(tmp, 'd'), SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'silent', SVC_ACCESS_TOKEN_TTL_SECONDS: '7200' };
await initDataDir(loadConfig(env), () => {});
const { app, db } = await buildApp(loadConfig(env), { logger: false, announce: () => {} });
const url = await app.listen({ host: '127.0.0.1', port: 0 });
const s = await seed(url);
const { key } = await api(url, 'POST', '/api-keys', { token: s.token, body: { orgId: s.orgId, name: 'x', scopes: ['*'], rateLimit: 100000 } });
const ONLY = process.env.ONLY?.split(","); for (const route of [{ name: 'health', method: 'GET', path: '/health', auth: 'key' }, ...routesOf(s)].filter((r) => !ONLY || ONLY.includes(r.name))) {
  const headers = route.auth === 'key' ? { 'x-api-key': key } : { authorization: `Bearer ${s.token}` };
  const u = route.path === '/health' ? '/health' : `/api/v1${route.path}`;
  let len = 0;
  const call = async () => { const r = await app.inject({ method: route.method, url: u, headers, payload: route.body }); len = r.body.length; if (r.statusCode >= 300) throw new Error(r.body); };
  for (let i = 0; i < 100; i++) await call();
  hits = misses = 0;
  const c0 = process.cpuUsage();
  const N = Number(process.env.N ?? 500);
  for (let i = 0; i < N; i++) await call();
  const c = process.cpuUsage(c0);
  console.log(`${route.name.padEnd(28)} ${String(Math.round((c.user + c.system) / N)).padStart(6)} µs  bytes ${len}  hits ${hits} misses ${misses}`);
}
await app.close();
process.exit(0);
