import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, ref, timestamps } from './columns.js';
import { users } from './identity.js';
import { organizations } from './tenancy.js';

/** 02 §2.7 retry policy (set outside the API's endpoints): maxRetries counts retries after the first attempt. */
export interface RetryPolicy {
  maxRetries: number;
  initialDelayMs: number;
  backoffMultiplier: number;
  maxDelayMs: number;
}

/** 02 §8 defaults: retries after 1, 2, 4, 8, 16 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 5, initialDelayMs: 1000, backoffMultiplier: 2, maxDelayMs: 300_000 };

/** 02 §2.7 outgoing webhooks. Secrets are SecretBox ciphertexts, never returned (hasSecret). */
export const webhooks = sqliteTable(
  'webhooks',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    url: text().notNull(),
    /** SecretBox ciphertext of the signing secret; null: deliveries are unsigned. */
    secretEnc: text(),
    /** After a rotation: the old secret, which also signs deliveries until previousSecretExpiresAt. */
    previousSecretEnc: text(),
    previousSecretExpiresAt: text(),
    events: json<string[]>().notNull(),
    headers: json<Array<{ key: string; value: string }>>().notNull().default([]),
    status: text({ enum: ['active', 'paused', 'failed'] }).notNull().default('active'),
    retryPolicy: json<RetryPolicy>().notNull().default(DEFAULT_RETRY_POLICY),
    createdBy: text().references(() => users.id, { onDelete: 'set null' }),
    ...timestamps(),
    lastDeliveryAt: text(),
  },
  (t) => [index('webhooks_org_idx').on(t.orgId, t.createdAt)],
);

/** 02 §2.7 delivery records: one per event and webhook (a manual retry is a new record). */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    id: id(),
    webhookId: ref(() => webhooks.id, { onDelete: 'cascade' }),
    orgId: text().notNull(),
    status: text({ enum: ['pending', 'delivered', 'failed', 'retrying'] })
      .notNull()
      .default('pending'),
    event: text().notNull(),
    eventId: text().notNull(),
    /** The delivery body of 02 §6: {id, type, timestamp, orgId, data}. */
    payload: json<Record<string, unknown>>().notNull(),
    responseStatus: integer(),
    /** The receiver's answer (first 1000 characters) or why the attempt failed. */
    responseBody: text(),
    /** Attempts made so far. */
    attempt: integer().notNull().default(0),
    nextAttemptAt: text(),
    /** While an attempt is in flight: until when it belongs to the worker that claimed it. */
    lockedUntil: text(),
    createdAt: createdAt(),
    deliveredAt: text(),
  },
  (t) => [
    index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt),
    /** One delivery per (webhook, event): the fan-out inserts with ON CONFLICT DO NOTHING, so an event relayed twice
     * (a crash between the fan-out and the relay's mark) creates no second delivery. Manual retries and tests carry
     * a new event id (05-wire-notes). */
    uniqueIndex('webhook_deliveries_event_uq').on(t.webhookId, t.eventId),
    index('webhook_deliveries_status_idx').on(t.status, t.nextAttemptAt),
    /** The delivery pump's queue: unfinished deliveries by when their next attempt is due. */
    index('webhook_deliveries_due_idx')
      .on(t.nextAttemptAt)
      .where(sql`status IN ('pending', 'retrying')`),
  ],
);
