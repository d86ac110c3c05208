import { z } from 'zod';
import { DateTimeSchema, IdParamsSchema, JsonObjectSchema, PageQuerySchema, TimestampSchema, pagedSchema, UuidSchema } from './common.js';
import { endpoint } from './endpoint.js';

// Agent diagnostic logs and device event logs (03 §2.7, §2.8, §4.4, §8; 05 wire notes "4.4 Logs").

/** 03 §8: at most 500 diagnostic log entries per request, at most 10 MB decompressed. */
export const LOG_BATCH_MAX = 500;
export const LOG_BODY_LIMIT = 10 * 1024 * 1024;
/** 05 wire notes: at most 5000 events per event log submission. */
export const EVENT_BATCH_MAX = 5000;

export const DIAGNOSTIC_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export const EVENT_LEVELS = ['info', 'warning', 'error', 'critical'] as const;
export const EVENT_CATEGORIES = ['security', 'hardware', 'application', 'system'] as const;

/** A JSON object whose serialized (UTF-8) form is at most `kb` KB, with the wire notes' message. */
const BoundedObject = (field: string, kb: number) =>
  JsonObjectSchema.refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= kb * 1024, {
    message: `${field} object too large (max ${kb}KB)`,
  });

/** 03 §2.7: one entry of the agent's diagnostic log, as the agent sends it. */
export const DiagnosticLogEntrySchema = z.object({
  timestamp: DateTimeSchema.describe('Agent time, ISO 8601 with an offset or Z'),
  level: z.enum(DIAGNOSTIC_LEVELS),
  component: z.string().min(1).max(100).describe('heartbeat, commands, patching, enrollment, discovery, …'),
  message: z.string().max(10_000),
  fields: BoundedObject('fields', 32).optional().describe('Structured fields, at most 32 KB serialized'),
  agentVersion: z.string().max(50).optional(),
});

export const DiagnosticLogBatchSchema = z.object({
  logs: z.array(DiagnosticLogEntrySchema).max(LOG_BATCH_MAX).describe(`At most ${LOG_BATCH_MAX} entries`),
});

/** What both logs' rows begin with: the row, its device and organization, and the time the agent gave. */
const deviceRowFields = { id: UuidSchema, deviceId: UuidSchema, orgId: UuidSchema, timestamp: TimestampSchema };

export const DiagnosticLogSchema = z.object({
  ...deviceRowFields,
  level: z.enum(DIAGNOSTIC_LEVELS),
  component: z.string(),
  message: z.string(),
  fields: JsonObjectSchema.nullable(),
  agentVersion: z.string().nullable(),
  createdAt: TimestampSchema,
});

/** A page size from a query string, clamped to 1..max; absent or unparseable: the default (01 §4 paging). */
const PageSize = (fallback: number, max: number) =>
  z.preprocess((value) => {
    const n = typeof value === 'string' || typeof value === 'number' ? Number.parseInt(String(value), 10) : NaN;
    return Number.isFinite(n) ? Math.min(max, Math.max(1, n)) : fallback;
  }, z.number().int());

/** An ISO 8601 date or date-time in a query (a date alone is midnight UTC); else 400 `Invalid <name> date`. */
const QueryDate = (name: string) =>
  z
    .string()
    .max(64)
    .refine((s) => /^\d{4}-\d{2}-\d{2}/.test(s) && !Number.isNaN(Date.parse(s)), { message: `Invalid ${name} date` });

export const DiagnosticLogQuerySchema = z.object({
  level: z.string().max(200).optional().describe('Levels, comma-separated (debug, info, warn, error); unknown ones are ignored'),
  component: z.string().max(100).optional().describe('Only this component (exact)'),
  since: QueryDate('since').optional().describe('Entries stamped at or after this time (ISO 8601)'),
  until: QueryDate('until').optional().describe('Entries stamped at or before this time (ISO 8601)'),
  search: z.string().max(500).optional().describe('Part of the message or fields (case-insensitive)'),
  page: PageQuerySchema.shape.page,
  limit: PageSize(1000, 1000).optional().default(1000).describe('Entries per page, 1-1000 (default 1000)'),
});

export const DiagnosticLogListSchema = z.object({
  logs: z.array(DiagnosticLogSchema),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});

/** 03 §2.8: one event of the device's OS event log, as the agent sends it. */
export const DeviceEventInputSchema = z.object({
  timestamp: DateTimeSchema.describe('When the event happened, ISO 8601 with an offset or Z'),
  level: z.enum(EVENT_LEVELS),
  category: z.enum(EVENT_CATEGORIES),
  source: z.string().min(1).max(255),
  eventId: z.string().min(1).max(100).optional().describe('The OS-specific event id; (source, eventId) is unique per device'),
  message: z.string().min(1).max(2000),
  details: BoundedObject('details', 64).optional().describe('Structured details, at most 64 KB serialized'),
});

export const DeviceEventBatchSchema = z.object({
  events: z.array(DeviceEventInputSchema).max(EVENT_BATCH_MAX).describe(`At most ${EVENT_BATCH_MAX} events`),
});

export const DeviceEventSchema = z.object({
  ...deviceRowFields,
  level: z.enum(EVENT_LEVELS),
  category: z.enum(EVENT_CATEGORIES),
  source: z.string(),
  eventId: z.string().nullable(),
  message: z.string(),
  details: JsonObjectSchema.nullable(),
  createdAt: TimestampSchema,
});

export const DeviceEventQuerySchema = z.object({
  category: z.enum(EVENT_CATEGORIES).optional().describe('Only events of this category'),
  level: z.enum(EVENT_LEVELS).optional().describe('Only events of this level'),
  source: z.string().max(255).optional().describe('Only events of this source (exact)'),
  startDate: QueryDate('startDate').optional().describe('Events stamped at or after this time (ISO 8601)'),
  endDate: QueryDate('endDate').optional().describe('Events stamped at or before this time (ISO 8601)'),
  page: PageQuerySchema.shape.page,
  limit: PageSize(50, 500).optional().default(50).describe('Events per page, 1-500 (default 50)'),
});

const Count = z.number().int();

export const deviceLogs = {
  ingest: endpoint({
    method: 'POST',
    path: '/agents/:id/logs',
    params: IdParamsSchema,
    body: DiagnosticLogBatchSchema,
    responses: {
      200: z.object({ received: Count }).describe('An empty batch'),
      201: z.object({ received: Count }).describe('Every entry stored'),
      207: z.object({ received: Count, total: Count, partial: z.literal(true) }).describe('Some groups of 100 failed'),
      500: z.object({ error: z.string(), code: z.string(), received: Count }).describe('No entry could be stored'),
    },
    auth: { agent: true },
    bodyLimit: LOG_BODY_LIMIT,
    summary:
      "Send the agent's diagnostic log entries (agent token; Content-Encoding gzip optional, 10 MB decompressed, " +
      `at most ${LOG_BATCH_MAX} entries); stored in groups of 100`,
  }),
  diagnosticLogs: endpoint({
    method: 'GET',
    path: '/devices/:id/diagnostic-logs',
    params: IdParamsSchema,
    query: DiagnosticLogQuerySchema,
    responses: { 200: DiagnosticLogListSchema },
    auth: { permission: 'devices:read' },
    summary: "A device's agent diagnostic log, newest first, filtered by level, component, time and text",
  }),
  submitEvents: endpoint({
    method: 'PUT',
    path: '/agents/:id/eventlogs',
    params: IdParamsSchema,
    body: DeviceEventBatchSchema,
    responses: {
      200: z.object({ success: z.literal(true), count: Count, filtered: Count }).describe('count: events stored (duplicates not counted)'),
      500: z
        .object({ success: z.literal(false), error: z.string(), code: z.string(), count: Count, filtered: Count, expectedCount: Count })
        .describe('Some groups of 100 could not be stored'),
    },
    auth: { agent: true },
    bodyLimit: LOG_BODY_LIMIT,
    summary: `Send the device's OS event log entries (agent token; at most ${EVENT_BATCH_MAX}); duplicates of (source, eventId) are ignored`,
  }),
  events: endpoint({
    method: 'GET',
    path: '/devices/:id/eventlogs',
    params: IdParamsSchema,
    query: DeviceEventQuerySchema,
    responses: { 200: pagedSchema(DeviceEventSchema) },
    auth: { permission: 'devices:read' },
    summary: "A device's OS event log as its agent reported it, newest first",
  }),
} as const;
