import { z } from 'zod';
import { deleteById } from './builders.js';
import { IdParamsSchema as IdParams, NameSchema as Name, TimestampSchema, UuidSchema, timestampFields } from './common.js';
import { endpoint, type EndpointDef } from './endpoint.js';
import { FilterConditionsSchema, FilterPreviewDeviceSchema } from './filters.js';

const MemberParams = z.object({ id: UuidSchema, deviceId: UuidSchema });

export const DeviceGroupSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  siteId: UuidSchema.nullable(),
  name: z.string(),
  type: z.enum(['static', 'dynamic']),
  rules: z.record(z.string(), z.unknown()).nullable(),
  filterConditions: z.record(z.string(), z.unknown()).nullable(),
  filterFieldsUsed: z.array(z.string()),
  parentId: UuidSchema.nullable(),
  deviceCount: z.number().int(),
  ...timestampFields,
});
export type DeviceGroup = z.infer<typeof DeviceGroupSchema>;

export const GroupMemberSchema = z.object({
  deviceId: UuidSchema,
  hostname: z.string(),
  displayName: z.string().nullable(),
  status: z.string(),
  osType: z.string(),
  isPinned: z.boolean(),
  addedAt: TimestampSchema,
  addedBy: z.string().nullable(),
});

export const MembershipLogEntrySchema = z.object({
  id: UuidSchema,
  groupId: UuidSchema,
  deviceId: UuidSchema,
  hostname: z.string().nullable(),
  displayName: z.string().nullable(),
  action: z.enum(['added', 'removed']),
  reason: z.string(),
  createdAt: TimestampSchema,
});

const DeviceIds = z.array(UuidSchema).min(1).max(1000);
const READ = { permission: 'devices:read' } as const;
const WRITE = { permission: 'devices:write', mfa: true } as const;
const Data = z.object({ data: DeviceGroupSchema });
const clampedInt = (min: number, max: number, fallback: number) =>
  z.preprocess((v) => {
    const n = typeof v === 'string' || typeof v === 'number' ? Number.parseInt(String(v), 10) : NaN;
    return Number.isFinite(n) ? Math.min(max, Math.max(min, n)) : fallback;
  }, z.number().int());

/** Device groups (03 §4.7 paths, 05 wire notes "4.7"): static members, or a condition tree whose stored
 * membership follows the devices, with pins and a membership log. */
export const groups = {
  list: endpoint({
    method: 'GET',
    path: '/groups',
    query: z.object({
      orgId: UuidSchema.optional().describe('Only groups of this organization'),
      siteId: UuidSchema.optional().describe('Only groups of this site'),
      type: z.enum(['static', 'dynamic']).optional().describe('Only static or only dynamic groups'),
      parentId: UuidSchema.optional().describe('Only children of this group'),
      search: z.string().trim().max(255).optional().describe('Part of the name (case-insensitive)'),
    }),
    responses: { 200: z.object({ data: z.array(DeviceGroupSchema), total: z.number().int() }) },
    auth: READ,
    summary: 'List device groups, by name',
  }),
  create: endpoint({
    method: 'POST',
    path: '/groups',
    body: z.strictObject({
      orgId: UuidSchema.optional().describe('Organization (partners with several and system callers must give it)'),
      siteId: UuidSchema.nullable().optional().describe('Limit the group to one site'),
      name: Name.describe('Name (1-255 characters)'),
      type: z.enum(['static', 'dynamic']).optional().describe('static (default) or dynamic; conditions or a filter make it dynamic'),
      filterConditions: FilterConditionsSchema.nullable().optional().describe('The condition tree of a dynamic group'),
      filterId: UuidSchema.optional().describe('Take the conditions of this saved filter'),
      deviceIds: DeviceIds.optional().describe('First members of a static group'),
      parentId: UuidSchema.nullable().optional().describe('Parent group'),
    }),
    responses: { 201: Data },
    auth: WRITE,
    idempotent: true,
    summary: 'Create a device group',
  }),
  get: endpoint({ method: 'GET', path: '/groups/:id', params: IdParams, responses: { 200: Data }, auth: READ, summary: 'Get a device group' }),
  update: endpoint({
    method: 'PATCH',
    path: '/groups/:id',
    params: IdParams,
    body: z
      .strictObject({
        name: Name.optional(),
        siteId: UuidSchema.nullable().optional(),
        filterConditions: FilterConditionsSchema.optional().describe('New conditions (dynamic groups); membership is re-evaluated'),
        parentId: UuidSchema.nullable().optional(),
      })
      .refine((b) => Object.keys(b).length > 0, 'give at least one field to change'),
    responses: { 200: Data },
    auth: WRITE,
    summary: 'Change a device group',
  }),
  delete: deleteById('/groups/:id', Data, WRITE, 'Delete a device group (not one with child groups)'),
  members: endpoint({
    method: 'GET',
    path: '/groups/:id/devices',
    params: IdParams,
    responses: { 200: z.object({ data: z.array(GroupMemberSchema), total: z.number().int() }) },
    auth: READ,
    summary: 'List the members of a group',
  }),
  addMembers: endpoint({
    method: 'POST',
    path: '/groups/:id/devices',
    params: IdParams,
    body: z.strictObject({ deviceIds: DeviceIds }),
    responses: { 201: z.object({ data: z.object({ added: z.number().int(), skipped: z.number().int(), total: z.number().int() }) }) },
    auth: WRITE,
    summary: 'Add devices to a static group',
  }),
  removeMember: endpoint({
    method: 'DELETE',
    path: '/groups/:id/devices/:deviceId',
    params: MemberParams,
    responses: { 200: z.object({ data: z.object({ deviceId: UuidSchema, groupId: UuidSchema, removed: z.literal(true) }) }) },
    auth: WRITE,
    summary: 'Remove a device from a static group',
  }),
  preview: endpoint({
    method: 'POST',
    path: '/groups/:id/preview',
    params: IdParams,
    body: z.strictObject({ limit: z.number().int().min(1).max(100).optional() }).optional(),
    responses: { 200: z.object({ data: z.object({ totalCount: z.number().int(), devices: z.array(FilterPreviewDeviceSchema), evaluatedAt: TimestampSchema }) }) },
    auth: READ,
    summary: "Show the devices a dynamic group's conditions match now",
  }),
  pin: endpoint({
    method: 'POST',
    path: '/groups/:id/devices/:deviceId/pin',
    params: MemberParams,
    responses: { 201: z.object({ data: z.object({ groupId: UuidSchema, deviceId: UuidSchema, isPinned: z.literal(true), pinnedAt: TimestampSchema }) }) },
    auth: WRITE,
    summary: 'Pin a device into a dynamic group whatever its conditions say',
  }),
  unpin: endpoint({
    method: 'DELETE',
    path: '/groups/:id/devices/:deviceId/pin',
    params: MemberParams,
    responses: { 200: z.object({ data: z.object({ groupId: UuidSchema, deviceId: UuidSchema, isPinned: z.literal(false), unpinnedAt: TimestampSchema }) }) },
    auth: WRITE,
    summary: 'Unpin a device; it stays only while the conditions match',
  }),
  membershipLog: endpoint({
    method: 'GET',
    path: '/groups/:id/membership-log',
    params: IdParams,
    query: z.object({
      deviceId: UuidSchema.optional().describe('Only entries of this device'),
      action: z.enum(['added', 'removed']).optional().describe('Only additions or only removals'),
      limit: clampedInt(1, 500, 50).optional().default(50).describe('Entries, 1-500 (default 50)'),
      offset: clampedInt(0, 1_000_000, 0).optional().default(0).describe('Entries to skip'),
    }),
    responses: {
      200: z.object({ data: z.array(MembershipLogEntrySchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
    },
    auth: READ,
    summary: 'Membership changes of a group, newest first',
  }),
} as const;

/** `/device-groups` answers as `/groups` does (05 wire notes "4.7": alias). */
function aliased<T extends Record<string, EndpointDef>>(defs: T): T {
  return Object.fromEntries(Object.entries(defs).map(([k, d]) => [k, { ...d, path: d.path.replace(/^\/groups/, '/device-groups'), summary: `${d.summary} (alias of ${d.path})` }])) as T;
}
export const deviceGroups = aliased(groups);

export const TagSchema = z.object({ id: z.string(), name: z.string(), tag: z.string(), deviceCount: z.number().int() });

/** Device tags (05 wire notes "4.7"). */
export const tags = {
  list: endpoint({
    method: 'GET',
    path: '/tags',
    query: z.object({ search: z.string().trim().max(100).optional().describe('Part of the tag (case-insensitive)') }),
    responses: { 200: z.object({ data: z.array(TagSchema), total: z.number().int() }) },
    auth: READ,
    summary: 'List the tags in use, by device count',
  }),
  devices: endpoint({
    method: 'GET',
    path: '/tags/devices',
    query: z.object({ tag: z.string().trim().min(1).max(100).describe('The tag') }),
    responses: {
      200: z.object({
        data: z.array(z.object({ id: UuidSchema, hostname: z.string(), displayName: z.string().nullable(), status: z.string(), osType: z.string(), tags: z.array(z.string()) })),
        total: z.number().int(),
      }),
    },
    auth: READ,
    summary: 'List the devices with a tag',
  }),
} as const;
