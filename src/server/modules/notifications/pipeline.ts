import { and, eq, sql } from 'drizzle-orm';
import { systemContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { preparedQueries, rowById } from '../../db/prepared.js';
import { alertEscalations } from '../../db/schema/index.js';
import { DomainError } from '../../errors.js';
import { enqueueJob, publishEvent, type JobWorker, type RelayedEvent } from '../../jobs/queue.js';
import { effectivePermissions } from '../identity/caller-resolver.js';
import type { Directory } from '../identity/directory.js';
import { covers } from '../roles/permissions.js';
import type { TenancyService } from '../tenancy/service.js';
import { parseAlertEvent, PRIORITY_OF, readAlertEvent, type AlertEventPayload } from './alert-event.js';
import type { ChannelsService } from './channels.js';
import type { DeliveryRecords, DeliveryRow } from './deliveries.js';
import type { InboxService, NewNotification } from './inbox.js';
import { stepsOf, type PoliciesService } from './policies.js';
import type { Senders } from './senders.js';

/** 02 §6, §8: notification dispatch concurrency. */
export const DISPATCH_CONCURRENCY = 5;

export const JOBS = {
  triggered: 'notify.alert-triggered',
  /** No longer queued (closing events are handled as they are relayed): its handler stays for jobs queued before. */
  closed: 'notify.alert-closed',
  escalate: 'notify.escalate',
} as const;

/** Events after which an alert must not escalate any more (ALERT-EVENTS.md; suppressed: docs/api-notes.md). */
const CLOSING_EVENTS = ['alert.acknowledged', 'alert.resolved', 'alert.suppressed'];

/** The escalation steps' statements, prepared once per database (db/prepared.ts): a step scheduled unless the
 * alert has it already (its id back, or nothing), a scheduled step marked fired (`firedAt`), a step's status. The
 * insert names every column, as drizzle's insert did (`channelIds` and `payload` as their JSON text). */
const escalationQueries = preparedQueries((db) => {
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  return {
    schedule: db
      .insert(alertEscalations)
      .values({
        id: value('id'),
        alertId: value('alertId'),
        orgId: value('orgId'),
        policyId: value('policyId'),
        step: value('step'),
        channelIds: value('channelIds'),
        payload: value('payload'),
        dueAt: value('dueAt'),
        status: 'scheduled',
        firedAt: null,
        cancelledAt: null,
        createdAt: value('createdAt'),
      })
      .onConflictDoNothing()
      .returning({ id: alertEscalations.id })
      .prepare(),
    fire: db
      .update(alertEscalations)
      .set({ status: 'fired', firedAt: value('firedAt') })
      .where(and(eq(alertEscalations.id, sql.placeholder('id')), eq(alertEscalations.status, 'scheduled')))
      .prepare(),
    status: db
      .select({ status: alertEscalations.status })
      .from(alertEscalations)
      .where(eq(alertEscalations.id, sql.placeholder('id')))
      .prepare(),
  };
});

/** Runs `work` over `items`, at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}

/**
 * The alert notification pipeline of 02 §6, driven by the alert events of ALERT-EVENTS.md through the durable
 * job queue: in-app notifications at once, then the channel sends (recorded pending → sent | failed), and the
 * escalation steps as delayed jobs whose own records are cancelled when the alert is acknowledged, resolved or
 * suppressed. Every handler is idempotent: a replayed job notifies nobody twice and resends nothing already sent.
 */
export class AlertNotifier {
  constructor(
    private readonly db: Db,
    private readonly deps: {
      tenancy: TenancyService;
      directory: Directory;
      inbox: InboxService;
      channels: ChannelsService;
      policies: PoliciesService;
      deliveries: DeliveryRecords;
      senders: Senders;
      publicUrl: string | undefined;
      /** The alert's status now (the alerts module's); undefined when the alert is gone. */
      alertStatus: (alertId: string) => string | undefined;
      /** Escalation step delays are multiplied by this (SVC_ALERT_TIME_SCALE: 1 in production, tests shrink it). */
      timeScale?: number;
    },
  ) {}

  register(worker: JobWorker): void {
    worker.subscribeBatch(['alert.triggered', ...CLOSING_EVENTS], (tx, events, now) => this.relay(tx, events, now));
    worker.handle(JOBS.triggered, (payload) => this.onTriggered(parseAlertEvent(payload)));
    worker.handle(JOBS.closed, (payload) => this.cancelEscalations(parseAlertEvent(payload).alertId));
    worker.handle(JOBS.escalate, (payload) => this.escalate(String(payload.escalationId)));
  }

  /**
   * A relayed batch of alert events, in the relaying transaction (issue 12): what it writes commits with the
   * events' relay mark, or neither does. alert.triggered: one job each (in-app notifications, sends, escalations:
   * the sends are network work, outside any transaction). A closing event: its alert's scheduled escalation steps
   * are cancelled here, with no job (an alert triggered but not handled yet schedules none once closed:
   * scheduleEscalations). A payload that is not an alert event (no alertId or orgId) gets no job: it could notify
   * nobody (its job only failed until dead-lettered).
   */
  relay(tx: Db, events: readonly RelayedEvent[], now: Date): void {
    const cancel = this.cancelStatement(tx);
    const at = now.toISOString();
    for (const event of events) {
      const alert = readAlertEvent(event.payload);
      if (!alert) continue;
      if (event.type === 'alert.triggered') enqueueJob(tx, JOBS.triggered, { ...event.payload, eventId: event.id, eventType: event.type }, { runAt: now });
      else cancel.run(at, alert.alertId);
    }
  }

  private cancelStatement(db: Db) {
    return db.$client.prepare<[string, string]>(`UPDATE alert_escalations SET status = 'cancelled', cancelled_at = ? WHERE alert_id = ? AND status = 'scheduled'`);
  }

  /** The alert is no longer active (acknowledged, resolved or suppressed since): it must not escalate. An alert
   * with no row (deleted) is taken at its event's word. */
  private closed(alertId: string): boolean {
    const status = this.deps.alertStatus(alertId);
    return status !== undefined && status !== 'active';
  }

  /** 02 §6: the active users of the organization and the active partner users who reach it (orgAccess all, or
   * selected including it), each once; with `permission`, only those whose role grants it. */
  recipientsOf(orgId: string, permission?: string): string[] {
    let partnerId: string;
    try {
      partnerId = this.deps.tenancy.requireOrg(systemContext(), orgId).partnerId;
    } catch (err) {
      if (err instanceof DomainError) return [];
      throw err;
    }
    const ids = new Set<string>();
    for (const { user, membership } of this.deps.directory.members({ partnerIds: [partnerId], orgIds: [orgId] })) {
      if (user.status !== 'active' || !membership) continue;
      if (permission !== undefined && !covers(effectivePermissions(this.db, membership.roleId), permission)) continue;
      if (membership.kind === 'organization' ? membership.orgId === orgId : membership.orgAccess === 'all' || (membership.orgAccess === 'selected' && membership.orgIds.includes(orgId)))
        ids.add(user.id);
    }
    return [...ids];
  }

  private link(alertId: string): string {
    return `${(this.deps.publicUrl ?? '').replace(/\/+$/, '')}/alerts/${alertId}`.slice(0, 500);
  }

  async onTriggered(alert: AlertEventPayload): Promise<void> {
    const recipients = this.recipientsOf(alert.orgId);
    const rows: NewNotification[] = recipients.map((userId) => ({
      userId,
      orgId: alert.orgId,
      type: 'alert',
      priority: PRIORITY_OF[alert.severity],
      title: alert.title.slice(0, 255),
      message: alert.message,
      link: this.link(alert.alertId),
      metadata: { alertId: alert.alertId, severity: alert.severity, deviceId: alert.deviceId, deviceName: alert.deviceName, ruleId: alert.ruleId },
      sourceKey: `alert:${alert.alertId}`,
    }));
    this.db.$client.transaction(() => {
      this.deps.inbox.deliver(this.db, rows);
      this.openSends(alert, 0, alert.notificationChannelIds);
      this.scheduleEscalations(alert);
    })();
    await this.dispatch(alert, 0);
  }

  /** Records a pending send for each enabled channel (of the alert's organization) among `ids`, or all. */
  private openSends(alert: AlertEventPayload, step: number, ids: string[] | null): void {
    for (const channel of this.deps.channels.enabledChannels(this.db, alert.orgId, ids)) {
      this.deps.deliveries.open(this.db, {
        alertId: alert.alertId,
        orgId: alert.orgId,
        channelId: channel.id,
        channelName: channel.name,
        channelType: channel.type,
        step,
      });
    }
  }

  private scheduleEscalations(alert: AlertEventPayload): void {
    if (!alert.escalationPolicyId || this.closed(alert.alertId)) return;
    const policy = this.deps.policies.forOrg(alert.orgId, alert.escalationPolicyId);
    if (!policy) return;
    const triggered = Date.parse(alert.triggeredAt);
    const base = Number.isFinite(triggered) ? triggered : Date.now();
    stepsOf(policy).forEach((step, i) => {
      const dueAt = new Date(base + step.delayMinutes * 60_000 * (this.deps.timeScale ?? 1));
      const row = escalationQueries(this.db).schedule.get({
        id: newId(),
        alertId: alert.alertId,
        orgId: alert.orgId,
        policyId: policy.id,
        step: i + 1,
        channelIds: JSON.stringify(step.channelIds),
        payload: JSON.stringify(alert),
        dueAt: dueAt.toISOString(),
        createdAt: new Date().toISOString(),
      });
      if (row) enqueueJob(this.db, JOBS.escalate, { escalationId: row.id }, { runAt: dueAt, maxAttempts: 5 });
    });
  }

  /** ALERT-EVENTS.md: acknowledging or resolving cancels the alert's pending escalation steps. */
  cancelEscalations(alertId: string): void {
    this.cancelStatement(this.db).run(new Date().toISOString(), alertId);
  }

  /** An escalation step fires only while its record is still scheduled (not cancelled since). */
  async escalate(escalationId: string): Promise<void> {
    const row = rowById(this.db, alertEscalations, escalationId);
    if (!row) return;
    const alert = parseAlertEvent(row.payload);
    if (row.status === 'scheduled') {
      this.db.$client.transaction(() => {
        // Closed since, its closing event not relayed yet: cancelled now rather than fired.
        if (this.closed(alert.alertId)) return this.cancelEscalations(alert.alertId);
        const fired = escalationQueries(this.db).fire.run({ id: escalationId, firedAt: new Date().toISOString() });
        if (fired.changes === 0) return;
        this.openSends(alert, row.step, row.channelIds);
        publishEvent(this.db, 'alert.escalated', { ...alert, step: row.step }, alert.orgId);
      })();
    }
    // A fired step whose sends were interrupted (a crash) finishes them when its job runs again.
    if (escalationQueries(this.db).status.get({ id: escalationId })?.status === 'fired')
      await this.dispatch(alert, row.step);
  }

  /** Sends every pending record of an alert's step, at most 5 at a time, each channel within its throttle. */
  private async dispatch(alert: AlertEventPayload, step: number): Promise<void> {
    const pending = this.deps.deliveries.pendingOf(alert.alertId, step);
    const event = step === 0 ? 'alert.triggered' : 'alert.escalated';
    await pool(pending, DISPATCH_CONCURRENCY, async (delivery) => {
      this.deps.deliveries.finish(delivery.id, await this.sendOne(delivery, alert, event));
    });
  }

  private async sendOne(delivery: DeliveryRow, alert: AlertEventPayload, event: string): Promise<{ success: boolean; message: string }> {
    const channel = delivery.channelId ? this.deps.channels.channelById(delivery.channelId) : null;
    if (!channel) return { success: false, message: 'Notification channel not found' };
    if (channel.throttleMaxPerWindow !== null) {
      const since = new Date(Date.now() - channel.throttleWindowSeconds * 1000).toISOString();
      if (this.deps.deliveries.sentSince(channel.id, since) >= channel.throttleMaxPerWindow) {
        return { success: false, message: `Throttled: at most ${channel.throttleMaxPerWindow} sends per ${channel.throttleWindowSeconds} s` };
      }
    }
    return this.deps.senders.send(channel.type, channel.config, { event, alert });
  }
}
