import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { MIGRATIONS_DIR } from '../db/connection.js';
import { OpsError } from './errors.js';

const JournalSchema = z.object({
  entries: z.array(z.object({ idx: z.number(), when: z.number(), tag: z.string() })),
});

export interface ShippedMigration {
  tag: string;
  /** drizzle's folderMillis: what `__drizzle_migrations.created_at` records once it is applied. */
  when: number;
}

/** The migrations this build ships, in order (drizzle/meta/_journal.json). */
export function shippedMigrations(folder = MIGRATIONS_DIR): ShippedMigration[] {
  const journal = JournalSchema.parse(JSON.parse(fs.readFileSync(path.join(folder, 'meta/_journal.json'), 'utf8')));
  return journal.entries.map(({ tag, when }) => ({ tag, when }));
}

/** The schema version of a database: the number of migrations applied to it (the shipped count is the
 * build's own schema version). */
export interface SchemaState {
  /** Migrations applied to the database; 0 for an empty one. */
  version: number;
  /** Migrations this build ships. */
  shipped: number;
  /** Tag of the newest applied migration this build knows, or null. */
  latest: string | null;
  /** Shipped migrations not applied yet, by tag (drizzle applies those newer than the newest applied). */
  pending: string[];
  /** Applied migrations this build does not ship: the database was migrated by a newer svc. */
  unknown: number;
}

export function hasTable(sqlite: Database.Database, name: string): boolean {
  return sqlite.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

export function schemaState(sqlite: Database.Database, folder = MIGRATIONS_DIR): SchemaState {
  const shipped = shippedMigrations(folder);
  const applied = hasTable(sqlite, '__drizzle_migrations')
    ? (
        sqlite.prepare('SELECT created_at AS createdAt FROM __drizzle_migrations ORDER BY created_at').all() as {
          createdAt: number | string;
        }[]
      ).map((r) => Number(r.createdAt))
    : [];
  const newest = applied.length > 0 ? Math.max(...applied) : undefined;
  const known = new Set(shipped.map((m) => m.when));
  return {
    version: applied.length,
    shipped: shipped.length,
    latest: shipped.filter((m) => applied.includes(m.when)).at(-1)?.tag ?? null,
    pending: shipped.filter((m) => newest === undefined || m.when > newest).map((m) => m.tag),
    unknown: applied.filter((when) => !known.has(when)).length,
  };
}

/** Refuses a database that a newer svc has migrated: this build would run against tables it does not know. */
export function assertNotNewer(state: SchemaState, what: string): void {
  if (state.unknown > 0) {
    throw new OpsError(
      `${what} has schema version ${state.version}, newer than this build's ${state.shipped} (${state.unknown} migration(s) this svc does not know)`,
      6,
      'SCHEMA_TOO_NEW',
      'Use the svc version that wrote it, or a newer one.',
    );
  }
}

/** Opens an existing database file for reading and maintenance (not the server's connection: no pragmas
 * beyond a busy timeout, so a running server is not disturbed). */
export function openExisting(file: string): Database.Database {
  if (!fs.existsSync(file)) {
    throw new OpsError(
      `No database at ${file}`,
      8,
      'DATABASE_MISSING',
      'Run `svc server init` (or `svc server start`) to create it.',
    );
  }
  let sqlite: Database.Database | undefined;
  try {
    sqlite = new Database(file, { fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    sqlite.prepare('SELECT count(*) FROM sqlite_master').get();
    return sqlite;
  } catch (err) {
    sqlite?.close();
    throw new OpsError(
      `Cannot read the database ${file}: ${err instanceof Error ? err.message : String(err)}`,
      8,
      'DATABASE_UNREADABLE',
    );
  }
}

/** Bytes on disk of a database and its write-ahead log. */
export function fileSize(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Removes a database's sidecar files (-wal, -shm, -journal), which must never outlive the file they belong to. */
export function removeSidecars(file: string): void {
  for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(`${file}${suffix}`, { force: true });
}

/** `value` of a server_meta row, or null (also when the table does not exist). */
export function serverMeta(sqlite: Database.Database, key: string): string | null {
  if (!hasTable(sqlite, 'server_meta')) return null;
  const row = sqlite.prepare('SELECT value FROM server_meta WHERE key = ?').get(key) as { value: string } | undefined;
  return row?.value ?? null;
}
