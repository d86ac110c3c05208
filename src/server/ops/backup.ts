import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ServerConfig } from '../config.js';
import {
  SECRETS_FILE,
  compareServerKeys,
  effectiveSecrets,
  keysMismatchError,
  keysSource,
  readSecretsFile,
} from '../security/server-secrets.js';
import { openExisting, removeSidecars, schemaState } from './database.js';
import { OpsError } from './errors.js';
import { PRIVATE_FILE_MODE, ensurePrivateFile, fsyncDir, fsyncFile, tempBeside, writePrivateFile } from './files.js';

export { fsyncFile, tempBeside } from './files.js';

/** Where `--with-secrets` keeps the server keys of a backup: beside it, `<FILE>.secrets.json`. */
export function secretsFileOf(backup: string): string {
  return `${backup}.${SECRETS_FILE}`;
}

export interface BackupResult {
  /** The backup written, as an absolute path. */
  file: string;
  sizeBytes: number;
  /** The server keys written beside it (`--with-secrets`), or null. */
  secretsFile: string | null;
  /** Migrations applied to the copied database. */
  schemaVersion: number;
  databaseFile: string;
  createdAt: string;
}

/**
 * `svc server backup <file>`: an online, consistent copy through SQLite's backup API, safe while the server
 * runs (WAL: the copy reads one snapshot and never blocks the server's writes). The copy is written to a
 * temp file created 0600 (it holds password hashes and encrypted secrets), switched to rollback-journal mode so
 * it is one self-contained file, checked, then renamed into place. With `withSecrets`, the server keys the
 * database belongs to are written beside it (`<file>.secrets.json`, 0600), once checked against the copy.
 */
export async function backupDatabase(
  config: ServerConfig,
  file: string,
  options: { force?: boolean; withSecrets?: boolean } = {},
): Promise<BackupResult> {
  const target = path.resolve(file);
  const live = path.resolve(config.databaseFile);
  if (target === live || target.startsWith(`${live}-`)) {
    throw new OpsError(`Refusing to back up the database onto itself (${target})`, 2, 'BACKUP_TARGET_INVALID');
  }
  if (fs.existsSync(target)) {
    if (!options.force)
      throw new OpsError(`${target} exists`, 2, 'FILE_EXISTS', 'Choose another file, or pass --force to replace it.');
    if (!fs.statSync(target).isFile()) throw new OpsError(`${target} is not a file`, 2, 'BACKUP_TARGET_INVALID');
  }
  if (!fs.existsSync(path.dirname(target)))
    throw new OpsError(`The directory ${path.dirname(target)} does not exist`, 2, 'BACKUP_TARGET_INVALID');
  const secretsTarget = options.withSecrets ? secretsFileOf(target) : null;
  if (secretsTarget && fs.existsSync(secretsTarget) && !options.force)
    throw new OpsError(`${secretsTarget} exists`, 2, 'FILE_EXISTS', 'Choose another file, or pass --force to replace it.');
  const secrets = options.withSecrets
    ? effectiveSecrets(config.secrets, readSecretsFile(path.join(config.dataDir, SECRETS_FILE)))
    : undefined;
  if (options.withSecrets && !secrets)
    throw new OpsError(
      `There are no server keys to save: no ${path.join(config.dataDir, SECRETS_FILE)}, and the environment does not give all three`,
      6,
      'SERVER_KEYS_MISSING',
    );

  const source = openExisting(config.databaseFile);
  const temp = tempBeside(target);
  try {
    // Private from its first byte: SQLite writes into the file as it is, and gives its journal the same mode.
    ensurePrivateFile(temp);
    // Copy everything left after the first step in one go: one read snapshot, nothing to restart.
    await source.backup(temp, { progress: ({ remainingPages }) => Math.max(100, remainingPages) });
    const copy = new Database(temp, { fileMustExist: true });
    let schemaVersion: number;
    try {
      copy.pragma('journal_mode = DELETE');
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new OpsError(`The copy failed its check: ${String(check)}`, 8, 'BACKUP_CHECK_FAILED');
      schemaVersion = schemaState(copy).version;
      if (secrets) {
        // Keys that cannot read this database would make the saved pair useless when it is needed.
        const comparison = compareServerKeys(copy, secrets);
        if (comparison.state === 'mismatch')
          throw keysMismatchError(config.databaseFile, config.dataDir, comparison.keys, keysSource(config.dataDir, config.secrets));
      }
    } finally {
      copy.close();
    }
    removeSidecars(temp);
    fs.chmodSync(temp, PRIVATE_FILE_MODE);
    fsyncFile(temp);
    fs.renameSync(temp, target);
    fsyncDir(path.dirname(target));
    if (secretsTarget && secrets) writePrivateFile(secretsTarget, `${JSON.stringify(secrets, null, 2)}\n`);
    return {
      file: target,
      secretsFile: secretsTarget,
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
