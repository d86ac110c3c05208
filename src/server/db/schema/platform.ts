import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json } from './columns.js';

/** Domain events, written in the same transaction as the change that causes them (the outbox). */
export const outboxEvents = sqliteTable(
  'outbox_events',
  {
    id: id(),
    type: text().notNull(),
    orgId: text(),
    payload: json<Record<string, unknown>>().notNull(),
    createdAt: createdAt(),
    /** Set once the relay has turned the event into jobs for its subscribers. */
    dispatchedAt: text(),
  },
  (t) => [index('outbox_events_pending_idx').on(t.dispatchedAt, t.createdAt)],
);

/** Durable background work: claimed by the server's worker, retried with backoff, dead-lettered. */
export const jobs = sqliteTable(
  'jobs',
  {
    id: id(),
    type: text().notNull(),
    payload: json<Record<string, unknown>>().notNull(),
    status: text({ enum: ['pending', 'running', 'done', 'dead'] }).notNull().default('pending'),
    runAt: text().notNull(),
    attempts: integer().notNull().default(0),
    maxAttempts: integer().notNull().default(5),
    lockedUntil: text(),
    lastError: text(),
    /** At most one pending job per key (periodic jobs, deduplicated work). */
    uniqueKey: text(),
    createdAt: createdAt(),
    finishedAt: text(),
  },
  (t) => [index('jobs_due_idx').on(t.status, t.runAt), uniqueIndex('jobs_unique_key').on(t.uniqueKey)],
);

/** Idempotency-Key replay store: the first response to a create, kept 24 hours. */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    id: id(),
    /** Caller identity + method + path + key. */
    scopeKey: text().notNull(),
    requestHash: text().notNull(),
    status: integer().notNull(),
    body: text().notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('idempotency_keys_scope_unique').on(t.scopeKey), index('idempotency_keys_created_idx').on(t.createdAt)],
);

/** Small facts the server keeps about itself (first-start marker, versions). */
export const serverMeta = sqliteTable('server_meta', {
  key: text().primaryKey(),
  value: text().notNull(),
});
