import path from 'node:path';
import Database from 'better-sqlite3';
import { eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sites } from '../../src/server/db/schema/index.js';
import { ReadCache, isFrozenDeep } from '../../src/server/lib/read-cache.js';
import { seedWorld, type World, type WorldCaller } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const API = '/api/v1';

/** The site list is kept while the database is unchanged (lib/read-cache.ts): these prove that no write, made
 * any way, and no other caller's reach ever shows through a kept page. */
describe('site list pages kept until the next write (01 §4.3)', () => {
  let t: TestApp;
  let w: World;
  const names = async (who: WorldCaller, query = '') => {
    const res = await t.call('GET', `${API}/orgs/sites${query}`, { token: w.tokens[who] });
    expect(res.status).toBe(200);
    expect(res.body.pagination.total).toBe(res.body.data.length);
    return (res.body.data as { name: string }[]).map((s) => s.name);
  };

  beforeEach(async () => {
    t = await createTestApp();
    w = await seedWorld(t, { mfa: true });
  });
  afterEach(async () => t.close());

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
    const other = new Database(path.join(t.dataDir, 'svc.db'));
    try {
      other.prepare('UPDATE sites SET name = ? WHERE id = ?').run('A1 Elsewhere', w.siteA1a.id);
    } finally {
      other.close();
    }
    expect(await names('aAdmin')).toEqual(['A1 Annex', 'A1 Elsewhere']);
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
  const otherConnection = (statement: string, ...params: unknown[]) => {
    const other = new Database(path.join(t.dataDir, 'svc.db'));
    try {
      other.prepare(statement).run(...params);
    } finally {
      other.close();
    }
  };

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

  it('01§5.2 a key revoked by another connection to the database is refused at once', async () => {
    otherConnection("UPDATE api_keys SET status = 'revoked' WHERE id = ?", keyId);
    expect(await status()).toBe(401);
  });

  it('01§5.2 a suspended partner or a deleted organization, written directly, stops the key at once', async () => {
    otherConnection("UPDATE partners SET status = 'suspended' WHERE id = ?", w.partnerA.id);
    expect(await status()).toBe(403);
    otherConnection("UPDATE partners SET status = 'active' WHERE id = ?", w.partnerA.id);
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

  it('keeps a value until any write, counts a rolled-back write as one, and keeps nothing inside a transaction', () => {
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
  });

  it('freezes what it gives out, so no caller can change what the next one gets', () => {
    const cache = new ReadCache<{ rows: { settings: Record<string, unknown> }[] }>(t.db.$client);
    cache.lookup('k');
    const value = cache.store('k', { rows: [{ settings: { a: 1 } }] });
    expect(isFrozenDeep(value)).toBe(true);
    expect(Object.isFrozen(value.rows[0]?.settings)).toBe(true);
    expect(() => {
      (value.rows[0] as { settings: Record<string, unknown> }).settings.a = 2;
    }).toThrow(TypeError);
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
