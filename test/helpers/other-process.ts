import Database from 'better-sqlite3';
import { VERSION_READ_SERVES_MS } from '../../src/server/lib/read-cache.js';

/**
 * Runs one statement through a second connection to the database file, as another process would, then waits until
 * the server's read caches see such a commit: they read the database's version at most once per event-loop turn and
 * VERSION_READ_SERVES_MS (lib/read-cache.ts), and a timer is both a later turn and later in time.
 */
export async function writeAsAnotherProcess(file: string, statement: string, ...params: unknown[]): Promise<void> {
  const other = new Database(file);
  try {
    other.prepare(statement).run(...params);
  } finally {
    other.close();
  }
  await new Promise((resolve) => setTimeout(resolve, VERSION_READ_SERVES_MS + 1));
}
