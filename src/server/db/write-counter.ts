import type Database from 'better-sqlite3';

/** A table whose writes a counter counts: every insert and delete, and each update that changes one of `columns`
 * (any update when there are none). */
export interface WatchedTable {
  table: string;
  columns?: readonly string[];
}

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * A counter of this connection's writes to a few tables, kept by TEMP triggers (the connection's own: no
 * migration, nothing in the file), for a ReadCache (lib/read-cache.ts) whose values are read from those tables
 * alone: every other write keeps its entries. An update counts only when it changes a watched column (a heartbeat
 * that writes the same status again does not). A rolled-back write takes its count back with it, as the data.
 * Creating the same counter again on a connection is a no-op; creating one inside a transaction throws. Returns the
 * statement that reads the counter.
 */
export function countWrites(sqlite: Database.Database, name: string, watched: readonly WatchedTable[]): string {
  // Its TEMP table and triggers would go with a rollback of the transaction, and the counter's reads then fail.
  if (sqlite.inTransaction) throw new Error(`countWrites: ${name} must be created outside a transaction`);
  const names = [name, ...watched.flatMap((w) => [w.table, ...(w.columns ?? [])])];
  const bad = names.find((n) => !IDENTIFIER.test(n));
  if (bad !== undefined) throw new Error(`countWrites: not a plain SQL name: ${bad}`);
  const counter = `temp.svc_${name}_writes`;
  const bump = `BEGIN UPDATE ${counter} SET n = n + 1; END`;
  const statements = [
    `CREATE TEMP TABLE IF NOT EXISTS svc_${name}_writes (n INTEGER NOT NULL)`,
    `INSERT INTO ${counter} (n) SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM ${counter})`,
  ];
  for (const { table, columns } of watched) {
    const trigger = `svc_${name}_${table}`;
    const update = columns?.length
      ? `UPDATE OF ${columns.join(', ')} ON ${table} WHEN ${columns.map((c) => `OLD.${c} IS NOT NEW.${c}`).join(' OR ')}`
      : `UPDATE ON ${table}`;
    statements.push(
      `CREATE TEMP TRIGGER IF NOT EXISTS ${trigger}_insert AFTER INSERT ON ${table} ${bump}`,
      `CREATE TEMP TRIGGER IF NOT EXISTS ${trigger}_delete AFTER DELETE ON ${table} ${bump}`,
      `CREATE TEMP TRIGGER IF NOT EXISTS ${trigger}_update AFTER ${update} ${bump}`,
    );
  }
  sqlite.exec(statements.join(';\n'));
  return `SELECT n FROM ${counter}`;
}
