import type Database from 'better-sqlite3';

const frozenDeep = new WeakSet<object>();

/** Freezes a value and everything it holds (plain data: rows, arrays, parsed JSON); returns it. A Buffer (or
 * any typed array) cannot be frozen and is left as it is: whoever keeps one must not write into it. */
export function freezeDeep<T>(value: T): T {
  if (typeof value !== 'object' || value === null || frozenDeep.has(value) || ArrayBuffer.isView(value)) return value;
  for (const child of Object.values(value)) freezeDeep(child);
  Object.freeze(value);
  frozenDeep.add(value);
  return value;
}

/** How long one read of `PRAGMA data_version` serves (ms), within one turn of the event loop. */
export const VERSION_READ_SERVES_MS = 1;

/**
 * `PRAGMA data_version` of a connection, read at most once per turn of the event loop and millisecond, and shared
 * by every cache on that connection. Outside a transaction each read opens and closes a WAL read transaction (~5 µs
 * here, against 0.1 µs for `total_changes()`), and a request looked it up once per cache (its API key, its kept
 * answer): under load one turn serves many requests, and they now share one read. What it costs: a commit by
 * another connection (another process) is seen up to VERSION_READ_SERVES_MS later (as by a request that came that
 * much earlier). Both bounds are needed: a turn may block in the poll for new connections after a read.
 */
class VersionProbe {
  private static readonly byConnection = new WeakMap<Database.Database, VersionProbe>();
  static of(sqlite: Database.Database): VersionProbe {
    let probe = VersionProbe.byConnection.get(sqlite);
    if (!probe) VersionProbe.byConnection.set(sqlite, (probe = new VersionProbe(sqlite)));
    return probe;
  }

  private readonly stmt: Database.Statement<[], number | bigint>;
  private value: number | bigint | undefined;
  private readAt = 0;
  private constructor(sqlite: Database.Database) {
    // Plucked at each use: the connection shares a statement with everyone who prepares the same text.
    this.stmt = sqlite.prepare<[], number | bigint>('PRAGMA data_version');
  }

  read(): number | bigint {
    const now = performance.now();
    if (this.value === undefined || now - this.readAt > VERSION_READ_SERVES_MS) {
      if (this.value === undefined) setImmediate(() => (this.value = undefined));
      this.value = this.stmt.pluck().get() ?? -1;
      this.readAt = now;
    }
    return this.value;
  }
}

/**
 * Results of reads kept for as long as the database is unchanged, by anyone. The database's state is read with
 * every lookup as two counters: `total_changes()` of this connection (every row it inserts, updates or deletes,
 * whether committed or rolled back) and `PRAGMA data_version` (changes when another connection commits; read once
 * per event-loop turn, `VersionProbe`), so a write through this connection, by any module, drops every entry
 * before the next lookup can return one, and a commit by another connection from the next turn on. Inside a
 * transaction nothing is kept (what it read may still roll back), but what was kept before it still serves until
 * the transaction writes (the counters count uncommitted and rolled-back writes too; no other connection can
 * commit while it holds the write lock): with group commit (db/group-commit.ts) most requests of a busy turn run
 * inside the turn's transaction. Values are frozen deep, cached or not, so that no caller can change what the
 * next one is given.
 *
 * Only for reads whose result is a function of the database and the key alone (not of the caller beyond what
 * the key holds; of the clock at most within maxAgeMs). With better-sqlite3 a synchronous loader between lookup
 * and store lets no write slip in unnoticed: store keeps a value only if the counters are still those of the
 * lookup. A loader that awaits takes a `stamp()` first and passes it to store.
 */
export class ReadCache<V> {
  private readonly changesStmt: Database.Statement<[], number | bigint>;
  private readonly versions: VersionProbe;
  private readonly entries = new Map<string, { value: V; at: number }>();
  private changes: number | bigint = -1;
  private version: number | bigint = -1;

  constructor(
    private readonly sqlite: Database.Database,
    private readonly maxEntries = 64,
    /** How long an entry may serve at most (ms), for values that also depend on the clock a little (an expiry
     * shown as a status); unbounded by default. */
    private readonly maxAgeMs = Infinity,
    /** What counts this connection's writes, in place of `total_changes()`: a narrower counter (one a trigger
     * keeps for the writes to the few tables and columns the values are read from) keeps them across other
     * writes. Writes by other connections still drop everything (`data_version`). */
    changesSql = 'SELECT total_changes()',
  ) {
    // Plucked at each use: the connection shares a statement with everyone who prepares the same text
    // (db/connection.ts).
    this.changesStmt = sqlite.prepare<[], number | bigint>(changesSql);
    this.versions = VersionProbe.of(sqlite);
  }

  /** Whether the counters still read as at the last look; on a change every entry is dropped. */
  private unchanged(): boolean {
    const changes = this.changesStmt.pluck().get() ?? -1;
    const version = this.versions.read();
    if (changes === this.changes && version === this.version) return true;
    this.entries.clear();
    this.changes = changes;
    this.version = version;
    return false;
  }

  /** The database's state now, to pass to `store` when the value is computed with awaits in between (another
   * request's write may come first); null inside a transaction. */
  stamp(): string | null {
    if (this.sqlite.inTransaction) return null;
    this.unchanged();
    return `${this.changes}:${this.version}`;
  }

  /** The value kept under key, if the database has not changed since it was stored (nor maxAgeMs passed). */
  lookup(key: string): V | undefined {
    if (!this.unchanged()) return undefined;
    const entry = this.entries.get(key);
    if (entry && Date.now() - entry.at > this.maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry?.value;
  }

  /**
   * Freezes value and keeps it under key when the database is as the preceding lookup saw it (or as `since`,
   * from `stamp()`, says); returns it.
   */
  store(key: string, value: V, since?: string | null): V {
    freezeDeep(value);
    if (since === null || this.sqlite.inTransaction) return value;
    const unchanged = this.unchanged();
    if (since === undefined ? !unchanged : since !== `${this.changes}:${this.version}`) return value;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, at: Date.now() });
    return value;
  }
}
