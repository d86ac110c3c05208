import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countWrites } from '../../src/server/db/write-counter.js';

/** db/write-counter.ts: the narrow write counters behind the kept API keys and agent tokens (lib/read-cache.ts). */
describe('write counters kept by TEMP triggers (db/write-counter.ts)', () => {
  let sqlite: Database.Database;
  let counter: () => number;
  beforeEach(() => {
    sqlite = new Database(':memory:');
    sqlite.exec(`CREATE TABLE watched (id INTEGER PRIMARY KEY, status TEXT, seen TEXT);
                 CREATE TABLE whole (id INTEGER PRIMARY KEY, name TEXT);
                 CREATE TABLE other (id INTEGER PRIMARY KEY, name TEXT);`);
    const read = sqlite.prepare<[], number>(countWrites(sqlite, 'test', [{ table: 'watched', columns: ['status'] }, { table: 'whole' }]));
    counter = () => read.pluck().get() as number;
  });
  afterEach(() => sqlite.close());

  it('counts inserts and deletes, and the updates that change a watched column', () => {
    expect(counter()).toBe(0);
    sqlite.exec("INSERT INTO watched (id, status, seen) VALUES (1, 'online', 'a')");
    expect(counter()).toBe(1);
    sqlite.exec("UPDATE watched SET status = 'online', seen = 'b' WHERE id = 1"); // the same status again
    sqlite.exec("UPDATE watched SET seen = 'c' WHERE id = 1");
    expect(counter()).toBe(1);
    sqlite.exec("UPDATE watched SET status = 'offline' WHERE id = 1");
    sqlite.exec('UPDATE watched SET status = NULL WHERE id = 1'); // to NULL is a change too
    expect(counter()).toBe(3);
    sqlite.exec("INSERT INTO whole (id, name) VALUES (1, 'x'); UPDATE whole SET name = 'x'; DELETE FROM whole");
    expect(counter()).toBe(6); // a table watched whole: every update counts
    sqlite.exec("INSERT INTO other (id, name) VALUES (1, 'x'); DELETE FROM watched");
    expect(counter()).toBe(7);
  });

  it('a rolled-back write takes its count back; creating the counter again changes nothing', () => {
    sqlite.exec("INSERT INTO watched (id, status) VALUES (1, 'online')");
    expect(() =>
      sqlite.transaction(() => {
        sqlite.exec("UPDATE watched SET status = 'offline'");
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(counter()).toBe(1);
    countWrites(sqlite, 'test', [{ table: 'watched', columns: ['status'] }]);
    sqlite.exec("UPDATE watched SET status = 'offline'");
    expect(counter()).toBe(2); // one trigger per write still, and the count kept
  });

  it('refuses to be created inside a transaction (its TEMP table and triggers would roll back with it)', () => {
    expect(() => sqlite.transaction(() => countWrites(sqlite, 'inside', [{ table: 'watched' }]))()).toThrow(/outside a transaction/);
    expect(sqlite.prepare("SELECT count(*) FROM sqlite_temp_master WHERE name LIKE 'svc_inside%'").pluck().get()).toBe(0);
  });

  it('takes plain SQL names only (they are written into the triggers)', () => {
    expect(() => countWrites(sqlite, 'x; DROP TABLE watched', [])).toThrow(/not a plain SQL name/);
    expect(() => countWrites(sqlite, 'ok', [{ table: 'watched', columns: ['status = 1 OR 1'] }])).toThrow(/not a plain SQL name/);
  });
});
