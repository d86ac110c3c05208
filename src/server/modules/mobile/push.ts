import { and, eq, inArray } from 'drizzle-orm';
import type { MobilePushConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { mobileDevices, mobilePushNotifications } from '../../db/schema/index.js';
import type { QuietHours } from '../../db/schema/mobile.js';
import type { OutboundClient } from '../../delivery/outbound.js';
import type { JobWorker } from '../../jobs/queue.js';
import { AlertEventPayloadSchema, type AlertEventPayload } from '../notifications/alert-event.js';
import { ApnsProvider, FcmProvider, type PushProvider } from './providers.js';
import type { MobileDeviceRow } from './registration.js';

const JOB = 'mobile.push.alert-triggered';
/** Pushes of one alert sent at once (02 §8: notification dispatch concurrency 5). */
const CONCURRENCY = 5;

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

/**
 * Push delivery beside the alert pipeline (02 §6 "Push delivery to mobile devices runs in parallel"): on
 * alert.triggered, one record per registered phone of every user who receives the alert, whose notifications are
 * on, whose severities include the alert's and that is not in its quiet hours. Without a provider for the
 * phone's platform the record is `stubbed`; with one it is `sent` (messageId) or `failed` (errorMessage).
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
    worker.subscribe('alert.triggered', JOB);
    worker.handle(JOB, (payload) => this.onTriggered(AlertEventPayloadSchema.parse(payload)));
  }

  /** The phones an alert is pushed to now. */
  private targets(alert: AlertEventPayload, at: Date): MobileDeviceRow[] {
    const users = this.recipientsOf(alert.orgId);
    if (users.length === 0) return [];
    return this.db
      .select()
      .from(mobileDevices)
      .where(and(inArray(mobileDevices.userId, users), eq(mobileDevices.notificationsEnabled, true)))
      .all()
      .filter((d) => d.alertSeverities.includes(alert.severity) && !inQuietHours(d.quietHours, at));
  }

  async onTriggered(alert: AlertEventPayload, at = new Date()): Promise<void> {
    const title = `[${alert.severity.toUpperCase()}] ${alert.title}`.slice(0, 200);
    const body = (alert.deviceName ? `${alert.deviceName}: ${alert.message}` : alert.message).slice(0, 1000);
    const data = { type: 'alert', alertId: alert.alertId, orgId: alert.orgId, severity: alert.severity, ...(alert.deviceId ? { deviceId: alert.deviceId } : {}) };
    // A replayed event finds its records (unique per phone and alert) and sends nothing twice.
    const records = this.db.$client.transaction(() =>
      this.targets(alert, at).flatMap((device) => {
        const row = this.db
          .insert(mobilePushNotifications)
          .values({ mobileDeviceId: device.id, userId: device.userId, alertId: alert.alertId, title, body, data, platform: device.platform })
          .onConflictDoNothing()
          .returning()
          .get();
        return row ? [{ row, device }] : [];
      }),
    )();
    for (let i = 0; i < records.length; i += CONCURRENCY) {
      await Promise.all(records.slice(i, i + CONCURRENCY).map(({ row, device }) => this.deliver(row.id, device, { title, body, data })));
    }
  }

  private async deliver(recordId: string, device: MobileDeviceRow, message: { title: string; body: string; data: Record<string, string> }): Promise<void> {
    const provider = this.providers[device.platform];
    const token = device.platform === 'ios' ? device.apnsToken : device.fcmToken;
    const now = () => new Date().toISOString();
    if (!provider || !token) {
      this.db.update(mobilePushNotifications).set({ status: 'stubbed', sentAt: now() }).where(eq(mobilePushNotifications.id, recordId)).run();
      return;
    }
    const result = await provider.send({ token, ...message });
    this.db
      .update(mobilePushNotifications)
      .set(result.ok ? { status: 'sent', messageId: result.messageId, sentAt: now() } : { status: 'failed', errorMessage: result.error.slice(0, 1000) })
      .where(eq(mobilePushNotifications.id, recordId))
      .run();
  }
}
