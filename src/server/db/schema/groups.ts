import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, ref, timestamps } from './columns.js';
import { devices } from './devices.js';
import { organizations, sites } from './tenancy.js';

/** Device groups (05 wire notes "4.7"): static (members added by hand) or dynamic (a condition tree). */
export const deviceGroups = sqliteTable(
  'device_groups',
  {
    id: id(),
    orgId: ref(() => organizations.id, { onDelete: 'cascade' }),
    siteId: text().references(() => sites.id, { onDelete: 'set null' }),
    name: text().notNull(),
    type: text({ enum: ['static', 'dynamic'] }).notNull(),
    rules: json<Record<string, unknown>>(),
    filterConditions: json<Record<string, unknown>>(),
    filterFieldsUsed: json<string[]>().notNull().default([]),
    parentId: text(),
    /** When the dynamic membership was last computed. */
    evaluatedAt: text(),
    ...timestamps(),
  },
  (t) => [index('device_groups_org_idx').on(t.orgId, t.name), index('device_groups_parent_idx').on(t.parentId)],
);

/** The stored membership: hand-added members of static groups, the computed members of dynamic ones, and pins. */
export const deviceGroupMembers = sqliteTable(
  'device_group_members',
  {
    groupId: ref(() => deviceGroups.id, { onDelete: 'cascade' }),
    deviceId: ref(() => devices.id, { onDelete: 'cascade' }),
    /** A pinned device stays in a dynamic group whatever its conditions say. */
    isPinned: integer({ mode: 'boolean' }).notNull().default(false),
    pinnedAt: text(),
    addedAt: text().notNull(),
    addedBy: text(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.deviceId] }), index('device_group_members_device_idx').on(t.deviceId)],
);

/** Every membership change with its reason (05 wire notes "4.7" membership-log). */
export const deviceGroupMembershipLog = sqliteTable(
  'device_group_membership_log',
  {
    id: id(),
    groupId: ref(() => deviceGroups.id, { onDelete: 'cascade' }),
    deviceId: text().notNull(),
    action: text({ enum: ['added', 'removed'] }).notNull(),
    reason: text().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('device_group_membership_log_group_idx').on(t.groupId, t.createdAt)],
);
