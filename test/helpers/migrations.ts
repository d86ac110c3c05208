import fs from 'node:fs';
import path from 'node:path';
import { MIGRATIONS_DIR, applyMigrations, openDatabase } from '../../src/server/db/connection.js';

/** A database file with only the first `count` shipped migrations applied: what an older svc left behind. The
 * shortened migrations folder is made under `dir`. */
export function olderDatabase(dir: string, file: string, count: number): void {
  const folder = path.join(dir, `migrations-${count}`);
  fs.cpSync(MIGRATIONS_DIR, folder, { recursive: true });
  const journalFile = path.join(folder, 'meta/_journal.json');
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: unknown[] };
  journal.entries = journal.entries.slice(0, count);
  fs.writeFileSync(journalFile, JSON.stringify(journal));
  const db = openDatabase(file);
  applyMigrations(db, folder);
  db.$client.close();
}
