import fs from 'node:fs';
import path from 'node:path';
import { buildApp } from '../app.js';
import type { ServerConfig } from '../config.js';
import { ensureSystemAdmin } from '../modules/identity/first-start.js';
import { SECRETS_FILE } from '../security/server-secrets.js';
import { openExisting, schemaState } from './database.js';
import { acquireServerLock } from './lock.js';

export interface InitResult {
  dataDir: string;
  databaseFile: string;
  /** The data dir's key file, or null when every key comes from the environment. */
  secretsFile: string | null;
  /** What this run created; all false on an initialized data dir. */
  created: { dataDir: boolean; secrets: boolean; database: boolean; administrator: boolean };
  /** Migrations applied by this run, and in all. */
  applied: number;
  schemaVersion: number;
}

/**
 * `svc server init`: what a first start does, without serving: the data dir (0700), the server keys (0600),
 * the database (0600) with every migration and the key check, the built-in roles and the system administrator
 * (a generated password goes through `announce`, once; admin variables given to an initialized data dir are
 * ignored, and `announce` says so). It builds the app exactly as `start` does, so the two never drift apart.
 * Takes the data dir's pid file meanwhile: refuses (exit 6) while a server runs.
 */
export async function initDataDir(config: ServerConfig, announce: (message: string) => void): Promise<InitResult> {
  const existed = {
    dataDir: fs.existsSync(config.dataDir),
    secrets: fs.existsSync(path.join(config.dataDir, SECRETS_FILE)),
    database: fs.existsSync(config.databaseFile),
  };
  const lock = acquireServerLock(config.dataDir, { command: 'init' });
  try {
    let before = 0;
    if (existed.database) {
      const sqlite = openExisting(config.databaseFile);
      try {
        before = schemaState(sqlite).version;
      } finally {
        sqlite.close();
      }
    }
    const { app, db } = await buildApp(config, { logger: false, firstStart: false });
    let administrator: boolean;
    try {
      administrator = (await ensureSystemAdmin(db, config, announce)) === 'created';
      await app.ready();
    } finally {
      await app.close();
    }

    const sqlite = openExisting(config.databaseFile);
    let schemaVersion: number;
    try {
      schemaVersion = schemaState(sqlite).version;
    } finally {
      sqlite.close();
    }
    const secretsFile = path.join(config.dataDir, SECRETS_FILE);
    return {
      dataDir: config.dataDir,
      databaseFile: config.databaseFile,
      secretsFile: fs.existsSync(secretsFile) ? secretsFile : null,
      created: {
        dataDir: !existed.dataDir,
        secrets: !existed.secrets && fs.existsSync(secretsFile),
        database: !existed.database,
        administrator,
      },
      applied: schemaVersion - before,
      schemaVersion,
    };
  } finally {
    lock.release();
  }
}
