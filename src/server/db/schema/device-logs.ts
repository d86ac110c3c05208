import { index, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { DIAGNOSTIC_LEVELS, EVENT_CATEGORIES, EVENT_LEVELS } from '../../../contract/device-logs.js';
import { createdAt, id, json, ref } from './columns.js';
import { devices } from './devices.js';
import { organizations } from './tenancy.js';

/** What both logs' rows begin with: the row, its device and organization, the time the agent gave (UTC ISO 8601). */
const deviceRowColumns = () => ({
  id: id(),
  deviceId: ref(() => devices.id),
  orgId: ref(() => organizations.id),
  timestamp: text().notNull(),
});

/**
 * The agent's own diagnostic log (03 §2.7), sent in batches by the agent. `timestamp` is the agent's time as UTC
 * ISO 8601 (so it sorts as text). Kept with the device: devices are decommissioned, never deleted, and their
 * other per-device rows (commands, script runs) stay as history too.
 */
export const deviceDiagnosticLogs = sqliteTable(
  'device_diagnostic_logs',
  {
    ...deviceRowColumns(),
    level: text({ enum: DIAGNOSTIC_LEVELS }).notNull(),
    component: text().notNull(),
    message: text().notNull(),
    fields: json<Record<string, unknown>>(),
    agentVersion: text(),
    createdAt: createdAt(),
  },
  (t) => [index('device_diagnostic_logs_device_time_idx').on(t.deviceId, t.timestamp, t.id)],
);

/** The device's OS event log as its agent reports it (03 §2.8): (device, source, eventId) is unique, a repeated
 * event is ignored; events without an eventId never collide (SQLite: NULLs are distinct in a unique index). */
export const deviceEventLogs = sqliteTable(
  'device_event_logs',
  {
    ...deviceRowColumns(),
    level: text({ enum: EVENT_LEVELS }).notNull(),
    category: text({ enum: EVENT_CATEGORIES }).notNull(),
    source: text().notNull(),
    eventId: text(),
    message: text().notNull(),
    details: json<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('device_event_logs_device_source_event_uq').on(t.deviceId, t.source, t.eventId),
    index('device_event_logs_device_time_idx').on(t.deviceId, t.timestamp, t.id),
  ],
);
