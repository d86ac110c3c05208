import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';
import { users } from './identity.js';
import { organizations } from './tenancy.js';

/** 02 §2.8 providers, by their wire values (05-wire-notes "2.8/4.4 PSA": psa_1 … psa_6 in order). */
export const PSA_PROVIDERS = ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'] as const;
export type PsaProvider = (typeof PSA_PROVIDERS)[number];

/** 02 §2.8 "syncSettings (internal, holds lastTestedAt and status)": the outcome of the last credentials test. */
export interface PsaSyncSettings {
  lastTestedAt: string | null;
  testStatus: 'verified' | 'failed' | null;
  testMessage: string | null;
}

/** 02 §2.8 PSA connections. Credentials are one SecretBox ciphertext of the JSON object, never returned. */
export const psaConnections = sqliteTable(
  'psa_connections',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    provider: text({ enum: PSA_PROVIDERS }).notNull(),
    name: text().notNull(),
    /** SecretBox ciphertext of the credentials object; null: none stored. */
    credentialsEnc: text(),
    settings: json<Record<string, unknown>>().notNull().default({}),
    syncSettings: json<PsaSyncSettings>().notNull().default({ lastTestedAt: null, testStatus: null, testMessage: null }),
    /** 02 §3 "POST /psa/connections/:id/status sets a custom status such as active, paused, error". */
    status: text({ enum: ['active', 'paused', 'error'] }).notNull().default('active'),
    enabled: integer({ mode: 'boolean' }).notNull().default(true),
    lastSyncAt: text(),
    lastSyncStatus: text({ enum: ['queued', 'running', 'completed', 'failed'] }),
    lastSyncError: text(),
    createdBy: text().references(() => users.id, { onDelete: 'set null' }),
    ...timestamps(),
  },
  (t) => [index('psa_connections_org_idx').on(t.orgId, t.updatedAt)],
);

/** 02 §2.8 ticket mappings: an external ticket and the alert or device it was opened for. */
export const psaTicketMappings = sqliteTable(
  'psa_ticket_mappings',
  {
    id: id(),
    connectionId: ref(() => psaConnections.id, { onDelete: 'cascade' }),
    orgId: text().notNull(),
    /** No foreign keys: alerts and devices belong to other modules, and a ticket outlives what opened it. */
    alertId: text(),
    deviceId: text(),
    /** The alert rule, so that a new alert of the same rule on the same device joins its open ticket. */
    ruleId: text(),
    externalTicketId: text().notNull(),
    externalTicketUrl: text(),
    title: text().notNull(),
    /** The provider's own status word (max 50). */
    status: text().notNull(),
    /** Whether the provider's status counts as open (docs/api-notes.md "PSA"). */
    open: integer({ mode: 'boolean' }).notNull().default(true),
    lastSyncAt: text(),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('psa_ticket_mappings_external_idx').on(t.connectionId, t.externalTicketId),
    index('psa_ticket_mappings_alert_idx').on(t.connectionId, t.alertId),
    index('psa_ticket_mappings_org_idx').on(t.orgId, t.updatedAt),
  ],
);
