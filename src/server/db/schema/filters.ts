import { index, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, updatedAt } from './columns.js';
import { organizations } from './tenancy.js';

/** Saved device filters (02 §2.9): a condition tree, compiled by modules/filters/compile.ts wherever it is used. */
export const savedFilters = sqliteTable(
  'saved_filters',
  {
    id: id(),
    orgId: text()
      .notNull()
      .references(() => organizations.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    description: text(),
    conditions: json<Record<string, unknown>>().notNull(),
    createdBy: text(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('saved_filters_org_idx').on(t.orgId, t.createdAt)],
);
