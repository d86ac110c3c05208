import { z } from 'zod';
import { createOne, deleteById, getById, listPaged } from './builders.js';
import { IdParamsSchema as IdParams, JsonObjectSchema, NameSchema, PageQuerySchema, QueryBooleanSchema, SuccessSchema, TimestampSchema, UuidSchema, pagedSchema, successWith, timestampFields } from './common.js';
import { OsTypeSchema } from './devices.js';
import { endpoint } from './endpoint.js';


export const ScriptLanguageSchema = z.enum(['powershell', 'bash', 'python', 'cmd']);
export const ScriptRunAsSchema = z.enum(['system', 'user', 'elevated']);
export const ScriptSeveritySchema = z.enum(['critical', 'high', 'medium', 'low', 'info']);
export const ScriptExecutionStatusSchema = z.enum(['pending', 'running', 'completed', 'failed', 'timeout', 'cancelled']);
export const ScriptTriggerSchema = z.enum(['manual', 'api', 'mobile', 'automation', 'scheduled']);

/** 03 §4.6: the line a script prints to write device custom fields. */
export const CUSTOM_FIELDS_MARKER = '::svc:custom-fields::';

const ParameterName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'letters, digits and _, not starting with a digit, at most 64');
const ParameterValue = z.union([z.string().max(10_000), z.number(), z.boolean()]);

export const ScriptParameterSchema = z
  .strictObject({
    name: ParameterName.describe('Referenced as {{var.<name>}}, or for a secret as the environment variable SVC_VAR_<NAME>'),
    type: z.enum(['string', 'number', 'boolean']).default('string'),
    description: z.string().max(500).optional(),
    required: z.boolean().optional(),
    defaultValue: ParameterValue.optional(),
    secret: z.boolean().optional().describe('Delivered only as the environment variable SVC_VAR_<NAME>, never stored'),
    customField: z.string().min(1).max(100).optional().describe("Take the value from this device custom field when none is given"),
  })
  .refine((p) => !(p.secret && p.defaultValue !== undefined), { message: 'a secret parameter cannot have a default value', path: ['defaultValue'] });

const Parameters = z
  .array(ScriptParameterSchema)
  .max(50)
  .refine((list) => new Set(list.map((p) => p.name.toUpperCase())).size === list.length, 'parameter names must be unique (ignoring case)');

const SeverityMapping = z.record(z.string().regex(/^-?\d{1,10}$/, 'exit codes are integers'), ScriptSeveritySchema);

export const ScriptSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema.nullable(),
  name: z.string(),
  description: z.string().nullable(),
  category: z.string().nullable(),
  osTypes: z.array(OsTypeSchema),
  language: ScriptLanguageSchema,
  content: z.string(),
  parameters: z.array(ScriptParameterSchema),
  timeoutSeconds: z.number().int(),
  runAs: ScriptRunAsSchema,
  isSystem: z.boolean(),
  version: z.number().int(),
  exitCodeSeverityMapping: z.record(z.string(), z.string()).nullable(),
  createdBy: z.string().nullable(),
  ...timestampFields,
});
export type Script = z.infer<typeof ScriptSchema>;

const Fields = {
  name: NameSchema.describe('Name, 1-255 characters'),
  description: z.string().max(5000).nullable().optional().describe('Description, at most 5000 characters'),
  category: z.string().trim().max(100).nullable().optional().describe('Category, at most 100 characters'),
  osTypes: z
    .array(OsTypeSchema)
    .min(1)
    .refine((l) => new Set(l).size === l.length, 'os types must be unique')
    .describe('Operating systems it runs on (windows, macos, linux), at least one'),
  language: ScriptLanguageSchema.describe('powershell, bash, python or cmd'),
  content: z.string().min(1).max(500_000).describe('The script text; {{var.<name>}} is replaced by a parameter value'),
  parameters: Parameters.optional().describe('Parameter definitions (JSON array)'),
  timeoutSeconds: z.number().int().min(1).max(3600).describe('Seconds a run may take, 1-3600 (default 300)'),
  runAs: ScriptRunAsSchema.describe('system, user or elevated (default system)'),
  exitCodeSeverityMapping: SeverityMapping.nullable().optional().describe('Exit code → alert severity (JSON object)'),
};

export const ScriptCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization (required for partner callers of several and for system callers)'),
  ...Fields,
  timeoutSeconds: Fields.timeoutSeconds.default(300),
  runAs: Fields.runAs.default('system'),
});

export const ScriptUpdateSchema = z
  .strictObject({
    name: Fields.name.optional(),
    description: Fields.description,
    category: Fields.category,
    osTypes: Fields.osTypes.optional(),
    language: Fields.language.optional(),
    content: Fields.content.optional(),
    parameters: Fields.parameters,
    timeoutSeconds: Fields.timeoutSeconds.optional(),
    runAs: Fields.runAs.optional(),
    exitCodeSeverityMapping: Fields.exitCodeSeverityMapping,
  })
  .refine((b) => Object.keys(b).length > 0, 'No updates provided');

export const ScriptListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only scripts of this organization'),
  category: z.string().max(100).optional().describe('Only this category'),
  osType: OsTypeSchema.optional().describe('Only scripts that run on this OS'),
  language: ScriptLanguageSchema.optional().describe('Only this language'),
  search: z.string().trim().max(255).optional().describe('Part of the name or description (case-insensitive)'),
  includeSystem: QueryBooleanSchema.optional().describe('Include the system library (default false)'),
});

export const ScriptImportSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization to copy the system script into'),
});

export const ScriptExecuteSchema = z.strictObject({
  deviceIds: z
    .array(UuidSchema)
    .min(1)
    .max(500)
    .refine((l) => new Set(l).size === l.length, 'device ids must be unique')
    .describe('Devices to run on, 1-500'),
  parameters: z.record(ParameterName, ParameterValue).optional().describe('Parameter values by name (JSON object)'),
  triggerType: ScriptTriggerSchema.optional().describe('What started the run (default manual)'),
  runAs: ScriptRunAsSchema.optional().describe("Override the script's runAs"),
});

export const ScriptExecuteResponseSchema = z.object({
  batchId: UuidSchema,
  scriptId: UuidSchema,
  devicesTargeted: z.number().int(),
  executions: z.array(z.object({ executionId: UuidSchema, deviceId: UuidSchema, commandId: UuidSchema })),
  failures: z.array(z.object({ deviceId: UuidSchema, error: z.string() })).optional(),
  status: z.enum(['queued', 'partial']),
});

export const ScriptExecutionSchema = z.object({
  id: UuidSchema,
  batchId: UuidSchema,
  scriptId: UuidSchema.nullable(),
  scriptName: z.string(),
  orgId: UuidSchema,
  deviceId: UuidSchema,
  commandId: UuidSchema.nullable(),
  status: ScriptExecutionStatusSchema,
  triggerType: z.string(),
  runAs: ScriptRunAsSchema,
  parameters: JsonObjectSchema,
  timeoutSeconds: z.number().int(),
  exitCode: z.number().int().nullable(),
  stdout: z.string().nullable(),
  stderr: z.string().nullable(),
  errorMessage: z.string().nullable(),
  severity: z.string().nullable(),
  customFieldsWritten: JsonObjectSchema.nullable(),
  customFieldsRejected: z.array(z.string()).nullable(),
  createdBy: z.string().nullable(),
  startedAt: TimestampSchema.nullable(),
  completedAt: TimestampSchema.nullable(),
  ...timestampFields,
});
export type ScriptExecution = z.infer<typeof ScriptExecutionSchema>;

export const ScriptExecutionListQuerySchema = PageQuerySchema.extend({
  status: ScriptExecutionStatusSchema.optional().describe('Only runs in this state'),
  deviceId: UuidSchema.optional().describe('Only runs on this device'),
  batchId: UuidSchema.optional().describe('Only runs of this batch'),
});

export const ScriptExecutionCancelledSchema = successWith({
  execution: z.object({ id: UuidSchema, status: ScriptExecutionStatusSchema, completedAt: TimestampSchema.nullable() }),
});

export const CustomFieldTypeSchema = z.enum(['text', 'number', 'boolean']);
export const CustomFieldSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  key: z.string(),
  name: z.string(),
  type: CustomFieldTypeSchema,
  allowScriptWrite: z.boolean(),
  ...timestampFields,
});
export const CustomFieldCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization (required for partner callers of several and for system callers)'),
  key: z.string().regex(/^[A-Za-z][A-Za-z0-9_.-]{0,99}$/, 'a letter, then letters, digits, _ . -, at most 100').describe('Key in the device customFields'),
  name: NameSchema.describe('Display name'),
  type: CustomFieldTypeSchema.default('text').describe('text, number or boolean (default text)'),
  allowScriptWrite: z.boolean().default(false).describe(`Scripts may write it with the ${CUSTOM_FIELDS_MARKER} output marker`),
});
export const CustomFieldListQuerySchema = z.object({ orgId: UuidSchema.optional().describe('Only definitions of this organization') });

const READ = { permission: 'scripts:read' } as const;
const WRITE = { permission: 'scripts:write', mfa: true } as const;
const EXECUTE = { permission: 'scripts:execute', mfa: true } as const;

/** 03 §4.6, §4.7 scripts (05 wire notes 4.7), and the minimal custom field definitions the output marker writes. */
export const scripts = {
  list: listPaged('/scripts', ScriptListQuerySchema, ScriptSchema, READ, 'List scripts, most recently updated first'),
  systemLibrary: endpoint({
    method: 'GET',
    path: '/scripts/system-library',
    responses: { 200: z.object({ data: z.array(ScriptSchema) }) },
    auth: READ,
    summary: 'The built-in scripts (read-only; import one to change it)',
  }),
  import: endpoint({
    method: 'POST',
    path: '/scripts/import/:id',
    params: IdParams,
    body: ScriptImportSchema,
    responses: { 201: ScriptSchema },
    auth: WRITE,
    idempotent: true,
    summary: "Copy a system script into an organization's scripts",
  }),
  create: createOne('/scripts', ScriptCreateSchema, ScriptSchema, WRITE, 'Create a script'),
  get: getById('/scripts/:id', ScriptSchema, READ, 'Get a script'),
  update: endpoint({
    method: 'PUT',
    path: '/scripts/:id',
    params: IdParams,
    body: ScriptUpdateSchema,
    responses: { 200: ScriptSchema },
    auth: WRITE,
    summary: 'Change a script (its version goes up by one)',
  }),
  delete: deleteById('/scripts/:id', SuccessSchema, { permission: 'scripts:delete', mfa: true },
    'Delete a script (its past runs stay listed under its name)'),
  execute: endpoint({
    method: 'POST',
    path: '/scripts/:id/execute',
    params: IdParams,
    body: ScriptExecuteSchema,
    responses: { 201: ScriptExecuteResponseSchema },
    auth: EXECUTE,
    idempotent: true,
    summary: 'Run a script on devices: one execution record and one agent command per device',
  }),
  executions: endpoint({
    method: 'GET',
    path: '/scripts/:id/executions',
    params: IdParams,
    query: ScriptExecutionListQuerySchema,
    responses: { 200: pagedSchema(ScriptExecutionSchema) },
    auth: READ,
    summary: "A script's runs, newest first",
  }),
  execution: getById('/scripts/executions/:id', ScriptExecutionSchema, READ, 'Get one run (status, exit code, output)'),
  cancel: endpoint({
    method: 'POST',
    path: '/scripts/executions/:id/cancel',
    params: IdParams,
    responses: { 200: ScriptExecutionCancelledSchema },
    auth: EXECUTE,
    summary: 'Cancel a run that is pending or running',
  }),
  listCustomFields: endpoint({
    method: 'GET',
    path: '/custom-fields',
    query: CustomFieldListQuerySchema,
    responses: { 200: z.object({ data: z.array(CustomFieldSchema) }) },
    auth: { permission: 'devices:read' },
    summary: 'Device custom field definitions, by key',
  }),
  createCustomField: createOne('/custom-fields', CustomFieldCreateSchema, CustomFieldSchema,
    { permission: 'devices:write', mfa: true }, 'Define a device custom field (and whether scripts may write it)'),
  deleteCustomField: deleteById('/custom-fields/:id', SuccessSchema, { permission: 'devices:write', mfa: true },
    'Delete a custom field definition (values already written stay on the devices)'),
} as const;
