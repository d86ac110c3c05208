// The thread that runs the server's WAL checkpoints (started by db/checkpoint.ts; docs/api-notes.md, "WAL
// checkpoints"). Plain JavaScript: Node 20 runs no TypeScript in a worker, so the same file runs from src/ (tests)
// and from dist/ (scripts/bundle.js copies it there and fails the build without it).
//
// One thread per process serves every database the process registers: each gets its own connection here (WAL
// mode lets another connection checkpoint) and a PASSIVE checkpoint every intervalMs, which never waits for a
// reader or a writer, so the copy back into the database and its sync happen beside the event loop, not on it.
//
// A PASSIVE checkpoint alone cannot bound the WAL under writes that never pause: it copies the frames that
// existed when it began, and the log starts over only when a writer finds every frame copied, so while commits
// keep coming during each checkpoint (its sync alone takes milliseconds) the WAL grows without end (310 MB after
// ten seconds of creating sites in the routes benchmark). When a WAL still holds more than restartAfterFrames
// frames after the PASSIVE one, a RESTART checkpoint follows: it takes the write lock (waiting at most
// RESTART_WAIT_MS for it and for readers of old frames; when it cannot, the next tick tries again), copies what
// the PASSIVE one left (little) and makes the next commit start the log over. Writers on other connections wait
// for it, milliseconds at most, and only under that sustained load. A WAL that the last two ticks found entirely
// copied back and unchanged is idle: a TRUNCATE checkpoint that waits for nothing empties its file, so a burst
// does not leave its size on disk.
//
// Messages in:  { type: 'add', id, file, intervalMs, restartAfterFrames } | { type: 'checkpoint', id, seq }
//               | { type: 'remove', id }
// Messages out: { type: 'added' | 'removed', id } | { type: 'failed', id, error } (the database was not opened)
//               | { type: 'error', id, error } (one checkpoint failed) | { type: 'checkpointed', id, seq, result }
/* global setInterval, clearInterval */
import { parentPort } from 'node:worker_threads';
import Database from 'better-sqlite3';

if (!parentPort) throw new Error('checkpoint-worker.js runs as a worker thread (db/checkpoint.ts starts it)');
const port = parentPort;

/** How long a RESTART checkpoint may wait for the write lock and for readers of old frames (ms). */
const RESTART_WAIT_MS = 20;

/** @type {Map<number, { sqlite: import('better-sqlite3').Database, timer: NodeJS.Timeout, restartAfterFrames: number, last?: { log: number, checkpointed: number } }>} */
const databases = new Map();

const errorOf = (err) => ({
  message: err instanceof Error ? err.message : String(err),
  code: typeof err?.code === 'string' ? err.code : undefined,
});

/** A checkpoint in `mode`, waiting at most waitMs for locks: { busy, log, checkpointed } (pages), as SQLite
 * reports it. */
function run(sqlite, mode, waitMs) {
  sqlite.pragma(`busy_timeout = ${waitMs}`);
  return sqlite.pragma(`wal_checkpoint(${mode})`)[0];
}

/** One tick: a passive checkpoint, then a RESTART one when the WAL is still long, or a TRUNCATE one when it is
 * idle (see the top of this file); the last one's counts. */
function checkpoint(id) {
  const entry = databases.get(id);
  if (!entry) return undefined;
  try {
    const { sqlite, last } = entry;
    let result = run(sqlite, 'PASSIVE', 0);
    const idle = result.log > 0 && result.checkpointed === result.log && last?.log === result.log && last.checkpointed === result.log;
    if (idle) result = run(sqlite, 'TRUNCATE', 0);
    else if (result.log > entry.restartAfterFrames) result = run(sqlite, 'RESTART', RESTART_WAIT_MS);
    entry.last = result;
    return result;
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
    const { intervalMs, restartAfterFrames } = message;
    databases.set(id, { sqlite, timer: setInterval(() => checkpoint(id), intervalMs), restartAfterFrames });
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
