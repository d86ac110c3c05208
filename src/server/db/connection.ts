import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { PRIVATE_FILE_MODE, ensurePrivateDir, ensurePrivateFile, setMode } from '../ops/files.js';
import * as schema from './schema/index.js';

export type Db = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** The committed drizzle-kit migrations, found from both src/ (tests) and dist/ (the built CLI). */
export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../drizzle');

/** Opens (creating if needed) a database file. The file is made 0600 before SQLite opens it: SQLite gives the
 * -wal and -shm it creates the database file's own mode, so all three stay private whatever the umask. */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') {
    if (!fs.existsSync(path.dirname(file))) ensurePrivateDir(path.dirname(file));
    ensurePrivateFile(file);
    // Sidecars left by an older svc, created under the umask.
    for (const suffix of ['-wal', '-shm']) setMode(`${file}${suffix}`, PRIVATE_FILE_MODE);
  }
  const sqlite = new Database(file);
  keepStatements(sqlite);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  // Savepoint journals (every member of a group commit, db/group-commit.ts) in memory: on a file they spilled
  // past 64 KiB a group, and a create-site request cost ~25% more CPU (README "Benchmarks").
  sqlite.pragma('temp_store = MEMORY');
  return drizzle({ client: sqlite, schema, casing: 'snake_case' });
}

/**
 * The statement to compile for `source`: its `LIMIT ?` and `LIKE ?` written `LIMIT +?` and `LIKE +?` (the same
 * values). SQLite's planner reads the value bound to a plain `LIMIT ?` (how many rows) or `LIKE ?` (a prefix an
 * index could serve), so it marks the statement to be compiled again whenever that parameter is bound, which
 * better-sqlite3 does on every call: each page and search query was compiled anew on each request (a page of
 * devices joined to their organization cost ~70 µs instead of ~24 here). The planner does not look into `+?`.
 * Nothing is lost: no index here could serve a LIKE (LIKE ignores case, every index compares bytes); a NOCASE
 * index meant for prefix searches would need its LIKE kept plain here.
 */
export function plannedOnce(source: string): string {
  return source.replace(/\b(?:limit|like) \?/gi, (clause) => `${clause.slice(0, -1)}+?`);
}

/** How many compiled statements a connection keeps by SQL text (the least recently used one goes first). */
export const STATEMENT_CACHE_SIZE = 512;

/**
 * Keeps a connection's compiled statements by SQL text, so that a query drizzle builds for one call (every query
 * not made with `.prepare()`) is not compiled by SQLite again on each request: drizzle runs every query through
 * its client's public `prepare`, which this replaces on the one connection (better-sqlite3's own, uncached, does
 * the compiling). A statement is shared by everyone who prepares the same text, so it is handed out in the
 * default mode (rows as objects: not raw, plucked or expanded); a holder that wants another mode sets it before
 * each use, or prepares text of its own. One still running (an open iterator) is not handed out again: that
 * caller gets a fresh one.
 */
export function keepStatements(sqlite: Database.Database, size = STATEMENT_CACHE_SIZE): void {
  const compile = sqlite.prepare.bind(sqlite);
  const kept = new Map<string, Database.Statement>();
  const prepare = (source: string): Database.Statement => {
    const stmt = kept.get(source);
    if (stmt && !stmt.busy) {
      // Most recently used last: the Map's first key is the one to drop.
      kept.delete(source);
      kept.set(source, stmt);
      if (stmt.reader) stmt.raw(false).pluck(false).expand(false);
      return stmt;
    }
    const fresh = compile(plannedOnce(source));
    if (!stmt) {
      if (kept.size >= size) kept.delete(kept.keys().next().value as string);
      kept.set(source, fresh);
    }
    return fresh;
  };
  sqlite.prepare = prepare as Database.Database['prepare'];
}

/** Applies pending migrations; returns how many were applied.
 * Foreign keys are off while they run: drizzle-kit rebuilds a changed table (create new, copy, drop old,
 * rename), and inside the migration's transaction its own `PRAGMA foreign_keys=OFF` is a no-op, so dropping
 * the old table would cascade-delete the rows that reference it. The references are checked afterwards. */
export function applyMigrations(db: Db, migrationsFolder: string = MIGRATIONS_DIR): number {
  const before = appliedMigrationCount(db);
  const enforced = db.$client.pragma('foreign_keys', { simple: true }) === 1;
  if (enforced) db.$client.pragma('foreign_keys = OFF');
  try {
    migrate(db, { migrationsFolder });
    // Only after a migration ran: a full check costs a scan of every reference on each start otherwise.
    if (appliedMigrationCount(db) > before) {
      const broken = db.$client.pragma('foreign_key_check') as { table: string; parent: string }[];
      const first = broken[0];
      if (first) throw new Error(`migrations left ${broken.length} broken reference(s), e.g. ${first.table} → ${first.parent}`);
    }
  } finally {
    if (enforced) db.$client.pragma('foreign_keys = ON');
  }
  return appliedMigrationCount(db) - before;
}

export function appliedMigrationCount(db: Db): number {
  const table = db.$client
    .prepare("SELECT name FROM sqlite_master WHERE type='table' AND name='__drizzle_migrations'")
    .get();
  if (!table) return 0;
  const row = db.$client.prepare('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number };
  return row.n;
}

/** Runs fn in one SQLite transaction. better-sqlite3 is synchronous: fn must not await. A request's write goes
 * through a transaction even when it is one statement: it then joins the turn's group commit (db/group-commit.ts),
 * where a bare statement run while no group is open commits by itself (~40 µs under load). */
export function transaction<T>(db: Db, fn: (tx: Db) => T): T {
  return db.$client.transaction(() => fn(db))();
}
