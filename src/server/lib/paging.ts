import { count, type SQL } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/connection.js';

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
