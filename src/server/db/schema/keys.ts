import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';
import { users } from './identity.js';
import { organizations, sites } from './tenancy.js';

/** 01 §2.1 API keys: only the prefix and the SHA-256 of the key are stored. Revocation is a soft delete. */
export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    name: text().notNull(),
    keyPrefix: text().notNull(),
    /** SHA-256 hex of the full key; never returned. */
    keyHash: text().notNull(),
    scopes: json<string[]>().notNull().default([]),
    expiresAt: text(),
    rateLimit: integer().notNull().default(1000),
    status: text({ enum: ['active', 'expired', 'revoked'] }).notNull().default('active'),
    createdBy: text().references(() => users.id, { onDelete: 'set null' }),
    ...timestamps(),
    /** Written asynchronously in batches (modules/api-keys/usage.ts); reset on rotation. */
    lastUsedAt: text(),
    usageCount: integer().notNull().default(0),
  },
  (t) => [uniqueIndex('api_keys_hash_unique').on(t.keyHash), index('api_keys_org_idx').on(t.orgId, t.createdAt)],
);

/** The sliding one-hour rate window of every key (01 §5.6), one row per key and second in which it admitted
 * requests: how many, the first and the last (Unix milliseconds). A restart rebuilds the window from them (the
 * first exactly, the others at the last: never earlier than they were), pruned once the last is an hour old.
 * One row per request cost the write of a row per request, and the prune of as many. */
export const apiKeyHitSeconds = sqliteTable(
  'api_key_hit_seconds',
  {
    keyId: ref(() => apiKeys.id, { onDelete: 'cascade' }),
    /** Unix seconds. */
    second: integer().notNull(),
    hits: integer().notNull(),
    firstAt: integer().notNull(),
    lastAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.keyId, t.second] }), index('api_key_hit_seconds_last_at_idx').on(t.lastAt)],
);

/** 01 §2.2 enrollment keys: the raw key is stored only as SHA-256 of `<pepper>:<key>`. Deletion is hard. */
export const enrollmentKeys = sqliteTable(
  'enrollment_keys',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    /** Deleting the site deletes the keys pinned to it: they could only enroll into a site that is gone. */
    siteId: text().references(() => sites.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    keyHash: text().notNull(),
    usageCount: integer().notNull().default(0),
    /** null: unlimited. */
    maxUsage: integer(),
    expiresAt: text().notNull(),
    createdBy: text().references(() => users.id, { onDelete: 'set null' }),
    ...timestamps(),
  },
  (t) => [uniqueIndex('enrollment_keys_hash_unique').on(t.keyHash), index('enrollment_keys_org_idx').on(t.orgId, t.createdAt)],
);
