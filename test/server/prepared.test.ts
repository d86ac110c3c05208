import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { asc, desc, eq, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyMigrations, openDatabase, type Db } from '../../src/server/db/connection.js';
import { WRITE_STATEMENTS_KEPT, insertRow, preparedQueries, rowById, updateRow, valueQuery } from '../../src/server/db/prepared.js';
import { organizations, partners, sites, users } from '../../src/server/db/schema/index.js';
import { pageOfRows, preparedPage, readPage } from '../../src/server/lib/paging.js';

/** Counts what the connection is handed to prepare: drizzle hands it the SQL of every query it builds. */
function countBuilds(db: Db): { readonly n: number } {
  const sqlite = db.$client;
  const prepare = sqlite.prepare.bind(sqlite);
  const counter = { n: 0 };
  sqlite.prepare = (source: string) => {
    counter.n++;
    return prepare(source);
  };
  return counter;
}

const siteById = preparedQueries((db) => ({
  byId: db.select().from(sites).where(eq(sites.id, sql.placeholder('id'))).prepare(),
}));

/** db/prepared.ts: statements declared once per database, and row writes through kept statements. */
describe('prepared statements per database (db/prepared.ts)', () => {
  let dir: string;
  const open: Db[] = [];
  const fresh = (name: string): Db => {
    const db = openDatabase(path.join(dir, `${name}.db`));
    applyMigrations(db);
    open.push(db);
    return db;
  };
  const orgIn = (db: Db): string => {
    const partner = insertRow(db, partners, { name: 'P', slug: `p-${Math.random()}` });
    return insertRow(db, organizations, { partnerId: partner.id, name: 'O', slug: 'o' }).id;
  };
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-prepared-'));
  });
  afterEach(() => {
    for (const db of open.splice(0)) db.$client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a declared query is built once per database and reused by every later call', () => {
    const db = fresh('a');
    const builds = countBuilds(db);
    expect(siteById(db).byId.get({ id: 'missing' })).toBeUndefined();
    const first = builds.n;
    expect(first).toBe(1);
    const orgId = orgIn(db);
    const builtByInserts = builds.n;
    const site = insertRow(db, sites, { orgId, name: 'S1' });
    expect(builds.n).toBe(builtByInserts + 1);
    for (let i = 0; i < 5; i++) expect(siteById(db).byId.get({ id: site.id })?.name).toBe('S1');
    expect(siteById(db)).toBe(siteById(db));
    expect(builds.n).toBe(builtByInserts + 1);
  });

  it('two databases in one process each get their own statements and see only their own rows', () => {
    const a = fresh('a');
    const b = fresh('b');
    const inA = insertRow(a, sites, { orgId: orgIn(a), name: 'only in a' });
    const inB = insertRow(b, sites, { orgId: orgIn(b), name: 'only in b' });
    expect(siteById(a)).not.toBe(siteById(b));
    expect(siteById(a).byId.get({ id: inA.id })?.name).toBe('only in a');
    expect(siteById(a).byId.get({ id: inB.id })).toBeUndefined();
    expect(siteById(b).byId.get({ id: inB.id })?.name).toBe('only in b');
    expect(updateRow(a, sites, inB.id, { name: 'x' })).toBeUndefined();
    expect(updateRow(b, sites, inB.id, { name: 'renamed in b' })?.name).toBe('renamed in b');
    a.$client.close();
    // The other database's statements still run after one is closed.
    expect(siteById(b).byId.get({ id: inB.id })?.name).toBe('renamed in b');
    expect(insertRow(b, sites, { orgId: inB.orgId, name: 'after a closed' }).orgId).toBe(inB.orgId);
  });

  it('insertRow runs $defaultFn per row, applies constant defaults, keeps a null JSON column NULL', () => {
    const db = fresh('a');
    const orgId = orgIn(db);
    const builds = countBuilds(db);
    const rows = [0, 1, 2].map((i) => insertRow(db, sites, { orgId, name: `S${i}` }));
    expect(builds.n).toBe(1);
    expect(new Set(rows.map((r) => r.id)).size).toBe(3);
    for (const row of rows) {
      expect(row.timezone).toBe('UTC');
      expect(row.settings).toEqual({});
      expect(row.address).toBeNull();
      expect(Date.parse(row.createdAt)).not.toBeNaN();
      expect(db.select().from(sites).where(eq(sites.id, row.id)).get()).toEqual(row);
    }
    const raw = db.$client.prepare('SELECT address, typeof(address) AS t, settings FROM sites WHERE id = ?').get(rows[0]?.id);
    expect(raw).toEqual({ address: null, t: 'null', settings: '{}' });
    const withJson = insertRow(db, sites, { orgId, name: 'J', address: { city: 'Berlin' }, timezone: 'Europe/Berlin' });
    expect(withJson.address).toEqual({ city: 'Berlin' });
    expect(withJson.timezone).toBe('Europe/Berlin');
    // The row handed back (made from the values written, no RETURNING) is the row a read gives, every column.
    expect(db.select().from(sites).where(eq(sites.id, withJson.id)).get()).toEqual(withJson);
    const partner = insertRow(db, partners, { name: 'P2', slug: 'p2', settings: { theme: 'dark', n: 1.5 }, maxDevices: 10 });
    expect(db.select().from(partners).where(eq(partners.id, partner.id)).get()).toEqual(partner);
    const org = insertRow(db, organizations, { partnerId: partner.id, name: 'O2', slug: 'o2', ssoConfig: null });
    expect(db.select().from(organizations).where(eq(organizations.id, org.id)).get()).toEqual(org);
  });

  it('valueQuery plucks the one column of the first row, undefined for none, in any mode the shared statement was left in', () => {
    const db = fresh('value');
    const orgId = orgIn(db);
    const select = db.select({ partnerId: organizations.partnerId }).from(organizations).where(eq(organizations.id, sql.placeholder('id')));
    const partnerOf = valueQuery<string>(db, select);
    const expected = db.select().from(organizations).where(eq(organizations.id, orgId)).get()?.partnerId;
    expect(expected).toBeTruthy();
    expect(partnerOf.get({ id: orgId })).toBe(expected);
    // Another holder of the same SQL text (the connection shares it) reads it as objects in between.
    expect(select.prepare().get({ id: orgId })).toEqual({ partnerId: expected });
    expect(partnerOf.get({ id: orgId })).toBe(expected);
    expect(partnerOf.get({ id: 'nobody' })).toBeUndefined();
    expect(() => valueQuery(db, db.select({ id: organizations.id, name: organizations.name }).from(organizations))).toThrow(/one column/);
  });

  it('updateRow sets only the named columns, null as NULL, and reuses one statement per set of columns', () => {
    const db = fresh('a');
    const orgId = orgIn(db);
    const site = insertRow(db, sites, { orgId, name: 'S', address: { city: 'Paris' } });
    const builds = countBuilds(db);
    const renamed = updateRow(db, sites, site.id, { name: 'S2', timezone: undefined });
    expect(renamed).toEqual({ ...site, name: 'S2' });
    updateRow(db, sites, site.id, { name: 'S3' });
    expect(builds.n).toBe(1);
    const cleared = updateRow(db, sites, site.id, { address: null, updatedAt: '2030-01-01T00:00:00.000Z' });
    expect(builds.n).toBe(2);
    expect(cleared).toMatchObject({ name: 'S3', address: null, updatedAt: '2030-01-01T00:00:00.000Z' });
    expect(db.$client.prepare('SELECT typeof(address) AS t FROM sites WHERE id = ?').get(site.id)).toEqual({ t: 'null' });
    expect(updateRow(db, sites, 'missing', { name: 'x' })).toBeUndefined();
    expect(() => updateRow(db, sites, site.id, {})).toThrow(/nothing to set/);
  });

  it('updateRow given the row read in its transaction hands back the row a read gives, every column, without RETURNING', () => {
    const db = fresh('known');
    const orgId = orgIn(db);
    const site = insertRow(db, sites, { orgId, name: 'S', address: { city: 'Paris' }, settings: { n: 1 } });
    const prepared: string[] = [];
    const prepare = db.$client.prepare.bind(db.$client);
    db.$client.prepare = (source: string) => {
      prepared.push(source);
      return prepare(source);
    };
    const changed = updateRow(db, sites, site, { name: 'S2', address: null, settings: { n: 2, nested: { a: [1] } }, timezone: undefined });
    expect(changed).toEqual(db.select().from(sites).where(eq(sites.id, site.id)).get());
    expect(changed).toMatchObject({ name: 'S2', address: null, settings: { n: 2, nested: { a: [1] } }, timezone: 'UTC' });
    expect(prepared.filter((text) => /^update/i.test(text))).toEqual([expect.not.stringMatching(/returning/i)]);
    // The row given is not changed; booleans and integers come back as a read maps them.
    expect(site.name).toBe('S');
    const user = insertRow(db, users, { email: 'pat@example.test', name: 'Pat' });
    const locked = updateRow(db, users, user, { mfaEnabled: true, failedLoginCount: 3, lockedUntil: '2030-01-01T00:00:00.000Z' });
    expect(locked).toEqual(db.select().from(users).where(eq(users.id, user.id)).get());
    expect(locked).toMatchObject({ mfaEnabled: true, failedLoginCount: 3 });
    // By id, the same columns run the statement with RETURNING, and agree.
    const unlocked = updateRow(db, users, user.id, { mfaEnabled: false, failedLoginCount: 0, lockedUntil: null });
    expect(unlocked).toEqual(db.select().from(users).where(eq(users.id, user.id)).get());
    expect(prepared.filter((text) => /^update/i.test(text)).at(-1)).toMatch(/returning/i);
    db.delete(sites).where(eq(sites.id, site.id)).run();
    expect(updateRow(db, sites, site, { name: 'gone' })).toBeUndefined();
  });

  it(`at most ${WRITE_STATEMENTS_KEPT} write statements are kept per database (the oldest is built again)`, () => {
    const db = fresh('a');
    const site = insertRow(db, sites, { orgId: orgIn(db), name: 'S' });
    // Every non-empty set of 8 columns of sites: 255 statements of their own.
    const names = ['name', 'timezone', 'address', 'contact', 'settings', 'updatedAt', 'createdAt', 'orgId'] as const;
    const value: Record<(typeof names)[number], unknown> = {
      name: 'n',
      timezone: 'UTC',
      address: null,
      contact: null,
      settings: {},
      updatedAt: '2030-01-01T00:00:00.000Z',
      createdAt: '2030-01-01T00:00:00.000Z',
      orgId: site.orgId,
    };
    const builds = countBuilds(db);
    const sets: Record<string, unknown>[] = [];
    for (let mask = 1; mask < 2 ** names.length; mask++) {
      sets.push(Object.fromEntries(names.filter((_, i) => mask & (1 << i)).map((n) => [n, value[n]])));
    }
    // Kept before: the inserts of partners, organizations and sites (3); with 255 sets, 258 asked for.
    expect(sets.length + 3).toBeGreaterThan(WRITE_STATEMENTS_KEPT);
    for (const set of sets) updateRow(db, sites, site.id, set);
    expect(builds.n).toBe(sets.length);
    // The newest are kept: running the last set and a site insert again builds nothing.
    updateRow(db, sites, site.id, sets.at(-1) ?? {});
    insertRow(db, sites, { orgId: site.orgId, name: 'again' });
    expect(builds.n).toBe(sets.length);
    // The oldest (the partners insert) was dropped and is built again.
    insertRow(db, partners, { name: 'P2', slug: 'p2' });
    expect(builds.n).toBe(sets.length + 1);
  });

  it('rowById reads a row as drizzle maps it (JSON parsed, booleans), undefined when absent, one statement per table, uncommitted writes of its transaction included', () => {
    const db = fresh('byid');
    const orgId = orgIn(db);
    const site = insertRow(db, sites, { orgId, name: 'S1', address: { city: 'Berlin' } });
    const builds = countBuilds(db);
    expect(rowById(db, sites, site.id)).toEqual(db.select().from(sites).where(eq(sites.id, site.id)).get());
    expect(rowById(db, sites, site.id)?.address).toEqual({ city: 'Berlin' });
    expect(rowById(db, sites, 'missing')).toBeUndefined();
    expect(rowById(db, organizations, orgId)?.id).toBe(orgId);
    // Booleans from 0/1, integers and nulls as drizzle maps them, in a table of many columns.
    const user = insertRow(db, users, { email: 'pat@example.test', name: 'Pat', mfaEnabled: true, failedLoginCount: 2 });
    const read = rowById(db, users, user.id);
    expect(read).toEqual(db.select().from(users).where(eq(users.id, user.id)).get());
    expect(read).toMatchObject({ mfaEnabled: true, isSystemAdmin: false, failedLoginCount: 2, passwordHash: null });
    const afterFirstUse = builds.n;
    for (let i = 0; i < 5; i++) rowById(db, sites, site.id);
    expect(builds.n).toBe(afterFirstUse);
    db.$client.transaction(() => {
      updateRow(db, sites, site.id, { name: 'S2' });
      expect(rowById(db, sites, site.id)?.name).toBe('S2');
    })();
    // Another database gets its own statement.
    const other = fresh('byid-other');
    expect(rowById(other, sites, site.id)).toBeUndefined();
  });

  it('preparedPage and pageOfRows read a page as drizzle maps and orders it, with the total; preparedPage builds its SQL once', () => {
    const db = fresh('page');
    const orgId = orgIn(db);
    for (let i = 0; i < 7; i++) {
      insertRow(db, sites, { orgId, name: `S${i % 3}`, address: i % 2 ? { city: `C${i}` } : null, settings: { n: i } });
    }
    const order = [asc(sites.name), desc(sites.id)];
    const statements = preparedPage(db, sites, eq(sites.orgId, sql.placeholder('orgId')), order);
    const builds = countBuilds(db);
    for (const p of [
      { page: 1, limit: 3 },
      { page: 3, limit: 3 },
      { page: 4, limit: 3 },
      { page: 1, limit: 100 },
    ]) {
      const drizzleRows = db
        .select()
        .from(sites)
        .where(eq(sites.orgId, orgId))
        .orderBy(...order)
        .limit(p.limit)
        .offset((p.page - 1) * p.limit)
        .all();
      const before = builds.n;
      const { rows, total } = readPage(statements, { orgId }, p);
      expect(builds.n).toBe(before);
      expect(rows).toEqual(drizzleRows);
      expect(total).toBe(7);
      expect(pageOfRows(db, sites, eq(sites.orgId, orgId), order, p)).toEqual({ rows: drizzleRows, total: 7 });
    }
    expect(readPage(statements, { orgId: 'nobody' }, { page: 1, limit: 3 })).toEqual({ rows: [], total: 0 });
  });
});
