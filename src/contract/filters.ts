import { z } from 'zod';
import { deleteById, getById } from './builders.js';
import { IdParamsSchema as IdParams, QueryBooleanSchema, TimestampSchema, UuidSchema, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';


/**
 * A condition tree (02 §4.5): a group `{operator: AND|OR, conditions}` whose conditions are conditions
 * `{field, operator, value?}` or nested groups. Only the outer shape is checked here; the filter compiler
 * checks fields, operators and values and answers 400 `Invalid filter` with the problems in `details`.
 */
export const FilterConditionsSchema = z
  .object({
    operator: z.enum(['AND', 'OR']).describe('How the conditions combine'),
    conditions: z.array(z.record(z.string(), z.unknown())).min(1).max(200).describe('Conditions {field, operator, value?} or nested groups'),
  })
  .describe('A condition group');

export const SavedFilterSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  description: z.string().nullable(),
  conditions: z.record(z.string(), z.unknown()),
  createdBy: UuidSchema.nullable(),
  ...timestampFields,
});
export type SavedFilter = z.infer<typeof SavedFilterSchema>;

export const FilterPreviewDeviceSchema = z.object({
  id: UuidSchema,
  hostname: z.string(),
  displayName: z.string().nullable(),
  osType: z.string(),
  status: z.string(),
  lastSeenAt: TimestampSchema.nullable(),
});

export const FilterPreviewSchema = z.object({
  data: z.union([
    z.object({ totalCount: z.number().int(), devices: z.array(FilterPreviewDeviceSchema), evaluatedAt: TimestampSchema }),
    z.object({ totalCount: z.number().int(), deviceIds: z.array(UuidSchema), evaluatedAt: TimestampSchema }),
  ]),
});

const Name = z.string().trim().min(1).max(200);
const Description = z.string().max(1000).nullable();
const PreviewLimit = z.coerce.number().int().min(1).max(100);

const READ = { permission: 'devices:read' } as const;
const WRITE = { permission: 'devices:write', mfa: true } as const;
const Data = z.object({ data: SavedFilterSchema });

/** Saved device filters and their previews (02 §2.9, §4.5; 05 wire notes "4.5"). */
export const filters = {
  list: endpoint({
    method: 'GET',
    path: '/filters',
    query: z.object({
      search: z.string().trim().max(200).optional().describe('Part of the name or description (case-insensitive)'),
      orgId: UuidSchema.optional().describe('Only filters of this organization'),
    }),
    responses: { 200: z.object({ data: z.array(SavedFilterSchema), total: z.number().int() }) },
    auth: READ,
    summary: 'List saved filters, newest first',
  }),
  create: endpoint({
    method: 'POST',
    path: '/filters',
    body: z.strictObject({
      orgId: UuidSchema.optional().describe('Organization (required for partner and system callers)'),
      name: Name.describe('Name (1-200 characters)'),
      description: Description.optional().describe('Description (at most 1000 characters)'),
      conditions: FilterConditionsSchema,
    }),
    responses: { 201: Data },
    auth: WRITE,
    idempotent: true,
    summary: 'Save a device filter',
  }),
  preview: endpoint({
    method: 'POST',
    path: '/filters/preview',
    query: z.object({ orgId: UuidSchema.optional().describe('Only devices of this organization') }),
    body: z.strictObject({
      conditions: FilterConditionsSchema,
      // A JSON body carries a number: no coercion here (the query form below coerces its text).
      limit: z.number().int().min(1).max(100).optional().describe('Devices shown, 1-100 (default 10)'),
      idsOnly: z.boolean().optional().describe('Answer every matching device id instead of the first devices'),
    }),
    responses: { 200: FilterPreviewSchema },
    auth: READ,
    summary: 'Count and show the devices a condition tree matches, across every accessible organization',
  }),
  get: getById('/filters/:id', Data, READ, 'Get a saved filter'),
  update: endpoint({
    method: 'PATCH',
    path: '/filters/:id',
    params: IdParams,
    body: z
      .strictObject({
        name: Name.optional(),
        description: Description.optional().describe('Description, or null to clear it'),
        conditions: FilterConditionsSchema.optional(),
      })
      .refine((b) => Object.keys(b).length > 0, 'give at least one of name, description, conditions'),
    responses: { 200: Data },
    auth: WRITE,
    summary: 'Change a saved filter',
  }),
  delete: deleteById('/filters/:id', Data, WRITE, 'Delete a saved filter; answers the deleted filter'),
  previewSaved: endpoint({
    method: 'POST',
    path: '/filters/:id/preview',
    params: IdParams,
    query: z.object({ limit: PreviewLimit.optional().describe('Devices shown, 1-100 (default 10)'), idsOnly: QueryBooleanSchema.optional() }),
    responses: { 200: FilterPreviewSchema },
    auth: READ,
    summary: 'Count and show the devices a saved filter matches',
  }),
} as const;
