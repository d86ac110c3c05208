import { sql } from 'drizzle-orm';
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { afterEach, describe, expect, it } from 'vitest';
import { ONE_TIME_STATEMENTS, openDatabase, type Db } from '../../src/server/db/connection.js';

const things = sqliteTable('things', { n: integer().notNull(), label: text().notNull() });

describe('statements of one-time queries (db/connection.ts)', () => {
  let db: Db;
  afterEach(() => db.$client.close());

  function seeded(): Db {
    db = openDatabase(':memory:');
    db.run(sql`CREATE TABLE things (n INTEGER NOT NULL, label TEXT NOT NULL)`);
    db.insert(things).values([{ n: 1, label: 'one' }, { n: 2, label: 'two' }]).run();
    return db;
  }

  it('a statement left in raw mode by a mapped selection reads plain rows for a query of the same text', () => {
    seeded();
    // drizzle maps this selection itself from raw rows (stmt.raw()) ...
    const mapped = db.select({ n: things.n }).from(things).where(sql`${things.n} = 1`).get();
    expect(mapped).toEqual({ n: 1 });
    const text = db.select({ n: things.n }).from(things).where(sql`${things.n} = 1`).toSQL().sql;
    // ... and reads plain rows of the same SQL text, with no fields to map.
    expect(db.get(sql.raw(text))).toEqual({ n: 1 });
    expect(db.all(sql.raw(text))).toEqual([{ n: 1 }]);
    expect(db.select({ n: things.n }).from(things).where(sql`${things.n} = 1`).all()).toEqual([{ n: 1 }]);
  });

  it('a prepared query keeps a statement of its own, whatever one-time queries of the same text do', () => {
    seeded();
    const prepared = db.select({ n: things.n, label: things.label }).from(things).where(sql`${things.n} = ${sql.placeholder('n')}`).prepare();
    const text = prepared.getQuery().sql;
    expect(db.get(sql`${sql.raw(text.replace('?', '2'))}`)).toEqual({ n: 2, label: 'two' });
    expect(prepared.get({ n: 2 })).toEqual({ n: 2, label: 'two' });
    expect(db.all(sql.raw(text.replace('?', '1')))).toEqual([{ n: 1, label: 'one' }]);
    expect(prepared.all({ n: 1 })).toEqual([{ n: 1, label: 'one' }]);
  });

  it(`keeps at most ${ONE_TIME_STATEMENTS} texts, and queries past that still answer`, () => {
    seeded();
    for (let i = 0; i < ONE_TIME_STATEMENTS + 50; i++) {
      expect(db.get<{ v: number }>(sql.raw(`SELECT ${i} AS v`))).toEqual({ v: i });
    }
    expect(db.get<{ v: number }>(sql.raw('SELECT 0 AS v'))).toEqual({ v: 0 });
    expect(db.select().from(things).all()).toHaveLength(2);
  });
});
