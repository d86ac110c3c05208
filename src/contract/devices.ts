import { z } from 'zod';
import { deleteById, getById, updateById } from './builders.js';
import { IdParamsSchema as IdParams, JsonObjectSchema, NameSchema, PaginationSchema, QueryBooleanSchema, TimestampSchema, UuidSchema, successWith, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';


export const DEVICE_ROLES = ['workstation', 'server', 'printer', 'router', 'switch', 'firewall', 'access_point', 'phone', 'iot', 'camera', 'nas', 'unknown'] as const;

export const OsTypeSchema = z.enum(['windows', 'macos', 'linux']);
export const DeviceStatusSchema = z.enum(['online', 'offline', 'maintenance', 'decommissioned', 'quarantined', 'updating', 'pending']);
export type DeviceStatus = z.infer<typeof DeviceStatusSchema>;

/** The device fields of 04 wire notes "Enrollment keys and agents"; the agent token's hash is never listed. */
export const DeviceSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  siteId: UuidSchema.nullable(),
  agentId: z.string(),
  hostname: z.string(),
  displayName: z.string().nullable(),
  osType: OsTypeSchema,
  osVersion: z.string(),
  architecture: z.string(),
  agentVersion: z.string(),
  status: DeviceStatusSchema,
  tags: z.array(z.string()),
  customFields: JsonObjectSchema,
  lastSeenAt: TimestampSchema.nullable(),
  enrolledAt: TimestampSchema,
  lastUser: z.string().nullable(),
  osBuild: z.string().nullable(),
  uptimeSeconds: z.number().nullable(),
  isHeadless: z.boolean().nullable(),
  deviceRole: z.string(),
  ...timestampFields,
  cpuPercent: z.number().nullable(),
  ramPercent: z.number().nullable(),
  hardware: z.object({
    cpuModel: z.string().nullable(),
    cpuCores: z.number().nullable(),
    ramTotalMb: z.number().nullable(),
    diskTotalGb: z.number().nullable(),
  }),
  metrics: JsonObjectSchema.nullable(),
});
export type Device = z.infer<typeof DeviceSchema>;

/** A list of ids or words given comma-separated in one query parameter. */
const CommaList = <O extends string>(item: z.ZodType<O>) =>
  z
    .string()
    .max(20_000)
    .transform((s, ctx) => {
      const out: O[] = [];
      for (const part of s.split(',').map((x) => x.trim()).filter((x) => x !== '')) {
        const parsed = item.safeParse(part);
        if (parsed.success) out.push(parsed.data);
        else ctx.addIssue({ code: 'custom', message: `invalid value: ${part.slice(0, 60)}` });
      }
      return out;
    });

/** A positive integer from a query string, clamped to [min, max] (04 wire notes paging). */
const clamped = (min: number, max: number) =>
  z.preprocess((v) => {
    if (v === undefined) return undefined;
    const n = typeof v === 'string' || typeof v === 'number' ? Number.parseInt(String(v), 10) : NaN;
    return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : undefined;
  }, z.number().int().optional());

export const DeviceListQuerySchema = z.object({
  page: clamped(1, 1_000_000).describe('Page number: page mode {data, pagination:{page, limit, total}}; omitted: cursor mode'),
  limit: clamped(1, 1000).describe('Rows per page: page mode 1-100 (default 50), cursor mode 1-1000 (default 500)'),
  cursor: z.string().max(2000).optional().describe('Cursor mode: the nextCursor of the previous answer'),
  sort: z.enum(['hostname', 'lastSeen', 'enrolled']).optional().describe('Sort by hostname (default), lastSeen or enrolled'),
  sortDir: z.enum(['asc', 'desc']).optional().describe('Sort direction (default asc)'),
  orgId: UuidSchema.optional().describe('Only devices of this organization'),
  orgIds: CommaList(UuidSchema).optional().describe('Only devices of these organizations (comma-separated)'),
  siteId: UuidSchema.optional().describe('Only devices of this site'),
  siteIds: CommaList(UuidSchema).optional().describe('Only devices of these sites (comma-separated)'),
  groupIds: CommaList(UuidSchema).optional().describe('Only members of these device groups (comma-separated)'),
  status: CommaList(DeviceStatusSchema).optional().describe('Only devices in these states (comma-separated)'),
  includeDecommissioned: QueryBooleanSchema.optional().describe('Include decommissioned devices (default false)'),
  osType: OsTypeSchema.optional().describe('Only devices with this operating system'),
  role: z.enum(DEVICE_ROLES).optional().describe('Only devices of this role'),
  tag: z.string().trim().min(1).max(100).optional().describe('Only devices with this tag (case-insensitive)'),
  search: z.string().trim().max(255).optional().describe('Part of the hostname or display name (case-insensitive)'),
  filterId: UuidSchema.optional().describe('Only devices the saved filter matches'),
  filter: z.string().max(50_000).optional().describe('Only devices an inline condition tree (JSON) matches'),
});

export const DeviceListResponseSchema = z.union([
  z.object({ data: z.array(DeviceSchema), pagination: PaginationSchema }),
  z.object({
    data: z.array(DeviceSchema),
    pagination: z.object({ nextCursor: z.string().nullable(), limit: z.number().int() }),
    sort: z.object({ by: z.string(), dir: z.string() }),
  }),
]);

export const MetricSampleSchema = z.object({
  metric: z.string(),
  serviceName: z.string().nullable(),
  value: z.number().nullable(),
  textValue: z.string().nullable(),
  timestamp: TimestampSchema,
});

export const DeviceDetailSchema = DeviceSchema.extend({
  hardware: JsonObjectSchema.nullable(),
  networkInterfaces: z.array(JsonObjectSchema),
  recentMetrics: z.array(MetricSampleSchema),
  groups: z.array(z.object({ groupId: UuidSchema, groupName: z.string(), groupType: z.string(), addedAt: TimestampSchema, addedBy: z.string().nullable() })),
  siteName: z.string().nullable(),
  siteTimezone: z.string().nullable(),
  orgName: z.string().nullable(),
});

export const DeviceUpdateSchema = z
  .strictObject({
    displayName: NameSchema.optional(),
    tags: z.array(z.string().trim().min(1).max(100)).max(100).optional().describe('The whole tag list'),
    customFields: JsonObjectSchema.optional().describe('Custom field values (merged; null removes a key)'),
    deviceRole: z.enum(DEVICE_ROLES).optional(),
  })
  .refine((b) => Object.keys(b).length > 0, 'give at least one field to change');

export const DeviceDecommissionedSchema = successWith({
  message: z.string(),
  device: DeviceSchema,
});

/** Devices enrolled by agents (01 §1), scoped like every other resource; site-restricted users see their sites. */
export const devices = {
  list: endpoint({
    method: 'GET',
    path: '/devices',
    query: DeviceListQuerySchema,
    responses: { 200: DeviceListResponseSchema },
    auth: { permission: 'devices:read' },
    summary: 'List devices: with page, a counted page; without, cursor mode; filters, a saved filter or an inline one',
  }),
  get: getById('/devices/:id', DeviceDetailSchema, { permission: 'devices:read' },
    'Get a device with its hardware, interfaces, recent metrics and groups'),
  update: updateById('/devices/:id', DeviceUpdateSchema, z.object({ data: DeviceSchema }),
    { permission: 'devices:write', mfa: true }, 'Change a device: display name, tags, custom fields, role'),
  metrics: endpoint({
    method: 'GET',
    path: '/devices/:id/metrics',
    params: IdParams,
    query: z.object({
      metric: z.string().trim().min(1).max(100).optional().describe('Only this metric'),
      limit: clamped(1, 1000).describe('Samples, newest first, 1-1000 (default 288)'),
    }),
    responses: { 200: z.object({ data: z.array(MetricSampleSchema) }) },
    auth: { permission: 'devices:read' },
    summary: 'Recent metric samples the agent reported',
  }),
  decommission: deleteById('/devices/:id', DeviceDecommissionedSchema, { permission: 'devices:delete', mfa: true },
    "Decommission a device; its agent's token stops working at once"),
} as const;
