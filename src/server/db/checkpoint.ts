import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** How often the server copies the WAL back into the database (ms). */
export const CHECKPOINT_INTERVAL_MS = 500;
/** How long the WAL may grow (bytes of frames) before the worker restarts it with a RESTART checkpoint, which
 * makes writers wait for its last copy (checkpoint-worker.js): under writes that never pause long enough for a
 * PASSIVE checkpoint to catch up, the log would otherwise never start over. */
export const WAL_RESTART_BYTES = 16 * 1024 * 1024;
/** What the writer cuts the WAL file back to when it starts the log over (bytes; `journal_size_limit`). Above what
 * the log reaches between two ticks under load (WAL_RESTART_BYTES and one interval of writes), so a loaded server
 * never truncates in a commit (it did at each restart with 16 MB: 12 ms in the event loop and 5% of the CPU of
 * a create-site benchmark); an idle WAL is emptied by the worker instead. */
export const WAL_SIZE_LIMIT_BYTES = 256 * 1024 * 1024;
/** How long stop waits for the worker to close its connection before it truncates the WAL anyway (ms). */
export const STOP_WAIT_MS = 5000;

/** The thread's code: plain JavaScript beside this file, in src/ and (copied by scripts/bundle.js) in dist/. */
export const CHECKPOINT_WORKER_URL = new URL('./checkpoint-worker.js', import.meta.url);

/** What SQLite reports of one checkpoint: whether it was blocked, pages in the WAL, pages copied back. */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

export interface WalCheckpoints {
  /** Where the checkpoints run: the worker thread, SQLite's automatic ones in the commit (the worker could not
   * serve this database: onError was told why), or none (an in-memory or non-WAL database). */
  readonly mode: 'worker' | 'automatic' | 'none';
  /** Settles once the worker has its connection open (the thread starts in the background, some tens of ms on
   * an idle machine), or the database fell back to automatic checkpoints. Never rejects. */
  readonly ready: Promise<void>;
  /** One passive checkpoint now, in the worker; SQLite's counts, or undefined when none ran there. */
  checkpoint(): Promise<CheckpointResult | undefined>;
  /** Stops the timer and waits for the worker to close its connection, then empties and truncates the WAL on
   * this connection and gives it back its automatic checkpoints. A second call is the same promise. */
  stop(): Promise<void>;
}

interface WorkerError {
  message: string;
  code?: string;
}

type Reply =
  | { type: 'added' | 'removed'; id: number }
  | { type: 'failed' | 'error'; id: number; error: WorkerError }
  | { type: 'checkpointed'; id: number; seq: number; result: CheckpointResult | undefined };

interface Registration {
  onReply(reply: Reply): void;
  /** The thread ended (crashed, or could not load): nothing more comes from it. */
  onGone(err: Error): void;
}

/**
 * The one checkpoint thread of this process, shared by every database that registers (tests build many apps
 * in one process: only the first pays for starting a thread). It never keeps the process alive (unref) and
 * ends when its last database leaves.
 */
class CheckpointThread {
  private readonly worker = new Worker(CHECKPOINT_WORKER_URL);
  private readonly registrations = new Map<number, Registration>();
  private nextId = 1;
  private gone = false;

  constructor() {
    this.worker.unref();
    this.worker.on('message', (reply: Reply) => this.registrations.get(reply.id)?.onReply(reply));
    this.worker.on('error', (err) => this.end(err));
    this.worker.on('exit', (code) => this.end(new Error(`the WAL checkpoint worker exited (code ${code})`)));
  }

  get alive(): boolean {
    return !this.gone;
  }

  register(registration: Registration): number {
    const id = this.nextId++;
    this.registrations.set(id, registration);
    return id;
  }

  send(message: Record<string, unknown>): void {
    if (!this.gone) this.worker.postMessage(message);
  }

  /** After the worker answered `removed`: the thread ends with its last database. */
  unregister(id: number): void {
    this.registrations.delete(id);
    if (this.registrations.size === 0 && !this.gone) {
      this.gone = true;
      if (thread === this) thread = undefined;
      void this.worker.terminate();
    }
  }

  private end(err: Error): void {
    if (this.gone) return;
    this.gone = true;
    if (thread === this) thread = undefined;
    const registrations = [...this.registrations.values()];
    this.registrations.clear();
    for (const registration of registrations) registration.onGone(err);
  }
}

let thread: CheckpointThread | undefined;

function errorFrom(error: WorkerError): Error {
  return Object.assign(new Error(error.message), error.code ? { code: error.code } : {});
}

/**
 * Takes the WAL checkpoints out of the requests and off the event loop (docs/api-notes.md, "WAL checkpoints").
 * By default SQLite runs a checkpoint inside the commit that takes the WAL past 1,000 pages, so that one request,
 * whichever it is, copies pages back to the database and waits for its sync. While the server runs, automatic
 * checkpoints are off on its connection and a worker thread, with a connection of its own to the same file, runs
 * a PASSIVE checkpoint every intervalMs (it never waits for a reader or a writer, and pages written many times in
 * the interval are copied once); when the WAL is longer than restartBytes after it, a RESTART one that makes the
 * log start over, and when the WAL is idle, a TRUNCATE one that empties it (checkpoint-worker.js says why and
 * what each waits for). At stop, after the worker closed its connection, a TRUNCATE checkpoint on this
 * connection leaves an empty WAL. In-memory and non-WAL databases have no WAL to checkpoint: nothing starts.
 * When the worker cannot serve the database, onError hears why and the connection gets its automatic
 * checkpoints back, so the WAL stays bounded as it was before.
 */
export function startWalCheckpoints(
  sqlite: Database.Database,
  options: { intervalMs?: number; restartBytes?: number; onError?: (err: unknown) => void } = {},
): WalCheckpoints {
  const { intervalMs = CHECKPOINT_INTERVAL_MS, restartBytes = WAL_RESTART_BYTES, onError = () => {} } = options;
  if (sqlite.memory || sqlite.pragma('journal_mode', { simple: true }) !== 'wal') {
    return { mode: 'none', ready: Promise.resolve(), checkpoint: async () => undefined, stop: async () => {} };
  }
  const automatic = sqlite.pragma('wal_autocheckpoint', { simple: true }) as number;
  sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const giveBack = (): void => {
    if (sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${automatic}`);
  };

  let mode: 'worker' | 'automatic' = 'worker';
  let seq = 0;
  const pending = new Map<number, (result: CheckpointResult | undefined) => void>();
  let removed: (() => void) | undefined;
  let stopping: Promise<void> | undefined;
  let opened = (): void => {};
  const ready = new Promise<void>((resolve) => (opened = resolve));

  /** The worker will not checkpoint this database: SQLite's automatic checkpoints take over. */
  const fallBack = (err: Error): void => {
    if (mode === 'automatic') return;
    mode = 'automatic';
    opened();
    for (const resolve of pending.values()) resolve(undefined);
    pending.clear();
    removed?.();
    if (!stopping) {
      giveBack();
      onError(err);
    }
  };

  if (!thread?.alive) thread = new CheckpointThread();
  const worker = thread;
  const id = worker.register({
    onReply(reply) {
      if (reply.type === 'failed') {
        fallBack(errorFrom(reply.error));
        worker.unregister(id);
      } else if (reply.type === 'added') opened();
      else if (reply.type === 'error') onError(errorFrom(reply.error));
      else if (reply.type === 'checkpointed') {
        pending.get(reply.seq)?.(reply.result);
        pending.delete(reply.seq);
      } else if (reply.type === 'removed') {
        removed?.();
        worker.unregister(id);
      }
    },
    onGone: fallBack,
  });
  const pageBytes = sqlite.pragma('page_size', { simple: true }) as number;
  worker.send({ type: 'add', id, file: sqlite.name, intervalMs, restartAfterFrames: Math.ceil(restartBytes / pageBytes) });

  return {
    get mode() {
      return mode;
    },
    ready,
    checkpoint() {
      if (mode !== 'worker' || stopping) return Promise.resolve(undefined);
      const n = ++seq;
      return new Promise((resolve) => {
        pending.set(n, resolve);
        worker.send({ type: 'checkpoint', id, seq: n });
      });
    },
    stop() {
      stopping ??= (async () => {
        if (mode === 'worker') {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, STOP_WAIT_MS);
            timer.unref();
            removed = () => {
              clearTimeout(timer);
              resolve();
            };
            worker.send({ type: 'remove', id });
          });
        }
        if (!sqlite.open) return;
        sqlite.pragma('wal_checkpoint(TRUNCATE)');
        giveBack();
      })();
      return stopping;
    },
  };
}
