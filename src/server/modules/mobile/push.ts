import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { MobilePushConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { inJson, preparedQueries, rowById, rowQuery } from '../../db/prepared.js';
import { mobileDevices, mobilePushNotifications, mobilePushTokens } from '../../db/schema/index.js';
import type { QuietHours } from '../../db/schema/mobile.js';
import type { OutboundClient } from '../../delivery/outbound.js';
import { backoffMs, enqueueJob, type JobWorker } from '../../jobs/queue.js';
import { AlertEventPayloadSchema, type AlertEventPayload } from '../notifications/alert-event.js';
import { ApnsProvider, FcmProvider, type PushProvider } from './providers.js';
import type { MobileDeviceRow } from './registration.js';

/** One push sent (and re-sent after a retryable failure) as a durable job. */
export const SEND_JOB = 'mobile.push.send';
/** Attempts of one push before it is recorded `failed` (the job queue's backoff between them). */
export const MAX_PUSH_ATTEMPTS = 5;

/** The wall-clock minute of the day in a time zone (UTC when none is given). */
function minuteOfDay(at: Date, timeZone: string | undefined): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: timeZone ?? 'UTC', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  return part('hour') * 60 + part('minute');
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Whether `at` falls in the quiet hours: [start, end) in the device's time zone, across midnight when end <
 * start; start = end means no quiet hours (api-notes "Mobile"). */
export function inQuietHours(quiet: QuietHours | null, at: Date): boolean {
  if (!quiet) return false;
  const start = minutes(quiet.start);
  const end = minutes(quiet.end);
  if (start === end) return false;
  const now = minuteOfDay(at, quiet.timezone);
  return start < end ? now >= start && now < end : now >= start || now < end;
}

/** The statements of push delivery, prepared once per database. Values go in as the driver takes them (`data` as
 * JSON text). */
const pushQueries = preparedQueries((db) => {
  const n = mobilePushNotifications;
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const pending = and(eq(n.id, sql.placeholder('id')), eq(n.status, 'pending'));
  const d = mobileDevices;
  return {
    /** The phones of the users of the JSON array `userIds` whose notifications are on. */
    enabledOf: rowQuery(db, d, and(inJson(d.userId, 'userIds'), eq(d.notificationsEnabled, true))),
    /** A push record, unless the phone has one for the alert (0 changes). */
    record: db
      .insert(n)
      .values({
        id: value('id'),
        mobileDeviceId: value('mobileDeviceId'),
        userId: value('userId'),
        alertId: value('alertId'),
        title: value('title'),
        body: value('body'),
        data: value('data'),
        platform: value('platform'),
        messageId: null,
        status: value('status'),
        errorMessage: null,
        sentAt: value('sentAt'),
        createdAt: value('createdAt'),
      })
      .onConflictDoNothing()
      .prepare(),
    /** What an attempt of pending record `id` ends with: stubbed, sent, to be retried, failed. */
    stubbed: db.update(n).set({ status: 'stubbed', sentAt: value('sentAt') }).where(pending).prepare(),
    sent: db.update(n).set({ status: 'sent', messageId: value('messageId'), sentAt: value('sentAt'), errorMessage: null }).where(pending).prepare(),
    retried: db.update(n).set({ errorMessage: value('errorMessage') }).where(pending).prepare(),
    failed: db.update(n).set({ status: 'failed', errorMessage: value('errorMessage') }).where(pending).prepare(),
    /** Clears phone `id`'s token for its platform while it is still `token`, at `now`. */
    clearApnsToken: db
      .update(d)
      .set({ apnsToken: null, updatedAt: value('now') })
      .where(and(eq(d.id, sql.placeholder('id')), eq(d.apnsToken, sql.placeholder('token'))))
      .prepare(),
    clearFcmToken: db
      .update(d)
      .set({ fcmToken: null, updatedAt: value('now') })
      .where(and(eq(d.id, sql.placeholder('id')), eq(d.fcmToken, sql.placeholder('token'))))
      .prepare(),
    /** Removes `token` from the older client's token list. */
    dropToken: db.delete(mobilePushTokens).where(eq(mobilePushTokens.token, sql.placeholder('token'))).prepare(),
  };
});

/** One push to send: its record, and which attempt this is. */
const SendJobSchema = z.object({ recordId: z.string().min(1), attempt: z.number().int().min(1) });

/**
 * Push delivery beside the alert pipeline (02 §6 "Push delivery to mobile devices runs in parallel"): on
 * alert.triggered, one record per registered phone of every user who receives the alert, whose notifications are
 * on, whose severities include the alert's and that is not in its quiet hours. Without a provider for the
 * phone's platform (or a token) the record is `stubbed`; with one, a durable job sends it: `sent` (messageId), or
 * after a retryable failure (5xx, 429 after its Retry-After, network) sent again with backoff up to
 * MAX_PUSH_ATTEMPTS, then `failed` (errorMessage); a dead token (FCM UNREGISTERED, APNs 410/BadDeviceToken) fails
 * at once and is removed from the phone (api-notes "Mobile").
 */
export class PushDelivery {
  private readonly providers: Partial<Record<'ios' | 'android', PushProvider>>;

  constructor(
    private readonly db: Db,
    config: MobilePushConfig,
    outbound: OutboundClient,
    private readonly recipientsOf: (orgId: string) => string[],
  ) {
    this.providers = {
      ...(config.fcm ? { android: new FcmProvider(config.fcm, outbound) } : {}),
      ...(config.apns ? { ios: new ApnsProvider(config.apns, outbound) } : {}),
    };
  }

  register(worker: JobWorker): void {
    // In the relaying transaction: an alert of an organization nobody gets pushes from costs no job.
    worker.subscribeBatch(['alert.triggered'], (tx, events, now) => {
      for (const event of events) {
        const alert = AlertEventPayloadSchema.safeParse(event.payload);
        if (alert.success) this.queue(tx, alert.data, now);
      }
    });
    worker.handle(SEND_JOB, (payload) => this.send(SendJobSchema.parse(payload)));
  }

  /** The phones an alert is pushed to now. */
  private targets(tx: Db, alert: AlertEventPayload, at: Date): MobileDeviceRow[] {
    const users = this.recipientsOf(alert.orgId);
    if (users.length === 0) return [];
    return pushQueries(tx)
      .enabledOf.all({ userIds: JSON.stringify(users) })
      .filter((d) => d.alertSeverities.includes(alert.severity) && !inQuietHours(d.quietHours, at));
  }

  /**
   * The records of one alert and a send job for each that has a provider and a token, in the caller's
   * transaction. A replayed event finds its records (unique per phone and alert) and queues nothing twice.
   */
  queue(tx: Db, alert: AlertEventPayload, at = new Date()): void {
    const phones = this.targets(tx, alert, at);
    if (phones.length === 0) return;
    const title = `[${alert.severity.toUpperCase()}] ${alert.title}`.slice(0, 200);
    const body = (alert.deviceName ? `${alert.deviceName}: ${alert.message}` : alert.message).slice(0, 1000);
    const data = JSON.stringify({ type: 'alert', alertId: alert.alertId, orgId: alert.orgId, severity: alert.severity, ...(alert.deviceId ? { deviceId: alert.deviceId } : {}) });
    const record = pushQueries(tx).record;
    for (const device of phones) {
      const sendable = this.providers[device.platform] !== undefined && tokenOf(device) !== null;
      // id and createdAt as their columns' defaults would make them.
      const id = newId();
      const written = record.run({
        id,
        mobileDeviceId: device.id,
        userId: device.userId,
        alertId: alert.alertId,
        title,
        body,
        data,
        platform: device.platform,
        status: sendable ? 'pending' : 'stubbed',
        sentAt: sendable ? null : at.toISOString(),
        createdAt: new Date().toISOString(),
      }).changes;
      if (written === 1 && sendable) enqueueJob(tx, SEND_JOB, { recordId: id, attempt: 1 }, { runAt: at, uniqueKey: `${SEND_JOB}:${id}:1`, maxAttempts: 2 });
    }
  }

  /** One attempt of one push. Idempotent: a record no longer pending (sent, failed, a replayed job) is left alone. */
  async send(job: z.infer<typeof SendJobSchema>, now = new Date()): Promise<void> {
    const record = rowById(this.db, mobilePushNotifications, job.recordId);
    if (record?.status !== 'pending') return;
    const device = rowById(this.db, mobileDevices, record.mobileDeviceId);
    const provider = this.providers[record.platform];
    const token = device ? tokenOf(device) : null;
    const queries = pushQueries(this.db);
    const id = record.id;
    if (!device || !provider || token === null) {
      // The token was removed (or the provider unset) since the push was queued.
      queries.stubbed.run({ id, sentAt: new Date().toISOString() });
      return;
    }
    const result = await provider.send({ token, title: record.title, body: record.body, data: record.data as Record<string, string> });
    if (result.ok) {
      queries.sent.run({ id, messageId: result.messageId, sentAt: new Date().toISOString() });
      return;
    }
    const errorMessage = result.error.slice(0, 1000);
    this.db.$client.transaction(() => {
      if (result.retry && job.attempt < MAX_PUSH_ATTEMPTS) {
        queries.retried.run({ id, errorMessage });
        const wait = Math.max(backoffMs(job.attempt), result.retryAfterMs ?? 0);
        const next = job.attempt + 1;
        enqueueJob(this.db, SEND_JOB, { recordId: record.id, attempt: next }, { runAt: new Date(Math.max(now.getTime(), Date.now()) + wait), uniqueKey: `${SEND_JOB}:${record.id}:${next}`, maxAttempts: 2 });
        return;
      }
      queries.failed.run({ id, errorMessage });
      if (result.tokenGone) this.disableToken(device, token);
    })();
  }

  /** A token the provider calls dead is removed from the phone (unless re-registered meanwhile) and from the
   * older client's token list: no push is sent to it again until the app registers a new one. */
  private disableToken(device: MobileDeviceRow, token: string): void {
    const queries = pushQueries(this.db);
    (device.platform === 'ios' ? queries.clearApnsToken : queries.clearFcmToken).run({ id: device.id, token, now: new Date().toISOString() });
    queries.dropToken.run({ token });
  }
}

/** The push token of a phone for its platform, if it has one. */
function tokenOf(device: MobileDeviceRow): string | null {
  return (device.platform === 'ios' ? device.apnsToken : device.fcmToken) ?? null;
}
