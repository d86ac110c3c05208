import { z } from 'zod';
import { IdParamsSchema, JsonObjectSchema, SuccessSchema, TimestampSchema, UuidSchema } from './common.js';
import { DeviceCommandTypeSchema } from './device-commands.js';
import { endpoint } from './endpoint.js';

/** The agent's `:id`. */
const AgentParams = IdParamsSchema;

/** How long the agent's fetch may wait for a command to arrive (long poll), in seconds. */
export const MAX_COMMAND_WAIT_SECONDS = 30;
/** Output kept per stream of a result; the agent truncates, the server refuses more. */
export const MAX_OUTPUT_CHARS = 1_000_000;

export const AgentCommandQuerySchema = z.object({
  wait: z.coerce
    .number()
    .int()
    .min(0)
    .max(MAX_COMMAND_WAIT_SECONDS)
    .optional()
    .describe(`Seconds to wait for a command when none is pending (long poll), 0-${MAX_COMMAND_WAIT_SECONDS}; default 0`),
  limit: z.coerce.number().int().min(1).max(50).optional().describe('Most commands handed out at once, 1-50 (default 10)'),
});

/** A command as the agent receives it; a script run's secret variables are in `env` only here. */
export const AgentCommandSchema = z.object({
  id: UuidSchema,
  type: DeviceCommandTypeSchema,
  payload: JsonObjectSchema,
  env: z.record(z.string(), z.string()).describe('Environment variables to set for the command (SVC_VAR_<NAME>)'),
  createdAt: TimestampSchema,
});

export const AgentCommandsSchema = z.object({ commands: z.array(AgentCommandSchema) });

export const AgentCommandResultSchema = z.strictObject({
  status: z.enum(['completed', 'failed']).describe('completed: the command ran (any exit code); failed: it could not run'),
  exitCode: z.number().int().min(-2_147_483_648).max(4_294_967_295).optional().describe('Exit code of a script or program'),
  stdout: z.string().max(MAX_OUTPUT_CHARS).optional().describe('Standard output'),
  stderr: z.string().max(MAX_OUTPUT_CHARS).optional().describe('Standard error'),
  error: z.string().max(10_000).optional().describe('Why the command could not run'),
});

const CommandParams = AgentParams.extend({ commandId: UuidSchema });

/** The agent's side of device commands, with its bearer token (01 §5.13), independent of the heartbeat. */
export const agentCommands = {
  fetch: endpoint({
    method: 'GET',
    path: '/agents/:id/commands',
    params: AgentParams,
    query: AgentCommandQuerySchema,
    responses: { 200: AgentCommandsSchema },
    auth: { agent: true },
    summary: 'Hand the agent its pending commands, oldest first (each is marked sent); waits up to `wait` seconds for one',
  }),
  result: endpoint({
    method: 'POST',
    path: '/agents/:id/commands/:commandId/result',
    params: CommandParams,
    body: AgentCommandResultSchema,
    responses: { 200: SuccessSchema },
    auth: { agent: true },
    bodyLimit: 4 * 1024 * 1024,
    summary: "Report a command's result (exit code and output)",
  }),
} as const;
