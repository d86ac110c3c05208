import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWalCheckpoints } from '../../src/server/db/checkpoint.js';
import { openDatabase, type Db } from '../../src/server/db/connection.js';

const CHUNKS = 40;
const PER_CHUNK = 50;
const INTERVAL_MS = 20;
/** The longest the writes wait for the worker's timer after a chunk (a loaded machine runs the thread late). */
const MAX_WAIT_MS = 250;
/** What the WAL may reach with checkpoints between chunks: one chunk's commits are far below it. */
const BOUND_BYTES = 4 * 1024 * 1024;
/** How long, and how many rows at most, the unpaused writes run; the WAL they may reach with RESTART checkpoints
 * (11-27 MB here, two runs at once). */
const UNPAUSED_MS = 1500;
const UNPAUSED_ROWS = 24_000;
const UNPAUSED_BOUND_BYTES = 48 * 1024 * 1024;

/** db/checkpoint.ts: the server's WAL checkpoints run on a timer in a worker thread, not inside a request's commit
 * nor on the event loop. */
describe('WAL checkpoints in a worker thread (db/checkpoint.ts)', () => {
  let dir: string;
  let file: string;
  let db: Db;
  const walSize = () => (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-wal-'));
    file = path.join(dir, 'svc.db');
    db = openDatabase(file);
    db.$client.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL); CREATE INDEX t_v ON t (v)');
  });
  afterEach(() => {
    db.$client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * The WAL index's header (the -shm file, SQLite's documented layout, native byte order): mxFrame (frames in the
   * log) at offset 16, nBackfill (frames copied back) at offset 96. Lets the test watch the worker (another
   * thread, which a loaded machine may run late) without asking it.
   */
  const walIndex = (): { frames: number; copied: number } => {
    const shm = fs.readFileSync(`${file}-shm`).subarray(0, 100);
    const u32 = (offset: number) => (os.endianness() === 'LE' ? shm.readUInt32LE(offset) : shm.readUInt32BE(offset));
    return { frames: u32(16), copied: u32(96) };
  };
  const copiedBack = (): boolean => {
    const { frames, copied } = walIndex();
    return frames === copied;
  };

  /** CHUNKS × PER_CHUNK one-row transactions (bounded), a pause after each chunk (waiting, when asked, up to
   * MAX_WAIT_MS for the timer's checkpoint to have copied the chunk back); the largest WAL seen. */
  async function sustainedWrites(waitForCheckpoints = false): Promise<number> {
    const insert = db.$client.prepare('INSERT INTO t (v) VALUES (?)');
    let largest = 0;
    for (let c = 0; c < CHUNKS; c++) {
      for (let i = 0; i < PER_CHUNK; i++) insert.run(`${c}:${i}:${'x'.repeat(200)}`);
      largest = Math.max(largest, walSize());
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 2));
      for (const end = Date.now() + MAX_WAIT_MS; waitForCheckpoints && !copiedBack() && Date.now() < end;)
        await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return largest;
  }

  it('with automatic checkpoints off and none on the timer, the WAL grows past the bound (the control)', async () => {
    db.$client.pragma('wal_autocheckpoint = 0');
    expect(await sustainedWrites()).toBeGreaterThan(BOUND_BYTES);
  });

  it('under sustained writes the WAL stays bounded by checkpoints in the worker, none on this connection; stop leaves it empty', async () => {
    const checkpoints = startWalCheckpoints(db.$client, { intervalMs: INTERVAL_MS });
    expect(checkpoints.mode).toBe('worker');
    expect(db.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    // The thread starts in the background (the server starts it before it listens).
    await checkpoints.ready;
    // Every checkpoint the server's connection runs itself goes through its pragma(): none until stop.
    const onThisConnection: string[] = [];
    const pragma = db.$client.pragma.bind(db.$client);
    db.$client.pragma = (source: string, options?: Parameters<typeof pragma>[1]) => {
      if (source.startsWith('wal_checkpoint')) onThisConnection.push(source);
      return pragma(source, options);
    };
    const largest = await sustainedWrites(true);
    expect(onThisConnection).toEqual([]);
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(BOUND_BYTES);
    expect(db.$client.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: CHUNKS * PER_CHUNK });
    await checkpoints.stop();
    expect(onThisConnection).toEqual(['wal_checkpoint(TRUNCATE)']);
    expect(walSize()).toBe(0);
    expect(db.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    // Stopped twice, or after the database closed: nothing happens.
    await checkpoints.stop();
    db.$client.close();
    await expect(checkpoints.stop()).resolves.toBeUndefined();
    db = openDatabase(file);
    expect(db.$client.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: CHUNKS * PER_CHUNK });
  });

  /** Ten-row commits for UNPAUSED_MS (UNPAUSED_ROWS at most), a turn of the event loop (setImmediate) after
   * each, as a loaded server commits: never a pause long enough for a PASSIVE checkpoint to catch up. The largest
   * WAL file seen, and how many times the log started over (its frame count fell). */
  async function unpausedWrites(): Promise<{ largest: number; restarts: number }> {
    const insert = db.$client.prepare('INSERT INTO t (v) VALUES (?)');
    const commit = db.$client.transaction((from: number) => {
      for (let n = from; n < from + 10; n++) insert.run(`${n}:${'x'.repeat(200)}`);
    });
    let largest = 0;
    let restarts = 0;
    let frames = 0;
    for (let n = 0, end = Date.now() + UNPAUSED_MS; n < UNPAUSED_ROWS && Date.now() < end; n += 10) {
      commit(n);
      largest = Math.max(largest, walSize());
      const now = walIndex().frames;
      if (now < frames) restarts++;
      frames = now;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return { largest, restarts };
  }

  // Without the RESTART checkpoints (restartBytes: Infinity) the same writes started the log over 0-1 times and
  // left a 47-134 MB WAL here (not a test of its own: a lucky pause on a loaded machine lets a PASSIVE one catch up).
  it('under writes that never pause, a RESTART checkpoint past restartBytes starts the log over and bounds the WAL; idle, the worker empties it', async () => {
    const checkpoints = startWalCheckpoints(db.$client, { intervalMs: INTERVAL_MS, restartBytes: 256 * 1024 });
    await checkpoints.ready;
    const { largest, restarts } = await unpausedWrites();
    expect(restarts).toBeGreaterThanOrEqual(3);
    expect(largest).toBeLessThan(UNPAUSED_BOUND_BYTES);
    // No writes: the second tick that finds it all copied back runs a TRUNCATE checkpoint, which empties the file.
    for (const end = Date.now() + 2000; walSize() > 0 && Date.now() < end; )
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(walSize()).toBe(0);
    await checkpoints.stop();
  });

  it('checkpoint() runs one in the worker and reports the pages it copied back', async () => {
    const checkpoints = startWalCheckpoints(db.$client, { intervalMs: 60_000 });
    const insert = db.$client.prepare('INSERT INTO t (v) VALUES (?)');
    for (let i = 0; i < 100; i++) insert.run(`${i}`);
    const result = await checkpoints.checkpoint();
    expect(result?.busy).toBe(0);
    expect(result?.log).toBeGreaterThan(0);
    expect(result?.checkpointed).toBe(result?.log);
    await checkpoints.stop();
    expect(await checkpoints.checkpoint()).toBeUndefined();
  });

  it('several databases share the thread; stopping one leaves the others checkpointed', async () => {
    const otherFile = path.join(dir, 'other.db');
    const other = openDatabase(otherFile);
    try {
      other.$client.exec('CREATE TABLE u (v TEXT)');
      const first = startWalCheckpoints(db.$client, { intervalMs: 60_000 });
      const second = startWalCheckpoints(other.$client, { intervalMs: 60_000 });
      await first.stop();
      other.$client.prepare('INSERT INTO u (v) VALUES (?)').run('x');
      const result = await second.checkpoint();
      expect(result?.log).toBeGreaterThan(0);
      expect(result?.checkpointed).toBe(result?.log);
      await second.stop();
      expect(fs.statSync(`${otherFile}-wal`).size).toBe(0);
    } finally {
      other.$client.close();
    }
  });

  it('when the worker cannot open the database, onError hears why and SQLite checkpoints in the commit again', async () => {
    const errors: unknown[] = [];
    // The server's connection keeps the file open; a new connection finds no file.
    fs.rmSync(file);
    const checkpoints = startWalCheckpoints(db.$client, {
      intervalMs: INTERVAL_MS,
      onError: (err) => errors.push(err),
    });
    await checkpoints.ready;
    expect(errors).toHaveLength(1);
    expect(String(errors[0])).toMatch(/unable to open database file/);
    expect(checkpoints.mode).toBe('automatic');
    expect(db.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await checkpoints.stop();
  });

  it('an in-memory database has no WAL: nothing starts and its settings stay', async () => {
    const memory = openDatabase(':memory:');
    const before = memory.$client.pragma('wal_autocheckpoint', { simple: true });
    const checkpoints = startWalCheckpoints(memory.$client);
    expect(checkpoints.mode).toBe('none');
    expect(memory.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(before);
    expect(await checkpoints.checkpoint()).toBeUndefined();
    await checkpoints.stop();
    memory.$client.close();
  });
});
