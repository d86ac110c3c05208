// The thread that runs the server's WAL checkpoints (started by db/checkpoint.ts; docs/api-notes.md, "WAL
// checkpoints"). Plain JavaScript: Node 20 runs no TypeScript in a worker, so the same file runs from src/ (tests)
// and from dist/ (scripts/bundle.js copies it there and fails the build without it).
//
// One thread per process serves every database the process registers: each gets its own connection here (WAL
// mode lets another connection checkpoint) and a PASSIVE checkpoint every intervalMs, which never waits for a
// reader or a writer, so the copy back into the database and its sync happen beside the event loop, not on it.
//
// Messages in:  { type: 'add', id, file, intervalMs } | { type: 'checkpoint', id, seq } | { type: 'remove', id }
// Messages out: { type: 'added' | 'removed', id } | { type: 'failed', id, error } (the database was not opened)
//               | { type: 'error', id, error } (one checkpoint failed) | { type: 'checkpointed', id, seq, result }
/* global setInterval, clearInterval */
import { parentPort } from 'node:worker_threads';
import Database from 'better-sqlite3';

if (!parentPort) throw new Error('checkpoint-worker.js runs as a worker thread (db/checkpoint.ts starts it)');
const port = parentPort;

/** @type {Map<number, { sqlite: import('better-sqlite3').Database, timer: NodeJS.Timeout }>} */
const databases = new Map();

const errorOf = (err) => ({
  message: err instanceof Error ? err.message : String(err),
  code: typeof err?.code === 'string' ? err.code : undefined,
});

/** One passive checkpoint: { busy, log, checkpointed } (pages), as SQLite reports it. */
function checkpoint(id) {
  const entry = databases.get(id);
  if (!entry) return undefined;
  try {
    return entry.sqlite.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch (err) {
    port.postMessage({ type: 'error', id, error: errorOf(err) });
    return undefined;
  }
}

port.on('message', (message) => {
  const { type, id } = message;
  if (type === 'add') {
    let sqlite;
    try {
      // The server's connection made the file and set WAL mode (persistent in the file): this one only reads.
      sqlite = new Database(message.file, { fileMustExist: true });
      if (sqlite.pragma('journal_mode', { simple: true }) !== 'wal') throw new Error('the database is not in WAL mode');
    } catch (err) {
      sqlite?.close();
      port.postMessage({ type: 'failed', id, error: errorOf(err) });
      return;
    }
    databases.set(id, { sqlite, timer: setInterval(() => checkpoint(id), message.intervalMs) });
    port.postMessage({ type: 'added', id });
  } else if (type === 'checkpoint') {
    port.postMessage({ type: 'checkpointed', id, seq: message.seq, result: checkpoint(id) });
  } else if (type === 'remove') {
    const entry = databases.get(id);
    if (entry) {
      clearInterval(entry.timer);
      databases.delete(id);
      try {
        entry.sqlite.close();
      } catch {
        // Closing a read-only use of the file: nothing to keep.
      }
    }
    port.postMessage({ type: 'removed', id });
  }
});
