import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { id, json, ref, timestamps } from './columns.js';
import { deviceCommands } from './commands.js';
import { devices } from './devices.js';
import { organizations } from './tenancy.js';

export const SCRIPT_LANGUAGES = ['powershell', 'bash', 'python', 'cmd'] as const;
export const SCRIPT_RUN_AS = ['system', 'user', 'elevated'] as const;
export const SCRIPT_EXECUTION_STATUSES = ['pending', 'running', 'completed', 'failed', 'timeout', 'cancelled'] as const;
export const CUSTOM_FIELD_TYPES = ['text', 'number', 'boolean'] as const;

export interface ScriptParameter {
  name: string;
  type: 'string' | 'number' | 'boolean';
  description?: string | undefined;
  required?: boolean | undefined;
  defaultValue?: string | number | boolean | undefined;
  /** A secret reaches the script only as the environment variable SVC_VAR_<NAME> (03 §4.6). */
  secret?: boolean | undefined;
  /** Take the value from this device custom field when none is given (03 §4.6). */
  customField?: string | undefined;
}

/** Scripts of an organization, and the read-only system library (orgId null, isSystem true). */
export const scripts = sqliteTable(
  'scripts',
  {
    id: id(),
    orgId: text().references(() => organizations.id),
    name: text().notNull(),
    description: text(),
    category: text(),
    osTypes: json<('windows' | 'macos' | 'linux')[]>().notNull(),
    language: text({ enum: SCRIPT_LANGUAGES }).notNull(),
    content: text().notNull(),
    parameters: json<ScriptParameter[]>().notNull().default([]),
    timeoutSeconds: integer().notNull().default(300),
    runAs: text({ enum: SCRIPT_RUN_AS }).notNull().default('system'),
    isSystem: integer({ mode: 'boolean' }).notNull().default(false),
    version: integer().notNull().default(1),
    exitCodeSeverityMapping: json<Record<string, string>>(),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [index('scripts_org_idx').on(t.orgId, t.updatedAt)],
);

/** One row per device of a script run (03 §4.7 `POST /scripts/:id/execute`); never holds a secret value. */
export const scriptExecutions = sqliteTable(
  'script_executions',
  {
    id: id(),
    batchId: text().notNull(),
    /** Null once the script is deleted: the run's history stays, under its name. */
    scriptId: text().references(() => scripts.id, { onDelete: 'set null' }),
    scriptName: text().notNull(),
    orgId: ref(() => organizations.id),
    deviceId: ref(() => devices.id),
    commandId: text().references(() => deviceCommands.id),
    status: text({ enum: SCRIPT_EXECUTION_STATUSES }).notNull().default('pending'),
    triggerType: text().notNull().default('manual'),
    runAs: text({ enum: SCRIPT_RUN_AS }).notNull(),
    /** The values given, secrets replaced by a marker. */
    parameters: json<Record<string, unknown>>().notNull().default({}),
    timeoutSeconds: integer().notNull(),
    exitCode: integer(),
    stdout: text(),
    stderr: text(),
    errorMessage: text(),
    severity: text(),
    customFieldsWritten: json<Record<string, unknown>>(),
    customFieldsRejected: json<string[]>(),
    createdBy: text(),
    startedAt: text(),
    completedAt: text(),
    ...timestamps(),
  },
  (t) => [
    index('script_executions_script_idx').on(t.scriptId, t.createdAt),
    index('script_executions_command_idx').on(t.commandId),
    index('script_executions_status_idx').on(t.status),
  ],
);

/** Device custom field definitions, minimal: what a script's output marker may write (03 §4.6). */
export const customFieldDefinitions = sqliteTable(
  'custom_field_definitions',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    key: text().notNull(),
    name: text().notNull(),
    type: text({ enum: CUSTOM_FIELD_TYPES }).notNull().default('text'),
    allowScriptWrite: integer({ mode: 'boolean' }).notNull().default(false),
    ...timestamps(),
  },
  (t) => [uniqueIndex('custom_field_definitions_org_key_unique').on(t.orgId, t.key)],
);
