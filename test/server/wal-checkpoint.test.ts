import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startWalCheckpoints } from '../../src/server/db/checkpoint.js';
import { openDatabase, type Db } from '../../src/server/db/connection.js';

const CHUNKS = 40;
const PER_CHUNK = 50;
const INTERVAL_MS = 20;
/** What the WAL may reach with checkpoints between chunks: one chunk's commits are far below it. */
const BOUND_BYTES = 4 * 1024 * 1024;

/** db/checkpoint.ts: the server's WAL checkpoints run on a timer, not inside a request's commit. */
describe('WAL checkpoints on a timer (db/checkpoint.ts)', () => {
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

  /** CHUNKS × PER_CHUNK one-row transactions (bounded), a pause after each chunk; the largest WAL seen. */
  async function sustainedWrites(): Promise<number> {
    const insert = db.$client.prepare('INSERT INTO t (v) VALUES (?)');
    let largest = 0;
    for (let c = 0; c < CHUNKS; c++) {
      for (let i = 0; i < PER_CHUNK; i++) insert.run(`${c}:${i}:${'x'.repeat(200)}`);
      largest = Math.max(largest, walSize());
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 2));
    }
    return largest;
  }

  it('with automatic checkpoints off and none on the timer, the WAL grows past the bound (the control)', async () => {
    db.$client.pragma('wal_autocheckpoint = 0');
    expect(await sustainedWrites()).toBeGreaterThan(BOUND_BYTES);
  });

  it('under sustained writes the WAL stays bounded; no checkpoint runs in a commit; stop leaves it empty', async () => {
    const checkpoints = startWalCheckpoints(db.$client, { intervalMs: INTERVAL_MS });
    expect(db.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
    const largest = await sustainedWrites();
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(BOUND_BYTES);
    expect(db.$client.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: CHUNKS * PER_CHUNK });
    checkpoints.stop();
    expect(walSize()).toBe(0);
    expect(db.$client.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    // Stopped twice, or after the database closed: nothing happens.
    checkpoints.stop();
    db.$client.close();
    expect(() => checkpoints.stop()).not.toThrow();
    db = openDatabase(file);
    expect(db.$client.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: CHUNKS * PER_CHUNK });
  });

  it('a failing checkpoint is reported to onError, not thrown from the timer', async () => {
    const errors: unknown[] = [];
    const checkpoints = startWalCheckpoints(db.$client, { intervalMs: 5, onError: (err) => errors.push(err) });
    const pragma = db.$client.pragma.bind(db.$client);
    db.$client.pragma = (source: string, options?: Parameters<typeof pragma>[1]) => {
      if (source.startsWith('wal_checkpoint')) throw new Error('disk I/O error');
      return pragma(source, options);
    };
    await new Promise((resolve) => setTimeout(resolve, 50));
    db.$client.pragma = pragma;
    checkpoints.stop();
    expect(errors.length).toBeGreaterThan(0);
    expect(String(errors[0])).toMatch(/disk I\/O error/);
  });
});
