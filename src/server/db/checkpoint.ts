import type Database from 'better-sqlite3';

/** How often the server copies the WAL back into the database (ms). */
export const CHECKPOINT_INTERVAL_MS = 500;
/** What the WAL file is cut back to after a checkpoint that emptied it (bytes): a burst does not keep its size. */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

export interface WalCheckpoints {
  /** One passive checkpoint now (what the timer runs). */
  checkpoint(): void;
  /** Stops the timer, empties and truncates the WAL, and gives the connection back its automatic checkpoints. */
  stop(): void;
}

/**
 * Takes the WAL checkpoints out of the requests (docs/api-notes.md, "WAL checkpoints"). By default SQLite runs a
 * checkpoint inside the commit that takes the WAL past 1,000 pages, so that one request, whichever it is,
 * copies pages back to the database and waits for its sync: under sustained writes several times a second,
 * and what a request's p99 sees. While the server runs, automatic checkpoints are off and a passive one runs
 * every intervalMs between requests (on the event loop; it never waits for a reader, and pages written many
 * times in the interval are copied once). At stop a TRUNCATE checkpoint leaves an empty WAL.
 */
export function startWalCheckpoints(
  sqlite: Database.Database,
  options: { intervalMs?: number; onError?: (err: unknown) => void } = {},
): WalCheckpoints {
  const { intervalMs = CHECKPOINT_INTERVAL_MS, onError = () => {} } = options;
  const automatic = sqlite.pragma('wal_autocheckpoint', { simple: true }) as number;
  sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const checkpoint = (): void => {
    // Not inside a transaction of the same connection (an await in one would be a bug, but do not add to it).
    if (sqlite.open && !sqlite.inTransaction) sqlite.pragma('wal_checkpoint(PASSIVE)');
  };
  let timer: NodeJS.Timeout | undefined = setInterval(() => {
    try {
      checkpoint();
    } catch (err) {
      onError(err);
    }
  }, intervalMs);
  timer.unref();
  return {
    checkpoint,
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      if (!sqlite.open) return;
      sqlite.pragma('wal_checkpoint(TRUNCATE)');
      sqlite.pragma(`wal_autocheckpoint = ${automatic}`);
    },
  };
}
