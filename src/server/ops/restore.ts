import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ServerConfig } from '../config.js';
import { applyMigrations, openDatabase } from '../db/connection.js';
import { SECRETS_FILE } from '../security/server-secrets.js';
import { fsyncFile, tempBeside } from './backup.js';
import { assertNotNewer, hasTable, removeSidecars, schemaState, serverMeta } from './database.js';
import { OpsError } from './errors.js';
import { acquireServerLock, type ServerLock } from './lock.js';

/** Tables every svc database has had since its first migration: a file without them is not one. */
const CORE_TABLES = [
  '__drizzle_migrations',
  'users',
  'partners',
  'organizations',
  'audit_logs',
  'jobs',
  'outbox_events',
  'server_meta',
];

export interface RestorePlan {
  /** The backup, as an absolute path. */
  source: string;
  databaseFile: string;
  /** Whether a database is there now (it is kept as `svc.db.before-restore-<timestamp>`). */
  replaces: boolean;
  sizeBytes: number;
  /** Migrations applied to the backup, and shipped by this build (the rest are applied after the restore). */
  schemaVersion: number;
  shippedSchemaVersion: number;
  initializedAt: string | null;
  /** Puts the backup in place, keeps the replaced database, removes stale -wal/-shm, applies migrations. */
  commit(): Promise<RestoreResult>;
  /** Drops the staged copy and releases the data dir. */
  abort(): void;
}

export interface RestoreResult {
  source: string;
  databaseFile: string;
  /** Where the replaced database was kept, or null when there was none. */
  previous: string | null;
  /** Migrations applied after the restore. */
  applied: number;
  schemaVersion: number;
  /** Server keys are not part of a backup: restored data encrypted under other keys cannot be read. */
  warnings: string[];
}

/** `20261122T125205Z`: sortable and safe in file names. */
function stamp(date = new Date()): string {
  return date
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
}

function unusedName(base: string): string {
  let name = base;
  for (let i = 1; fs.existsSync(name) || fs.existsSync(`${name}-wal`); i++) name = `${base}-${i}`;
  return name;
}

/** Copies the backup beside the live database and checks it there, so the user's file is never touched and
 * the final swap is a rename on one file system. */
function stage(
  source: string,
  staging: string,
): { schemaVersion: number; shipped: number; initializedAt: string | null } {
  fs.copyFileSync(source, staging);
  // A copy of a live WAL database keeps its recent pages in the -wal file beside it.
  if (fs.existsSync(`${source}-wal`)) fs.copyFileSync(`${source}-wal`, `${staging}-wal`);
  let sqlite: Database.Database | undefined;
  try {
    sqlite = new Database(staging, { fileMustExist: true });
    let integrity: unknown;
    try {
      integrity = sqlite.pragma('integrity_check', { simple: true });
    } catch (err) {
      throw new OpsError(
        `${source} is not an SQLite database (${err instanceof Error ? err.message : String(err)})`,
        2,
        'BACKUP_INVALID',
      );
    }
    if (integrity !== 'ok')
      throw new OpsError(`${source} failed SQLite's integrity check: ${String(integrity)}`, 2, 'BACKUP_INVALID');
    const db = sqlite;
    const missing = CORE_TABLES.filter((t) => !hasTable(db, t));
    if (missing.length > 0)
      throw new OpsError(`${source} is not an svc database (no ${missing.join(', ')})`, 2, 'BACKUP_INVALID');
    const state = schemaState(sqlite);
    assertNotNewer(state, `The backup ${source}`);
    const initializedAt = serverMeta(sqlite, 'initializedAt');
    // One self-contained file: the WAL is folded in and the copy no longer expects one.
    sqlite.pragma('journal_mode = DELETE');
    return { schemaVersion: state.version, shipped: state.shipped, initializedAt };
  } finally {
    sqlite?.close();
    for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(`${staging}${suffix}`, { force: true });
  }
}

/** Folds the live database's WAL into it so the kept copy is complete; a database too broken to open is
 * kept as it is, its -wal beside it. */
function checkpoint(file: string): void {
  try {
    const sqlite = new Database(file, { fileMustExist: true });
    try {
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      sqlite.close();
    }
  } catch {
    // kept as is
  }
}

/**
 * `svc server restore <file>`, first half: takes the data dir (refusing while a server runs: exit 6), stages a
 * copy of the backup and validates it (integrity check, svc tables, schema not newer than this build).
 * Nothing is replaced until `commit()`, so the caller can ask for confirmation in between.
 */
export async function prepareRestore(config: ServerConfig, file: string): Promise<RestorePlan> {
  const source = path.resolve(file);
  const databaseFile = path.resolve(config.databaseFile);
  if (!fs.existsSync(source) || !fs.statSync(source).isFile())
    throw new OpsError(`No backup file at ${source}`, 2, 'BACKUP_NOT_FOUND');
  if (source === databaseFile) throw new OpsError('Refusing to restore the database onto itself', 2, 'BACKUP_INVALID');

  const lock: ServerLock = acquireServerLock(config.dataDir);
  const staging = tempBeside(databaseFile);
  let facts: ReturnType<typeof stage>;
  try {
    facts = stage(source, staging);
  } catch (err) {
    fs.rmSync(staging, { force: true });
    lock.release();
    throw err;
  }

  let settled = false;
  const abort = () => {
    if (settled) return;
    settled = true;
    fs.rmSync(staging, { force: true });
    lock.release();
  };

  const commit = async (): Promise<RestoreResult> => {
    if (settled) throw new Error('restore already committed or aborted');
    settled = true;
    try {
      let previous: string | null = null;
      if (fs.existsSync(databaseFile)) {
        checkpoint(databaseFile);
        previous = unusedName(`${databaseFile}.before-restore-${stamp()}`);
        // A hard link keeps the old database under its new name while the rename below swaps the live name
        // atomically: there is never a moment without svc.db.
        try {
          fs.linkSync(databaseFile, previous);
        } catch {
          fs.copyFileSync(databaseFile, previous);
        }
        // A -wal (or hot -journal) the checkpoint could not fold in belongs to the kept copy; it must never
        // meet the new file.
        for (const suffix of ['-wal', '-journal']) {
          if (fs.existsSync(`${databaseFile}${suffix}`))
            fs.renameSync(`${databaseFile}${suffix}`, `${previous}${suffix}`);
        }
      }
      removeSidecars(databaseFile);
      fs.chmodSync(staging, 0o600);
      fsyncFile(staging);
      fs.renameSync(staging, databaseFile);

      const db = openDatabase(databaseFile);
      let applied: number;
      let schemaVersion: number;
      try {
        applied = applyMigrations(db);
        schemaVersion = schemaState(db.$client).version;
      } finally {
        db.$client.close();
      }
      const warnings: string[] = [];
      const envKeys = config.secrets.jwtSecret && config.secrets.encryptionKey && config.secrets.enrollmentPepper;
      if (!envKeys && !fs.existsSync(path.join(config.dataDir, SECRETS_FILE))) {
        warnings.push(
          `There are no server keys in ${config.dataDir} (${SECRETS_FILE}) nor in the environment: the server will generate new ones, and secrets encrypted under the old keys (MFA secrets, SSO credentials) and issued tokens will not work. Put back the ${SECRETS_FILE} that belongs to this backup first.`,
        );
      }
      return { source, databaseFile, previous, applied, schemaVersion, warnings };
    } finally {
      fs.rmSync(staging, { force: true });
      lock.release();
    }
  };

  return {
    source,
    databaseFile,
    replaces: fs.existsSync(databaseFile),
    sizeBytes: fs.statSync(staging).size,
    schemaVersion: facts.schemaVersion,
    shippedSchemaVersion: facts.shipped,
    initializedAt: facts.initializedAt,
    commit,
    abort,
  };
}
