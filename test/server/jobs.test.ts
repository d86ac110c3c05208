import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyMigrations, openDatabase, transaction, type Db } from '../../src/server/db/connection.js';
import { jobs, outboxEvents } from '../../src/server/db/schema/index.js';
import {
  LEASE_MS,
  JobWorker,
  backoffMs,
  enqueueJob,
  publishEvent,
  purgeFinishedWork,
  type Job,
} from '../../src/server/jobs/queue.js';

const at = (iso: string) => new Date(iso);
const T0 = at('2030-01-01T00:00:00.000Z');
const plus = (date: Date, ms: number) => new Date(date.getTime() + ms);

describe('jobs and the outbox', () => {
  let dir: string;
  let file: string;
  const open: Db[] = [];

  /** A new connection to the same database file: what a restarted server process would open. */
  const connect = (): Db => {
    const db = openDatabase(file);
    open.push(db);
    return db;
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-jobs-'));
    file = path.join(dir, 'svc.db');
    applyMigrations(connect());
  });

  afterEach(() => {
    for (const db of open.splice(0)) if (db.$client.open) db.$client.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const allJobs = (db: Db) => db.select().from(jobs).all();
  const jobsOf = (db: Db, type: string) => db.select().from(jobs).where(eq(jobs.type, type)).all();

  it('an event published in a transaction that rolls back leaves no event and no job', async () => {
    const db = connect();
    expect(() =>
      transaction(db, (tx) => {
        publishEvent(tx, 'partner.created', { partnerId: 'p1' });
        throw new Error('the change failed');
      }),
    ).toThrow('the change failed');
    expect(db.select().from(outboxEvents).all()).toEqual([]);

    const worker = new JobWorker(db, 1000);
    worker.subscribe('partner.created', 'welcome.send');
    const seen: unknown[] = [];
    worker.handle('welcome.send', (payload) => {
      seen.push(payload);
    });
    expect(await worker.tick(T0)).toBe(0);
    expect(seen).toEqual([]);
    expect(allJobs(db)).toEqual([]);
  });

  it('a committed event is relayed to each subscriber exactly once, even with two workers on the file', async () => {
    const db = connect();
    transaction(db, (tx) => publishEvent(tx, 'partner.created', { partnerId: 'p1' }, 'org-1'));

    const seen: Record<string, unknown>[] = [];
    const workers = [new JobWorker(db, 1000), new JobWorker(connect(), 1000)];
    for (const w of workers) {
      w.subscribe('partner.created', 'welcome.send');
      w.handle('welcome.send', (payload) => {
        seen.push(payload);
      });
    }
    for (let i = 0; i < 3; i++) for (const w of workers) await w.tick(plus(T0, i * 60_000));

    expect(seen).toHaveLength(1);
    const event = db.select().from(outboxEvents).get();
    expect(seen[0]).toEqual({ partnerId: 'p1', eventId: event?.id, eventType: 'partner.created' });
    expect(event?.dispatchedAt).not.toBeNull();
    const [job] = allJobs(db);
    expect(job).toMatchObject({ type: 'welcome.send', status: 'done', attempts: 1, lockedUntil: null });
  });

  it('events are relayed in the order they were published', async () => {
    const db = connect();
    transaction(db, (tx) => {
      for (let i = 0; i < 5; i++) publishEvent(tx, 'tick', { i });
    });
    const worker = new JobWorker(db, 1000);
    worker.subscribe('tick', 'record');
    const order: unknown[] = [];
    worker.handle('record', (payload) => {
      order.push(payload.i);
    });
    await worker.tick(T0);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('a failing job is retried with backoff and becomes dead after maxAttempts', async () => {
    const db = connect();
    enqueueJob(db, 'flaky', { n: 1 }, { runAt: T0, maxAttempts: 3 });
    const errors: unknown[] = [];
    const worker = new JobWorker(db, 1000, (err) => errors.push(err));
    let calls = 0;
    worker.handle('flaky', () => {
      calls++;
      throw new Error(`boom ${calls}`);
    });

    expect(await worker.tick(T0)).toBe(1);
    let [job] = allJobs(db);
    expect(job).toMatchObject({ status: 'pending', attempts: 1, lastError: 'boom 1', lockedUntil: null });
    const firstRetry = new Date(job?.runAt ?? 0);
    expect(firstRetry.getTime()).toBeGreaterThan(T0.getTime());

    // Not due yet: nothing runs before the backoff has passed.
    expect(await worker.tick(plus(T0, 1))).toBe(0);
    expect(calls).toBe(1);

    expect(await worker.tick(plus(firstRetry, 1))).toBe(1);
    [job] = allJobs(db);
    expect(job).toMatchObject({ status: 'pending', attempts: 2, lastError: 'boom 2' });
    const secondRetry = new Date(job?.runAt ?? 0);
    expect(secondRetry.getTime()).toBeGreaterThan(firstRetry.getTime());

    expect(await worker.tick(plus(secondRetry, 1))).toBe(1);
    [job] = allJobs(db);
    expect(job).toMatchObject({ status: 'dead', attempts: 3, lastError: 'boom 3', lockedUntil: null });
    expect(job?.finishedAt).not.toBeNull();

    // Dead letters stay dead.
    expect(await worker.tick(plus(T0, 86_400_000))).toBe(0);
    expect(calls).toBe(3);
    expect(errors).toHaveLength(3);
  });

  it('backoff grows exponentially from a second, with jitter, capped at an hour', () => {
    for (let i = 0; i < 50; i++) {
      expect(backoffMs(1)).toBeGreaterThanOrEqual(500);
      expect(backoffMs(1)).toBeLessThanOrEqual(1000);
      expect(backoffMs(4)).toBeGreaterThanOrEqual(4000);
      expect(backoffMs(4)).toBeLessThanOrEqual(8000);
      expect(backoffMs(40)).toBeLessThanOrEqual(3_600_000);
      expect(backoffMs(40)).toBeGreaterThanOrEqual(1_800_000);
    }
  });

  it('a job left running by a crash is claimed again by a new worker once its lease expires', async () => {
    const crashed = connect();
    enqueueJob(crashed, 'report.build', { id: 'r1' }, { runAt: T0 });
    const first = new JobWorker(crashed, 1000);
    let release: () => void = () => {};
    first.handle('report.build', () => new Promise<void>((resolve) => (release = resolve)));
    // The first worker claims the job and never finishes it: the process "dies" with the job running.
    const inFlight = first.tick(T0);
    await new Promise((r) => setTimeout(r, 20));
    crashed.$client.close();

    const db = connect();
    const [stuck] = allJobs(db);
    expect(stuck).toMatchObject({ status: 'running', attempts: 1 });

    const restarted = new JobWorker(db, 1000);
    const ran: Job[] = [];
    restarted.handle('report.build', (_payload, job) => {
      ran.push(job);
    });
    expect(await restarted.tick(plus(T0, LEASE_MS - 1000))).toBe(0);
    expect(await restarted.tick(plus(T0, LEASE_MS + 1000))).toBe(1);
    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatchObject({ id: stuck?.id, attempts: 2 });
    expect(allJobs(db)[0]).toMatchObject({ status: 'done', attempts: 2 });

    // The "dead" first worker's late completion must not overwrite anything (its connection is gone).
    release();
    await inFlight.catch(() => undefined);
    expect(allJobs(db)[0]).toMatchObject({ status: 'done', attempts: 2 });
  });

  it('a job that crashed its worker on its last allowed attempt is dead-lettered, not run again', async () => {
    const db = connect();
    enqueueJob(db, 'poison', {}, { runAt: T0, maxAttempts: 1 });
    db.update(jobs)
      .set({ status: 'running', attempts: 1, lockedUntil: plus(T0, LEASE_MS).toISOString() })
      .run();
    const worker = new JobWorker(db, 1000);
    let calls = 0;
    worker.handle('poison', () => {
      calls++;
    });
    expect(await worker.tick(plus(T0, LEASE_MS + 1))).toBe(0);
    expect(calls).toBe(0);
    expect(allJobs(db)[0]).toMatchObject({ status: 'dead', lastError: expect.stringContaining('lease expired') });
  });

  it('a unique key allows one waiting job, and is free again once that job is done', async () => {
    const db = connect();
    expect(enqueueJob(db, 'sync', {}, { runAt: T0, uniqueKey: 'sync:org-1' })).toBe(true);
    expect(enqueueJob(db, 'sync', {}, { runAt: T0, uniqueKey: 'sync:org-1' })).toBe(false);
    const worker = new JobWorker(db, 1000);
    worker.handle('sync', () => {});
    expect(await worker.tick(T0)).toBe(1);
    expect(enqueueJob(db, 'sync', {}, { runAt: T0, uniqueKey: 'sync:org-1' })).toBe(true);
    expect(
      allJobs(db)
        .map((j) => j.status)
        .sort(),
    ).toEqual(['done', 'pending']);
  });

  it('a periodic job survives a restart without duplicating', async () => {
    const every = 3_600_000;
    const runs: string[] = [];
    const makeWorker = (db: Db, name: string) => {
      const w = new JobWorker(db, 1000);
      w.every('reports.hourly', every, () => {
        runs.push(name);
      });
      return w;
    };
    const hourly = (db: Db, status: Job['status']) => jobsOf(db, 'reports.hourly').filter((j) => j.status === status);
    const db1 = connect();
    const w1 = makeWorker(db1, 'first');
    w1.schedulePeriodicJobs(T0);
    w1.schedulePeriodicJobs(T0);
    expect(hourly(db1, 'pending')).toHaveLength(1);
    await w1.tick(T0);
    expect(runs).toEqual(['first']);
    // The run scheduled its successor an interval later.
    const pending1 = hourly(db1, 'pending');
    expect(pending1).toHaveLength(1);
    expect(new Date(pending1[0]?.runAt ?? 0).getTime()).toBeGreaterThanOrEqual(T0.getTime() + every);
    db1.$client.close();

    // Restart: a new process, a new worker, the same file. Scheduling again adds nothing.
    const db2 = connect();
    const w2 = makeWorker(db2, 'second');
    w2.schedulePeriodicJobs(plus(T0, 60_000));
    expect(hourly(db2, 'pending')).toHaveLength(1);
    await w2.tick(plus(T0, 60_000));
    expect(runs).toEqual(['first']);
    await w2.tick(plus(T0, every + 1));
    await w2.tick(plus(T0, every + 2));
    expect(runs).toEqual(['first', 'second']);
    // One waiting row per periodic job, however many times it ran.
    expect(jobsOf(db2, 'reports.hourly')).toMatchObject([{ status: 'pending', attempts: 0 }]);
  });

  it('a failing periodic job is dead-lettered and still schedules its next run', async () => {
    const db = connect();
    const worker = new JobWorker(db, 1000);
    worker.every('flaky.periodic', 60_000, () => {
      throw new Error('nope');
    });
    worker.schedulePeriodicJobs(T0);
    await worker.tick(T0);
    const statuses = jobsOf(db, 'flaky.periodic')
      .map((j) => j.status)
      .sort();
    expect(statuses).toEqual(['dead', 'pending']);
  });

  it('a periodic job left running by a crash does not block its schedule forever', async () => {
    const db = connect();
    const worker = new JobWorker(db, 1000);
    const runs: number[] = [];
    worker.every('hourly', 3_600_000, () => {
      runs.push(1);
    });
    worker.schedulePeriodicJobs(T0);
    // Simulate the crash: the job was claimed (running, attempt 1 of 1) and never finished.
    db.update(jobs)
      .set({ status: 'running', attempts: 1, lockedUntil: plus(T0, LEASE_MS).toISOString() })
      .where(eq(jobs.type, 'hourly'))
      .run();
    worker.schedulePeriodicJobs(plus(T0, 1000));
    expect(jobsOf(db, 'hourly')).toHaveLength(1);
    await worker.tick(plus(T0, LEASE_MS + 1));
    const statuses = jobsOf(db, 'hourly')
      .map((j) => j.status)
      .sort();
    expect(statuses).toEqual(['dead', 'pending']);
    expect(runs).toEqual([]);
  });

  it('finished work is purged after its retention; waiting work never is', async () => {
    const db = connect();
    const old = plus(T0, -40 * 86_400_000).toISOString();
    const recent = plus(T0, -86_400_000).toISOString();
    for (const [status, finishedAt] of [
      ['done', old],
      ['done', recent],
      ['dead', old],
      ['dead', plus(T0, -10 * 86_400_000).toISOString()],
      ['pending', null],
    ] as const) {
      enqueueJob(db, `t.${status}`, {}, { runAt: new Date(old) });
      db.update(jobs)
        .set({ status, finishedAt })
        .where(eq(jobs.type, `t.${status}`))
        .run();
      db.update(jobs)
        .set({ type: `kept.${status}.${finishedAt ?? 'none'}` })
        .where(eq(jobs.type, `t.${status}`))
        .run();
    }
    publishEvent(db, 'old', {});
    db.update(outboxEvents).set({ dispatchedAt: old }).run();
    publishEvent(db, 'undispatched', {});

    expect(purgeFinishedWork(db, T0)).toEqual({ jobs: 2, events: 1 });
    expect(
      allJobs(db)
        .map((j) => j.status)
        .sort(),
    ).toEqual(['dead', 'done', 'pending']);
    expect(
      db
        .select()
        .from(outboxEvents)
        .all()
        .map((e) => e.type),
    ).toEqual(['undispatched']);

    // The worker schedules the purge itself, once a day.
    const worker = new JobWorker(db, 1000);
    worker.schedulePeriodicJobs(T0);
    expect(jobsOf(db, 'maintenance.purge-finished-jobs')).toMatchObject([{ status: 'pending' }]);
  });

  it('start() polls on its own and stop() waits for the job in hand', async () => {
    const db = connect();
    const worker = new JobWorker(db, 10);
    let finished = false;
    worker.handle('slow', async () => {
      await new Promise((r) => setTimeout(r, 50));
      finished = true;
    });
    enqueueJob(db, 'slow', {});
    worker.start();
    await new Promise((r) => setTimeout(r, 20));
    await worker.stop();
    expect(finished).toBe(true);
    expect(allJobs(db)[0]?.status).toBe('done');
  });
});
