import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';
import { organizations } from './tenancy.js';

/** Saved device filters (02 §2.9): a condition tree, compiled by modules/filters/compile.ts wherever it is used. */
export const savedFilters = sqliteTable(
  'saved_filters',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    description: text(),
    conditions: json<Record<string, unknown>>().notNull(),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [index('saved_filters_org_idx').on(t.orgId, t.createdAt)],
);
