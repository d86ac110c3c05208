import type Database from 'better-sqlite3';

const frozenDeep = new WeakSet<object>();

/** Freezes a value and everything it holds (plain data: rows, arrays, parsed JSON); returns it. */
export function freezeDeep<T>(value: T): T {
  if (typeof value !== 'object' || value === null || frozenDeep.has(value)) return value;
  for (const child of Object.values(value)) freezeDeep(child);
  Object.freeze(value);
  frozenDeep.add(value);
  return value;
}

/** True for a value that freezeDeep froze: it cannot change, so what is derived from it can be kept. */
export function isFrozenDeep(value: unknown): boolean {
  return typeof value === 'object' && value !== null && frozenDeep.has(value);
}

/**
 * Results of reads kept for as long as the database is unchanged, by anyone. The database's state is read with
 * every lookup as two counters: `total_changes()` of this connection (every row it inserts, updates or deletes,
 * whether committed or rolled back) and `PRAGMA data_version` (changes when another connection commits), so a
 * write anywhere, through any module, drops every entry before the next lookup can return one. Inside a
 * transaction nothing is read or kept (it may still roll back). Values are frozen deep, cached or not, so that
 * no caller can change what the next one is given.
 *
 * Only for reads whose result is a function of the database and the key alone (not of the clock, not of the
 * caller beyond what the key holds). Lookup and store are synchronous and the loader runs between them, so with
 * better-sqlite3 no write can slip in unnoticed: store keeps a value only if the counters are still those of
 * the lookup.
 */
export class ReadCache<V> {
  private readonly changesStmt: Database.Statement<[], number | bigint>;
  private readonly versionStmt: Database.Statement<[], number | bigint>;
  private readonly entries = new Map<string, V>();
  private changes: number | bigint = -1;
  private version: number | bigint = -1;

  constructor(
    private readonly sqlite: Database.Database,
    private readonly maxEntries = 64,
  ) {
    // Two statements: together in one SELECT (pragma_data_version as a table) they cost twice as much.
    this.changesStmt = sqlite.prepare<[], number | bigint>('SELECT total_changes()').pluck();
    this.versionStmt = sqlite.prepare<[], number | bigint>('PRAGMA data_version').pluck();
  }

  /** Whether the counters still read as at the last lookup; on a change every entry is dropped. */
  private unchanged(): boolean {
    const changes = this.changesStmt.get() ?? -1;
    const version = this.versionStmt.get() ?? -1;
    if (changes === this.changes && version === this.version) return true;
    this.entries.clear();
    this.changes = changes;
    this.version = version;
    return false;
  }

  /** The value kept under key, if the database has not changed since it was stored. */
  lookup(key: string): V | undefined {
    if (this.sqlite.inTransaction) return undefined;
    return this.unchanged() ? this.entries.get(key) : undefined;
  }

  /** Freezes value and keeps it under key when the database is as the preceding lookup saw it; returns it. */
  store(key: string, value: V): V {
    freezeDeep(value);
    if (this.sqlite.inTransaction || !this.unchanged()) return value;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, value);
    return value;
  }
}
