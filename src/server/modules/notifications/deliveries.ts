import { and, asc, count, eq, gte, sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { preparedQueries } from '../../db/prepared.js';
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

/** 02 §3 "Notification delivery": every send of an alert to a channel, pending, sent or failed. */
export class DeliveryRecords {
  constructor(private readonly db: Db) {}

  /** The record of one send, created pending inside the caller's transaction; an existing one (a replayed event)
   * is left as it is. */
  open(tx: Db, values: { alertId: string; orgId: string; channelId: string; channelName: string; channelType: string; step: number }): void {
    tx.insert(notificationDeliveries).values(values).onConflictDoNothing().run();
  }

  pendingOf(alertId: string, step: number): DeliveryRow[] {
    return this.db
      .select()
      .from(notificationDeliveries)
      .where(and(eq(notificationDeliveries.alertId, alertId), eq(notificationDeliveries.step, step), eq(notificationDeliveries.status, 'pending')))
      .orderBy(asc(notificationDeliveries.createdAt), sql`rowid`)
      .all();
  }

  finish(id: string, outcome: { success: boolean; message: string }): void {
    const now = new Date().toISOString();
    this.db
      .update(notificationDeliveries)
      .set(outcome.success ? { status: 'sent', sentAt: now, errorMessage: null } : { status: 'failed', errorMessage: outcome.message.slice(0, 1000) })
      .where(and(eq(notificationDeliveries.id, id), eq(notificationDeliveries.status, 'pending')))
      .run();
  }

  /** Sends that went out on a channel since `since` (the throttle window). */
  sentSince(channelId: string, since: string): number {
    return (
      this.db
        .select({ n: count() })
        .from(notificationDeliveries)
        .where(and(eq(notificationDeliveries.channelId, channelId), eq(notificationDeliveries.status, 'sent'), gte(notificationDeliveries.sentAt, since)))
        .get()?.n ?? 0
    );
  }

  /** Every send of an alert, oldest first, for `GET /alerts/:id` (ALERT-EVENTS.md). */
  forAlert(alertId: string): AlertNotificationRow[] {
    return deliveriesOfAlert(this.db).all({ alertId });
  }
}
