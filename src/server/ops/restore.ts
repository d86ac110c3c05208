import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ServerConfig } from '../config.js';
import { applyMigrations, openDatabase } from '../db/connection.js';
import {
  SECRETS_FILE,
  compareServerKeys,
  databaseNeedsItsKeys,
  effectiveSecrets,
  keysMismatchError,
  readSecretsFile,
  type ServerSecrets,
} from '../security/server-secrets.js';
import { secretsFileOf } from './backup.js';
import { assertNotNewer, hasTable, removeSidecars, schemaState, serverMeta } from './database.js';
import { OpsError } from './errors.js';
import { PRIVATE_FILE_MODE, ensurePrivateFile, fsyncFile, setMode, tempBeside, writePrivateFile } from './files.js';
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
  /** The server keys restored with it (`--with-secrets`: `<FILE>.secrets.json`), or null. */
  secretsFile: string | null;
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
  /** The data dir's keys file written from the backup's (`--with-secrets`), or null. */
  secrets: string | null;
  /** Where the replaced keys file was kept, or null. */
  previousSecrets: string | null;
  /** Migrations applied after the restore. */
  applied: number;
  schemaVersion: number;
  /** Said after the restore: keys that could not be checked (a backup from before the key check). */
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
  checkKeys: (sqlite: Database.Database) => void,
): { schemaVersion: number; shipped: number; initializedAt: string | null } {
  // Private before any byte is copied into it.
  ensurePrivateFile(staging);
  fs.copyFileSync(source, staging);
  setMode(staging, PRIVATE_FILE_MODE);
  // A copy of a live WAL database keeps its recent pages in the -wal file beside it.
  if (fs.existsSync(`${source}-wal`)) {
    ensurePrivateFile(`${staging}-wal`);
    fs.copyFileSync(`${source}-wal`, `${staging}-wal`);
  }
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
    checkKeys(sqlite);
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
 * copy of the backup and validates it (integrity check, svc tables, schema not newer than this build), and
 * checks that the keys the server will use after it can read its data: the environment's, else those saved
 * beside the backup (`withSecrets`), else the data dir's secrets.json. Keys that cannot are refused (exit 6,
 * SERVER_KEYS_MISMATCH), as is a backup whose data needs keys when there are none (SERVER_KEYS_MISSING).
 * Nothing is replaced until `commit()`, so the caller can ask for confirmation in between.
 */
export async function prepareRestore(
  config: ServerConfig,
  file: string,
  options: { withSecrets?: boolean } = {},
): Promise<RestorePlan> {
  const source = path.resolve(file);
  const databaseFile = path.resolve(config.databaseFile);
  if (!fs.existsSync(source) || !fs.statSync(source).isFile())
    throw new OpsError(`No backup file at ${source}`, 2, 'BACKUP_NOT_FOUND');
  if (source === databaseFile) throw new OpsError('Refusing to restore the database onto itself', 2, 'BACKUP_INVALID');
  const dataDirSecrets = path.join(config.dataDir, SECRETS_FILE);
  const backupSecrets = options.withSecrets ? secretsFileOf(source) : null;
  let stored: ServerSecrets | undefined;
  if (backupSecrets) {
    stored = readSecretsFile(backupSecrets);
    if (!stored)
      throw new OpsError(
        `No ${backupSecrets}: the server keys were not saved with this backup`,
        2,
        'SECRETS_NOT_FOUND',
        `\`svc server backup --with-secrets\` saves them beside the backup. Without them, put back the ${SECRETS_FILE} that belongs to it in ${config.dataDir} and restore without --with-secrets.`,
      );
  } else {
    stored = readSecretsFile(dataDirSecrets);
  }
  const keys = effectiveSecrets(config.secrets, stored);
  const envKeys = Object.values(config.secrets).some(Boolean);
  const keysFrom = [backupSecrets ?? (stored ? dataDirSecrets : null), envKeys ? 'the environment' : null]
    .filter(Boolean)
    .join(' and ');
  const warnings: string[] = [];
  const checkKeys = (sqlite: Database.Database) => {
    if (!keys) {
      if (databaseNeedsItsKeys(sqlite))
        throw new OpsError(
          `The backup ${source} needs the server keys it was written under, and there are none here: no ${dataDirSecrets}, and the environment does not give them`,
          6,
          'SERVER_KEYS_MISSING',
          `Restore with --with-secrets when \`svc server backup --with-secrets\` saved them beside it (${secretsFileOf(source)}), put back the ${SECRETS_FILE} that belongs to it in ${config.dataDir} first, or give SVC_ENCRYPTION_KEY and SVC_ENROLLMENT_PEPPER.`,
        );
      warnings.push(
        `There are no server keys in ${config.dataDir} (${SECRETS_FILE}) nor in the environment: the server will generate new ones. If this backup had MFA secrets or enrollment keys under other keys, put back the ${SECRETS_FILE} that belongs to it before starting.`,
      );
      return;
    }
    const comparison = compareServerKeys(sqlite, keys);
    if (comparison.state === 'mismatch') throw keysMismatchError(source, config.dataDir, comparison.keys, keysFrom);
  };

  const lock: ServerLock = acquireServerLock(config.dataDir, { command: 'restore' });
  const staging = tempBeside(databaseFile);
  let facts: ReturnType<typeof stage>;
  try {
    facts = stage(source, staging, checkKeys);
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
        setMode(previous, PRIVATE_FILE_MODE);
        // A -wal (or hot -journal) the checkpoint could not fold in belongs to the kept copy; it must never
        // meet the new file.
        for (const suffix of ['-wal', '-journal']) {
          if (fs.existsSync(`${databaseFile}${suffix}`))
            fs.renameSync(`${databaseFile}${suffix}`, `${previous}${suffix}`);
          setMode(`${previous}${suffix}`, PRIVATE_FILE_MODE);
        }
      }
      removeSidecars(databaseFile);
      fs.chmodSync(staging, PRIVATE_FILE_MODE);
      fsyncFile(staging);
      fs.renameSync(staging, databaseFile);

      let previousSecrets: string | null = null;
      if (backupSecrets && stored) {
        const text = `${JSON.stringify(stored, null, 2)}\n`;
        const current = readSecretsFile(dataDirSecrets);
        if (current && JSON.stringify(current) !== JSON.stringify(stored)) {
          previousSecrets = unusedName(`${dataDirSecrets}.before-restore-${stamp()}`);
          fs.copyFileSync(dataDirSecrets, previousSecrets);
          setMode(previousSecrets, PRIVATE_FILE_MODE);
        }
        writePrivateFile(dataDirSecrets, text);
      }

      const db = openDatabase(databaseFile);
      let applied: number;
      let schemaVersion: number;
      try {
        applied = applyMigrations(db);
        schemaVersion = schemaState(db.$client).version;
      } finally {
        db.$client.close();
      }
      return {
        source,
        databaseFile,
        previous,
        secrets: backupSecrets ? dataDirSecrets : null,
        previousSecrets,
        applied,
        schemaVersion,
        warnings,
      };
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
    secretsFile: backupSecrets,
    commit,
    abort,
  };
}
