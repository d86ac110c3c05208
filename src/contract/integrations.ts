import { z } from 'zod';
import { JsonObjectSchema, UuidSchema, successWith } from './common.js';
import { endpoint } from './endpoint.js';

/** 02 §4.4 chat providers: chat_a, chat_b, chat_c by their wire values (05-wire-notes 4.4). */
export const CHAT_PROVIDERS = ['slack', 'teams', 'discord'] as const;
export type ChatProvider = (typeof CHAT_PROVIDERS)[number];
export const ChatProviderSchema = z.enum(CHAT_PROVIDERS);

/** 05-wire-notes 4.4: every body is any JSON object of at most 64 keys and 16384 bytes. */
export const INTEGRATION_BODY_MAX_BYTES = 16_384;
export const INTEGRATION_BODY_MAX_KEYS = 64;

/**
 * A free-form configuration body. Declared as any value so that the service answers the wire notes' own messages
 * (`Body must be a JSON object`, `payload exceeds 16384 bytes`) rather than a schema message; the fields it knows
 * are checked there (docs/api-notes.md "Integrations").
 */
const ConfigBody = (fields: string) =>
  z.unknown().describe(`A JSON object (at most ${INTEGRATION_BODY_MAX_KEYS} keys, ${INTEGRATION_BODY_MAX_BYTES} bytes): ${fields}`);

/** A stored configuration as read: secret values (webhook URLs, tokens, passwords, API keys) masked. */
export const IntegrationConfigSchema = JsonObjectSchema;

export const OrgQuerySchema = z.object({
  orgId: UuidSchema.optional().describe('Organization (partner and system callers; organization callers their own)'),
});

/** `{success, message}` of every `test` call: success false carries why in message (HTTP 200 either way). */
export const IntegrationTestResultSchema = z.object({ success: z.boolean(), message: z.string() });

const CommunicationSchema = z.object({ data: z.record(z.string(), IntegrationConfigSchema) });

const ChatSaveResultSchema = successWith({
  message: z.string().optional(),
  data: z.record(z.string(), IntegrationConfigSchema).optional(),
});

const SavedSchema = successWith({ data: IntegrationConfigSchema });
const TicketingSavedSchema = SavedSchema.extend({ message: z.string() });

const READ = { permission: 'organizations:read' } as const;
const WRITE = { permission: 'organizations:write', mfa: true } as const;

const CHAT_FIELDS = 'webhookUrl (HTTPS, secret), channel, username, notifyOn (string[]), test (true: also queue a test notification), orgId';

const chat = (provider: ChatProvider, label: string) =>
  endpoint({
    method: 'POST',
    path: `/integrations/${provider}`,
    query: OrgQuerySchema,
    body: ConfigBody(CHAT_FIELDS),
    responses: { 200: ChatSaveResultSchema },
    auth: WRITE,
    summary: `Save the ${label} settings (and with test:true queue a test notification to its webhook URL)`,
  });

/** 02 §4.4 (prefix /integrations; organization context required) and the legacy /integrations/psa routes of §2.8. */
export const integrations = {
  communication: endpoint({
    method: 'GET',
    path: '/integrations/communication',
    query: OrgQuerySchema,
    responses: { 200: CommunicationSchema },
    auth: READ,
    summary: 'The chat provider settings of an organization, by provider (404 when none is configured)',
  }),
  slack: chat('slack', 'Slack (chat_a)'),
  teams: chat('teams', 'Microsoft Teams (chat_b)'),
  discord: chat('discord', 'Discord (chat_c)'),
  getMonitoring: endpoint({
    method: 'GET',
    path: '/integrations/monitoring',
    query: OrgQuerySchema,
    responses: { 200: IntegrationConfigSchema },
    auth: READ,
    summary: 'The monitoring settings ({} when none)',
  }),
  putMonitoring: endpoint({
    method: 'PUT',
    path: '/integrations/monitoring',
    query: OrgQuerySchema,
    body: ConfigBody('endpoint (HTTPS URL), apiKey (secret), metricsEnabled, forwardEvents, orgId'),
    responses: { 200: SavedSchema },
    auth: WRITE,
    summary: 'Replace the monitoring settings',
  }),
  testMonitoring: endpoint({
    method: 'POST',
    path: '/integrations/monitoring/test',
    query: OrgQuerySchema,
    body: ConfigBody('fields that override the stored settings for this test only'),
    responses: { 200: IntegrationTestResultSchema },
    auth: WRITE,
    summary: 'POST a test event to the monitoring endpoint with its API key',
  }),
  getTicketing: endpoint({
    method: 'GET',
    path: '/integrations/ticketing',
    query: OrgQuerySchema,
    responses: { 200: IntegrationConfigSchema },
    auth: READ,
    summary: 'The ticketing settings ({} when none)',
  }),
  saveTicketing: endpoint({
    method: 'POST',
    path: '/integrations/ticketing',
    query: OrgQuerySchema,
    body: ConfigBody('provider, apiUrl (HTTPS URL), apiKey (secret), projectKey, autoCreate, orgId'),
    responses: { 200: TicketingSavedSchema },
    auth: WRITE,
    summary: 'Replace the ticketing settings',
  }),
  testTicketing: endpoint({
    method: 'POST',
    path: '/integrations/ticketing/test',
    query: OrgQuerySchema,
    body: ConfigBody('fields that override the stored settings for this test only'),
    responses: { 200: IntegrationTestResultSchema },
    auth: WRITE,
    summary: 'Call the ticketing API URL with the API key and report whether it was accepted',
  }),
  getPsa: endpoint({
    method: 'GET',
    path: '/integrations/psa',
    query: OrgQuerySchema,
    responses: { 200: SavedSchema },
    auth: READ,
    summary: 'Legacy PSA settings (use /psa connections); 404 when none',
  }),
  savePsa: endpoint({
    method: 'POST',
    path: '/integrations/psa',
    query: OrgQuerySchema,
    body: ConfigBody('provider (servicenow, jira, connectwise, autotask, freshservice, zendesk), baseUrl (HTTPS URL), credentials, orgId'),
    responses: { 200: SavedSchema },
    auth: WRITE,
    summary: 'Replace the legacy PSA settings (use /psa connections)',
  }),
  updatePsa: endpoint({
    method: 'PUT',
    path: '/integrations/psa',
    query: OrgQuerySchema,
    body: ConfigBody('the fields to change; the others are kept'),
    responses: { 200: SavedSchema },
    auth: WRITE,
    summary: 'Change fields of the legacy PSA settings (use /psa connections)',
  }),
  testPsa: endpoint({
    method: 'POST',
    path: '/integrations/psa/test',
    query: OrgQuerySchema,
    body: ConfigBody('fields that override the stored settings for this test only'),
    responses: { 200: IntegrationTestResultSchema },
    auth: WRITE,
    summary: 'Call the legacy PSA base URL with its credentials and report whether they were accepted',
  }),
} as const;
