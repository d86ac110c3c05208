import { randomUUID } from 'node:crypto';
import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/connection.js';
import { jobs, outboxEvents } from '../db/schema/index.js';

export type Job = typeof jobs.$inferSelect;
export type JobHandler = (payload: Record<string, unknown>, job: Job) => Promise<void> | void;

export interface EnqueueOptions {
  runAt?: Date;
  maxAttempts?: number;
  /** At most one pending or running job with this key exists; a second enqueue is a no-op. The key is
   * released when the job is done or dead, so the same work can be enqueued again later. */
  uniqueKey?: string;
}

/** Writes a domain event to the outbox inside the caller's transaction: it is delivered only if the change
 * that caused it commits, and never lost once it has. */
export function publishEvent(
  tx: Db,
  type: string,
  payload: Record<string, unknown>,
  orgId: string | null = null,
): void {
  tx.insert(outboxEvents).values({ type, payload, orgId }).run();
  wakeWorkers(tx);
}

/** The started workers of each database: new work wakes them instead of waiting for their next poll. */
const wakers = new WeakMap<object, Set<() => void>>();

/** Wakes the started workers of `db`. Called inside the caller's transaction: the wake-up runs on a later turn
 * of the event loop, after the (synchronous) transaction committed or rolled back. */
function wakeWorkers(db: Db): void {
  const set = wakers.get(db.$client);
  if (set) for (const wake of set) wake();
}

/** Adds a job inside the caller's transaction. Returns false when a job with the same unique key is
 * already pending or running (nothing was added). */
export function enqueueJob(
  tx: Db,
  type: string,
  payload: Record<string, unknown>,
  options: EnqueueOptions = {},
): boolean {
  const result = tx
    .insert(jobs)
    .values({
      id: randomUUID(),
      type,
      payload,
      runAt: (options.runAt ?? new Date()).toISOString(),
      maxAttempts: options.maxAttempts ?? 5,
      uniqueKey: options.uniqueKey ?? null,
    })
    .onConflictDoNothing()
    .run();
  if (result.changes > 0) wakeWorkers(tx);
  return result.changes > 0;
}

/** How long a claimed job belongs to its worker. A job still `running` after its lease was left behind by a
 * crash (or a worker that stopped without finishing) and is claimed again. */
export const LEASE_MS = 5 * 60_000;
const BATCH = 20;
const RELAY_BATCH = 100;

/** Retry delay after `attempts` failures: exponential from 1 s, capped at one hour, with jitter. */
export function backoffMs(attempts: number): number {
  const base = Math.min(3_600_000, 1000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

const periodicKey = (type: string) => `periodic:${type}`;

const DAY_MS = 86_400_000;
/** How long finished work is kept for inspection: done jobs and relayed events a week, dead letters a month. */
export const RETENTION = { doneMs: 7 * DAY_MS, deadMs: 30 * DAY_MS, eventsMs: 7 * DAY_MS };

/** Deletes finished jobs and relayed events past their retention; pending and running work is never touched. */
export function purgeFinishedWork(db: Db, now = new Date()): { jobs: number; events: number } {
  const before = (ms: number) => new Date(now.getTime() - ms).toISOString();
  return db.$client.transaction(() => {
    const done = db
      .delete(jobs)
      .where(and(eq(jobs.status, 'done'), lt(jobs.finishedAt, before(RETENTION.doneMs))))
      .run().changes;
    const dead = db
      .delete(jobs)
      .where(and(eq(jobs.status, 'dead'), lt(jobs.finishedAt, before(RETENTION.deadMs))))
      .run().changes;
    const events = db
      .delete(outboxEvents)
      .where(lt(outboxEvents.dispatchedAt, before(RETENTION.eventsMs)))
      .run().changes;
    return { jobs: done + dead, events };
  })();
}

/** The later of the worker's clock (a tick's `now`) and the wall clock: retries and successors are never
 * scheduled in the past because a handler took long, and tests that tick with a later `now` see one clock. */
const later = (now: Date, ms: number) => new Date(Math.max(now.getTime(), Date.now()) + ms);

/**
 * The server's background worker: relays outbox events to their subscribers' jobs, then runs due jobs.
 * Jobs are leased, so one left running by a crash is claimed again when its lease runs out; one whose
 * attempts are used up by then is dead-lettered instead of running forever.
 * Delivery is at least once: a handler that crashes the process after its work but before the job is
 * marked done runs again, so handlers must be idempotent.
 */
export class JobWorker {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly subscribers = new Map<string, string[]>();
  private readonly periodic = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** New work arrived while a tick ran: the next tick starts at once. */
  private woken = false;
  private busy = false;
  private readonly wakeUp = () => this.wake();

  constructor(
    private readonly db: Db,
    private readonly pollMs: number,
    private readonly onError: (err: unknown, job?: Job) => void = () => {},
  ) {
    // The worker keeps its own tables from growing without bound.
    this.every('maintenance.purge-finished-jobs', DAY_MS, (_payload, job) => {
      purgeFinishedWork(db, new Date(Math.max(Date.now(), Date.parse(job.runAt))));
    });
  }

  handle(type: string, handler: JobHandler): void {
    this.handlers.set(type, handler);
  }

  /** Each event of `eventType` becomes a job of `jobType` (payload: the event's payload plus eventId and
   * eventType). */
  subscribe(eventType: string, jobType: string): void {
    this.subscribers.set(eventType, [...(this.subscribers.get(eventType) ?? []), jobType]);
  }

  /** A job that runs every `everyMs` for as long as a server runs, surviving restarts: one row per type
   * waits in the table (its unique key), and each run schedules its successor when it finishes. */
  every(type: string, everyMs: number, handler: JobHandler): void {
    this.periodic.set(type, everyMs);
    this.handle(type, handler);
  }

  /** Makes sure each periodic job has its waiting row; a no-op for those that have one (after a restart). */
  schedulePeriodicJobs(now = new Date()): void {
    for (const type of this.periodic.keys()) {
      enqueueJob(this.db, type, {}, { runAt: now, uniqueKey: periodicKey(type), maxAttempts: 1 });
    }
  }

  /**
   * Polls every `pollMs`, but without waiting when there is work: a tick that ran jobs is followed at once by
   * the next (a job's follow-up work, such as the jobs of the events it published, starts without a poll's
   * delay), and `enqueueJob` / `publishEvent` on this database wake an idle worker.
   */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedulePeriodicJobs();
    const set = wakers.get(this.db.$client) ?? new Set();
    set.add(this.wakeUp);
    wakers.set(this.db.$client, set);
    this.timer = setTimeout(this.loop, 0);
  }

  private readonly loop = (): void => {
    if (this.stopped) return;
    this.timer = undefined;
    this.woken = false;
    // Busy before the tick starts: the tick's own enqueues (its synchronous part relays events) only mark it woken.
    this.busy = true;
    this.running = this.tick()
      .catch((err: unknown) => {
        this.onError(err);
        return 0;
      })
      .then((ran) => {
        this.busy = false;
        this.running = undefined;
        if (!this.stopped) this.timer = setTimeout(this.loop, ran > 0 || this.woken ? 0 : this.pollMs);
      });
  };

  /** Runs the next tick as soon as possible (now when idle, right after the current one otherwise). */
  wake(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.woken = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.loop, 0);
  }

  /** Stops polling and waits for the jobs in hand to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    wakers.get(this.db.$client)?.delete(this.wakeUp);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass: relay events, then run the jobs that are due at `now`. Returns the number of jobs run. */
  async tick(now = new Date()): Promise<number> {
    this.relayEvents(now);
    const claimed = this.claim(now);
    for (const job of claimed) await this.runJob(job, now);
    return claimed.length;
  }

  private relayEvents(now: Date): void {
    // An idle poll only reads: the write lock is taken when there is something to relay.
    const waiting = this.db
      .select({ id: outboxEvents.id })
      .from(outboxEvents)
      .where(isNull(outboxEvents.dispatchedAt))
      .limit(1)
      .get();
    if (!waiting) return;
    // IMMEDIATE: take the write lock before reading, so two workers never relay the same event.
    this.db.$client
      .transaction(() => {
        const pending = this.db
          .select()
          .from(outboxEvents)
          .where(isNull(outboxEvents.dispatchedAt))
          .orderBy(outboxEvents.createdAt, sql`rowid`)
          .limit(RELAY_BATCH)
          .all();
        const at = now.toISOString();
        for (const event of pending) {
          for (const jobType of this.subscribers.get(event.type) ?? []) {
            enqueueJob(
              this.db,
              jobType,
              { ...event.payload, eventId: event.id, eventType: event.type },
              { runAt: now },
            );
          }
          this.db.update(outboxEvents).set({ dispatchedAt: at }).where(eq(outboxEvents.id, event.id)).run();
        }
      })
      .immediate();
  }

  private claim(now: Date): Job[] {
    const nowIso = now.toISOString();
    const lease = new Date(now.getTime() + LEASE_MS).toISOString();
    const claimable = sql`(${jobs.status} = 'pending' AND ${jobs.runAt} <= ${nowIso}) OR (${jobs.status} = 'running' AND ${jobs.lockedUntil} < ${nowIso})`;
    // An idle poll only reads: the write lock is taken when a job is due or a lease ran out.
    if (!this.db.select({ id: jobs.id }).from(jobs).where(claimable).limit(1).get()) return [];
    return this.db.$client
      .transaction(() => {
        // A lease that ran out on the last allowed attempt: the job crashed its worker every time it ran.
        const exhausted = this.db
          .update(jobs)
          .set({
            status: 'dead',
            lastError: sql`coalesce(${jobs.lastError} || '; ', '') || 'lease expired: the worker stopped while running it'`,
            lockedUntil: null,
            uniqueKey: null,
            finishedAt: later(now, 0).toISOString(),
          })
          .where(
            sql`${jobs.status} = 'running' AND ${jobs.lockedUntil} < ${nowIso} AND ${jobs.attempts} >= ${jobs.maxAttempts}`,
          )
          .returning({ type: jobs.type })
          .all();
        for (const { type } of exhausted) this.scheduleSuccessor(type, now);

        const due = this.db
          .select({ id: jobs.id })
          .from(jobs)
          .where(claimable)
          .orderBy(jobs.runAt, sql`rowid`)
          .limit(BATCH)
          .all();
        return due.map(({ id }) =>
          this.db
            .update(jobs)
            .set({ status: 'running', lockedUntil: lease, attempts: sql`${jobs.attempts} + 1` })
            .where(eq(jobs.id, id))
            .returning()
            .get(),
        );
      })
      .immediate()
      .filter((job): job is Job => job !== undefined);
  }

  /** The next run of a periodic job, once the current one is done or dead. */
  private scheduleSuccessor(type: string, now: Date): void {
    const everyMs = this.periodic.get(type);
    if (everyMs === undefined) return;
    enqueueJob(this.db, type, {}, { runAt: later(now, everyMs), uniqueKey: periodicKey(type), maxAttempts: 1 });
  }

  private async runJob(job: Job, now: Date): Promise<void> {
    const handler = this.handlers.get(job.type);
    let failure: unknown;
    let failed = false;
    try {
      if (!handler) throw new Error(`no handler for job type ${job.type}`);
      await handler(job.payload, job);
    } catch (err) {
      failed = true;
      failure = err;
      this.onError(err, job);
    }
    const dead = failed && job.attempts >= job.maxAttempts;
    const finished = !failed || dead;
    // Only while the lease is still ours: a job that outlived its lease may have been claimed by another
    // worker, whose outcome wins.
    const stillOurs = and(
      eq(jobs.id, job.id),
      eq(jobs.status, 'running'),
      job.lockedUntil === null ? isNull(jobs.lockedUntil) : eq(jobs.lockedUntil, job.lockedUntil),
    );
    this.db.$client
      .transaction(() => {
        // A periodic run that succeeded leaves nothing worth keeping: its row makes way for the next run, so
        // a job every minute does not pile up a row a minute. Failed runs stay as dead letters.
        if (!failed && this.periodic.has(job.type)) {
          if (this.db.delete(jobs).where(stillOurs).run().changes > 0) this.scheduleSuccessor(job.type, now);
          return;
        }
        const updated = this.db
          .update(jobs)
          .set({
            status: !failed ? 'done' : dead ? 'dead' : 'pending',
            lockedUntil: null,
            ...(failed ? { lastError: failure instanceof Error ? failure.message : String(failure) } : {}),
            ...(finished
              ? { finishedAt: later(now, 0).toISOString(), uniqueKey: null }
              : { runAt: later(now, backoffMs(job.attempts)).toISOString() }),
          })
          .where(stillOurs)
          .run();
        if (updated.changes > 0 && finished) this.scheduleSuccessor(job.type, now);
      })
      .immediate();
  }
}
