import fs from 'node:fs';
import type { ServerConfig } from '../config.js';
import { applyMigrations, openDatabase } from '../db/connection.js';
import { assertNotNewer, openExisting, schemaState } from './database.js';
import { acquireServerLock } from './lock.js';

export interface MigrateResult {
  /** Migrations applied by this run. */
  applied: number;
  /** Migrations applied to the database in all, now. */
  schemaVersion: number;
  /** Tags of the migrations this run applied. */
  migrations: string[];
  databaseFile: string;
}

/** `svc server migrate`: applies pending migrations, creating the database if there is none. With nothing
 * pending it only reads, so it is safe next to a running server; with something pending it needs the data
 * dir to itself (a running server is an older build that must not see a newer schema). */
export async function migrateDatabase(config: ServerConfig): Promise<MigrateResult> {
  if (fs.existsSync(config.databaseFile)) {
    const sqlite = openExisting(config.databaseFile);
    try {
      const state = schemaState(sqlite);
      assertNotNewer(state, 'The database');
      if (state.pending.length === 0)
        return { applied: 0, schemaVersion: state.version, migrations: [], databaseFile: config.databaseFile };
    } finally {
      sqlite.close();
    }
  }
  // Throws ServerRunningError (exit 6) while a live server holds the data dir.
  const lock = acquireServerLock(config.dataDir, { command: 'migrate' });
  try {
    const db = openDatabase(config.databaseFile);
    try {
      const pending = schemaState(db.$client).pending;
      const applied = applyMigrations(db);
      return {
        applied,
        schemaVersion: schemaState(db.$client).version,
        migrations: pending.slice(0, applied),
        databaseFile: config.databaseFile,
      };
    } finally {
      db.$client.close();
    }
  } finally {
    lock.release();
  }
}
