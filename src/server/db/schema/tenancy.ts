import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';

export const partners = sqliteTable(
  'partners',
  {
    id: id(),
    name: text().notNull(),
    slug: text().notNull(),
    type: text({ enum: ['msp', 'enterprise', 'internal'] }).notNull().default('msp'),
    plan: text({ enum: ['free', 'starter', 'community', 'pro', 'enterprise', 'unlimited'] })
      .notNull()
      .default('free'),
    status: text({ enum: ['pending', 'active', 'suspended', 'churned'] }).notNull().default('active'),
    maxOrganizations: integer(),
    maxDevices: integer(),
    settings: json<Record<string, unknown>>().notNull().default({}),
    ssoConfig: json<Record<string, unknown>>(),
    billingEmail: text(),
    ...timestamps(),
    deletedAt: text(),
  },
  (t) => [uniqueIndex('partners_slug_unique').on(t.slug)],
);

export const organizations = sqliteTable(
  'organizations',
  {
    id: id(),
    partnerId: ref(() => partners.id),
    name: text().notNull(),
    slug: text().notNull(),
    type: text({ enum: ['customer', 'internal'] }).notNull().default('customer'),
    status: text({ enum: ['active', 'suspended', 'trial', 'churned'] }).notNull().default('active'),
    maxDevices: integer(),
    settings: json<Record<string, unknown>>().notNull().default({}),
    ssoConfig: json<Record<string, unknown>>(),
    billingContact: json<Record<string, unknown>>(),
    contractStart: text(),
    contractEnd: text(),
    ...timestamps(),
    deletedAt: text(),
  },
  (t) => [index('organizations_partner_idx').on(t.partnerId, t.name)],
);

export const sites = sqliteTable(
  'sites',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    name: text().notNull(),
    address: json<Record<string, unknown>>(),
    timezone: text().notNull().default('UTC'),
    contact: json<Record<string, unknown>>(),
    settings: json<Record<string, unknown>>().notNull().default({}),
    ...timestamps(),
  },
  (t) => [index('sites_org_idx').on(t.orgId, t.name)],
);
