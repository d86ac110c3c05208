import { and, eq, gte, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { signatureHeader } from '../../../lib/webhook-signature.js';
import { systemContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { DEFAULT_RETRY_POLICY, webhookDeliveries, webhooks, type RetryPolicy } from '../../db/schema/index.js';
import { OutboundBlockedError, type OutboundClient } from '../../delivery/outbound.js';
import { publishEvent, WakeSignal, type JobWorker, type RelayedEvent } from '../../jobs/queue.js';
import type { SecretBox } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import { newId } from '../../db/ids.js';
import { inJson, insertRow, preparedQueries, rowQuery } from '../../db/prepared.js';

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
/** The job of the fan-out before it took relayed batches: jobs of this type left queued by an older server are
 * still fanned out. */
const FANOUT_JOB = 'webhooks.fanout';
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

/** How soon the pump looks again when a claimable delivery is already due (ms). */
const RECHECK_MS = 2;

/** Pumps of this process: a new delivery wakes them at once (after the caller's transaction has committed). */
const pumps = new WakeSignal<DeliveryPump>();
const signalDeliveries = () => pumps.signal();

/** Creates a pending delivery of `event` to `hook`, due at once (inside the caller's transaction); the delivery
 * row is the durable queue entry the pump claims. */
export function createDelivery(tx: Db, hook: WebhookRow, event: { id: string; type: string; timestamp: string; data: unknown }): DeliveryRow {
  const row = insertRow(tx, webhookDeliveries, {
    webhookId: hook.id,
    orgId: hook.orgId,
    event: event.type,
    eventId: event.id,
    payload: { id: event.id, type: event.type, timestamp: event.timestamp, orgId: hook.orgId, data: event.data },
    nextAttemptAt: new Date().toISOString(),
  });
  signalDeliveries();
  return row;
}

/** Attempts in flight at once per server process. */
export const DEFAULT_CONCURRENCY = 64;

/** A claimed delivery: what an attempt needs, with the body as stored (sent byte for byte: no parse and
 * re-serialisation per attempt). */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  event: string;
  eventId: string;
  attempt: number;
  body: string;
}

export interface PendingOutcome {
  hook: WebhookRow;
  delivery: ClaimedDelivery;
  outcome: AttemptOutcome;
  at: Date;
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
  /** Makes the attempts: claims due deliveries, sends them concurrently, writes outcomes in batches. */
  readonly pump: DeliveryPump;

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly outbound: OutboundClient,
    private readonly timeScale: number,
    options: { pollMs?: number; concurrency?: number } = {},
  ) {
    this.pump = new DeliveryPump(this, { pollMs: Math.min(options.pollMs ?? 1000, 1000), concurrency: options.concurrency ?? DEFAULT_CONCURRENCY });
  }

  /** Told of every delivery that failed for good and of outcomes that could not be written (the server logs them). */
  onError: (err: Error) => void = () => {};

  /** Fan-out takes each relayed batch of events in the relaying transaction; attempts are made by the pump, which
   * starts and stops with the worker. */
  register(worker: JobWorker): void {
    worker.subscribeBatch(WEBHOOK_EVENT_TYPES, (tx, events) => this.fanOutBatch(tx, events));
    worker.handle(FANOUT_JOB, (payload, job) => {
      const { eventId, eventType, ...data } = payload;
      if (typeof eventId !== 'string' || typeof eventType !== 'string') return;
      const orgId = typeof payload.orgId === 'string' ? payload.orgId : null;
      const event = { id: eventId, type: eventType, orgId, payload: data, createdAt: job.createdAt, dispatchedAt: null };
      this.db.$client.transaction(() => this.fanOutBatch(this.db, [event]))();
    });
    worker.attach(this.pump);
  }

  /**
   * Events to deliveries (02 §6), inside the caller's transaction: one pending delivery per active webhook of the
   * event's organization subscribed to its type, in event order. One lookup of the webhooks per organization per
   * batch and one prepared INSERT per delivery; the unique (webhook, event) key makes it idempotent, so an event
   * relayed again after a crash creates no second delivery. Returns the number of deliveries created.
   */
  fanOutBatch(tx: Db, events: readonly RelayedEvent[]): number {
    const statements = fanOutStatements(tx);
    const hooksByOrg = new Map<string, Array<{ id: string; events: string[] }>>();
    const dueAt = new Date().toISOString();
    let created = 0;
    for (const event of events) {
      if (event.orgId === null) continue;
      let hooks = hooksByOrg.get(event.orgId);
      if (!hooks) {
        hooks = (statements.activeHooks.all(event.orgId) as Array<{ id: string; events: string }>).map((h) => ({ id: h.id, events: JSON.parse(h.events) as string[] }));
        hooksByOrg.set(event.orgId, hooks);
      }
      let body: string | undefined;
      for (const hook of hooks) {
        if (!hook.events.includes(event.type) && !hook.events.includes('*')) continue;
        body ??= JSON.stringify({ id: event.id, type: event.type, timestamp: event.createdAt, orgId: event.orgId, data: event.payload });
        created += statements.insert.run(newId(), hook.id, event.orgId, event.type, event.id, body, dueAt, dueAt).changes;
      }
    }
    if (created > 0) signalDeliveries();
    return created;
  }

  /** Deliveries that waited (a webhook paused, then active again) are due already: the pump is woken to take
   * them now rather than at its next poll. */
  requeueStranded(_webhookId?: string): void {
    signalDeliveries();
  }

  /** Claims up to `limit` due deliveries of active webhooks, oldest due first (event order within a fan-out), in one
   * IMMEDIATE transaction (so two workers never claim the same delivery); each comes with its webhook. */
  claimDue(limit: number, now = new Date()): Array<{ hook: WebhookRow; delivery: ClaimedDelivery }> {
    const at = now.toISOString();
    const lease = new Date(now.getTime() + DELIVERY_TIMEOUT_MS + 60_000).toISOString();
    const statements = pumpStatements(this.db);
    return this.db.$client
      .transaction(() => {
        const claimed = statements.claim.all(lease, at, at, limit) as Array<ClaimedDelivery & { seq: number; due: string }>;
        if (claimed.length === 0) return [];
        // RETURNING comes in no promised order: back to due order, then insertion order.
        claimed.sort((a, b) => (a.due < b.due ? -1 : a.due > b.due ? 1 : a.seq - b.seq));
        const hooks = new Map(
          dispatchQueries(this.db)
            .hooks.all({ ids: JSON.stringify([...new Set(claimed.map((d) => d.webhookId))]) })
            .map((h) => [h.id, h]),
        );
        return claimed.flatMap(({ seq: _seq, due: _due, ...delivery }) => {
          const hook = hooks.get(delivery.webhookId);
          return hook ? [{ hook, delivery }] : [];
        });
      })
      .immediate();
  }

  /** When the next delivery the pump could claim falls due (null: none waits). Rows in flight (leased) and rows of
   * paused webhooks are not counted: a due row among them would otherwise read as "due, try again later". */
  nextDue(now = new Date()): string | null {
    const row = pumpStatements(this.db).nextDue.get(now.toISOString()) as string | undefined;
    return row ?? null;
  }

  /** Older rows queued before the pump had no next_attempt_at on pending deliveries: they are due now. */
  backfillDue(): void {
    this.db.$client
      .prepare(`UPDATE webhook_deliveries SET next_attempt_at = created_at WHERE status IN ('pending', 'retrying') AND next_attempt_at IS NULL`)
      .run();
  }

  /** One claimed attempt: sent, and its outcome written (the pump batches these writes). */
  async attempt(hook: WebhookRow, delivery: ClaimedDelivery): Promise<PendingOutcome> {
    return { hook, delivery, outcome: await this.send(hook, delivery), at: new Date() };
  }

  /** Makes attempt `attempt` of one delivery now, unless it is finished, already made, or in another worker's
   * hands (the same claim as the pump's). */
  async deliverAttempt(deliveryId: string, attempt: number): Promise<void> {
    const queries = dispatchQueries(this.db);
    const hook = queries.hookOfDelivery.get({ deliveryId });
    // Paused or failed: nothing is sent; the delivery waits and is taken when the webhook is active again.
    if (!hook || hook.webhooks.status !== 'active') return;
    const now = Date.now();
    const claimed = queries.claimOne.get({
      lockedUntil: new Date(now + DELIVERY_TIMEOUT_MS + 60_000).toISOString(),
      id: deliveryId,
      attempt,
      now: new Date(now).toISOString(),
    });
    if (!claimed) return;
    const { id, webhookId, event, eventId } = claimed;
    this.recordAll([await this.attempt(hook.webhooks, { id, webhookId, event, eventId, attempt: claimed.attempt, body: JSON.stringify(claimed.payload) })]);
  }

  /** The secrets that sign a delivery now: the current one, and the previous one during a rotation's overlap. */
  private secretsOf(hook: WebhookRow): string[] {
    const secrets = hook.secretEnc ? [this.open(hook.secretEnc)] : [];
    if (hook.previousSecretEnc && hook.previousSecretExpiresAt && hook.previousSecretExpiresAt > new Date().toISOString()) {
      secrets.push(this.open(hook.previousSecretEnc));
    }
    return secrets;
  }

  /** Opened secrets by ciphertext (a rotation writes a new ciphertext, so a stale entry is never used), so an attempt
   * does not pay an AES-GCM open; bounded, oldest out. */
  private readonly opened = new Map<string, string>();
  private open(sealed: string): string {
    let secret = this.opened.get(sealed);
    if (secret === undefined) {
      secret = this.box.open(sealed);
      this.opened.set(sealed, secret);
      if (this.opened.size > OPENED_SECRETS_MAX) this.opened.delete(this.opened.keys().next().value as string);
    }
    return secret;
  }

  private async send(hook: WebhookRow, delivery: ClaimedDelivery): Promise<AttemptOutcome> {
    const body = delivery.body;
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
      // A header the client refuses to send (stored before creation refused it) fails the same way every time.
      const code = (err as NodeJS.ErrnoException).code;
      const retryable = code !== 'ERR_INVALID_CHAR' && code !== 'ERR_INVALID_HTTP_TOKEN';
      return { ok: false, retryable, responseStatus: null, responseBody: message, error: message };
    }
  }

  /** Writes the outcomes of attempts in one transaction: delivered, retrying (due after the policy's delay) or
   * failed. A failed delivery stays as the dead letter: listed with status failed, retried by hand (02 §3). */
  recordAll(outcomes: readonly PendingOutcome[]): void {
    if (outcomes.length === 0) return;
    const statements = pumpStatements(this.db);
    this.db.$client.transaction(() => {
      const delivered = new Map<string, string>();
      for (const { hook, delivery, outcome, at } of outcomes) {
        const made = delivery.attempt + 1;
        const policy = hook.retryPolicy ?? DEFAULT_RETRY_POLICY;
        const retriesLeft = made <= policy.maxRetries;
        const next = outcome.ok ? 'delivered' : outcome.retryable && retriesLeft ? 'retrying' : 'failed';
        const nextAt = next === 'retrying' ? new Date(at.getTime() + retryDelayMs(policy, made) * this.timeScale) : null;
        statements.record.run(
          next,
          made,
          outcome.responseStatus,
          outcome.responseBody.slice(0, 1000),
          nextAt?.toISOString() ?? null,
          outcome.ok ? at.toISOString() : null,
          delivery.id,
          delivery.attempt,
        );
        if (outcome.ok) delivered.set(hook.id, at.toISOString());
        if (next === 'failed') {
          this.onError(new Error(`webhook delivery ${delivery.id} failed after ${made} attempt(s): ${outcome.error}`));
          this.failWebhookIfDead(hook, at);
        }
      }
      for (const [id, at] of delivered) statements.lastDelivery.run(at, id);
    })();
  }

  /** The system's rule for `failed` (docs/api-notes.md): every delivery that finished in the last 24 hours failed,
   * and there were at least AUTO_FAIL_AFTER of them. */
  private failWebhookIfDead(hook: WebhookRow, now: Date): void {
    const since = new Date(now.getTime() - DAY_MS).toISOString();
    const queries = dispatchQueries(this.db);
    const stats = queries.dayOutcomes.get({ webhookId: hook.id, since });
    if (!stats || (stats.delivered ?? 0) > 0 || (stats.failed ?? 0) < AUTO_FAIL_AFTER) return;
    const changed = queries.failActive.run({ id: hook.id, updatedAt: now.toISOString() }).changes;
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

const OPENED_SECRETS_MAX = 1024;

/**
 * The dispatcher's drizzle statements, prepared once per database (db/prepared.ts): the webhooks of the JSON array
 * `ids`; a delivery (`deliveryId`) with its webhook; the claim of one delivery row (`id` at `attempt`: due,
 * unfinished, not in another worker's hands at `now`), marked as ours for the length of an attempt (`lockedUntil`);
 * a webhook's (`webhookId`) deliveries failed and delivered since `since`; an active webhook (`id`) set to failed
 * (at `updatedAt`).
 */
const dispatchQueries = preparedQueries((db) => ({
  hooks: rowQuery(db, webhooks, inJson(webhooks.id, 'ids')),
  hookOfDelivery: db
    .select()
    .from(webhooks)
    .innerJoin(webhookDeliveries, eq(webhookDeliveries.webhookId, webhooks.id))
    .where(eq(webhookDeliveries.id, sql.placeholder('deliveryId')))
    .prepare(),
  claimOne: db
    .update(webhookDeliveries)
    .set({ lockedUntil: sql`${sql.placeholder('lockedUntil')}` })
    .where(
      and(
        eq(webhookDeliveries.id, sql.placeholder('id')),
        eq(webhookDeliveries.attempt, sql.placeholder('attempt')),
        inArray(webhookDeliveries.status, ['pending', 'retrying']),
        or(isNull(webhookDeliveries.lockedUntil), lt(webhookDeliveries.lockedUntil, sql.placeholder('now'))),
      ),
    )
    .returning()
    .prepare(),
  dayOutcomes: db
    .select({
      failed: sql<number>`sum(case when ${webhookDeliveries.status} = 'failed' then 1 else 0 end)`,
      delivered: sql<number>`sum(case when ${webhookDeliveries.status} = 'delivered' then 1 else 0 end)`,
    })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.webhookId, sql.placeholder('webhookId')), gte(webhookDeliveries.createdAt, sql.placeholder('since'))))
    .prepare(),
  failActive: db
    .update(webhooks)
    .set({ status: 'failed', updatedAt: sql`${sql.placeholder('updatedAt')}` })
    .where(and(eq(webhooks.id, sql.placeholder('id')), eq(webhooks.status, 'active')))
    .prepare(),
}));

/** The statements of the fan-out and the pump, prepared by their text (the connection keeps compiled statements by
 * text: db/connection.ts keepStatements). */
const fanOutStatements = (db: Db) => ({
  activeHooks: db.$client.prepare<unknown[]>(`SELECT id, events FROM webhooks WHERE org_id = ? AND status = 'active' ORDER BY created_at, id`),
  insert: db.$client.prepare<unknown[]>(
    `INSERT INTO webhook_deliveries (id, webhook_id, org_id, status, event, event_id, payload, attempt, next_attempt_at, created_at)
     VALUES (?, ?, ?, 'pending', ?, ?, ?, 0, ?, ?) ON CONFLICT (webhook_id, event_id) DO NOTHING`,
  ),
});

const pumpStatements = (db: Db) => ({
  // The partial index webhook_deliveries_due_idx answers the inner SELECT in due order without a sort: the walk stops
  // at the limit. Named, because the planner otherwise takes the status index and sorts every due delivery on each
  // claim (20,000 rows a claim with a backlog of 20,000).
  claim: db.$client.prepare<unknown[]>(
    `UPDATE webhook_deliveries SET locked_until = ?
     WHERE id IN (
       SELECT d.id FROM webhook_deliveries d INDEXED BY webhook_deliveries_due_idx JOIN webhooks w ON w.id = d.webhook_id
       WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= ? AND w.status = 'active'
         AND (d.locked_until IS NULL OR d.locked_until < ?)
       ORDER BY d.next_attempt_at LIMIT ?)
     RETURNING id, webhook_id AS webhookId, event, event_id AS eventId, attempt, payload AS body, next_attempt_at AS due, rowid AS seq`,
  ),
  nextDue: db.$client
    .prepare<unknown[]>(
      `SELECT d.next_attempt_at FROM webhook_deliveries d INDEXED BY webhook_deliveries_due_idx JOIN webhooks w ON w.id = d.webhook_id
       WHERE d.status IN ('pending', 'retrying') AND w.status = 'active' AND (d.locked_until IS NULL OR d.locked_until < ?)
       ORDER BY d.next_attempt_at LIMIT 1`,
    )
    .pluck(),
  lastDelivery: db.$client.prepare<unknown[]>(`UPDATE webhooks SET last_delivery_at = ? WHERE id = ?`),
  record: db.$client.prepare<unknown[]>(
    `UPDATE webhook_deliveries SET status = ?, attempt = ?, response_status = ?, response_body = ?, next_attempt_at = ?,
       locked_until = NULL, delivered_at = coalesce(?, delivered_at)
     WHERE id = ? AND attempt = ?`,
  ),
});

/**
 * The delivery loop of one server process (02 §6, §8). The delivery rows are the durable queue: the pump claims
 * due ones (a lease in lockedUntil, so a crash mid-attempt only delays it), keeps up to `concurrency` attempts in
 * flight, and writes their outcomes in one transaction per batch rather than one per attempt. It wakes at once when
 * this process creates a delivery, and otherwise when the next retry falls due or after `pollMs` (deliveries
 * created by another process).
 */
export class DeliveryPump {
  private inFlight = 0;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private filling = false;
  private readonly done: PendingOutcome[] = [];
  private flushTimer: NodeJS.Immediate | undefined;
  private idle: Array<() => void> = [];

  constructor(
    private readonly dispatcher: WebhookDispatcher,
    private readonly options: { pollMs: number; concurrency: number },
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    pumps.add(this);
    this.dispatcher.backfillDue();
    this.wake();
  }

  /** Stops claiming; waits for the attempts in flight and writes their outcomes. */
  async stop(): Promise<void> {
    this.stopped = true;
    pumps.delete(this);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    this.flush();
  }

  wake(): void {
    if (this.stopped || this.filling) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fill(), 0);
  }

  private fill(): void {
    this.timer = undefined;
    if (this.stopped) return;
    this.filling = true;
    try {
      const room = this.options.concurrency - this.inFlight;
      // An idle poll only reads: the claim (a write transaction, the write lock) is made when a delivery is due.
      const next = room > 0 ? this.dispatcher.nextDue() : null;
      const claimed = next !== null && next <= new Date().toISOString() ? this.dispatcher.claimDue(room) : [];
      for (const { hook, delivery } of claimed) {
        this.inFlight++;
        void this.dispatcher
          .attempt(hook, delivery)
          .then((outcome) => this.finished(outcome))
          .catch(() => this.finished(undefined));
      }
      // Nothing claimed: what is due next is known already.
      if (claimed.length < room) this.sleepUntilDue(claimed.length === 0 ? next : undefined);
    } catch {
      // The database was busy or closing: try again at the next poll.
      this.sleepUntilDue();
    } finally {
      this.filling = false;
    }
  }

  private sleepUntilDue(known?: string | null): void {
    if (this.stopped) return;
    const next = known === undefined ? this.dispatcher.nextDue() : known;
    // Rows in flight and paused webhooks' rows are not in nextDue, so a due answer means a claim that just missed it
    // by a clock tick (timers fire by the loop's cached time): look again shortly, not after a whole poll interval.
    // Leases that run out elsewhere are found at the poll; what this process creates or finishes wakes it at once.
    const wait = next === null ? this.options.pollMs : Math.max(RECHECK_MS, Math.min(this.options.pollMs, Date.parse(next) - Date.now()));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.fill(), wait);
  }

  private finished(outcome: PendingOutcome | undefined): void {
    this.inFlight--;
    if (outcome) this.done.push(outcome);
    // Outcomes that finish together are written together.
    this.flushTimer ??= setImmediate(() => this.flush());
    if (this.inFlight === 0) this.idle.splice(0).forEach((resolve) => resolve());
  }

  private flush(): void {
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.done.splice(0);
    try {
      this.dispatcher.recordAll(batch);
    } catch (err) {
      // Not written: the leases run out and the attempts are made again (at least once, 02 §6).
      this.dispatcher.onError(err instanceof Error ? err : new Error(String(err)));
    }
    // The written outcomes changed what is due next (a retry's time, a lease released): look again, once at most half
    // the attempts are in flight, so a claim takes a batch (at least half the concurrency) rather than one
    // transaction per finished attempt.
    if (batch.length > 0 && this.inFlight <= this.options.concurrency / 2) this.wake();
  }
}
