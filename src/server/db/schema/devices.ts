import { index, integer, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';
import { organizations, sites } from './tenancy.js';

/** Devices enrolled by their agents (04 wire notes "Enrollment keys and agents"). */
export const devices = sqliteTable(
  'devices',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    /** The organization's partner (immutable), kept so partner-wide device caps count without a join. */
    partnerId: text().notNull(),
    /** A deleted site leaves its devices in the organization without a site. */
    siteId: text().references(() => sites.id, { onDelete: 'set null' }),
    agentId: text().notNull(),
    /** SHA-256 hex of the agent's bearer token; never returned. */
    agentTokenHash: text().notNull(),
    hostname: text().notNull(),
    displayName: text(),
    osType: text({ enum: ['windows', 'macos', 'linux'] }).notNull(),
    osVersion: text().notNull(),
    architecture: text().notNull(),
    agentVersion: text().notNull(),
    status: text({ enum: ['online', 'offline', 'maintenance', 'decommissioned', 'quarantined', 'updating', 'pending'] })
      .notNull()
      .default('pending'),
    tags: json<string[]>().notNull().default([]),
    customFields: json<Record<string, unknown>>().notNull().default({}),
    hardwareInfo: json<Record<string, unknown>>(),
    networkInfo: json<Record<string, unknown>[]>(),
    lastMetrics: json<Record<string, unknown>>(),
    lastSeenAt: text(),
    enrolledAt: text().notNull(),
    lastUser: text(),
    /**
     * Inventory the agent reports (issue 13), flattened into real columns so the filter compiler
     * (modules/filters/compile.ts) compares plain columns; the JSON blobs above keep everything else reported.
     */
    osBuild: text(),
    uptimeSeconds: integer(),
    isHeadless: integer({ mode: 'boolean' }),
    deviceRole: text().notNull().default('unknown'),
    watchdogStatus: text(),
    lastSeenIp: text(),
    quarantinedAt: text(),
    hwManufacturer: text(),
    hwModel: text(),
    hwSerialNumber: text(),
    hwCpuModel: text(),
    hwGpuModel: text(),
    hwCpuCores: integer(),
    hwRamTotalMb: real(),
    hwDiskTotalGb: real(),
    /** The primary interface: the first reported one with an IP address. */
    netIpAddress: text(),
    netPublicIp: text(),
    netMacAddress: text(),
    cpuPercent: real(),
    ramPercent: real(),
    diskPercent: real(),
    /** Lower-cased names of the installed software the agent reports (`software.installed`). */
    softwareNames: json<string[]>().notNull().default([]),
    pendingPatchCount: integer(),
    rebootRequired: integer({ mode: 'boolean' }),
    /** The enrollment key used (kept as a plain id: enrollment keys are hard-deleted). */
    enrollmentKeyId: text(),
    decommissionedAt: text(),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('devices_agent_id_unique').on(t.agentId),
    uniqueIndex('devices_agent_token_hash_unique').on(t.agentTokenHash),
    index('devices_org_idx').on(t.orgId, t.hostname),
    index('devices_site_idx').on(t.siteId),
    index('devices_partner_idx').on(t.partnerId, t.status),
    index('devices_org_status_idx').on(t.orgId, t.status),
    index('devices_org_last_seen_idx').on(t.orgId, t.lastSeenAt),
    /** Device filters, dynamic groups and previews (02 §4.5): the columns nearly every compiled filter reads, the
     * scope (org, site), the live test (status), the common conditions (OS, role, last seen, tags), the preview
     * order (hostname) and the id, so the condition is evaluated, counted and ordered inside this narrow index
     * without reading the wide device rows (inventory JSON); its (org, os) prefix serves what an (org, os) index did.
     * A filter on other columns still reads the rows of the organization (bench/filters.js). */
    index('devices_filter_idx').on(t.orgId, t.osType, t.status, t.deviceRole, t.lastSeenAt, t.siteId, t.hostname, t.tags, t.id),
    /** GET /search (02 §4.5): the substring match reads this narrow index in hostname order and stops at the
     * category cap, instead of reading every wide device row and sorting (bench/filters.js). */
    index('devices_search_idx').on(t.hostname, t.displayName, t.lastUser, t.status, t.orgId, t.siteId),
  ],
);
