import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ServerConfig } from '../config.js';
import { openExisting, removeSidecars, schemaState } from './database.js';
import { OpsError } from './errors.js';

export interface BackupResult {
  /** The backup written, as an absolute path. */
  file: string;
  sizeBytes: number;
  /** Migrations applied to the copied database. */
  schemaVersion: number;
  databaseFile: string;
  createdAt: string;
}

/** A temp file beside `target`, so the final rename stays on one file system and is atomic. */
export function tempBeside(target: string): string {
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
}

export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function fsyncDir(dir: string): void {
  try {
    fsyncFile(dir);
  } catch {
    // Not every platform can fsync a directory; the rename is still atomic.
  }
}

/**
 * `svc server backup <file>`: an online, consistent copy through SQLite's backup API, safe while the server
 * runs (WAL: the copy reads one snapshot and never blocks the server's writes). The copy is written to a
 * temp file, switched to rollback-journal mode so it is one self-contained file, checked, made private
 * (0600: it holds password hashes and encrypted secrets), then renamed into place.
 */
export async function backupDatabase(
  config: ServerConfig,
  file: string,
  options: { force?: boolean } = {},
): Promise<BackupResult> {
  const target = path.resolve(file);
  const live = path.resolve(config.databaseFile);
  if (target === live || target.startsWith(`${live}-`)) {
    throw new OpsError(`Refusing to back up the database onto itself (${target})`, 2, 'BACKUP_TARGET_INVALID');
  }
  if (fs.existsSync(target)) {
    if (!options.force)
      throw new OpsError(`${target} exists`, 6, 'FILE_EXISTS', 'Choose another file, or pass --force to replace it.');
    if (!fs.statSync(target).isFile()) throw new OpsError(`${target} is not a file`, 2, 'BACKUP_TARGET_INVALID');
  }
  if (!fs.existsSync(path.dirname(target)))
    throw new OpsError(`The directory ${path.dirname(target)} does not exist`, 2, 'BACKUP_TARGET_INVALID');

  const source = openExisting(config.databaseFile);
  const temp = tempBeside(target);
  try {
    // Copy everything left after the first step in one go: one read snapshot, nothing to restart.
    await source.backup(temp, { progress: ({ remainingPages }) => Math.max(100, remainingPages) });
    const copy = new Database(temp, { fileMustExist: true });
    let schemaVersion: number;
    try {
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new OpsError(`The copy failed its check: ${String(check)}`, 8, 'BACKUP_CHECK_FAILED');
      schemaVersion = schemaState(copy).version;
    } finally {
      copy.close();
    }
    removeSidecars(temp);
    fs.chmodSync(temp, 0o600);
    fsyncFile(temp);
    fs.renameSync(temp, target);
    fsyncDir(path.dirname(target));
    return {
      file: target,
      sizeBytes: fs.statSync(target).size,
      schemaVersion,
      databaseFile: config.databaseFile,
      createdAt: new Date().toISOString(),
    };
  } catch (err) {
    fs.rmSync(temp, { force: true });
    removeSidecars(temp);
    throw err;
  } finally {
    source.close();
  }
}
