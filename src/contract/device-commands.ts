import { z } from 'zod';
import { IdParamsSchema as IdParams, JsonObjectSchema, PageQuerySchema, TimestampSchema, UuidSchema, pagedSchema } from './common.js';
import { endpoint } from './endpoint.js';


/** What `POST /devices/:id/commands` accepts (05 wire notes 4.7); `script` is named only to be refused with the
 * wire message: script runs go through `POST /scripts/:id/execute`. */
export const DEVICE_COMMAND_TYPES = [
  'reboot',
  'reboot_safe_mode',
  'shutdown',
  'update',
  'collect_evidence',
  'execute_containment',
  'wake',
  'refresh_inventory',
] as const;
/** What other modules queue through the same channel; never created by `POST /devices/:id/commands`. */
export const MODULE_COMMAND_TYPES = ['script', 'install_software', 'uninstall_software'] as const;
export const DeviceCommandTypeSchema = z.enum([...DEVICE_COMMAND_TYPES, ...MODULE_COMMAND_TYPES]);
export const DEVICE_COMMAND_STATUSES = ['pending', 'sent', 'completed', 'failed', 'cancelled', 'timeout'] as const;
export const DeviceCommandStatusSchema = z.enum(DEVICE_COMMAND_STATUSES);

export const DeviceCommandCreateSchema = z.strictObject({
  type: z.enum([...DEVICE_COMMAND_TYPES, 'script']).describe(`Command: ${DEVICE_COMMAND_TYPES.join(', ')}`),
  payload: JsonObjectSchema.optional().describe('Command-specific settings for the agent'),
});

export const DeviceCommandCreatedSchema = z.object({
  id: UuidSchema,
  deviceId: UuidSchema,
  type: DeviceCommandTypeSchema,
  status: DeviceCommandStatusSchema,
  createdAt: TimestampSchema,
});

/** A command as its device's history shows it (script output lives on the script execution). */
export const DeviceCommandSchema = DeviceCommandCreatedSchema.extend({
  orgId: UuidSchema,
  payload: JsonObjectSchema,
  exitCode: z.number().int().nullable(),
  errorMessage: z.string().nullable(),
  createdBy: z.string().nullable(),
  sentAt: TimestampSchema.nullable(),
  completedAt: TimestampSchema.nullable(),
  updatedAt: TimestampSchema,
});
export type DeviceCommand = z.infer<typeof DeviceCommandSchema>;

export const DeviceCommandListQuerySchema = PageQuerySchema.extend({
  status: DeviceCommandStatusSchema.optional().describe('Only commands in this state'),
});

/** 03 §4.7 device commands, queued for the device's agent (agent side: contract/agent-commands.ts). */
export const deviceCommands = {
  create: endpoint({
    method: 'POST',
    path: '/devices/:id/commands',
    params: IdParams,
    body: DeviceCommandCreateSchema,
    responses: { 201: DeviceCommandCreatedSchema },
    auth: { permission: 'devices:execute', mfa: true },
    idempotent: true,
    summary: "Queue a command for the device's agent",
  }),
  list: endpoint({
    method: 'GET',
    path: '/devices/:id/commands',
    params: IdParams,
    query: DeviceCommandListQuerySchema,
    responses: { 200: pagedSchema(DeviceCommandSchema) },
    auth: { permission: 'devices:read' },
    summary: "The device's commands, newest first",
  }),
} as const;
