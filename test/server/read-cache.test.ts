import path from 'node:path';
import Database from 'better-sqlite3';
import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { sites } from '../../src/server/db/schema/index.js';
import { ReadCache, VERSION_READ_SERVES_MS } from '../../src/server/lib/read-cache.js';
import { writeAsAnotherProcess } from '../helpers/other-process.js';
import { ROLES, seedWorld, type World, type WorldCaller } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const API = '/api/v1';

/** Every authenticated GET answer is kept while the database is unchanged (http/bind.ts with lib/read-cache.ts):
 * these prove on the site list that no write, made any way, and no other caller's reach ever shows through a
 * kept answer; the next block proves it on the other list and get routes. */
describe('GET answers kept until the next write: the site list (01 §4.3)', () => {
  let t: TestApp;
  let w: World;
  const names = async (who: WorldCaller, query = '') => {
    const res = await t.call('GET', `${API}/orgs/sites${query}`, { token: w.tokens[who] });
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(res.body.data.length);
    return (res.body.data as { name: string }[]).map((s) => s.name);
  };

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  it('01§4.3 callers with different reach, asking in turn and again, each get only their own sites', async () => {
    const expected: Record<WorldCaller, string[]> = {
      system: ['A1 Branch', 'A1 HQ', 'A2 HQ', 'B1 HQ'],
      aAdmin: ['A1 Branch', 'A1 HQ', 'A2 HQ'],
      aTech: ['A1 Branch', 'A1 HQ'],
      aSelAdmin: ['A1 Branch', 'A1 HQ'],
      aNone: [],
      bAdmin: ['B1 HQ'],
      orgUser: ['A1 Branch', 'A1 HQ'],
      siteUser: ['A1 HQ'],
    };
    for (let round = 0; round < 2; round++) {
      for (const who of Object.keys(expected) as WorldCaller[]) expect(await names(who), who).toEqual(expected[who]);
    }
    // The same through ?orgId= and with paging: separate pages, never each other's.
    expect(await names('aAdmin', `?orgId=${w.orgA2.id}`)).toEqual(['A2 HQ']);
    expect(await names('aAdmin', `?orgId=${w.orgA1.id}`)).toEqual(['A1 Branch', 'A1 HQ']);
    const second = await t.call('GET', `${API}/orgs/sites?limit=1&page=2`, { token: w.tokens.aAdmin });
    expect(second.body).toMatchObject({ data: [{ name: 'A1 HQ' }], pagination: { page: 2, limit: 1, total: 3 } });
    expect((await t.call('GET', `${API}/orgs/sites?orgId=${w.orgB1.id}`, { token: w.tokens.aAdmin })).status).toBe(403);
  });

  it('01§4.3 API keys of different organizations, each asking twice, see only their organization', async () => {
    const keyOf = async (orgId: string) => {
      const res = await t.call('POST', `${API}/api-keys`, {
        token: w.tokens.system,
        body: { orgId, name: 'k', scopes: ['sites:read'] },
      });
      expect(res.status).toBe(201);
      return res.body.key as string;
    };
    const a1 = await keyOf(w.orgA1.id);
    const b1 = await keyOf(w.orgB1.id);
    for (let round = 0; round < 2; round++) {
      for (const [key, expected] of [
        [a1, ['A1 Branch', 'A1 HQ']],
        [b1, ['B1 HQ']],
      ] as const) {
        const res = await t.call('GET', `${API}/orgs/sites`, { apiKey: key });
        expect(res.status).toBe(200);
        expect(res.body.data.map((s: { name: string }) => s.name)).toEqual(expected);
      }
    }
  });

  it('01§4.3 every write shows in the next list: API, another module on the same connection, another connection', async () => {
    expect(await names('aAdmin')).toEqual(['A1 Branch', 'A1 HQ', 'A2 HQ']);
    expect(await names('aAdmin')).toEqual(['A1 Branch', 'A1 HQ', 'A2 HQ']);

    const created = await t.call('POST', `${API}/orgs/sites`, {
      token: w.tokens.aAdmin,
      body: { orgId: w.orgA1.id, name: 'A1 Depot' },
    });
    expect(created.status).toBe(201);
    expect(await names('aAdmin')).toEqual(['A1 Branch', 'A1 Depot', 'A1 HQ', 'A2 HQ']);

    await t.call('PATCH', `${API}/orgs/sites/${w.siteA1b.id}`, { token: w.tokens.aAdmin, body: { name: 'A1 Annex' } });
    expect(await names('aAdmin')).toEqual(['A1 Annex', 'A1 Depot', 'A1 HQ', 'A2 HQ']);

    await t.call('DELETE', `${API}/orgs/sites/${created.body.id}`, { token: w.tokens.aAdmin });
    expect(await names('aAdmin')).toEqual(['A1 Annex', 'A1 HQ', 'A2 HQ']);

    const deleted = await t.call('DELETE', `${API}/orgs/organizations/${w.orgA2.id}`, { token: w.tokens.aAdmin });
    expect(deleted.status).toBe(200);
    expect(await names('aAdmin')).toEqual(['A1 Annex', 'A1 HQ']);

    // Another module writing through the same connection, without going through tenancy.
    t.db.update(sites).set({ name: 'A1 Main' }).where(eq(sites.id, w.siteA1a.id)).run();
    expect(await names('aAdmin')).toEqual(['A1 Annex', 'A1 Main']);

    // Another connection to the same database file (another process would look the same).
    await writeAsAnotherProcess(path.join(t.dataDir, 'svc.db'), 'UPDATE sites SET name = ? WHERE id = ?', 'A1 Elsewhere', w.siteA1a.id);
    expect(await names('aAdmin')).toEqual(['A1 Annex', 'A1 Elsewhere']);
  });
});

/** The same mechanism on the other list and get routes: a write through the API shows in the next answer, each
 * caller gets its own, and no field the schema does not list ever leaves the server, kept or not. */
describe('GET answers kept until the next write: every list and get route', () => {
  let t: TestApp;
  let w: World;
  const get = async (url: string, auth: { token?: string; apiKey?: string }) => {
    const res = await t.call('GET', `${API}${url}`, auth);
    expect(res.status, `${url}: ${res.text}`).toBe(200);
    return res;
  };

  beforeEach(async () => {
    t = await createTestApp();
    w = await seedWorld(t, { mfa: true });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await t.close();
  });

  it('01§4.1 §4.3 §4.7 users, roles, organizations and API keys: each write shows in the next answer', async () => {
    const token = w.tokens.aAdmin;
    const twice = async (url: string) => {
      const first = await get(url, { token });
      expect((await get(url, { token })).text).toBe(first.text);
      return first.body;
    };
    const roleCount = (await twice('/roles')).data.length;
    const role = await t.call('POST', `${API}/roles`, {
      token,
      body: { name: 'Kept role', permissions: [{ resource: 'sites', action: 'read' }] },
    });
    expect(role.status).toBe(201);
    expect((await twice('/roles')).data.length).toBe(roleCount + 1);
    expect((await twice(`/roles/${role.body.id}`)).name).toBe('Kept role');
    await t.call('PATCH', `${API}/roles/${role.body.id}`, { token, body: { name: 'Renamed role' } });
    expect((await twice(`/roles/${role.body.id}`)).name).toBe('Renamed role');

    const org = await twice(`/orgs/organizations/${w.orgA1.id}`);
    await t.call('PATCH', `${API}/orgs/organizations/${w.orgA1.id}`, { token, body: { name: `${org.name} renamed` } });
    expect((await twice(`/orgs/organizations/${w.orgA1.id}`)).name).toBe(`${org.name} renamed`);

    const users = (await twice('/users')).pagination.total;
    const invited = await t.call('POST', `${API}/users/invite`, {
      token,
      body: { email: 'kept@example.test', name: 'Kept', roleId: ROLES.partnerViewer },
    });
    expect(invited.status).toBe(201);
    expect((await twice('/users')).pagination.total).toBe(users + 1);

    const keys = (await twice(`/api-keys?orgId=${w.orgA1.id}`)).pagination.total;
    const key = await t.call('POST', `${API}/api-keys`, {
      token,
      body: { orgId: w.orgA1.id, name: 'kept', scopes: ['*'] },
    });
    expect(key.status).toBe(201);
    expect((await twice(`/api-keys?orgId=${w.orgA1.id}`)).pagination.total).toBe(keys + 1);
    await t.call('DELETE', `${API}/api-keys/${key.body.id}`, { token });
    expect((await twice(`/api-keys/${key.body.id}`)).status).toBe('revoked');
  });

  it('01§4.3 the same route and input for callers of different reach: each gets its own answer', async () => {
    const seen = new Map<string, string>();
    for (const who of ['system', 'aAdmin', 'bAdmin', 'siteUser', 'system', 'bAdmin'] as const) {
      const text = (await get('/orgs/', { token: w.tokens[who] })).text;
      if (seen.has(who)) expect(text).toBe(seen.get(who));
      seen.set(who, text);
    }
    expect(seen.get('bAdmin')).not.toBe(seen.get('aAdmin'));
    expect(seen.get('bAdmin')).not.toContain(w.orgA1.id);
  });

  it('01§4.3 a kept answer is the same bytes, type and length as the fresh one (non-ASCII text included)', async () => {
    const token = w.tokens.aAdmin;
    const made = await t.call('POST', `${API}/orgs/sites`, { token, body: { orgId: w.orgA1.id, name: 'Zürich ☃ 東京' } });
    expect(made.status).toBe(201);
    const hits = vi.spyOn(ReadCache.prototype, 'lookup');
    try {
      const answers = [];
      for (let i = 0; i < 3; i++) {
        const res = await t.app.inject({ method: 'GET', url: `${API}/orgs/sites`, headers: { authorization: `Bearer ${token}` } });
        expect(res.statusCode).toBe(200);
        answers.push(res);
      }
      // The first answer was computed (nothing kept after the write), the next two were the kept one.
      const kept = hits.mock.results.filter((r) => r.value && typeof r.value === 'object' && 'body' in r.value);
      expect(kept.length).toBe(2);
      const [fresh, ...again] = answers;
      if (!fresh) throw new Error('no answer');
      expect(fresh.body).toContain('Zürich ☃ 東京');
      for (const res of again) {
        expect(res.rawPayload.equals(fresh.rawPayload)).toBe(true);
        expect(res.headers['content-type']).toBe(fresh.headers['content-type']);
        expect(res.headers['content-length']).toBe(String(fresh.rawPayload.length));
        expect(fresh.headers['content-length']).toBe(String(fresh.rawPayload.length));
      }
      expect(fresh.headers['content-type']).toBe('application/json; charset=utf-8');
      // The same bytes as the answer's JSON text encoded once: what Fastify would have sent for the object.
      expect(fresh.rawPayload.equals(Buffer.from(JSON.stringify(JSON.parse(fresh.body)), 'utf8'))).toBe(true);
    } finally {
      hits.mockRestore();
    }
  });

  it('01§3 an answer derived from the clock (a key past its expiry) is at most a second old', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const token = w.tokens.system;
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const key = await t.call('POST', `${API}/api-keys`, {
      token,
      body: { orgId: w.orgA1.id, name: 'soon', scopes: ['*'], expiresAt },
    });
    expect((await get(`/api-keys/${key.body.id}`, { token })).body.status).toBe('active');
    vi.setSystemTime(Date.now() + 61_000);
    expect((await get(`/api-keys/${key.body.id}`, { token })).body.status).toBe('expired');
  });

  it('01§2.1 DESIGN "Errors": no field the schema does not list leaves the server, first answer or kept', async () => {
    const token = w.tokens.system;
    const key = await t.call('POST', `${API}/api-keys`, {
      token,
      body: { orgId: w.orgA1.id, name: 'hashed', scopes: ['*'] },
    });
    const enrollment = await t.call('POST', `${API}/enrollment-keys`, {
      token,
      body: { orgId: w.orgA1.id, name: 'agents' },
    });
    expect(enrollment.status).toBe(201);
    const secrets = [
      ...t.db.$client
        .prepare<[], { h: string }>('SELECT key_hash AS h FROM api_keys UNION ALL SELECT key_hash FROM enrollment_keys')
        .all()
        .map((r) => r.h),
      ...t.db.$client
        .prepare<[], { h: string | null }>('SELECT password_hash AS h FROM users')
        .all()
        .flatMap((r) => (r.h ? [r.h] : [])),
    ];
    expect(secrets.length).toBeGreaterThan(3);
    const urls = [
      '/api-keys',
      `/api-keys/${key.body.id}`,
      '/enrollment-keys',
      `/enrollment-keys/${enrollment.body.id}`,
      '/users',
      `/users/${w.users.aAdmin.id}`,
      '/users/me',
    ];
    for (const url of urls) {
      for (let i = 0; i < 2; i++) {
        const { text } = await get(url, { token });
        for (const unlisted of ['keyHash', 'passwordHash', 'key_hash', 'password_hash', ...secrets])
          expect(text, url).not.toContain(unlisted);
      }
    }
    const byKey = await get('/users', { apiKey: key.body.key });
    for (const secret of secrets) expect(byKey.text).not.toContain(secret);
  });
});

/** API keys are looked up by hash through a ReadCache: every change to a key, its organization or its partner,
 * however it is made, applies to the very next request. */
describe('API keys looked up until the next write (01 §5.2)', () => {
  let t: TestApp;
  let w: World;
  let key: string;
  let keyId: string;
  const status = async () => (await t.call('GET', `${API}/orgs/sites`, { apiKey: key })).status;
  const otherConnection = (statement: string, ...params: unknown[]) =>
    writeAsAnotherProcess(path.join(t.dataDir, 'svc.db'), statement, ...params);

  beforeEach(async () => {
    t = await createTestApp();
    w = await seedWorld(t, { mfa: true });
    const res = await t.call('POST', `${API}/api-keys`, {
      token: w.tokens.system,
      body: { orgId: w.orgA1.id, name: 'k', scopes: ['sites:read'] },
    });
    key = res.body.key as string;
    keyId = res.body.id as string;
    expect(await status()).toBe(200);
    expect(await status()).toBe(200);
  });
  afterEach(async () => t.close());

  it('01§4.1 a revocation through the API refuses the key at once', async () => {
    expect((await t.call('DELETE', `${API}/api-keys/${keyId}`, { token: w.tokens.system })).status).toBe(200);
    const res = await t.call('GET', `${API}/orgs/sites`, { apiKey: key });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('API_KEY_REVOKED');
  });

  it('01§5.4 scopes changed through the API apply at once', async () => {
    const update = await t.call('PATCH', `${API}/api-keys/${keyId}`, {
      token: w.tokens.system,
      body: { scopes: ['devices:read'] },
    });
    expect(update.status).toBe(200);
    const res = await t.call('GET', `${API}/orgs/sites`, { apiKey: key });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('01§5.2 a key revoked by another connection to the database is refused from its next event-loop turn', async () => {
    await otherConnection("UPDATE api_keys SET status = 'revoked' WHERE id = ?", keyId);
    expect(await status()).toBe(401);
  });

  it('01§5.2 a suspended partner or a deleted organization, written directly, stops the key at once', async () => {
    await otherConnection("UPDATE partners SET status = 'suspended' WHERE id = ?", w.partnerA.id);
    expect(await status()).toBe(403);
    await otherConnection("UPDATE partners SET status = 'active' WHERE id = ?", w.partnerA.id);
    expect(await status()).toBe(200);
    t.db.run(sql`UPDATE organizations SET deleted_at = ${new Date().toISOString()} WHERE id = ${w.orgA1.id}`);
    expect(await status()).toBe(403);
  });
});

describe('ReadCache', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => t.close());

  it('keeps a value until any write, counts a rolled-back write as one, keeps nothing new inside a transaction and serves what it kept until the transaction writes', () => {
    const cache = new ReadCache<{ n: number[] }>(t.db.$client);
    expect(cache.lookup('k')).toBeUndefined();
    const value = cache.store('k', { n: [1] });
    expect(cache.lookup('k')).toBe(value);

    t.db.run(sql`CREATE TABLE IF NOT EXISTS scratch (x)`);
    t.db.run(sql`INSERT INTO scratch VALUES (1)`);
    expect(cache.lookup('k')).toBeUndefined();

    cache.store('k', { n: [2] });
    expect(cache.lookup('k')?.n).toEqual([2]);
    expect(() =>
      t.db.$client.transaction(() => {
        t.db.run(sql`INSERT INTO scratch VALUES (2)`);
        throw new Error('roll back');
      })(),
    ).toThrow('roll back');
    expect(cache.lookup('k')).toBeUndefined();

    t.db.$client.transaction(() => {
      expect(cache.lookup('k')).toBeUndefined();
      cache.store('k', { n: [3] });
    })();
    expect(cache.lookup('k')).toBeUndefined();

    // What was kept before a transaction serves inside it until the transaction writes; a write rolled back with
    // it leaves nothing kept either. (The transactions above share the turn's group: commit it first.)
    t.commits.flush();
    cache.lookup('k');
    const before = cache.store('k', { n: [4] });
    expect(() =>
      t.db.$client.transaction(() => {
        expect(cache.lookup('k')).toBe(before);
        t.db.run(sql`INSERT INTO scratch VALUES (3)`);
        expect(cache.lookup('k')).toBeUndefined();
        throw new Error('roll back');
      })(),
    ).toThrow('roll back');
    expect(cache.lookup('k')).toBeUndefined();
  });

  it('freezes what it gives out, so no caller can change what the next one gets', () => {
    const cache = new ReadCache<{ rows: { settings: Record<string, unknown> }[] }>(t.db.$client);
    cache.lookup('k');
    const value = cache.store('k', { rows: [{ settings: { a: 1 } }] });
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.rows[0]?.settings)).toBe(true);
    expect(() => {
      (value.rows[0] as { settings: Record<string, unknown> }).settings.a = 2;
    }).toThrow(TypeError);
  });

  it('keeps an entry at most maxAgeMs', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const cache = new ReadCache<{ i: number }>(t.db.$client, 8, 1000);
      cache.lookup('k');
      cache.store('k', { i: 1 });
      vi.setSystemTime(Date.now() + 1000);
      expect(cache.lookup('k')?.i).toBe(1);
      vi.setSystemTime(Date.now() + 1);
      expect(cache.lookup('k')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('with a stamp, keeps nothing computed before a write that came in between (a loader that awaits)', () => {
    const cache = new ReadCache<{ i: number }>(t.db.$client);
    t.db.run(sql`CREATE TABLE IF NOT EXISTS scratch (x)`);
    const stamp = cache.stamp();
    // Another request writes, then looks up (which resets the counters), while the first one awaits.
    t.db.run(sql`INSERT INTO scratch VALUES (1)`);
    expect(cache.lookup('k')).toBeUndefined();
    cache.store('k', { i: 1 }, stamp);
    expect(cache.lookup('k')).toBeUndefined();
    const fresh = cache.stamp();
    cache.store('k', { i: 2 }, fresh);
    expect(cache.lookup('k')?.i).toBe(2);
  });

  it("reads another connection's version once per turn and VERSION_READ_SERVES_MS, for every cache on the connection; its commits show after either", async () => {
    const file = path.join(t.dataDir, 'svc.db');
    t.db.run(sql`CREATE TABLE IF NOT EXISTS scratch (x)`);
    t.commits.flush();
    const [a, b] = [new ReadCache<{ i: number }>(t.db.$client), new ReadCache<{ i: number }>(t.db.$client)];
    const keep = () => {
      a.lookup('k');
      a.store('k', { i: 1 });
      b.lookup('k');
      b.store('k', { i: 2 });
    };
    const other = new Database(file);
    const now = vi.spyOn(performance, 'now');
    try {
      // The clock held: one turn, one version read, shared by both caches.
      now.mockReturnValue(1_000);
      keep();
      other.prepare('INSERT INTO scratch VALUES (1)').run();
      expect(a.lookup('k')?.i).toBe(1);
      expect(b.lookup('k')?.i).toBe(2);
      // Past the bound, in the same turn: read again, both dropped.
      now.mockReturnValue(1_000 + VERSION_READ_SERVES_MS + 0.5);
      expect(a.lookup('k')).toBeUndefined();
      expect(b.lookup('k')).toBeUndefined();
      // The next turn reads again whatever the clock says.
      keep();
      other.prepare('INSERT INTO scratch VALUES (2)').run();
      expect(a.lookup('k')?.i).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(a.lookup('k')).toBeUndefined();
      expect(b.lookup('k')).toBeUndefined();
    } finally {
      now.mockRestore();
      other.close();
    }
  });

  it('holds at most maxEntries values, dropping the oldest', () => {
    const cache = new ReadCache<{ i: number }>(t.db.$client, 2);
    for (const key of ['a', 'b', 'c']) {
      cache.lookup(key);
      cache.store(key, { i: key.charCodeAt(0) });
    }
    expect(cache.lookup('a')).toBeUndefined();
    expect(cache.lookup('b')?.i).toBe(98);
    expect(cache.lookup('c')?.i).toBe(99);
  });
});
