import { z } from 'zod';
import { createOne, deleteById, getById, listPaged } from './builders.js';
import {
  IdParamsSchema as IdParams,
  JsonObjectSchema,
  NameSchema,
  PageQuerySchema,
  QueryBooleanSchema,
  SuccessSchema,
  TimestampSchema,
  UuidSchema,
  timestampFields,
} from './common.js';
import { endpoint } from './endpoint.js';


/** 05-wire-notes 2.4: the wire values of the six channel types of 02 §2.4 (chat_a slack, chat_b teams,
 * incident pagerduty). */
export const ChannelTypeSchema = z.enum(['email', 'slack', 'teams', 'webhook', 'pagerduty', 'sms']);
export type ChannelType = z.infer<typeof ChannelTypeSchema>;

/** 05-wire-notes 4.1: how a stored secret reads back. Sending it (or a string of only `*`) back keeps it. */
export const MaskedSecretSchema = z.object({ redacted: z.literal(true), hasSecret: z.boolean(), masked: z.string() });

export const ChannelSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  type: ChannelTypeSchema,
  config: JsonObjectSchema.describe('The channel configuration, secrets masked'),
  enabled: z.boolean(),
  lastTestedAt: TimestampSchema.nullable(),
  lastTestStatus: z.enum(['success', 'failed']).nullable(),
  throttleMaxPerWindow: z.number().int().nullable(),
  throttleWindowSeconds: z.number().int(),
  ...timestampFields,
});
export type Channel = z.infer<typeof ChannelSchema>;

const ThrottleMax = z.number().int().min(1).max(10_000).nullable();
const ThrottleWindow = z.number().int().min(60).max(86_400);

export const ChannelCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization (required for system callers and partners with several)'),
  name: NameSchema.describe('Name of the channel (1-255 characters)'),
  type: ChannelTypeSchema.describe('email, slack, teams, webhook, pagerduty or sms'),
  config: JsonObjectSchema.describe('Configuration of the type (02 §2.4), as a JSON object'),
  enabled: z.boolean().optional().default(true).describe('Whether alerts are sent to it (default true)'),
  throttleMaxPerWindow: ThrottleMax.optional().describe('At most this many sends per window, 1-10000 (null: unlimited)'),
  throttleWindowSeconds: ThrottleWindow.optional().describe('The throttle window in seconds, 60-86400 (default 3600)'),
});

export const ChannelUpdateSchema = z.strictObject({
  name: NameSchema.optional().describe('New name (1-255 characters)'),
  config: JsonObjectSchema.optional().describe('The whole new configuration; masked secrets sent back are kept'),
  enabled: z.boolean().optional().describe('Whether alerts are sent to it'),
  throttleMaxPerWindow: ThrottleMax.optional().describe('At most this many sends per window, 1-10000 (null: unlimited)'),
  throttleWindowSeconds: ThrottleWindow.optional().describe('The throttle window in seconds, 60-86400'),
});

export const ChannelListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only channels of this organization'),
  type: ChannelTypeSchema.optional().describe('Only channels of this type'),
  enabled: QueryBooleanSchema.optional().describe('true: only enabled channels; false: only disabled ones'),
});

/** 05-wire-notes 4.1: the answer of `POST /alerts/channels/:id/test`, 200 whether or not the send worked. */
export const ChannelTestResultSchema = z.object({
  channelId: UuidSchema,
  channelName: z.string(),
  channelType: ChannelTypeSchema,
  testMessage: z.object({
    title: z.string(),
    message: z.string(),
    severity: z.literal('info'),
    source: z.literal('manual_test'),
  }),
  testResult: z.object({ success: z.boolean(), message: z.string(), details: JsonObjectSchema.optional() }),
  testedAt: TimestampSchema,
  testedBy: UuidSchema.nullable(),
});

/** 02 §2.6 and 05-wire-notes: a step fires delayMinutes after the alert was triggered and sends to its channels. */
export const EscalationStepSchema = z.looseObject({
  delayMinutes: z.number().int().min(0).max(10_080).describe('Minutes after the alert was triggered, 0-10080'),
  channelIds: z.array(UuidSchema).max(50).describe('Channels of the organization to send to'),
});

export const EscalationPolicySchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  steps: z.array(JsonObjectSchema),
  ...timestampFields,
});

export const EscalationPolicyCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization (required for system callers and partners with several)'),
  name: NameSchema.describe('Name of the policy (1-255 characters)'),
  steps: z.array(EscalationStepSchema).max(20).describe('Steps as JSON: [{"delayMinutes":15,"channelIds":["…"]}]'),
});

export const EscalationPolicyUpdateSchema = z.strictObject({
  name: NameSchema.optional().describe('New name (1-255 characters)'),
  steps: z.array(EscalationStepSchema).max(20).optional().describe('The whole new list of steps, as JSON'),
});

export const EscalationPolicyListQuerySchema = PageQuerySchema.extend({
  orgId: UuidSchema.optional().describe('Only policies of this organization'),
});

const READ = { permission: 'alerts:read' } as const;
const WRITE = { permission: 'alerts:write', mfa: true } as const;

/** 05-wire-notes 4.1 "Channels `/alerts/channels`". */
export const alertChannels = {
  list: listPaged('/alerts/channels', ChannelListQuerySchema, ChannelSchema, READ,
    'List notification channels, most recently updated first (secrets masked)'),
  create: createOne('/alerts/channels', ChannelCreateSchema, ChannelSchema, WRITE, 'Create a notification channel'),
  get: getById('/alerts/channels/:id', ChannelSchema, READ, 'Get a notification channel (secrets masked)'),
  update: endpoint({
    method: 'PUT',
    path: '/alerts/channels/:id',
    params: IdParams,
    body: ChannelUpdateSchema,
    responses: { 200: ChannelSchema },
    auth: WRITE,
    summary: 'Change a notification channel (only the fields given)',
  }),
  delete: deleteById('/alerts/channels/:id', SuccessSchema, WRITE, 'Delete a notification channel'),
  test: endpoint({
    method: 'POST',
    path: '/alerts/channels/:id/test',
    params: IdParams,
    responses: { 200: ChannelTestResultSchema },
    auth: WRITE,
    summary: 'Send a test message through a channel; answers 200 with the outcome, success or not',
  }),
} as const;

/** 05-wire-notes 4.1 "Escalation `/alerts/policies`". */
export const alertPolicies = {
  list: listPaged('/alerts/policies', EscalationPolicyListQuerySchema, EscalationPolicySchema, {},
    'List escalation policies, most recently updated first'),
  create: createOne('/alerts/policies', EscalationPolicyCreateSchema, EscalationPolicySchema, WRITE,
    'Create an escalation policy'),
  get: getById('/alerts/policies/:id', EscalationPolicySchema, {}, 'Get an escalation policy'),
  update: endpoint({
    method: 'PUT',
    path: '/alerts/policies/:id',
    params: IdParams,
    body: EscalationPolicyUpdateSchema,
    responses: { 200: EscalationPolicySchema },
    auth: WRITE,
    summary: 'Change an escalation policy (only the fields given)',
  }),
  delete: deleteById('/alerts/policies/:id', SuccessSchema, WRITE, 'Delete an escalation policy'),
} as const;
