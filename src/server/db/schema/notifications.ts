import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, ref, timestamps } from './columns.js';
import { users } from './identity.js';
import { organizations } from './tenancy.js';

/** 02 §2.5 in-app notifications, one row per recipient. */
export const notifications = sqliteTable(
  'notifications',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    orgId: text().references(() => organizations.id, { onDelete: 'cascade' }),
    type: text({ enum: ['alert', 'device', 'script', 'automation', 'system', 'user', 'security'] }).notNull(),
    priority: text({ enum: ['low', 'normal', 'high', 'urgent'] }).notNull().default('normal'),
    title: text().notNull(),
    message: text().notNull().default(''),
    link: text(),
    metadata: json<Record<string, unknown>>().notNull().default({}),
    read: integer({ mode: 'boolean' }).notNull().default(false),
    readAt: text(),
    /** What produced it (e.g. `alert:<id>`): a replayed event never notifies a user twice. Never returned. */
    sourceKey: text(),
    createdAt: createdAt(),
  },
  (t) => [
    index('notifications_user_created_idx').on(t.userId, t.createdAt),
    uniqueIndex('notifications_user_source_unique').on(t.userId, t.sourceKey),
  ],
);

/** 02 §2.4 notification channels. The whole config is sealed with SecretBox (it holds webhook URLs, routing
 * keys, tokens and passwords); responses show it masked. */
export const notificationChannels = sqliteTable(
  'notification_channels',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    type: text({ enum: ['email', 'slack', 'teams', 'webhook', 'pagerduty', 'sms'] }).notNull(),
    configSealed: text().notNull(),
    enabled: integer({ mode: 'boolean' }).notNull().default(true),
    lastTestedAt: text(),
    lastTestStatus: text({ enum: ['success', 'failed'] }),
    /** null: unlimited. */
    throttleMaxPerWindow: integer(),
    throttleWindowSeconds: integer().notNull().default(3600),
    ...timestamps(),
  },
  (t) => [index('notification_channels_org_idx').on(t.orgId, t.updatedAt)],
);

export interface EscalationStep {
  delayMinutes: number;
  channelIds: string[];
}

/** 02 §2.6 escalation policies (05-wire-notes: steps are stored as given). */
export const escalationPolicies = sqliteTable(
  'escalation_policies',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    steps: json<Record<string, unknown>[]>().notNull().default([]),
    ...timestamps(),
  },
  (t) => [index('escalation_policies_org_idx').on(t.orgId, t.updatedAt)],
);

/** 02 §3 notification delivery: one row per send of an alert to a channel (pending, sent, failed). `step` is
 * 0 for the first dispatch and n for escalation step n. The channel's name and type are kept, so the record
 * still reads after the channel is deleted. */
export const notificationDeliveries = sqliteTable(
  'notification_deliveries',
  {
    id: id(),
    alertId: text().notNull(),
    orgId: text().notNull(),
    channelId: text().references(() => notificationChannels.id, { onDelete: 'set null' }),
    channelName: text().notNull(),
    channelType: text().notNull(),
    step: integer().notNull().default(0),
    status: text({ enum: ['pending', 'sent', 'failed'] }).notNull().default('pending'),
    errorMessage: text(),
    sentAt: text(),
    createdAt: createdAt(),
  },
  (t) => [
    index('notification_deliveries_alert_idx').on(t.alertId, t.createdAt),
    index('notification_deliveries_channel_idx').on(t.channelId, t.createdAt),
    uniqueIndex('notification_deliveries_send_unique').on(t.alertId, t.channelId, t.step),
  ],
);

/** 02 §3 escalation: one row per scheduled step of an alert. The durable job that fires it reads this row and
 * does nothing unless it is still `scheduled`; acknowledging or resolving the alert cancels the rows. */
export const alertEscalations = sqliteTable(
  'alert_escalations',
  {
    id: id(),
    alertId: text().notNull(),
    orgId: text().notNull(),
    policyId: text().notNull(),
    step: integer().notNull(),
    channelIds: json<string[]>().notNull(),
    /** The alert.triggered payload the step was scheduled from (ALERT-EVENTS.md). */
    payload: json<Record<string, unknown>>().notNull(),
    dueAt: text().notNull(),
    status: text({ enum: ['scheduled', 'fired', 'cancelled'] }).notNull().default('scheduled'),
    firedAt: text(),
    cancelledAt: text(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('alert_escalations_step_unique').on(t.alertId, t.step), index('alert_escalations_due_idx').on(t.status, t.dueAt)],
);
