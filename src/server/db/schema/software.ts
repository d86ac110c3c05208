import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { DEPLOYMENT_ACTIONS, DEPLOYMENT_RESULT_STATUSES, DEPLOYMENT_STATUSES, LICENSE_TYPES, SOFTWARE_CATEGORIES } from '../../../contract/software.js';
import { createdAt, id, json, ref, timestamps } from './columns.js';
import { devices } from './devices.js';
import { organizations, partners } from './tenancy.js';

type OsType = 'windows' | 'macos' | 'linux';

/**
 * Software catalog items (03 §2.5). The spec gives them no owner; here both owner columns null is a platform-wide
 * item (made by a system caller), partnerId alone a partner's, orgId (with its partner) an organization's.
 */
export const softwareCatalog = sqliteTable(
  'software_catalog',
  {
    id: id(),
    orgId: text().references(() => organizations.id),
    partnerId: text().references(() => partners.id),
    name: text().notNull(),
    vendor: text().notNull(),
    category: text({ enum: SOFTWARE_CATEGORIES }).notNull(),
    description: text(),
    platforms: json<OsType[]>().notNull(),
    latestVersion: text(),
    homepage: text(),
    licenseType: text({ enum: LICENSE_TYPES }),
    tags: json<string[]>().notNull().default([]),
    deprecated: integer({ mode: 'boolean' }).notNull().default(false),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [index('software_catalog_org_idx').on(t.orgId), index('software_catalog_partner_idx').on(t.partnerId), index('software_catalog_name_idx').on(sql`lower(${t.name})`)],
);

/** A catalog item's versions (03 §2.5 Version); deleted with their item. */
export const softwareVersions = sqliteTable(
  'software_versions',
  {
    id: id(),
    catalogId: ref(() => softwareCatalog.id, { onDelete: 'cascade' }),
    version: text().notNull(),
    releaseDate: text().notNull(),
    releaseNotes: text(),
    downloadUrl: text().notNull(),
    checksum: text(),
    fileSize: integer(),
    supportedOs: json<OsType[]>().notNull(),
    architecture: text(),
    silentInstallArg: text(),
    silentUninstallArg: text(),
    isLatest: integer({ mode: 'boolean' }).notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('software_versions_catalog_version_uq').on(t.catalogId, t.version), index('software_versions_release_idx').on(t.catalogId, t.releaseDate)],
);

/** What a deployment sends its agents, fixed when it is made (the catalog item may change or go meanwhile). */
export interface DeploymentPackage {
  downloadUrl: string | null;
  sha256: string | null;
  silentInstallArg: string | null;
  silentUninstallArg: string | null;
  uninstallString: string | null;
}

/**
 * Software deployments (03 §2.5 Deployment, §3). softwareId is the catalog item (or, for an uninstall of software
 * the catalog does not know, the device_software row); it is not a reference: deployments are history and outlive
 * the item, whose name they keep.
 */
export const softwareDeployments = sqliteTable(
  'software_deployments',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    name: text().notNull(),
    softwareId: text().notNull(),
    softwareName: text().notNull(),
    softwareVersionId: text(),
    version: text(),
    deploymentType: text({ enum: DEPLOYMENT_ACTIONS }).notNull(),
    targetType: text().notNull().default('devices'),
    targetIds: json<string[]>().notNull(),
    scheduleType: text({ enum: ['immediate', 'scheduled'] }).notNull(),
    scheduledAt: text(),
    options: json<DeploymentPackage>().notNull(),
    status: text({ enum: DEPLOYMENT_STATUSES }).notNull(),
    requestedBy: text().notNull(),
    requestReason: text(),
    createdBy: text(),
    cancelReason: text(),
    completedAt: text(),
    ...timestamps(),
  },
  (t) => [index('software_deployments_org_created_idx').on(t.orgId, t.createdAt), index('software_deployments_software_idx').on(t.softwareId)],
);

/** One result per target device (03 §2.5 Deployment result); commandId is the agent command that carries it. */
export const softwareDeploymentResults = sqliteTable(
  'software_deployment_results',
  {
    id: id(),
    deploymentId: ref(() => softwareDeployments.id, { onDelete: 'cascade' }),
    deviceId: ref(() => devices.id),
    orgId: ref(() => organizations.id),
    commandId: text(),
    status: text({ enum: DEPLOYMENT_RESULT_STATUSES }).notNull().default('pending'),
    message: text(),
    startedAt: text(),
    completedAt: text(),
    exitCode: integer(),
    output: text(),
    errorMessage: text(),
    retryCount: integer().notNull().default(0),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('software_deployment_results_deployment_device_uq').on(t.deploymentId, t.deviceId),
    index('software_deployment_results_command_idx').on(t.commandId),
    index('software_deployment_results_device_idx').on(t.deviceId, t.status),
  ],
);

/** The software a device's agent reports (03 §2.5 Device software record): a report replaces the device's rows. */
export const deviceSoftware = sqliteTable(
  'device_software',
  {
    id: id(),
    deviceId: ref(() => devices.id),
    orgId: ref(() => organizations.id),
    catalogId: text().references(() => softwareCatalog.id, { onDelete: 'set null' }),
    name: text().notNull(),
    version: text(),
    vendor: text(),
    installDate: text(),
    installLocation: text(),
    uninstallString: text(),
    isManaged: integer({ mode: 'boolean' }).notNull().default(false),
    lastSeen: text().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('device_software_device_idx').on(t.deviceId), index('device_software_catalog_idx').on(t.catalogId)],
);
