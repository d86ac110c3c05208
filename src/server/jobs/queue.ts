import { and, eq, isNull, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/connection.js';
import { jobs, outboxEvents } from '../db/schema/index.js';
import { newId } from '../db/ids.js';

export type Job = typeof jobs.$inferSelect;
export type JobHandler = (payload: Record<string, unknown>, job: Job) => Promise<void> | void;
export type RelayedEvent = typeof outboxEvents.$inferSelect;
/** Takes a relayed batch's events of its types (in outbox order) inside the relaying transaction: what it writes
 * commits with the events' relay mark, or neither does. It must be synchronous and idempotent (an event relayed
 * again after a crash comes to it again). */
export type BatchSubscriber = (tx: Db, events: readonly RelayedEvent[], now: Date) => void;

export interface EnqueueOptions {
  runAt?: Date;
  maxAttempts?: number;
  /** At most one pending or running job with this key exists; a second enqueue is a no-op. The key is
   * released when the job is done or dead, so the same work can be enqueued again later. */
  uniqueKey?: string;
}

/** Sleepers of this process (idle workers, the webhook delivery pump) to wake at once when work arrives: the wake
 * runs on the next turn of the event loop, after the caller's transaction (synchronous in better-sqlite3) has
 * committed, and once however many signals came in the meantime. */
export class WakeSignal<T extends { wake(): void }> {
  private readonly sleepers = new Set<T>();
  private scheduled = false;

  add(sleeper: T): void {
    this.sleepers.add(sleeper);
  }

  delete(sleeper: T): void {
    this.sleepers.delete(sleeper);
  }

  signal(): void {
    if (this.scheduled || this.sleepers.size === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      for (const sleeper of this.sleepers) sleeper.wake();
    });
  }
}

/** Idle workers: a new event or job wakes them, so it is relayed and run without waiting out the poll interval
 * (other processes see it at their next poll). */
const idleWorkers = new WakeSignal<JobWorker>();
const signalWork = () => idleWorkers.signal();

/** Writes a domain event to the outbox inside the caller's transaction: it is delivered only if the change
 * that caused it commits, and never lost once it has. */
export function publishEvent(
  tx: Db,
  type: string,
  payload: Record<string, unknown>,
  orgId: string | null = null,
): void {
  const now = new Date().toISOString();
  statements(tx).publish.run(newId(), type, orgId, JSON.stringify(payload), now);
  signalWork();
}

/** Adds a job inside the caller's transaction. Returns false when a job with the same unique key is
 * already pending or running (nothing was added). */
export function enqueueJob(
  tx: Db,
  type: string,
  payload: Record<string, unknown>,
  options: EnqueueOptions = {},
): boolean {
  const result = statements(tx).enqueue.run(
    newId(),
    type,
    JSON.stringify(payload),
    (options.runAt ?? new Date()).toISOString(),
    options.maxAttempts ?? 5,
    options.uniqueKey ?? null,
    new Date().toISOString(),
  );
  if (result.changes > 0) signalWork();
  return result.changes > 0;
}

/** The queue's statements on the hot path (an event, a job: enqueue, claim, finish), prepared by their text (the
 * connection keeps compiled statements by text: db/connection.ts keepStatements), so a relayed event or a job
 * costs no query building. */
const statements = (db: Db) => ({
  publish: db.$client.prepare<unknown[]>(`INSERT INTO outbox_events (id, type, org_id, payload, created_at) VALUES (?, ?, ?, ?, ?)`),
  enqueue: db.$client.prepare<unknown[]>(
    `INSERT INTO jobs (id, type, payload, status, run_at, attempts, max_attempts, unique_key, created_at)
     VALUES (?, ?, ?, 'pending', ?, 0, ?, ?, ?) ON CONFLICT DO NOTHING`,
  ),
  pendingEvents: db.$client.prepare<unknown[]>(
    `SELECT id, type, org_id AS orgId, payload, created_at AS createdAt, dispatched_at AS dispatchedAt
     FROM outbox_events WHERE dispatched_at IS NULL ORDER BY created_at, rowid LIMIT ?`,
  ),
  markRelayed: db.$client.prepare<unknown[]>(`UPDATE outbox_events SET dispatched_at = ? WHERE id IN (SELECT value FROM json_each(?))`),
  anyClaimable: db.$client
    .prepare<unknown[]>(
      `SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'pending' AND run_at <= ?)
         OR EXISTS (SELECT 1 FROM jobs WHERE status = 'running' AND locked_until < ?)`,
    )
    .pluck(),
  // The inner SELECT: the claimable jobs (due, or running past their lease), in due order: each branch walks jobs_due_idx in order and
  // stops at the limit (one SELECT with OR sorted every due job on each claim).
  claim: db.$client.prepare<unknown[]>(
    `UPDATE jobs SET status = 'running', locked_until = ?, attempts = attempts + 1
     WHERE id IN (
       SELECT id FROM (
         SELECT * FROM (SELECT id, run_at, rowid AS seq FROM jobs WHERE status = 'pending' AND run_at <= ? ORDER BY run_at, rowid LIMIT ?)
         UNION ALL
         SELECT * FROM (SELECT id, run_at, rowid AS seq FROM jobs WHERE status = 'running' AND locked_until < ? ORDER BY run_at, rowid LIMIT ?)
       ) ORDER BY run_at, seq LIMIT ?)
     RETURNING rowid AS seq, id, type, payload, status, run_at AS runAt, attempts, max_attempts AS maxAttempts,
       locked_until AS lockedUntil, last_error AS lastError, unique_key AS uniqueKey, created_at AS createdAt,
       finished_at AS finishedAt`,
  ),
  // A job that ran, still ours (running, our lease): done or dead (finished), or pending again at its retry time.
  finish: db.$client.prepare<unknown[]>(
    `UPDATE jobs SET status = ?, locked_until = NULL, last_error = coalesce(?, last_error), finished_at = coalesce(?, finished_at),
       unique_key = CASE WHEN ? THEN NULL ELSE unique_key END, run_at = coalesce(?, run_at)
     WHERE id = ? AND status = 'running' AND locked_until IS ?`,
  ),
});

/** A claimed job as the claim statement returns it, as drizzle would read it. */
function jobOf(row: Record<string, unknown>): Job & { seq: number } {
  return { ...(row as unknown as Job & { seq: number }), payload: JSON.parse(row.payload as string) as Record<string, unknown> };
}

/** How long a claimed job belongs to its worker. A job still `running` after its lease was left behind by a
 * crash (or a worker that stopped without finishing) and is claimed again. */
export const LEASE_MS = 5 * 60_000;
const BATCH = 20;
const RELAY_BATCH = 500;

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
  private readonly batchSubscribers: Array<{ types: ReadonlySet<string>; handler: BatchSubscriber }> = [];
  private readonly periodic = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** Work was signalled while a tick ran: the next tick follows at once. */
  private again = false;
  /** The last tick relayed events or ran jobs: there may be more, so the next tick follows at once. */
  private busy = false;
  private readonly companions: Array<{ start(): void; stop(): Promise<void> }> = [];

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

  /** Each relayed batch's events of `eventTypes` go to `handler` in the relaying transaction (no job per event):
   * for fan-outs that turn many events into rows at once (webhook deliveries). */
  subscribeBatch(eventTypes: readonly string[], handler: BatchSubscriber): void {
    this.batchSubscribers.push({ types: new Set(eventTypes), handler });
  }

  /** A job that runs every `everyMs` for as long as a server runs, surviving restarts: one row per type
   * waits in the table (its unique key), and each run schedules its successor when it finishes. */
  every(type: string, everyMs: number, handler: JobHandler): void {
    this.periodic.set(type, everyMs);
    this.handle(type, handler);
  }

  /** Background work that lives and stops with this worker (the webhook delivery pump). */
  attach(companion: { start(): void; stop(): Promise<void> }): void {
    this.companions.push(companion);
    if (!this.stopped) companion.start();
  }

  /** Runs the next tick now instead of after the poll interval (new work in this process). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.loop, 0);
  }

  /** Makes sure each periodic job has its waiting row; a no-op for those that have one (after a restart). */
  schedulePeriodicJobs(now = new Date()): void {
    for (const type of this.periodic.keys()) {
      enqueueJob(this.db, type, {}, { runAt: now, uniqueKey: periodicKey(type), maxAttempts: 1 });
    }
  }

  private readonly loop = (): void => {
    if (this.stopped) return;
    idleWorkers.delete(this);
    this.again = false;
    this.running = this.tick()
      .then((ran) => {
        this.busy = this.busy || ran > 0;
      })
      .catch((err: unknown) => this.onError(err))
      .finally(() => {
        this.running = undefined;
        if (this.stopped) return;
        // Drain: while there is work, tick again at once; idle, wait for the poll interval or a wake.
        const soon = this.again || this.busy;
        this.busy = false;
        if (!soon) idleWorkers.add(this);
        this.timer = setTimeout(this.loop, soon ? 0 : this.pollMs);
      });
  };

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedulePeriodicJobs();
    this.timer = setTimeout(this.loop, 0);
    for (const companion of this.companions) companion.start();
  }

  /** Stops polling and waits for the jobs in hand to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    idleWorkers.delete(this);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.running, ...this.companions.map((c) => c.stop())]);
  }

  /** One pass: relay events, then run the jobs that are due at `now`. Returns the number of jobs run. */
  async tick(now = new Date()): Promise<number> {
    this.relayEvents(now);
    const claimed = this.claim(now);
    const finishes: unknown[][] = [];
    try {
      for (const job of claimed) await this.runJob(job, now, finishes);
    } finally {
      // The outcomes of the tick's unkeyed jobs in one transaction rather than a commit each. A crash before this
      // runs them again, as a crash after a handler always could (at least once).
      if (finishes.length > 0) {
        const finish = statements(this.db).finish;
        this.db.$client.transaction(() => finishes.forEach((values) => finish.run(...values)))();
      }
    }
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
        const pending = (statements(this.db).pendingEvents.all(RELAY_BATCH) as Array<RelayedEvent & { payload: string }>).map(
          (row): RelayedEvent => ({ ...row, payload: JSON.parse(row.payload) as Record<string, unknown> }),
        );
        for (const event of pending) {
          for (const jobType of this.subscribers.get(event.type) ?? []) {
            enqueueJob(
              this.db,
              jobType,
              { ...event.payload, eventId: event.id, eventType: event.type },
              { runAt: now },
            );
          }
        }
        for (const { types, handler } of this.batchSubscribers) {
          const mine = pending.filter((event) => types.has(event.type));
          if (mine.length > 0) handler(this.db, mine, now);
        }
        statements(this.db).markRelayed.run(now.toISOString(), JSON.stringify(pending.map((event) => event.id)));
      })
      .immediate();
    // Only once the batch committed: a relay that throws waits for the poll interval instead of spinning.
    this.busy = true;
  }

  private claim(now: Date): Job[] {
    const nowIso = now.toISOString();
    const lease = new Date(now.getTime() + LEASE_MS).toISOString();
    // An idle poll only reads: the write lock is taken when a job is due or a lease ran out. Two EXISTS, each one
    // index probe (one WHERE with OR collected every due job's rowid first).
    if (!statements(this.db).anyClaimable.get(nowIso, nowIso)) return [];
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

        // One UPDATE … RETURNING claims the batch; RETURNING comes in no promised order: back to due order.
        return (statements(this.db).claim.all(lease, nowIso, BATCH, nowIso, BATCH, BATCH) as Array<Record<string, unknown>>)
          .map(jobOf)
          .sort((a, b) => (a.runAt < b.runAt ? -1 : a.runAt > b.runAt ? 1 : a.seq - b.seq))
          .map(({ seq: _seq, ...job }): Job => job);
      })
      .immediate();
  }

  /** The next run of a periodic job, once the current one is done or dead. */
  private scheduleSuccessor(type: string, now: Date): void {
    const everyMs = this.periodic.get(type);
    if (everyMs === undefined) return;
    enqueueJob(this.db, type, {}, { runAt: later(now, everyMs), uniqueKey: periodicKey(type), maxAttempts: 1 });
  }

  /** Runs one job; the outcome of a job without a unique key is added to `finishes` (written by the tick), any other
   * is written now (its key is released at once, so the same work can be enqueued again). */
  private async runJob(job: Job, now: Date, finishes: unknown[][]): Promise<void> {
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
    if (!this.periodic.has(job.type)) {
      // The common case in one prepared statement (a periodic job takes the branch below).
      const values = [
        !failed ? 'done' : dead ? 'dead' : 'pending',
        failed ? (failure instanceof Error ? failure.message : String(failure)) : null,
        finished ? later(now, 0).toISOString() : null,
        finished ? 1 : 0,
        finished ? null : later(now, backoffMs(job.attempts)).toISOString(),
        job.id,
        job.lockedUntil,
      ];
      if (job.uniqueKey === null) finishes.push(values);
      else statements(this.db).finish.run(...values);
      return;
    }
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
