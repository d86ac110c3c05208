import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, ref, timestamps } from './columns.js';
import { users } from './identity.js';

export type MobilePlatform = 'ios' | 'android';
export type MobileSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';
export interface QuietHours {
  start: string;
  end: string;
  timezone?: string | undefined;
}

/** 02 §2.10 mobile device registration: one row per app install (deviceId), owned by one user. */
export const mobileDevices = sqliteTable(
  'mobile_devices',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    /** The app's own install id (≤ 255); the upsert key of POST /mobile/devices. */
    deviceId: text().notNull(),
    platform: text({ enum: ['ios', 'android'] }).$type<MobilePlatform>().notNull(),
    model: text(),
    osVersion: text(),
    appVersion: text(),
    fcmToken: text(),
    apnsToken: text(),
    notificationsEnabled: integer({ mode: 'boolean' }).notNull().default(true),
    alertSeverities: json<MobileSeverity[]>().notNull(),
    quietHours: json<QuietHours>(),
    lastActiveAt: text(),
    status: text({ enum: ['active'] }).notNull().default('active'),
    ...timestamps(),
  },
  (t) => [uniqueIndex('mobile_devices_device_id_unique').on(t.deviceId), index('mobile_devices_user_idx').on(t.userId)],
);

/** Push tokens registered through POST /mobile/notifications/register (the older client's call). */
export const mobilePushTokens = sqliteTable(
  'mobile_push_tokens',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    token: text().notNull(),
    platform: text({ enum: ['ios', 'android'] }).$type<MobilePlatform>().notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex('mobile_push_tokens_token_unique').on(t.token), index('mobile_push_tokens_user_idx').on(t.userId)],
);

/** 02 §2.10 push notification record: one per device per alert (the alert id makes a replayed event a no-op). */
export const mobilePushNotifications = sqliteTable(
  'mobile_push_notifications',
  {
    id: id(),
    mobileDeviceId: ref(() => mobileDevices.id, { onDelete: 'cascade' }),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    alertId: text(),
    title: text().notNull(),
    body: text().notNull(),
    data: json<Record<string, unknown>>().notNull().default({}),
    platform: text({ enum: ['ios', 'android'] }).$type<MobilePlatform>().notNull(),
    messageId: text(),
    status: text({ enum: ['pending', 'sent', 'stubbed', 'failed'] }).notNull().default('pending'),
    errorMessage: text(),
    sentAt: text(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('mobile_push_notifications_device_alert_unique').on(t.mobileDeviceId, t.alertId),
    index('mobile_push_notifications_user_idx').on(t.userId, t.createdAt),
  ],
);
