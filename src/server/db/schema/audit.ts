import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json } from './columns.js';

/** 03 §2.6 audit log entry. Append-only: each row's checksum chains it to the previous row of the same
 * chain (one chain per organization, and one for platform-level entries), so an edit or a deletion shows. */
export const auditLogs = sqliteTable(
  'audit_logs',
  {
    id: id(),
    orgId: text(),
    /** The partner the entry belongs to (for partner callers' visibility); null for platform-level entries. */
    partnerId: text(),
    /** The chain this row belongs to: `o:<orgId>`, `p:<partnerId>`, or `platform`. */
    chain: text().notNull(),
    seq: integer().notNull(),
    timestamp: createdAt(),
    actorType: text({ enum: ['user', 'api_key', 'agent', 'system'] }).notNull(),
    actorId: text().notNull(),
    actorEmail: text(),
    action: text().notNull(),
    resourceType: text().notNull(),
    resourceId: text(),
    resourceName: text(),
    details: json<Record<string, unknown>>().notNull().default({}),
    ipAddress: text(),
    userAgent: text(),
    result: text({ enum: ['success', 'failure', 'denied'] }).notNull().default('success'),
    errorMessage: text(),
    prevChecksum: text().notNull(),
    checksum: text().notNull(),
  },
  (t) => [
    uniqueIndex('audit_logs_chain_seq_unique').on(t.chain, t.seq),
    index('audit_logs_org_time_idx').on(t.orgId, t.timestamp),
    index('audit_logs_time_idx').on(t.timestamp),
    index('audit_logs_partner_time_idx').on(t.partnerId, t.timestamp),
  ],
);
