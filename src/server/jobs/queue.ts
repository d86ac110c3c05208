import { randomUUID } from 'node:crypto';
import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import type { Db } from '../db/connection.js';
import { jobs, outboxEvents } from '../db/schema/index.js';

export type Job = typeof jobs.$inferSelect;
export type JobHandler = (payload: Record<string, unknown>, job: Job) => Promise<void> | void;

export interface EnqueueOptions {
  runAt?: Date;
  maxAttempts?: number;
  /** At most one pending or running job with this key exists; a second enqueue is a no-op. */
  uniqueKey?: string;
}

/** Writes a domain event to the outbox inside the caller's transaction: it is delivered only if the change
 * that caused it commits, and never lost once it has. */
export function publishEvent(tx: Db, type: string, payload: Record<string, unknown>, orgId: string | null = null): void {
  tx.insert(outboxEvents).values({ type, payload, orgId }).run();
}

export function enqueueJob(tx: Db, type: string, payload: Record<string, unknown>, options: EnqueueOptions = {}): void {
  tx.insert(jobs)
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
}

const LEASE_MS = 5 * 60_000;
const BATCH = 20;

/** Retry delay after `attempts` failures: exponential from 1 s, capped at one hour, with jitter. */
export function backoffMs(attempts: number): number {
  const base = Math.min(3_600_000, 1000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base / 2 + Math.random() * (base / 2));
}

/**
 * The server's background worker: relays outbox events to their subscribers' jobs, then runs due jobs.
 * Jobs are leased, so one left running by a crash is picked up again when its lease runs out.
 */
export class JobWorker {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly subscribers = new Map<string, string[]>();
  private readonly periodic = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly db: Db,
    private readonly pollMs: number,
    private readonly onError: (err: unknown, job?: Job) => void = () => {},
  ) {}

  handle(type: string, handler: JobHandler): void {
    this.handlers.set(type, handler);
  }

  /** Each event of `eventType` becomes a job of `jobType` (payload: the event's payload plus eventId). */
  subscribe(eventType: string, jobType: string): void {
    this.subscribers.set(eventType, [...(this.subscribers.get(eventType) ?? []), jobType]);
  }

  /** A job that runs every `everyMs` for as long as the server runs, surviving restarts. */
  every(type: string, everyMs: number, handler: JobHandler): void {
    this.periodic.set(type, everyMs);
    this.handle(type, async (payload, job) => {
      try {
        await handler(payload, job);
      } finally {
        this.schedulePeriodic(type, new Date(Date.now() + everyMs));
      }
    });
  }

  private schedulePeriodic(type: string, runAt: Date): void {
    // The unique key belongs to the job only while it waits, so the running job can schedule its successor.
    this.db
      .update(jobs)
      .set({ uniqueKey: null })
      .where(and(eq(jobs.uniqueKey, `periodic:${type}`), sql`${jobs.status} <> 'pending'`))
      .run();
    enqueueJob(this.db, type, {}, { runAt, uniqueKey: `periodic:${type}`, maxAttempts: 1 });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    for (const type of this.periodic.keys()) this.schedulePeriodic(type, new Date());
    const loop = () => {
      if (this.stopped) return;
      this.running = this.tick()
        .then(() => undefined)
        .catch((err: unknown) => this.onError(err))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(loop, this.pollMs);
        });
    };
    this.timer = setTimeout(loop, 0);
  }

  /** Stops polling and waits for the jobs in hand to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: relay events, then run the jobs that are due. Returns the number of jobs run. */
  async tick(now = new Date()): Promise<number> {
    this.relayEvents();
    const claimed = this.claim(now);
    for (const job of claimed) await this.runJob(job);
    return claimed.length;
  }

  private relayEvents(): void {
    this.db.$client.transaction(() => {
      const pending = this.db
        .select()
        .from(outboxEvents)
        .where(isNull(outboxEvents.dispatchedAt))
        .orderBy(asc(outboxEvents.createdAt))
        .limit(100)
        .all();
      const at = new Date().toISOString();
      for (const event of pending) {
        for (const jobType of this.subscribers.get(event.type) ?? []) {
          enqueueJob(this.db, jobType, { ...event.payload, eventId: event.id, eventType: event.type });
        }
        this.db.update(outboxEvents).set({ dispatchedAt: at }).where(eq(outboxEvents.id, event.id)).run();
      }
    })();
  }

  private claim(now: Date): Job[] {
    const nowIso = now.toISOString();
    const lease = new Date(now.getTime() + LEASE_MS).toISOString();
    return this.db.$client.transaction(() => {
      const due = this.db
        .select({ id: jobs.id })
        .from(jobs)
        .where(
          sql`(${jobs.status} = 'pending' AND ${jobs.runAt} <= ${nowIso}) OR (${jobs.status} = 'running' AND ${jobs.lockedUntil} < ${nowIso})`,
        )
        .orderBy(asc(jobs.runAt))
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
    })();
  }

  private async runJob(job: Job): Promise<void> {
    const handler = this.handlers.get(job.type);
    try {
      if (!handler) throw new Error(`no handler for job type ${job.type}`);
      await handler(job.payload, job);
      this.db.update(jobs).set({ status: 'done', finishedAt: new Date().toISOString(), lockedUntil: null }).where(eq(jobs.id, job.id)).run();
    } catch (err) {
      this.onError(err, job);
      const dead = job.attempts >= job.maxAttempts;
      this.db
        .update(jobs)
        .set({
          status: dead ? 'dead' : 'pending',
          lastError: err instanceof Error ? err.message : String(err),
          lockedUntil: null,
          runAt: new Date(Date.now() + backoffMs(job.attempts)).toISOString(),
          ...(dead ? { finishedAt: new Date().toISOString() } : {}),
        })
        .where(eq(jobs.id, job.id))
        .run();
    }
  }
}
