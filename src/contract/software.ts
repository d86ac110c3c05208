import { z } from 'zod';
import { DateTimeSchema, IdParamsSchema, PageQuerySchema, TimestampSchema, UuidSchema, dataSchema, pagedSchema, timestampFields } from './common.js';
import { OsTypeSchema } from './devices.js';
import { endpoint } from './endpoint.js';

// Software catalog, deployments and device software inventory (03 §2.5, §3, §4.3, §6, §7, §8; 05 wire notes
// "4.3 Software", older-build shapes, which carry the request names the spec uses).

export const SOFTWARE_CATEGORIES = ['browser', 'utility', 'compression', 'productivity', 'communication', 'developer', 'media', 'security'] as const;
export const LICENSE_TYPES = ['free', 'commercial', 'open-source'] as const;
export const DEPLOYMENT_ACTIONS = ['install', 'uninstall', 'update'] as const;
/** 03 §3: the statuses the bundled server moves a deployment through. */
export const DEPLOYMENT_STATUSES = ['pending', 'queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export const DEPLOYMENT_RESULT_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
/** At most this many devices per deployment (the bound every bulk device route of the API has, 03 §8 scans). */
export const DEPLOYMENT_DEVICES_MAX = 500;

const SoftwareCategorySchema = z.enum(SOFTWARE_CATEGORIES);
const HttpUrl = z.url({ protocol: /^https?$/ }).max(2048);
/** 03 §8 "version 100" (the older build said 50: the spec wins). */
const VersionString = z.string().trim().min(1).max(100);
/** A calendar date or an ISO 8601 date-time with an offset (a date alone is midnight UTC). */
const ReleaseDate = z.union([DateTimeSchema, z.iso.date()]);

export const CatalogItemSchema = z.object({
  id: UuidSchema,
  /** Who owns the item: both null for a platform-wide item, partnerId alone for a partner's, orgId for an organization's. */
  orgId: UuidSchema.nullable(),
  partnerId: UuidSchema.nullable(),
  name: z.string(),
  vendor: z.string(),
  category: SoftwareCategorySchema,
  description: z.string().nullable(),
  platforms: z.array(OsTypeSchema),
  latestVersion: z.string().nullable(),
  homepage: z.string().nullable(),
  licenseType: z.enum(LICENSE_TYPES).nullable(),
  tags: z.array(z.string()),
  deprecated: z.boolean(),
  ...timestampFields,
});
export type CatalogItem = z.infer<typeof CatalogItemSchema>;

const CatalogFields = {
  name: z.string().trim().min(1).max(200).describe('Name, 1-200 characters'),
  vendor: z.string().trim().min(1).max(200).describe('Vendor, 1-200 characters'),
  category: SoftwareCategorySchema.describe(`Category: ${SOFTWARE_CATEGORIES.join(', ')}`),
  description: z.string().trim().min(1).max(1000).describe('Description, 1-1000 characters'),
  platforms: z
    .array(OsTypeSchema)
    .min(1)
    .refine((l) => new Set(l).size === l.length, 'platforms must be unique')
    .describe('Platforms (windows, macos, linux), at least one'),
  latestVersion: VersionString.describe('Latest version (set automatically when a version is added), at most 100 characters'),
  homepage: HttpUrl.describe('Homepage, an http(s) URL'),
  licenseType: z.enum(LICENSE_TYPES).describe('free, commercial or open-source'),
  tags: z.array(z.string().trim().min(1).max(50)).max(50).describe('Tags, each at most 50 characters (at most 50 tags)'),
  deprecated: z.boolean().describe('Deprecated (default false)'),
};

export const CatalogCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe("Owning organization; without it a system caller's item is platform-wide, a partner caller's the partner's"),
  name: CatalogFields.name,
  vendor: CatalogFields.vendor,
  category: CatalogFields.category,
  description: CatalogFields.description.optional(),
  platforms: CatalogFields.platforms,
  latestVersion: CatalogFields.latestVersion.optional(),
  homepage: CatalogFields.homepage.optional(),
  licenseType: CatalogFields.licenseType.optional(),
  tags: CatalogFields.tags.optional(),
  deprecated: CatalogFields.deprecated.optional(),
});

export const CatalogUpdateSchema = z
  .strictObject({
    name: CatalogFields.name.optional(),
    vendor: CatalogFields.vendor.optional(),
    category: CatalogFields.category.optional(),
    description: CatalogFields.description.nullable().optional(),
    platforms: CatalogFields.platforms.optional(),
    latestVersion: CatalogFields.latestVersion.nullable().optional(),
    homepage: CatalogFields.homepage.nullable().optional(),
    licenseType: CatalogFields.licenseType.nullable().optional(),
    tags: CatalogFields.tags.optional(),
    deprecated: CatalogFields.deprecated.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'No updates provided');

export const CatalogListQuerySchema = PageQuerySchema.extend({
  search: z.string().max(200).optional().describe('Part of the name, vendor or description (case-insensitive)'),
  q: z.string().max(200).optional().describe('Same as search'),
  category: SoftwareCategorySchema.optional().describe('Only this category'),
  platform: OsTypeSchema.optional().describe('Only items for this platform'),
});

export const CatalogSearchQuerySchema = z.object({
  q: z.string().trim().min(1).max(200).describe('Part of the name, vendor, description or a tag (case-insensitive), required'),
  category: SoftwareCategorySchema.optional().describe('Only this category'),
});

export const CatalogVersionSchema = z.object({
  id: UuidSchema,
  softwareId: UuidSchema,
  version: z.string(),
  releaseDate: TimestampSchema,
  notes: z.string().nullable(),
  downloadUrl: z.string(),
  sha256: z.string().nullable(),
  sizeMB: z.number().nullable(),
  fileSize: z.number().int().nullable().describe('Bytes'),
  supportedPlatforms: z.array(OsTypeSchema),
  architecture: z.string().nullable(),
  silentInstallArg: z.string().nullable(),
  silentUninstallArg: z.string().nullable(),
  isLatest: z.boolean(),
  createdAt: TimestampSchema,
});

export const CatalogVersionCreateSchema = z.strictObject({
  version: VersionString.describe('Version, 1-100 characters'),
  releaseDate: ReleaseDate.describe('Release date (ISO 8601 date or date-time)'),
  notes: z.string().max(2000).optional().describe('Release notes, at most 2000 characters'),
  downloadUrl: HttpUrl.describe('Where the agent downloads the installer (http or https URL)'),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'sha256 must be 64 hexadecimal characters').optional().describe('SHA-256 of the installer, 64 hex'),
  sizeMB: z.number().min(0.1).max(2048).optional().describe('Installer size in MB, 0.1-2048'),
  supportedPlatforms: z.array(OsTypeSchema).min(1).describe('Platforms this build runs on, at least one'),
  architecture: z.string().trim().min(1).max(20).optional().describe('Architecture, at most 20 characters'),
  silentInstallArg: z.string().max(1000).optional().describe('Arguments for a silent install'),
  silentUninstallArg: z.string().max(1000).optional().describe('Arguments for a silent uninstall'),
});

export const DeploymentSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  softwareId: UuidSchema,
  softwareName: z.string(),
  action: z.enum(DEPLOYMENT_ACTIONS),
  status: z.enum(DEPLOYMENT_STATUSES),
  version: z.string().nullable(),
  deviceIds: z.array(UuidSchema),
  requestedBy: z.string(),
  requestReason: z.string().nullable(),
  requestedAt: TimestampSchema,
  scheduleType: z.enum(['immediate', 'scheduled']),
  scheduledAt: TimestampSchema.nullable(),
  completedAt: TimestampSchema.nullable(),
  cancelReason: z.string().nullable(),
});
export type Deployment = z.infer<typeof DeploymentSchema>;

const DeviceIds = z
  .array(UuidSchema)
  .min(1)
  .max(DEPLOYMENT_DEVICES_MAX)
  .describe(`Target devices (UUIDs), 1-${DEPLOYMENT_DEVICES_MAX}`);
const RequestedBy = z.string().trim().min(1).max(200).describe('Who asked for it, 1-200 characters');
const Reason = z.string().max(500).describe('Why, at most 500 characters');
const ScheduleAt = DateTimeSchema.describe('When to run it (ISO 8601); in the future the deployment waits as queued');

export const DeploymentCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization of the devices (required for system callers and partners of several)'),
  softwareId: UuidSchema.describe('Catalog item'),
  action: z.enum(DEPLOYMENT_ACTIONS).describe('install, uninstall or update'),
  deviceIds: DeviceIds,
  requestedBy: RequestedBy,
  version: VersionString.optional().describe("Version (default: the catalog item's latestVersion)"),
  reason: Reason.optional(),
  scheduleAt: ScheduleAt.optional(),
});

export const DeploymentListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only this organization'),
  status: z.enum(DEPLOYMENT_STATUSES).optional().describe('Only deployments in this state'),
  action: z.enum(DEPLOYMENT_ACTIONS).optional().describe('Only this action'),
  softwareId: UuidSchema.optional().describe('Only deployments of this software'),
  deviceId: UuidSchema.optional().describe('Only deployments targeting this device'),
  requestedBy: z.string().max(200).optional().describe('Only deployments requested by this name (exact)'),
});

export const DeploymentCancelSchema = z.strictObject({ reason: Reason.optional() });

export const DeploymentResultSchema = z.object({
  id: UuidSchema,
  deploymentId: UuidSchema,
  deviceId: UuidSchema,
  status: z.enum(DEPLOYMENT_RESULT_STATUSES),
  message: z.string().nullable(),
  startedAt: TimestampSchema.nullable(),
  completedAt: TimestampSchema.nullable(),
  exitCode: z.number().int().nullable(),
  output: z.string().nullable(),
  errorMessage: z.string().nullable(),
  retryCount: z.number().int(),
});

export const InventoryItemSchema = z.object({
  softwareId: UuidSchema.describe('The inventory row (what the uninstall route takes)'),
  catalogId: UuidSchema.nullable().describe('The catalog item of the same name, when one is visible to the device'),
  name: z.string(),
  version: z.string().nullable(),
  vendor: z.string().nullable(),
  installedAt: z.string().nullable(),
  installLocation: z.string().nullable(),
  source: z.enum(['managed', 'discovered']).describe('managed: installed by a deployment; discovered: reported by the agent'),
  lastSeen: TimestampSchema,
  pendingUninstall: z.boolean().optional(),
});

export const InventoryEntrySchema = z.object({
  deviceId: UuidSchema,
  deviceName: z.string(),
  os: z.string(),
  lastScannedAt: TimestampSchema.nullable(),
  items: z.array(InventoryItemSchema),
});

export type InventoryEntry = z.infer<typeof InventoryEntrySchema>;

export const InventoryQuerySchema = PageQuerySchema.extend({
  deviceId: UuidSchema.optional().describe('Only this device'),
  softwareId: UuidSchema.optional().describe('Only items of this catalog item (or this inventory row)'),
  search: z.string().max(200).optional().describe('Part of the software name or vendor (case-insensitive)'),
});

export const UninstallSchema = z.strictObject({
  requestedBy: RequestedBy,
  reason: Reason.optional(),
  scheduleAt: ScheduleAt.optional(),
});

const read = { permission: 'devices:read' } as const;
const write = { permission: 'devices:write', mfa: true } as const;
const execute = { permission: 'devices:execute', mfa: true } as const;
const DeviceParams = z.object({ deviceId: UuidSchema });

export const software = {
  createCatalogItem: endpoint({
    method: 'POST',
    path: '/software/catalog',
    body: CatalogCreateSchema,
    responses: { 201: dataSchema(CatalogItemSchema) },
    auth: write,
    idempotent: true,
    summary: 'Add a software catalog item',
  }),
  listCatalog: endpoint({
    method: 'GET',
    path: '/software/catalog',
    query: CatalogListQuerySchema,
    responses: { 200: pagedSchema(CatalogItemSchema) },
    auth: read,
    summary: 'The software catalog items the caller can see, by name',
  }),
  searchCatalog: endpoint({
    method: 'GET',
    path: '/software/catalog/search',
    query: CatalogSearchQuerySchema,
    responses: { 200: z.object({ data: z.array(CatalogItemSchema), total: z.number().int() }) },
    auth: read,
    summary: 'Search the software catalog (at most 100 matches; total counts all)',
  }),
  getCatalogItem: endpoint({
    method: 'GET',
    path: '/software/catalog/:id',
    params: IdParamsSchema,
    responses: { 200: dataSchema(CatalogItemSchema.extend({ versionCount: z.number().int() })) },
    auth: read,
    summary: 'One catalog item with its number of versions',
  }),
  updateCatalogItem: endpoint({
    method: 'PATCH',
    path: '/software/catalog/:id',
    params: IdParamsSchema,
    body: CatalogUpdateSchema,
    responses: { 200: dataSchema(CatalogItemSchema) },
    auth: write,
    summary: 'Change a catalog item (partial)',
  }),
  deleteCatalogItem: endpoint({
    method: 'DELETE',
    path: '/software/catalog/:id',
    params: IdParamsSchema,
    responses: { 200: z.object({ success: z.literal(true), id: UuidSchema }) },
    auth: write,
    summary: 'Delete a catalog item and its versions',
  }),
  listVersions: endpoint({
    method: 'GET',
    path: '/software/catalog/:id/versions',
    params: IdParamsSchema,
    responses: { 200: dataSchema(z.array(CatalogVersionSchema)) },
    auth: read,
    summary: "A catalog item's versions, newest release first",
  }),
  createVersion: endpoint({
    method: 'POST',
    path: '/software/catalog/:id/versions',
    params: IdParamsSchema,
    body: CatalogVersionCreateSchema,
    responses: { 201: dataSchema(CatalogVersionSchema) },
    auth: write,
    idempotent: true,
    summary: "Add a version; it becomes the item's latestVersion",
  }),
  createDeployment: endpoint({
    method: 'POST',
    path: '/software/deployments',
    body: DeploymentCreateSchema,
    responses: { 201: dataSchema(DeploymentSchema) },
    auth: execute,
    idempotent: true,
    summary: 'Install, update or uninstall software on devices, now or at scheduleAt',
  }),
  listDeployments: endpoint({
    method: 'GET',
    path: '/software/deployments',
    query: DeploymentListQuerySchema,
    responses: { 200: pagedSchema(DeploymentSchema) },
    auth: read,
    summary: 'Software deployments, newest first',
  }),
  getDeployment: endpoint({
    method: 'GET',
    path: '/software/deployments/:id',
    params: IdParamsSchema,
    responses: { 200: dataSchema(DeploymentSchema) },
    auth: read,
    summary: 'One software deployment',
  }),
  cancelDeployment: endpoint({
    method: 'POST',
    path: '/software/deployments/:id/cancel',
    params: IdParamsSchema,
    body: DeploymentCancelSchema,
    responses: { 200: dataSchema(DeploymentSchema) },
    auth: execute,
    summary: 'Cancel a deployment that is pending or queued',
  }),
  deploymentResults: endpoint({
    method: 'GET',
    path: '/software/deployments/:id/results',
    params: IdParamsSchema,
    responses: { 200: dataSchema(z.array(DeploymentResultSchema)) },
    auth: read,
    summary: 'One result per target device',
  }),
  inventory: endpoint({
    method: 'GET',
    path: '/software/inventory',
    query: InventoryQuerySchema,
    responses: { 200: z.object({ data: z.array(InventoryEntrySchema), total: z.number().int() }) },
    auth: read,
    summary: 'Installed software per device, as the agents report it (a page of devices; total counts devices)',
  }),
  deviceInventory: endpoint({
    method: 'GET',
    path: '/software/inventory/:deviceId',
    params: DeviceParams,
    responses: { 200: dataSchema(InventoryEntrySchema) },
    auth: read,
    summary: 'Installed software of one device',
  }),
  uninstall: endpoint({
    method: 'POST',
    path: '/software/inventory/:deviceId/:softwareId/uninstall',
    params: DeviceParams.extend({ softwareId: UuidSchema }),
    body: UninstallSchema,
    responses: { 202: dataSchema(DeploymentSchema) },
    auth: execute,
    summary: 'Uninstall one inventory item from its device (an uninstall deployment of one device)',
  }),
} as const;
