import { DEVICE_COMMAND_STATUSES, DEVICE_COMMAND_TYPES, MODULE_COMMAND_TYPES } from '../../../contract/device-commands.js';
import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';
import { devices } from './devices.js';
import { organizations } from './tenancy.js';

const COMMAND_TYPES = [...DEVICE_COMMAND_TYPES, ...MODULE_COMMAND_TYPES] as const;
const COMMAND_STATUSES = DEVICE_COMMAND_STATUSES;

/**
 * Commands queued for a device's agent (03 §4.7 `POST /devices/:id/commands`, and script runs). The agent fetches
 * its pending commands (`sent` once fetched) and reports each result. Secret environment variables of a script
 * run are kept only sealed (AES-256-GCM) in `secretEnv` and opened only into the answer to the agent's fetch.
 */
export const deviceCommands = sqliteTable(
  'device_commands',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    deviceId: ref(() => devices.id),
    type: text({ enum: COMMAND_TYPES }).notNull(),
    payload: json<Record<string, unknown>>().notNull().default({}),
    /** SecretBox-sealed JSON object of environment variables (SVC_VAR_<NAME>); never returned to users. */
    secretEnv: text(),
    status: text({ enum: COMMAND_STATUSES }).notNull().default('pending'),
    exitCode: integer(),
    stdout: text(),
    stderr: text(),
    errorMessage: text(),
    createdBy: text(),
    sentAt: text(),
    completedAt: text(),
    ...timestamps(),
  },
  (t) => [index('device_commands_device_status_idx').on(t.deviceId, t.status, t.createdAt)],
);
