import { count, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { SQLiteSelect, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/connection.js';
import { preparedShapes, rowQuery, selectRows } from '../db/prepared.js';

export interface PageQuery {
  page: number;
  limit: number;
}

export interface Paged<T> {
  data: T[];
  pagination: { page: number; limit: number; total: number };
}

/** Applies LIMIT/OFFSET of a page to a dynamic drizzle query. */
export function page<Q extends { limit(n: number): Q; offset(n: number): Q }>(query: Q, p: PageQuery): Q {
  return query.limit(p.limit).offset((p.page - 1) * p.limit);
}

/** The list envelope of 01 §4: `{data, pagination:{page, limit, total}}`. */
export function paged<T>(data: T[], p: PageQuery, total: number): Paged<T> {
  return { data, pagination: { page: p.page, limit: p.limit, total } };
}

/** COUNT(*) of a table under a condition, synchronously (drizzle's $count is a promise-like builder). */
export function countRows(db: Db, table: SQLiteTable, where?: SQL): number {
  return db.select({ n: count() }).from(table).where(where).get()?.n ?? 0;
}

/** One page of a table's rows matching `where` in `order` (e.g. newest first, id as the tie-break), and how many
 * rows match in all: the two queries of every list route. */
export function pageOfRows<T extends SQLiteTable>(db: Db, table: T, where: SQL | undefined, order: (SQL | SQLWrapper)[], p: PageQuery): { rows: T['$inferSelect'][]; total: number } {
  const rows = selectRows(db, table, (query) => page(query.where(where).orderBy(...(order as SQL[])), p));
  return { rows, total: countRows(db, table, where) };
}

/** The two prepared statements of a list route (db/prepared.ts): one page of a table's rows matching `where` in
 * `order`, with the placeholders `limit` and `offset` (read through rowQuery: rows as arrays, mapped as drizzle
 * maps them), and how many rows match in all (`n`). */
export function preparedPage<T extends SQLiteTable>(db: Db, table: T, where: SQL | undefined, order: (SQL | SQLWrapper)[]) {
  return {
    page: rowQuery(db, table, where, { orderBy: order, paged: true }),
    count: db.select({ n: count() }).from(table as SQLiteTable).where(where).prepare(),
  };
}

/** `preparedPage` for a list that reads some columns (a joined table's too): one page of what `select` reads
 * (`db.select(columns).from(table)`, any join, `.$dynamic()`) of the rows matching `where` in `order`, with the
 * placeholders `limit` and `offset`, and how many rows of `table` match in all (`n`: counted without the join, so
 * a join must add no rows, as a left join on the joined table's key). Read with readPage.
 *
 *   preparedSelectPage(db, l, db.select(columns).from(l).leftJoin(devices, on).$dynamic(), where, order)
 */
export function preparedSelectPage<Q extends SQLiteSelect>(db: Db, table: SQLiteTable, select: Q, where: SQL | undefined, order: (SQL | SQLWrapper)[]) {
  return {
    page: select
      .where(where)
      .orderBy(...(order as SQL[]))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(),
    count: db.select({ n: count() }).from(table).where(where).prepare(),
  };
}

/** Runs the two statements of `preparedPage` (or `preparedSelectPage`) for page `p`, or for the rows from `offset`
 * (a list paged by offset): its rows and the total, with `values` for the condition's placeholders. */
export function readPage<Row>(
  statements: { page: { all(values: Record<string, unknown>): Row[] }; count: { get(values: Record<string, unknown>): { n: number } | undefined } },
  values: Record<string, unknown>,
  p: PageQuery | { limit: number; offset: number },
): { rows: Row[]; total: number } {
  return {
    rows: statements.page.all({ ...values, limit: p.limit, offset: 'page' in p ? (p.page - 1) * p.limit : p.offset }),
    total: statements.count.get(values)?.n ?? 0,
  };
}

/**
 * `preparedPage` built once per database and shape (db/prepared.ts `preparedShapes`) and read with `readPage`:
 * `where(shape)` gives the condition of one shape, with `sql.placeholder`s for every value; the caller passes the
 * shape (derived from which filters the request has, never from their values) and the placeholders' values.
 *
 *   const pageOf = preparedPages(psaConnections, [desc(psaConnections.updatedAt)], (shape) => and(…));
 *   const { rows, total } = pageOf(db, shape, { orgIds: JSON.stringify(ids) }, query);
 */
export function preparedPages<T extends SQLiteTable>(
  table: T,
  order: (SQL | SQLWrapper)[],
  where: (shape: string) => SQL | undefined,
): (db: Db, shape: string, values: Record<string, unknown>, p: PageQuery) => { rows: T['$inferSelect'][]; total: number } {
  const statements = preparedShapes((db, shape) => preparedPage(db, table, where(shape), order));
  return (db, shape, values, p) => readPage(statements(db, shape), values, p);
}
