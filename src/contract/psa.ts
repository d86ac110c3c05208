import { z } from 'zod';
import { createOne, deleteById, getById, listPaged, updateById } from './builders.js';
import { IdParamsSchema as IdParams, JsonObjectSchema, NameSchema, PageQuerySchema, SuccessSchema, TimestampSchema, UuidSchema, dataSchema, pagedSchema, successWith, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';

/** 02 §2.8 providers by wire value (05-wire-notes "2.8/4.4 PSA": psa_1 servicenow … psa_6 zendesk). */
export const PsaProviderSchema = z.enum(['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk']);
export type PsaProviderName = z.infer<typeof PsaProviderSchema>;

/** 02 §3 "custom status such as active, paused, error" (05-wire-notes: active|paused|error). */
export const PsaConnectionStatusSchema = z.enum(['active', 'paused', 'error']);
/** 02 §3 PSA sync. */
export const PsaSyncStatusSchema = z.enum(['queued', 'running', 'completed', 'failed']);
export const AlertSeveritySchema = z.enum(['critical', 'high', 'medium', 'low', 'info']);

/** 05-wire-notes: credentials and settings are at most 64 KB each (as JSON). */
export const PSA_OBJECT_MAX_BYTES = 65_536;

const boundedObject = (what: string) =>
  JsonObjectSchema.refine((value) => Buffer.byteLength(JSON.stringify(value)) <= PSA_OBJECT_MAX_BYTES, {
    message: `${what} exceeds ${PSA_OBJECT_MAX_BYTES} bytes`,
  });

/**
 * The settings keys the server reads (docs/api-notes.md "PSA"); any other key is kept as given. Tickets are opened
 * for an alert when autoCreateTickets is true, the connection is enabled and active, and the alert's severity is at
 * least minSeverity (default high). The placement keys say where a provider files the ticket.
 */
export const PsaSettingsSchema = z
  .object({
    autoCreateTickets: z.boolean().optional().describe('Open a ticket when an alert triggers (default false)'),
    minSeverity: AlertSeveritySchema.optional().describe('The least severity that opens a ticket (default high)'),
    projectKey: z.string().min(1).max(100).optional().describe('jira: the project key tickets are filed in'),
    issueType: z.string().min(1).max(100).optional().describe('jira: the issue type (default Task)'),
    boardId: z.number().int().positive().optional().describe('connectwise: the service board id'),
    companyIdentifier: z.string().min(1).max(100).optional().describe('connectwise: the company identifier of tickets'),
    companyId: z.number().int().optional().describe('autotask: the companyID of tickets'),
    queueId: z.number().int().optional().describe('autotask: the queueID of tickets'),
    requesterEmail: z.email().optional().describe('freshservice: the requester of tickets'),
  })
  .loose();

export const PsaConnectionSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  provider: PsaProviderSchema,
  name: z.string(),
  status: PsaConnectionStatusSchema,
  enabled: z.boolean(),
  settings: JsonObjectSchema,
  hasCredentials: z.boolean(),
  lastTestedAt: TimestampSchema.nullable(),
  /** The outcome of the last `test`: verified or failed. */
  testStatus: z.enum(['verified', 'failed']).nullable(),
  lastSyncedAt: TimestampSchema.nullable(),
  lastSyncStatus: PsaSyncStatusSchema.nullable(),
  lastSyncError: z.string().nullable(),
  createdBy: UuidSchema.nullable(),
  ...timestampFields,
});
export type PsaConnection = z.infer<typeof PsaConnectionSchema>;

export const PsaTicketSchema = z.object({
  id: UuidSchema,
  psaId: UuidSchema,
  title: z.string(),
  status: z.string(),
  syncedAt: TimestampSchema.nullable(),
  raw: z.object({
    externalTicketId: z.string(),
    externalTicketUrl: z.string().nullable(),
    alertId: z.string().nullable(),
    deviceId: z.string().nullable(),
  }),
});
export type PsaTicket = z.infer<typeof PsaTicketSchema>;

const Credentials = boundedObject('credentials').describe('Provider credentials (JSON object); write-only, stored encrypted');
const Settings = boundedObject('settings')
  .pipe(PsaSettingsSchema)
  .describe('Settings (JSON object): autoCreateTickets, minSeverity and the provider placement keys');

export const PsaConnectionCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization (required for partner callers with several and for system callers)'),
  provider: PsaProviderSchema.describe('servicenow, jira, connectwise, autotask, freshservice or zendesk'),
  name: NameSchema.describe('Name (1-255 characters)'),
  credentials: Credentials.optional(),
  settings: Settings.optional().default({}),
  enabled: z.boolean().optional().default(true).describe('Whether the connection opens tickets (default true)'),
});

export const PsaConnectionUpdateSchema = z.strictObject({
  name: NameSchema.optional(),
  credentials: Credentials.optional().describe('New credentials, replacing the stored ones as a whole'),
  settings: Settings.optional().describe('New settings, replacing the stored ones as a whole'),
  enabled: z.boolean().optional(),
});

export const PsaConnectionListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only connections of this organization'),
  provider: PsaProviderSchema.optional(),
});

export const PsaTicketListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only tickets of this organization (GET /psa/tickets)'),
  status: z.string().min(1).max(50).optional().describe("Only tickets in this provider status"),
});

export const PsaStatusBodySchema = z.strictObject({ status: PsaConnectionStatusSchema.describe('active, paused or error') });


const READ = { permission: 'organizations:read' } as const;
const WRITE = { permission: 'organizations:write', mfa: true } as const;

/** 02 §4.4 PSA routes, with the bodies and messages of 05-wire-notes "2.8/4.4 PSA". */
export const psa = {
  list: listPaged('/psa/connections', PsaConnectionListQuerySchema, PsaConnectionSchema, READ,
    'List PSA connections, most recently updated first'),
  create: createOne('/psa/connections', PsaConnectionCreateSchema, PsaConnectionSchema, WRITE,
    'Create a PSA connection; the credentials are stored encrypted and never returned'),
  get: getById('/psa/connections/:id', dataSchema(PsaConnectionSchema), READ, 'Get a PSA connection'),
  update: updateById('/psa/connections/:id', PsaConnectionUpdateSchema, PsaConnectionSchema, WRITE,
    'Change name, credentials (replaced as a whole), settings or enabled'),
  delete: deleteById('/psa/connections/:id', SuccessSchema, WRITE,
    'Delete a PSA connection with its credentials and ticket mappings (irrecoverably)'),
  test: endpoint({
    method: 'POST',
    path: '/psa/connections/:id/test',
    params: IdParams,
    responses: {
      200: z.object({ success: z.boolean(), message: z.string().optional(), error: z.string().optional() }),
    },
    auth: WRITE,
    summary: "Check the stored credentials with an authenticated call to the provider's API",
  }),
  sync: endpoint({
    method: 'POST',
    path: '/psa/connections/:id/sync',
    params: IdParams,
    responses: {
      202: z.object({ id: UuidSchema, provider: PsaProviderSchema, syncedAt: TimestampSchema, status: z.literal('queued') }),
    },
    auth: WRITE,
    summary: 'Queue a sync that pulls the state of every mapped ticket from the provider',
  }),
  status: endpoint({
    method: 'POST',
    path: '/psa/connections/:id/status',
    params: IdParams,
    body: PsaStatusBodySchema,
    responses: { 200: successWith({ status: PsaConnectionStatusSchema }) },
    auth: WRITE,
    summary: 'Set the status of a connection: active, paused (opens no tickets) or error',
  }),
  connectionTickets: endpoint({
    method: 'GET',
    path: '/psa/connections/:id/tickets',
    params: IdParams,
    query: PsaTicketListQuerySchema.omit({ orgId: true }),
    responses: { 200: pagedSchema(PsaTicketSchema) },
    auth: READ,
    summary: 'List the tickets of a connection, most recently updated first',
  }),
  tickets: listPaged('/psa/tickets', PsaTicketListQuerySchema, PsaTicketSchema, READ,
    'List the tickets of every connection the caller reaches, most recently updated first'),
} as const;
