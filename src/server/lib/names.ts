import { inArray } from 'drizzle-orm';
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/connection.js';

/** id → display name of the rows with these ids (nulls skipped): what a module exports so another can show
 * names of its rows without reading its table. */
export function namesById(
  db: Db,
  table: SQLiteTable,
  columns: { id: SQLiteColumn; name: SQLiteColumn },
  ids: Iterable<string | null>,
): Map<string, string> {
  const wanted = [...new Set([...ids].filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = db.select(columns).from(table).where(inArray(columns.id, wanted)).all();
  const out = new Map<string, string>();
  for (const { id, name } of rows) if (typeof id === 'string' && typeof name === 'string') out.set(id, name);
  return out;
}
