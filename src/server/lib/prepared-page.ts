import { count, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/connection.js';
import { preparedShapes } from '../db/prepared.js';
import type { PageQuery } from './paging.js';

/**
 * `pageOfRows` (lib/paging.ts) with its two statements (the page, the total) built once per database and shape
 * (db/prepared.ts `preparedShapes`): `where(shape)` gives the condition of one shape, with `sql.placeholder`s for
 * every value; the caller passes the shape (derived from which filters the request has, never from their values)
 * and the placeholders' values. LIMIT and OFFSET are placeholders too.
 *
 *   const pageOf = preparedPages(psaConnections, [desc(psaConnections.updatedAt)], (shape) => and(…));
 *   const { rows, total } = pageOf(db, shape, { orgIds: JSON.stringify(ids) }, query);
 */
export function preparedPages<T extends SQLiteTable>(
  table: T,
  order: (SQL | SQLWrapper)[],
  where: (shape: string) => SQL | undefined,
): (db: Db, shape: string, values: Record<string, unknown>, p: PageQuery) => { rows: T['$inferSelect'][]; total: number } {
  const statements = preparedShapes((db, shape) => {
    const condition = where(shape);
    return {
      rows: db
        .select()
        .from(table as SQLiteTable)
        .where(condition)
        .orderBy(...(order as SQL[]))
        .limit(sql.placeholder('limit'))
        .offset(sql.placeholder('offset'))
        .prepare(),
      total: db.select({ n: count() }).from(table as SQLiteTable).where(condition).prepare(),
    };
  });
  return (db, shape, values, p) => {
    const { rows, total } = statements(db, shape);
    return {
      rows: rows.all({ ...values, limit: p.limit, offset: (p.page - 1) * p.limit }),
      total: total.get(values)?.n ?? 0,
    };
  };
}
