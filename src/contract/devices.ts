import { z } from 'zod';
import { JsonObjectSchema, PageQuerySchema, TimestampSchema, UuidSchema, pagedSchema } from './common.js';
import { endpoint } from './endpoint.js';

const IdParams = z.object({ id: UuidSchema });

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
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type Device = z.infer<typeof DeviceSchema>;

export const DeviceListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only devices of this organization'),
  siteId: UuidSchema.optional().describe('Only devices of this site'),
  status: DeviceStatusSchema.optional().describe('Only devices in this state'),
  osType: OsTypeSchema.optional().describe('Only devices with this operating system'),
  search: z.string().trim().max(255).optional().describe('Part of the hostname (case-insensitive)'),
});

export const DeviceDecommissionedSchema = z.object({
  success: z.literal(true),
  message: z.string(),
  device: DeviceSchema,
});

/** Devices enrolled by agents (01 §1), scoped like every other resource; site-restricted users see their sites. */
export const devices = {
  list: endpoint({
    method: 'GET',
    path: '/devices',
    query: DeviceListQuerySchema,
    responses: { 200: pagedSchema(DeviceSchema) },
    auth: { permission: 'devices:read' },
    summary: 'List devices, by hostname',
  }),
  get: endpoint({
    method: 'GET',
    path: '/devices/:id',
    params: IdParams,
    responses: { 200: DeviceSchema },
    auth: { permission: 'devices:read' },
    summary: 'Get a device',
  }),
  decommission: endpoint({
    method: 'DELETE',
    path: '/devices/:id',
    params: IdParams,
    responses: { 200: DeviceDecommissionedSchema },
    auth: { permission: 'devices:delete' },
    summary: "Decommission a device; its agent's token stops working at once",
  }),
} as const;
