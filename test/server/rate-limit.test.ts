import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq, sum } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { applyMigrations, openDatabase } from '../../src/server/db/connection.js';
import { apiKeyHitSeconds } from '../../src/server/db/schema/index.js';
import { shippedMigrations } from '../../src/server/ops/database.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from '../helpers/server.js';
import { olderDatabase } from '../helpers/migrations.js';
import { seedWorld, type World } from '../helpers/seed.js';

const API = '/api/v1';
const HOUR = 3_600_000;

type Res = Awaited<ReturnType<TestApp['call']>>;

function limits(res: Res) {
  return {
    status: res.status,
    limit: res.headers['x-ratelimit-limit'],
    remaining: res.headers['x-ratelimit-remaining'],
  };
}

describe('API key rate limit (01 §5.2, §5.6, §8)', () => {
  let t: TestApp;
  let w: World;
  const newKey = async (rateLimit: number, scopes: string[] = ['*']) => {
    const res = await t.call('POST', `${API}/api-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: `limit ${rateLimit}`, rateLimit, scopes } });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string };
  };
  const use = (key: string, url = '/devices') => t.call('GET', `${API}${url}`, { apiKey: key });
  const hitsWritten = (keyId: string) =>
    Number(t.db.select({ n: sum(apiKeyHitSeconds.hits) }).from(apiKeyHitSeconds).where(eq(apiKeyHitSeconds.keyId, keyId)).get()?.n ?? 0);
  const secondOf = (keyId: string, first: number, last = first, hits = 1) => ({ keyId, second: Math.floor(first / 1000), hits, firstAt: first, lastAt: last });

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  it('01§5.6 rateLimit 3 admits exactly three requests an hour; the fourth is 429 with Retry-After', async () => {
    const { id, key } = await newKey(3);
    const first = Date.now();
    const admitted = [await use(key), await use(key), await use(key)];
    const last = Date.now();
    expect(admitted.map(limits)).toEqual([
      { status: 200, limit: '3', remaining: '2' },
      { status: 200, limit: '3', remaining: '1' },
      { status: 200, limit: '3', remaining: '0' },
    ]);
    // X-RateLimit-Reset: the oldest entry of the window plus one hour, in Unix seconds.
    const resetLow = Math.floor((first + HOUR) / 1000);
    const resetHigh = Math.ceil((last + HOUR) / 1000);
    for (const res of admitted) {
      const reset = Number(res.headers['x-ratelimit-reset']);
      expect(reset).toBeGreaterThanOrEqual(resetLow);
      expect(reset).toBeLessThanOrEqual(resetHigh);
      expect(res.headers['retry-after']).toBeUndefined();
    }
    expect(new Set(admitted.map((r) => r.headers['x-ratelimit-reset'])).size).toBe(1);

    for (let i = 0; i < 3; i++) {
      const refused = await use(key);
      expect(limits(refused)).toEqual({ status: 429, limit: '3', remaining: '0' });
      expect(refused.body).toMatchObject({ error: 'Rate limit exceeded' });
      expect(refused.headers['x-ratelimit-reset']).toBe(admitted[0]?.headers['x-ratelimit-reset']);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(3590);
      expect(retryAfter).toBeLessThanOrEqual(3600);
    }
    // Refusals are not entries of the window.
    t.services.apiKeyAuth.flush();
    expect(hitsWritten(id)).toBe(3);
  });

  it('01§5.6 the headers come with every key-authenticated answer, errors after the key check included', async () => {
    const { key } = await newKey(10, ['devices:read']);
    const denied = await use(key, '/orgs/sites');
    expect(denied.status).toBe(403);
    expect(limits(denied)).toEqual({ status: 403, limit: '10', remaining: '9' });
    const missing = await use(key, `/devices/${randomUUID()}`);
    expect(limits(missing)).toEqual({ status: 404, limit: '10', remaining: '8' });
    const invalid = await t.call('GET', `${API}/devices?status=bogus`, { apiKey: key });
    expect(limits(invalid)).toEqual({ status: 400, limit: '10', remaining: '7' });
    const sessionOnly = await use(key, '/api-keys');
    expect(limits(sessionOnly)).toEqual({ status: 403, limit: '10', remaining: '6' });
    expect(Number(sessionOnly.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    // Bearer-authenticated answers carry none.
    expect((await t.call('GET', `${API}/devices`, { token: w.tokens.system })).headers['x-ratelimit-limit']).toBeUndefined();
  });

  it('01§5.6 a key-authenticated 404, 400 and 403 all carry the headers, a path no route serves included', async () => {
    const { key } = await newKey(10, ['devices:read']);
    const answers = [
      await use(key, '/no-such-route'),
      await t.call('POST', `${API}/no/such/route`, { apiKey: key, body: {} }),
      await use(key, `/devices/${randomUUID()}`),
      await use(key, '/devices?status=bogus'),
      await use(key, '/orgs/sites'),
    ];
    expect(answers.map(limits)).toEqual([
      { status: 404, limit: '10', remaining: '9' },
      { status: 404, limit: '10', remaining: '8' },
      { status: 404, limit: '10', remaining: '7' },
      { status: 400, limit: '10', remaining: '6' },
      { status: 403, limit: '10', remaining: '5' },
    ]);
    for (const res of answers) expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    // An unknown route with a key that does not authenticate stays the plain 404, without headers.
    const unknown = await use('svc_' + 'A'.repeat(32), '/no-such-route');
    expect(limits(unknown)).toEqual({ status: 404, limit: undefined, remaining: undefined });
    // Over the limit, an unknown route answers 429 like any other.
    const { key: small } = await newKey(1);
    expect((await use(small, '/devices')).status).toBe(200);
    const refused = await use(small, '/no-such-route');
    expect(limits(refused)).toEqual({ status: 429, limit: '1', remaining: '0' });
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('01§5.6 concurrent requests never get past the limit', async () => {
    const { key } = await newKey(5);
    const results = await Promise.all(Array.from({ length: 20 }, () => use(key)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15);
    expect(results.map((r) => r.headers['x-ratelimit-remaining']).filter((v) => v !== '0').sort()).toEqual(['1', '2', '3', '4']);
  });

  it('01§5.6 the window slides: an entry leaves it one hour after it was admitted', async () => {
    const { id } = await newKey(3);
    const limiter = t.services.apiKeyAuth.limiter;
    const t0 = Date.now();
    expect(limiter.hit(id, 3, t0)).toMatchObject({ allowed: true, remaining: 2, reset: Math.ceil((t0 + HOUR) / 1000) });
    expect(limiter.hit(id, 3, t0 + 1000)).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.hit(id, 3, t0 + 2000)).toMatchObject({ allowed: true, remaining: 0, reset: Math.ceil((t0 + HOUR) / 1000) });
    expect(limiter.hit(id, 3, t0 + 3000)).toMatchObject({ allowed: false, remaining: 0, retryAfter: 3597 });
    expect(limiter.hit(id, 3, t0 + HOUR - 1)).toMatchObject({ allowed: false, retryAfter: 1 });
    // At t0 + 1 h the first entry has left the window: exactly one slot frees up.
    expect(limiter.hit(id, 3, t0 + HOUR)).toMatchObject({ allowed: true, remaining: 0, reset: Math.ceil((t0 + 1000 + HOUR) / 1000) });
    expect(limiter.hit(id, 3, t0 + HOUR + 1)).toMatchObject({ allowed: false, retryAfter: 1 });
    expect(limiter.hit(id, 3, t0 + HOUR + 1000)).toMatchObject({ allowed: true });
  });

  it('01§5.6 a lower or higher rateLimit applies from the next request', async () => {
    const { id, key } = await newKey(2);
    expect((await use(key)).status).toBe(200);
    expect((await use(key)).status).toBe(200);
    expect((await use(key)).status).toBe(429);
    expect((await t.call('PATCH', `${API}/api-keys/${id}`, { token: w.tokens.system, body: { rateLimit: 3 } })).status).toBe(200);
    expect(limits(await use(key))).toEqual({ status: 200, limit: '3', remaining: '0' });
    expect((await use(key)).status).toBe(429);
    expect((await t.call('PATCH', `${API}/api-keys/${id}`, { token: w.tokens.system, body: { rateLimit: 1 } })).status).toBe(200);
    expect(limits(await use(key))).toEqual({ status: 429, limit: '1', remaining: '0' });
  });

  it('01§5.6 the window is read back from the database on first use (entries written before this start count)', async () => {
    const { id, key } = await newKey(3);
    const now = Date.now();
    t.db.insert(apiKeyHitSeconds).values([secondOf(id, now - HOUR - 10), secondOf(id, now - HOUR + 5000), secondOf(id, now - 20_000)]).run();
    // Yet unseen by this process: the oldest row is outside the window, two are inside.
    expect(limits(await use(key))).toEqual({ status: 200, limit: '3', remaining: '0' });
    const refused = await use(key);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(5);
    expect(Number(refused.headers['x-ratelimit-reset'])).toBe(Math.ceil((now + 5000) / 1000));
    // Pruning drops what is older than the window.
    t.services.apiKeyAuth.flush();
    t.services.apiKeyAuth.limiter.prune();
    expect(t.db.select().from(apiKeyHitSeconds).where(eq(apiKeyHitSeconds.keyId, id)).all()).toHaveLength(3);
  });

  it('01§5.6 the window is written as one row per key and second; read back, a second keeps its first admission exact and the others at its last', async () => {
    const { id } = await newKey(100);
    const limiter = t.services.apiKeyAuth.limiter;
    const base = Math.floor(Date.now() / 1000) * 1000 - 10_000;
    for (const at of [base + 100, base + 400, base + 900, base + 1_050]) expect(limiter.hit(id, 100, at).allowed).toBe(true);
    t.services.apiKeyAuth.flush();
    // A second flushed twice adds up in its row.
    expect(limiter.hit(id, 100, base + 1_500).allowed).toBe(true);
    t.services.apiKeyAuth.flush();
    const rows = t.db.select().from(apiKeyHitSeconds).where(eq(apiKeyHitSeconds.keyId, id)).orderBy(apiKeyHitSeconds.second).all();
    expect(rows.map(({ second, hits, firstAt, lastAt }) => ({ second, hits, firstAt, lastAt }))).toEqual([
      { second: base / 1000, hits: 3, firstAt: base + 100, lastAt: base + 900 },
      { second: base / 1000 + 1, hits: 2, firstAt: base + 1_050, lastAt: base + 1_500 },
    ]);

    // Another process (a restart) reads it back: the oldest entry is exact, so X-RateLimit-Reset is unchanged;
    // the two later admissions of the first second count from its last, so none leaves the window early.
    const { ApiKeyRateLimiter } = await import('../../src/server/modules/api-keys/rate-limiter.js');
    const restarted = new ApiKeyRateLimiter(t.db.$client);
    expect(restarted.hit(id, 5, base + HOUR)).toMatchObject({ allowed: false, reset: Math.ceil((base + 100 + HOUR) / 1000) });
    // At base+400+1h a log of every request would have room for a fourth with a limit of 4; this one counts
    // base+400 as base+900 and refuses until that has left the window too.
    expect(restarted.hit(id, 4, base + HOUR + 500)).toMatchObject({ allowed: false, reset: Math.ceil((base + 900 + HOUR) / 1000) });
    expect(restarted.hit(id, 4, base + HOUR + 901)).toMatchObject({ allowed: true, remaining: 1 });
  });
});

describe('API key rate limit across a restart (01 §5.6)', () => {
  it('01§5.6 the window survives a restart of the server on the same database', async () => {
    const t = await createTestApp();
    let second: Awaited<ReturnType<typeof buildApp>> | undefined;
    try {
      const w = await seedWorld(t, { mfa: true });
      const created = await t.call('POST', `${API}/api-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'restart', rateLimit: 3, scopes: ['*'] } });
      const key: string = created.body.key;
      const first = await t.call('GET', `${API}/devices`, { apiKey: key });
      expect((await t.call('GET', `${API}/devices`, { apiKey: key })).status).toBe(200);
      expect(first.headers['x-ratelimit-remaining']).toBe('2');
      await t.app.close();

      const config = loadConfig({ SVC_DATA_DIR: t.dataDir, SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'silent' });
      second = await buildApp(config, { logger: false, announce: () => {} });
      const inject = (apiKey: string) => second?.app.inject({ method: 'GET', url: `${API}/devices`, headers: { 'x-api-key': apiKey } });
      const third = await inject(key);
      expect(third?.statusCode).toBe(200);
      expect(third?.headers['x-ratelimit-remaining']).toBe('0');
      expect(third?.headers['x-ratelimit-reset']).toBe(first.headers['x-ratelimit-reset']);
      const fourth = await inject(key);
      expect(fourth?.statusCode).toBe(429);
      expect(Number(fourth?.headers['retry-after'])).toBeGreaterThan(3500);
    } finally {
      await second?.app.close();
      await t.close();
      fs.rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});

describe('API key rate window upgrade (01 §5.6)', () => {
  it('01§5.6 the upgrade folds an older database\'s row per request into rows per second, so the window survives it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-hits-'));
    try {
      const file = path.join(dir, 'svc.db');
      const upgrade = shippedMigrations().findIndex((m) => m.tag === '0019_api_key_hit_seconds');
      expect(upgrade).toBeGreaterThan(0);
      olderDatabase(dir, file, upgrade);
      const db = openDatabase(file);
      try {
        const sqlite = db.$client;
        sqlite.exec(`INSERT INTO partners (id, name, slug, created_at, updated_at) VALUES ('p', 'P', 'p', 'x', 'x');
          INSERT INTO organizations (id, partner_id, name, slug, created_at, updated_at) VALUES ('o', 'p', 'O', 'o', 'x', 'x');
          INSERT INTO api_keys (id, org_id, name, key_prefix, key_hash, created_at, updated_at) VALUES ('k', 'o', 'K', 'svc_', 'h', 'x', 'x');`);
        const base = 1_795_000_000_000;
        const hit = sqlite.prepare('INSERT INTO api_key_hits (key_id, at) VALUES (?, ?)');
        for (const at of [base + 100, base + 400, base + 900, base + 1_050, base + 1_500, base + 7_000]) hit.run('k', at);

        applyMigrations(db);
        expect(db.select().from(apiKeyHitSeconds).orderBy(apiKeyHitSeconds.second).all()).toEqual([
          { keyId: 'k', second: base / 1000, hits: 3, firstAt: base + 100, lastAt: base + 900 },
          { keyId: 'k', second: base / 1000 + 1, hits: 2, firstAt: base + 1_050, lastAt: base + 1_500 },
          { keyId: 'k', second: base / 1000 + 7, hits: 1, firstAt: base + 7_000, lastAt: base + 7_000 },
        ]);
        expect(sqlite.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'api_key_hits'").get()).toEqual({ n: 0 });
      } finally {
        db.$client.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
