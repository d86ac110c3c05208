import { and, eq, gte, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { signatureHeader } from '../../../lib/webhook-signature.js';
import { systemContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { DEFAULT_RETRY_POLICY, webhookDeliveries, webhooks, type RetryPolicy } from '../../db/schema/index.js';
import { OutboundBlockedError, type OutboundClient } from '../../delivery/outbound.js';
import { enqueueJob, publishEvent, type Job, type JobWorker } from '../../jobs/queue.js';
import type { SecretBox } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';

/** Published when the system sets a webhook to failed (svc extension; docs/api-notes.md). */
export const WEBHOOK_FAILED_EVENT = 'webhook.failed';

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** 02 §6 event types, plus the elevation events this server emits (docs/api-notes.md "Webhooks"). */
export const WEBHOOK_EVENT_TYPES = [
  'device.enrolled',
  'device.online',
  'device.offline',
  'device.updated',
  'device.decommissioned',
  'alert.triggered',
  'alert.acknowledged',
  'alert.resolved',
  'alert.escalated',
  'script.started',
  'script.completed',
  'script.failed',
  'automation.started',
  'automation.completed',
  'automation.failed',
  'policy.evaluated',
  'policy.violation',
  'policy.compliant',
  'patch.available',
  'patch.approved',
  'patch.installed',
  'patch.failed',
  'patch.rollback',
  'security.score_changed',
  'remote.session.started',
  'remote.session.ended',
  'remote.file.transferred',
  'user.login',
  'user.logout',
  'session.login',
  'session.logout',
  'elevation.approved',
  'elevation.denied',
  'elevation.revoked',
  'elevation.expired',
];

export const TEST_EVENT = 'webhook.test';
const FANOUT_JOB = 'webhooks.fanout';
const DELIVER_JOB = 'webhooks.deliver';
const RECOVER_JOB = 'webhooks.recover';
/** 02 §8: the delivery timeout. */
export const DELIVERY_TIMEOUT_MS = 30_000;
const USER_AGENT = 'Svc-Webhooks/1.0';
/** A webhook whose deliveries of the last day all ended failed (at least this many) is set to failed. */
export const AUTO_FAIL_AFTER = 5;
const DAY_MS = 86_400_000;

/** The delay before retry `retry` (1-based): initialDelayMs · backoffMultiplier^(retry-1), capped at maxDelayMs. */
export function retryDelayMs(policy: RetryPolicy, retry: number): number {
  return Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.backoffMultiplier ** (retry - 1));
}

/** Queues attempt `attempt` of a delivery inside the caller's transaction; a no-op when it is already queued. */
export function queueAttempt(tx: Db, deliveryId: string, attempt: number, runAt = new Date()): void {
  enqueueJob(tx, DELIVER_JOB, { deliveryId, attempt }, { runAt, maxAttempts: 1, uniqueKey: `webhook-delivery:${deliveryId}:${attempt}` });
}

/** Creates a pending delivery of `event` to `hook` and queues its first attempt (inside the caller's transaction). */
export function createDelivery(tx: Db, hook: WebhookRow, event: { id: string; type: string; timestamp: string; data: unknown }): DeliveryRow {
  const row = tx
    .insert(webhookDeliveries)
    .values({
      webhookId: hook.id,
      orgId: hook.orgId,
      event: event.type,
      eventId: event.id,
      payload: { id: event.id, type: event.type, timestamp: event.timestamp, orgId: hook.orgId, data: event.data },
    })
    .returning()
    .get();
  queueAttempt(tx, row.id, 0);
  return row;
}

/** Stops one attempt for good: the delivery is failed and the job goes to the dead-letter queue (02 §3). */
class DeadLetter extends Error {
  override name = 'WebhookDeliveryFailed';
}

interface AttemptOutcome {
  ok: boolean;
  retryable: boolean;
  responseStatus: number | null;
  responseBody: string;
  error: string;
}

/**
 * The delivery pipeline (02 §6, §8): events become pending deliveries for every active webhook of the event's
 * organization subscribed to its type; each attempt is a durable job, claimed on the delivery row with a
 * conditional UPDATE (so two workers never send the same attempt), re-checked by the outbound guard, signed and
 * POSTed; failures are retried on the webhook's retry policy, 4xx and blocked URLs are not, and an exhausted
 * delivery is failed and dead-lettered.
 */
export class WebhookDispatcher {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly outbound: OutboundClient,
    private readonly timeScale: number,
  ) {}

  register(worker: JobWorker): void {
    for (const type of WEBHOOK_EVENT_TYPES) worker.subscribe(type, FANOUT_JOB);
    worker.handle(FANOUT_JOB, (payload, job) => this.fanOut(payload, job));
    worker.handle(DELIVER_JOB, (payload) => this.deliverAttempt(String(payload.deliveryId), Number(payload.attempt)));
    // Attempts whose job was lost (a crash mid-attempt, a webhook paused then resumed) are queued again.
    worker.every(RECOVER_JOB, 60_000, () => this.requeueStranded());
  }

  /** One event to deliveries (idempotent: a re-run creates no second delivery of the same event and webhook). */
  fanOut(payload: Record<string, unknown>, job: Job): void {
    const { eventId, eventType, ...data } = payload;
    const orgId = typeof payload.orgId === 'string' ? payload.orgId : null;
    if (typeof eventId !== 'string' || typeof eventType !== 'string' || orgId === null) return;
    this.db.$client.transaction(() => {
      const hooks = this.db
        .select()
        .from(webhooks)
        .where(and(eq(webhooks.orgId, orgId), eq(webhooks.status, 'active')))
        .all()
        .filter((h) => h.events.includes(eventType) || h.events.includes('*'));
      for (const hook of hooks) {
        const existing = this.db
          .select({ id: webhookDeliveries.id })
          .from(webhookDeliveries)
          .where(and(eq(webhookDeliveries.webhookId, hook.id), eq(webhookDeliveries.eventId, eventId)))
          .get();
        if (!existing) createDelivery(this.db, hook, { id: eventId, type: eventType, timestamp: job.createdAt, data });
      }
    })();
  }

  /** Queues again every unfinished delivery that has no attempt in flight (optionally of one webhook). */
  requeueStranded(webhookId?: string): void {
    const now = new Date().toISOString();
    this.db.$client.transaction(() => {
      const rows = this.db
        .select({ id: webhookDeliveries.id, attempt: webhookDeliveries.attempt, nextAttemptAt: webhookDeliveries.nextAttemptAt })
        .from(webhookDeliveries)
        .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
        .where(
          and(
            inArray(webhookDeliveries.status, ['pending', 'retrying']),
            eq(webhooks.status, 'active'),
            or(isNull(webhookDeliveries.lockedUntil), lt(webhookDeliveries.lockedUntil, now)),
            webhookId ? eq(webhookDeliveries.webhookId, webhookId) : undefined,
          ),
        )
        .limit(1000)
        .all();
      for (const row of rows) {
        const due = row.nextAttemptAt && row.nextAttemptAt > now ? new Date(row.nextAttemptAt) : new Date();
        queueAttempt(this.db, row.id, row.attempt, due);
      }
    })();
  }

  /** Makes attempt `attempt` of a delivery, unless it is finished, already made, or in another worker's hands. */
  async deliverAttempt(deliveryId: string, attempt: number): Promise<void> {
    const hook = this.db
      .select()
      .from(webhooks)
      .innerJoin(webhookDeliveries, eq(webhookDeliveries.webhookId, webhooks.id))
      .where(eq(webhookDeliveries.id, deliveryId))
      .get();
    // Paused or failed: nothing is sent; the delivery waits and is queued again when the webhook is active.
    if (!hook || hook.webhooks.status !== 'active') return;
    const now = Date.now();
    const claimed = this.db
      .update(webhookDeliveries)
      .set({ lockedUntil: new Date(now + DELIVERY_TIMEOUT_MS + 60_000).toISOString() })
      .where(
        and(
          eq(webhookDeliveries.id, deliveryId),
          eq(webhookDeliveries.attempt, attempt),
          inArray(webhookDeliveries.status, ['pending', 'retrying']),
          or(isNull(webhookDeliveries.lockedUntil), lt(webhookDeliveries.lockedUntil, new Date(now).toISOString())),
        ),
      )
      .returning()
      .get();
    if (!claimed) return;
    const outcome = await this.send(hook.webhooks, claimed);
    this.record(hook.webhooks, claimed, outcome);
  }

  /** The secrets that sign a delivery now: the current one, and the previous one during a rotation's overlap. */
  private secretsOf(hook: WebhookRow): string[] {
    const secrets = hook.secretEnc ? [this.box.open(hook.secretEnc)] : [];
    if (hook.previousSecretEnc && hook.previousSecretExpiresAt && hook.previousSecretExpiresAt > new Date().toISOString()) {
      secrets.push(this.box.open(hook.previousSecretEnc));
    }
    return secrets;
  }

  private async send(hook: WebhookRow, delivery: DeliveryRow): Promise<AttemptOutcome> {
    const body = JSON.stringify(delivery.payload);
    const timestamp = String(Date.now());
    const secrets = this.secretsOf(hook);
    // 05-wire-notes: custom headers first, then the standard ones, so the standard ones win.
    const headers: Record<string, string> = {};
    for (const { key, value } of hook.headers) headers[key.toLowerCase()] = value;
    Object.assign(headers, {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-svc-delivery-id': delivery.id,
      'x-svc-event-id': delivery.eventId,
      'x-svc-event-type': delivery.event,
      'x-svc-timestamp': timestamp,
      ...(secrets.length ? { 'x-svc-signature': signatureHeader(secrets, timestamp, body), 'x-svc-signature-timestamp': timestamp } : {}),
    });
    try {
      // The guard re-checks the URL, and every address at connect time, before every attempt (02 §6).
      const res = await this.outbound.request(hook.url, { method: 'POST', headers, body, timeoutMs: DELIVERY_TIMEOUT_MS, httpsOnly: true, maxResponseBytes: 4096 });
      const responseBody = res.body.slice(0, 1000);
      if (res.status >= 200 && res.status < 300) return { ok: true, retryable: false, responseStatus: res.status, responseBody, error: '' };
      // 02 §2.4: 4xx answers are not retried.
      const retryable = res.status < 400 || res.status >= 500;
      return { ok: false, retryable, responseStatus: res.status, responseBody, error: `HTTP ${res.status}: ${res.body.slice(0, 500)}` };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof OutboundBlockedError) {
        const error = `Unsafe webhook URL: ${err.reason}`;
        return { ok: false, retryable: false, responseStatus: null, responseBody: error, error };
      }
      return { ok: false, retryable: true, responseStatus: null, responseBody: message, error: message };
    }
  }

  /** Writes an attempt's outcome; queues the next attempt, or fails the delivery and dead-letters its job. */
  private record(hook: WebhookRow, delivery: DeliveryRow, outcome: AttemptOutcome): void {
    const made = delivery.attempt + 1;
    const now = new Date();
    const policy = hook.retryPolicy ?? DEFAULT_RETRY_POLICY;
    const retriesLeft = made <= policy.maxRetries;
    const next = outcome.ok ? 'delivered' : outcome.retryable && retriesLeft ? 'retrying' : 'failed';
    const nextAt = next === 'retrying' ? new Date(now.getTime() + retryDelayMs(policy, made) * this.timeScale) : null;
    this.db.$client.transaction(() => {
      this.db
        .update(webhookDeliveries)
        .set({
          status: next,
          attempt: made,
          responseStatus: outcome.responseStatus,
          responseBody: outcome.responseBody.slice(0, 1000),
          nextAttemptAt: nextAt?.toISOString() ?? null,
          lockedUntil: null,
          ...(outcome.ok ? { deliveredAt: now.toISOString() } : {}),
        })
        .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.attempt, delivery.attempt)))
        .run();
      if (outcome.ok) this.db.update(webhooks).set({ lastDeliveryAt: now.toISOString() }).where(eq(webhooks.id, hook.id)).run();
      if (nextAt) queueAttempt(this.db, delivery.id, made, nextAt);
      if (next === 'failed') this.failWebhookIfDead(hook, now);
    })();
    if (next === 'failed') throw new DeadLetter(`delivery ${delivery.id} failed after ${made} attempt(s): ${outcome.error}`);
  }

  /** The system's rule for `failed` (docs/api-notes.md): every delivery that finished in the last 24 hours failed,
   * and there were at least AUTO_FAIL_AFTER of them. */
  private failWebhookIfDead(hook: WebhookRow, now: Date): void {
    const since = new Date(now.getTime() - DAY_MS).toISOString();
    const stats = this.db
      .select({
        failed: sql<number>`sum(case when ${webhookDeliveries.status} = 'failed' then 1 else 0 end)`,
        delivered: sql<number>`sum(case when ${webhookDeliveries.status} = 'delivered' then 1 else 0 end)`,
      })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.webhookId, hook.id), gte(webhookDeliveries.createdAt, since)))
      .get();
    if (!stats || (stats.delivered ?? 0) > 0 || (stats.failed ?? 0) < AUTO_FAIL_AFTER) return;
    const changed = this.db
      .update(webhooks)
      .set({ status: 'failed', updatedAt: now.toISOString() })
      .where(and(eq(webhooks.id, hook.id), eq(webhooks.status, 'active')))
      .run().changes;
    if (!changed) return;
    recordAudit(this.db, systemContext(), {
      action: 'webhook.auto_failed',
      resourceType: 'webhook',
      resourceId: hook.id,
      resourceName: hook.name,
      orgId: hook.orgId,
      details: { failedDeliveries: stats.failed, windowHours: 24 },
    });
    // The organization's admins hear of it in-app (the notifications module subscribes to this event).
    publishEvent(this.db, WEBHOOK_FAILED_EVENT, { webhookId: hook.id, webhookName: hook.name, orgId: hook.orgId, failedDeliveries: stats.failed ?? 0 }, hook.orgId);
  }
}
