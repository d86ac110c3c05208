import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { asc, eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STATEMENT_CACHE_SIZE, applyMigrations, keepStatements, openDatabase, plannedOnce, type Db } from '../../src/server/db/connection.js';
import { sites } from '../../src/server/db/schema/index.js';

/** db/connection.ts: every connection keeps its compiled statements by SQL text, so drizzle's one-call queries
 * are compiled by SQLite once, not on every request. */
describe('statements kept by SQL text (db/connection.ts)', () => {
  let dir: string;
  let db: Db;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-stmt-'));
    db = openDatabase(path.join(dir, 'svc.db'));
    applyMigrations(db);
  });
  afterEach(() => {
    db.$client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the same text gives the same compiled statement; another text another one', () => {
    const a = db.$client.prepare('SELECT 1 AS one');
    expect(db.$client.prepare('SELECT 1 AS one')).toBe(a);
    expect(db.$client.prepare('SELECT 2 AS two')).not.toBe(a);
  });

  it('a query drizzle builds for one call reuses its compiled statement, and answers as before', () => {
    const texts: string[] = [];
    const sqlite = db.$client;
    const cached = sqlite.prepare.bind(sqlite);
    const compiled = new Set<unknown>();
    sqlite.prepare = ((source: string) => {
      texts.push(source);
      const stmt = cached(source);
      compiled.add(stmt);
      return stmt;
    }) as typeof sqlite.prepare;
    for (let i = 0; i < 3; i++) {
      expect(db.select().from(sites).where(eq(sites.id, `missing-${i}`)).all()).toEqual([]);
    }
    expect(texts).toHaveLength(3);
    expect(compiled.size).toBe(1);
  });

  it('a statement comes back in the default mode whatever its last holder set (rows as objects)', () => {
    const plucked = db.$client.prepare('SELECT 7 AS n').pluck();
    expect(plucked.get()).toBe(7);
    expect(db.$client.prepare('SELECT 7 AS n').get()).toEqual({ n: 7 });
    db.$client.prepare('SELECT 7 AS n').raw(true);
    expect(db.$client.prepare('SELECT 7 AS n').get()).toEqual({ n: 7 });
    // Statements that return no data have no mode, and are kept too.
    const write = db.$client.prepare('CREATE TABLE IF NOT EXISTS scratch (x INTEGER)');
    expect(db.$client.prepare('CREATE TABLE IF NOT EXISTS scratch (x INTEGER)')).toBe(write);
  });

  it('a statement whose iterator is still open is not handed out again (the caller gets a fresh one)', () => {
    const first = db.$client.prepare('SELECT value FROM json_each(?)');
    const rows = first.iterate('[1,2,3]');
    rows.next();
    const second = db.$client.prepare('SELECT value FROM json_each(?)');
    expect(second).not.toBe(first);
    expect(second.all('[4]')).toEqual([{ value: 4 }]);
    rows.return?.();
    expect(db.$client.prepare('SELECT value FROM json_each(?)')).toBe(first);
  });

  it('at most the configured number are kept, the least recently used going first', () => {
    const sqlite = new Database(':memory:');
    try {
      keepStatements(sqlite, 2);
      const one = sqlite.prepare('SELECT 1');
      const two = sqlite.prepare('SELECT 2');
      expect(sqlite.prepare('SELECT 1')).toBe(one); // now 2 is the oldest
      sqlite.prepare('SELECT 3');
      expect(sqlite.prepare('SELECT 1')).toBe(one);
      expect(sqlite.prepare('SELECT 2')).not.toBe(two);
    } finally {
      sqlite.close();
    }
    expect(STATEMENT_CACHE_SIZE).toBeGreaterThanOrEqual(256);
  });

  it('a LIMIT or LIKE parameter is compiled as `+?` (the planner reads a plain one and recompiles at each bind); pages and matches read the same', () => {
    expect(plannedOnce('select "id" from "sites" order by "name" limit ? offset ?')).toBe('select "id" from "sites" order by "name" limit +? offset ?');
    expect(plannedOnce('SELECT * FROM (SELECT a FROM t LIMIT ?) LIMIT ?')).toBe('SELECT * FROM (SELECT a FROM t LIMIT +?) LIMIT +?');
    // Only the clause: a column whose name ends in "limit" and a literal limit are left as they are.
    expect(plannedOnce('SELECT rate_limit ?, x FROM t LIMIT 5')).toBe('SELECT rate_limit ?, x FROM t LIMIT 5');
    expect(plannedOnce("select 1 from t where (a LIKE ? ESCAPE '\\' OR b NOT LIKE ?) limit ?")).toBe(
      "select 1 from t where (a LIKE +? ESCAPE '\\' OR b NOT LIKE +?) limit +?",
    );

    const sqlite = db.$client;
    sqlite.exec("CREATE TABLE pages (n INTEGER PRIMARY KEY); INSERT INTO pages (n) VALUES (1), (2), (3), (4), (5)");
    const page = sqlite.prepare<[number, number], number>('SELECT n FROM pages ORDER BY n LIMIT ? OFFSET ?');
    expect(page.source).toBe('SELECT n FROM pages ORDER BY n LIMIT +? OFFSET ?');
    const read = (limit: number, offset: number) => page.pluck().all(limit, offset);
    expect(read(2, 0)).toEqual([1, 2]);
    expect(read(2, 4)).toEqual([5]);
    expect(read(0, 0)).toEqual([]);
    expect(read(-1, 3)).toEqual([4, 5]); // a negative limit is no limit, as in SQLite
    const matching = sqlite.prepare<[string], number>("SELECT n FROM pages WHERE CAST(n AS TEXT) LIKE ? ESCAPE '\\' ORDER BY n");
    expect(matching.source).toContain('LIKE +?');
    expect(matching.pluck().all('%4%')).toEqual([4]);
    expect(matching.pluck().all('_')).toEqual([1, 2, 3, 4, 5]);
    expect(matching.pluck().all('\\_')).toEqual([]);
    // drizzle's `.limit(n)` binds n: the same rewrite, the same rows.
    const query = db.select({ name: sites.name }).from(sites).orderBy(asc(sites.name)).limit(2);
    expect(query.toSQL().sql).toMatch(/limit \?$/);
    expect(query.all()).toEqual([]);
  });
});
