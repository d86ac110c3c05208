import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/connection.js';
import { inJson } from '../db/prepared.js';

interface NamesStatement {
  all(values: { ids: string }): { id: unknown; name: unknown }[];
}

/** One prepared statement per database and (id, name) column pair: every list that shows names runs it. */
const statements = new WeakMap<Db, Map<SQLiteColumn, NamesStatement>>();

function statementOf(db: Db, table: SQLiteTable, columns: { id: SQLiteColumn; name: SQLiteColumn }): NamesStatement {
  let byColumn = statements.get(db);
  if (byColumn === undefined) statements.set(db, (byColumn = new Map<SQLiteColumn, NamesStatement>()));
  let stmt = byColumn.get(columns.name);
  if (stmt === undefined) {
    stmt = db.select(columns).from(table).where(inJson(columns.id, 'ids')).prepare();
    byColumn.set(columns.name, stmt);
  }
  return stmt;
}

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
  const rows = statementOf(db, table, columns).all({ ids: JSON.stringify(wanted) });
  const out = new Map<string, string>();
  for (const { id, name } of rows) if (typeof id === 'string' && typeof name === 'string') out.set(id, name);
  return out;
}
