import { and, asc, count, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { preparedQueries, rowQuery } from '../../db/prepared.js';
import { notificationDeliveries } from '../../db/schema/index.js';

export type DeliveryRow = typeof notificationDeliveries.$inferSelect;

/** A row of `GET /alerts/:id` `notifications` (05-wire-notes 4.1; ALERT-EVENTS.md `AlertDeliveryLog`). */
export interface AlertNotificationRow {
  id: string;
  channelId: string | null;
  status: 'pending' | 'sent' | 'failed';
  sentAt: string | null;
  errorMessage: string | null;
  createdAt: string;
  channelName: string;
  channelType: string;
}

/** An alert's deliveries, oldest first, prepared once per database (db/prepared.ts). */
const deliveriesOfAlert = preparedQueries((db) =>
  db
    .select({
      id: notificationDeliveries.id,
      channelId: notificationDeliveries.channelId,
      status: notificationDeliveries.status,
      sentAt: notificationDeliveries.sentAt,
      errorMessage: notificationDeliveries.errorMessage,
      createdAt: notificationDeliveries.createdAt,
      channelName: notificationDeliveries.channelName,
      channelType: notificationDeliveries.channelType,
    })
    .from(notificationDeliveries)
    .where(eq(notificationDeliveries.alertId, sql.placeholder('alertId')))
    .orderBy(asc(notificationDeliveries.createdAt), sql`rowid`)
    .prepare(),
);

/** The statements of the sends, prepared once per database (db/prepared.ts): a pending record opened unless the
 * send has one (the insert names every column, as drizzle's insert did); the pending records of an alert's step
 * (`alertId`, `step`), oldest first; a pending record finished as sent (at `sentAt`) or failed (`errorMessage`);
 * how many sends went out on a channel (`channelId`) since `since`. */
const sendQueries = preparedQueries((db) => {
  const value = (name: string) => sql`${sql.placeholder(name)}`;
  const pending = and(eq(notificationDeliveries.id, sql.placeholder('id')), eq(notificationDeliveries.status, 'pending'));
  return {
    open: db
      .insert(notificationDeliveries)
      .values({
        id: value('id'),
        alertId: value('alertId'),
        orgId: value('orgId'),
        channelId: value('channelId'),
        channelName: value('channelName'),
        channelType: value('channelType'),
        step: value('step'),
        status: 'pending',
        errorMessage: null,
        sentAt: null,
        createdAt: value('createdAt'),
      })
      .onConflictDoNothing()
      .prepare(),
    pendingOf: rowQuery(
      db,
      notificationDeliveries,
      and(
        eq(notificationDeliveries.alertId, sql.placeholder('alertId')),
        eq(notificationDeliveries.step, sql.placeholder('step')),
        eq(notificationDeliveries.status, 'pending'),
      ),
      { orderBy: [asc(notificationDeliveries.createdAt), sql`rowid`] },
    ),
    sent: db
      .update(notificationDeliveries)
      .set({ status: 'sent', sentAt: value('sentAt'), errorMessage: null })
      .where(pending)
      .prepare(),
    failed: db
      .update(notificationDeliveries)
      .set({ status: 'failed', errorMessage: value('errorMessage') })
      .where(pending)
      .prepare(),
    sentSince: db
      .select({ n: count() })
      .from(notificationDeliveries)
      .where(
        and(
          eq(notificationDeliveries.channelId, sql.placeholder('channelId')),
          eq(notificationDeliveries.status, 'sent'),
          gte(notificationDeliveries.sentAt, sql.placeholder('since')),
        ),
      )
      .prepare(),
  };
});

/** 02 §3 "Notification delivery": every send of an alert to a channel, pending, sent or failed. */
export class DeliveryRecords {
  constructor(private readonly db: Db) {}

  /** The record of one send, created pending inside the caller's transaction; an existing one (a replayed event)
   * is left as it is. */
  open(tx: Db, values: { alertId: string; orgId: string; channelId: string; channelName: string; channelType: string; step: number }): void {
    sendQueries(tx).open.run({ ...values, id: newId(), createdAt: new Date().toISOString() });
  }

  pendingOf(alertId: string, step: number): DeliveryRow[] {
    return sendQueries(this.db).pendingOf.all({ alertId, step });
  }

  finish(id: string, outcome: { success: boolean; message: string }): void {
    const queries = sendQueries(this.db);
    if (outcome.success) queries.sent.run({ id, sentAt: new Date().toISOString() });
    else queries.failed.run({ id, errorMessage: outcome.message.slice(0, 1000) });
  }

  /** Sends that went out on a channel since `since` (the throttle window). */
  sentSince(channelId: string, since: string): number {
    return sendQueries(this.db).sentSince.get({ channelId, since })?.n ?? 0;
  }

  /** Every send of an alert, oldest first, for `GET /alerts/:id` (ALERT-EVENTS.md). */
  forAlert(alertId: string): AlertNotificationRow[] {
    return deliveriesOfAlert(this.db).all({ alertId });
  }
}
