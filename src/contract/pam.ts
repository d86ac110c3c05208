import { z } from 'zod';
import { createOne, deleteById, getById, updateById } from './builders.js';
import { DateTimeSchema, IdParamsSchema as IdParams, PageQuerySchema, PaginationSchema, SuccessSchema, TimestampSchema, UuidSchema, successWith, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';

/** Privileged elevation (01 §2.11, §2.12, §3, §4.9; 04 wire notes "PAM", "Audit export"). */


const Text = (max: number) => z.string().trim().min(1).max(max);
const Sha256Hex = z
  .string()
  .trim()
  .regex(/^[0-9a-fA-F]{64}$/, 'expected SHA-256 hex (64 characters)')
  .transform((v) => v.toLowerCase());

/** 01 §8: PAM reasons are at most 2000 characters. */
export const PAM_REASON_MAX = 2000;
/** 01 §8: the approval window is 1-1440 minutes, default 15. */
export const PAM_DURATION = { min: 1, max: 1440, default: 15 } as const;
/** 04 wire notes: an agent's elevation request body is at most 32 KB. */
export const ELEVATION_INGEST_BODY_LIMIT = 32 * 1024;

export const PamVerdictSchema = z.enum(['auto_approve', 'auto_deny', 'require_approval', 'ignore']);
export type PamVerdict = z.infer<typeof PamVerdictSchema>;

export const ElevationFlowTypeSchema = z.enum(['uac_intercept', 'tech_jit_admin', 'ai_tool_action']);
export type ElevationFlowType = z.infer<typeof ElevationFlowTypeSchema>;

export const ElevationStatusSchema = z.enum([
  'pending',
  'approved',
  'auto_approved',
  'denied',
  'expired',
  'revoked',
  'actuating',
]);
export type ElevationStatus = z.infer<typeof ElevationStatusSchema>;

/** Where the device stands in applying (or removing) a decision; actuation itself is not part of this API. */
export const EnforcementStatusSchema = z.enum([
  'pending_dispatch',
  'dispatched',
  'active',
  'refused',
  'cleanup_pending',
  'cleaned_up',
]);
export type EnforcementStatus = z.infer<typeof EnforcementStatusSchema>;

export const DecisionSourceSchema = z.enum(['software_policy', 'pam_rule', 'human']);

/** How strongly the decider was authenticated: a policy, a plain session tap, a re-entered password or TOTP
 * code (critical tier), or a WebAuthn assertion of a registered approver device. */
export const AssuranceLevelSchema = z.enum(['policy', 'session', 'reauth', 'webauthn']);
/** Through what the decision arrived: the rule engine, the respond endpoint, the expiry enforcer. */
export const DecidedViaSchema = z.enum(['policy', 'api', 'system']);

/** The kinds of elevation audit event; the database column takes the same list (schema/pam.ts). */
export const ELEVATION_EVENT_TYPES = [
  'requested',
  'auto_approved',
  'approved',
  'denied',
  'expired',
  'revoked',
  'session_started',
  'session_ended',
  'command_executed',
  'evidence_attached',
] as const;
export const ElevationEventTypeSchema = z.enum(ELEVATION_EVENT_TYPES);
export type ElevationEventType = z.infer<typeof ElevationEventTypeSchema>;
export const ElevationActorSchema = z.enum(['end_user', 'technician', 'system', 'policy']);
export type ElevationActor = z.infer<typeof ElevationActorSchema>;

// ---- Rules (01 §2.12, §4.9 "Rule body") ----

/** The criteria a rule's matchNegate may invert (01 §4.9). */
export const PamNegatableSchema = z.enum([
  'signer',
  'signerGroup',
  'hash',
  'pathGlob',
  'parentImage',
  'commandLine',
  'user',
  'adGroup',
  'toolName',
  'riskTier',
]);
export type PamNegatable = z.infer<typeof PamNegatableSchema>;

const HhMm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24-hour)');

export function isIanaTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const TimeWindowSchema = z.strictObject({
  start: HhMm.describe('Start, HH:MM 24-hour, inclusive'),
  end: HhMm.describe('End, HH:MM 24-hour, inclusive; before start wraps past midnight'),
  days: z
    .array(z.number().int().min(0).max(6))
    .min(1)
    .max(7)
    .refine((days) => new Set(days).size === days.length, 'days must not repeat')
    .optional()
    .describe('Weekdays, 0 = Sunday; for a window that wraps past midnight, the weekday the window starts on'),
  timezone: z
    .string()
    .min(1)
    .max(100)
    .refine(isIanaTimeZone, 'expected an IANA time zone name')
    .optional()
    .describe('IANA time zone (default UTC)'),
});
export type TimeWindow = z.infer<typeof TimeWindowSchema>;

/** Every criterion and setting of a rule, each nullable so PATCH can clear it. */
const RuleCriteriaFields = {
  siteId: UuidSchema.nullable().describe('A site of the organization; null is organization-wide'),
  matchSigner: Text(255)
    .nullable()
    .describe('Signer (certificate subject) of the executable; exclusive with matchSignerGroupId'),
  matchSignerGroupId: UuidSchema.nullable().describe('A signer group of the organization'),
  matchSignerThumbprint: Sha256Hex.nullable().describe(
    'SHA-256 hex of the signing certificate; combinable with matchSigner',
  ),
  matchHash: Sha256Hex.nullable().describe('SHA-256 hex of the executable'),
  matchPathGlob: Text(1024).nullable().describe('Whole-path glob: * within a folder, ** across folders, \\ = /'),
  matchParentImage: Text(1024).nullable().describe('Whole-path glob of the parent process image'),
  matchCommandLine: Text(2000).nullable().describe('Case-insensitive substring of the command line'),
  matchUser: Text(255).nullable().describe('The subject user name (case-insensitive)'),
  matchAdGroup: Text(255).nullable().describe('A directory group of the subject user (case-insensitive)'),
  matchToolName: Text(255).nullable().describe('AI tool name (tool-action rule)'),
  matchRiskTier: z.number().int().min(0).max(4).nullable().describe('AI tool risk tier, exact (tool-action rule)'),
  matchNegate: z
    .array(PamNegatableSchema)
    .max(10)
    .refine((keys) => new Set(keys).size === keys.length, 'keys must not repeat')
    .nullable()
    .describe('Criteria to invert; a negated criterion still never matches a request that lacks the data'),
  timeWindow: TimeWindowSchema.nullable().describe('When the rule applies, at the time the agent observed the request'),
  approvalDurationMinutes: z
    .number()
    .int()
    .min(PAM_DURATION.min)
    .max(PAM_DURATION.max)
    .nullable()
    .describe('Auto-approval lifetime; null uses the organization default, else 15'),
};

const RuleSettingFields = {
  name: Text(255),
  verdict: PamVerdictSchema,
  priority: z.number().int().min(0).max(100_000).describe('Lower runs first'),
  enabled: z.boolean(),
};

const OptionalCriteria = z.object(RuleCriteriaFields).partial().shape;

export const PamRuleCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Required for partner and system callers'),
  name: RuleSettingFields.name,
  verdict: RuleSettingFields.verdict.default('require_approval'),
  priority: RuleSettingFields.priority.default(100),
  enabled: RuleSettingFields.enabled.default(true),
  ...OptionalCriteria,
});
export type PamRuleCreate = z.infer<typeof PamRuleCreateSchema>;

export const PamRulePatchSchema = z.strictObject({
  name: RuleSettingFields.name.optional(),
  verdict: RuleSettingFields.verdict.optional(),
  priority: RuleSettingFields.priority.optional(),
  enabled: RuleSettingFields.enabled.optional(),
  reapprove: z.boolean().optional().describe('Restore the verdict suspended by the v0.112.0 upgrade'),
  ...OptionalCriteria,
});
export type PamRulePatch = z.infer<typeof PamRulePatchSchema>;

export const PamRulePreviewSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Required for partner and system callers'),
  verdict: PamVerdictSchema.optional(),
  windowDays: z.number().int().min(1).max(90).default(30).describe('How many days of requests to scan'),
  ...OptionalCriteria,
});
export type PamRulePreview = z.infer<typeof PamRulePreviewSchema>;

export const PamRuleSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  siteId: UuidSchema.nullable(),
  name: z.string(),
  verdict: PamVerdictSchema,
  suspendedVerdict: PamVerdictSchema.nullable(),
  priority: z.number().int(),
  enabled: z.boolean(),
  matchSigner: z.string().nullable(),
  matchSignerGroupId: UuidSchema.nullable(),
  matchSignerThumbprint: z.string().nullable(),
  matchHash: z.string().nullable(),
  matchPathGlob: z.string().nullable(),
  matchParentImage: z.string().nullable(),
  matchCommandLine: z.string().nullable(),
  matchUser: z.string().nullable(),
  matchAdGroup: z.string().nullable(),
  matchToolName: z.string().nullable(),
  matchRiskTier: z.number().int().nullable(),
  matchNegate: z.array(PamNegatableSchema).nullable(),
  timeWindow: TimeWindowSchema.nullable(),
  approvalDurationMinutes: z.number().int().nullable(),
  reapprovedAt: TimestampSchema.nullable(),
  reapprovedByUserId: UuidSchema.nullable(),
  createdBy: z.string().nullable(),
  ...timestampFields,
});
export type PamRule = z.infer<typeof PamRuleSchema>;

export const PamRuleListQuerySchema = z.object({
  orgId: UuidSchema.optional().describe('Only rules of this organization'),
  siteId: UuidSchema.optional().describe('Only rules of this site'),
});

// ---- Signer groups and organization configuration (04: "referenced but not shown") ----

const SignerList = z.array(Text(255)).max(500);
export const PamSignerGroupSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  description: z.string().nullable(),
  signers: z.array(z.string()),
  thumbprints: z.array(z.string()),
  createdBy: z.string().nullable(),
  ...timestampFields,
});
export const PamSignerGroupCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Required for partner and system callers'),
  name: Text(255),
  description: z.string().max(2000).nullable().optional(),
  signers: SignerList.default([]).describe('Signer names (case-insensitive)'),
  thumbprints: z.array(Sha256Hex).max(500).default([]).describe('SHA-256 hex of signing certificates'),
});
export const PamSignerGroupPatchSchema = z.strictObject({
  name: Text(255).optional(),
  description: z.string().max(2000).nullable().optional(),
  signers: SignerList.optional(),
  thumbprints: z.array(Sha256Hex).max(500).optional(),
});

export const PamConfigSchema = z.object({
  orgId: UuidSchema,
  defaultUnmatchedVerdict: z.enum(['require_approval', 'auto_deny']),
  defaultApprovalDurationMinutes: z.number().int().nullable(),
  updatedAt: TimestampSchema.nullable(),
});
export const PamConfigPutSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Required for partner and system callers'),
  defaultUnmatchedVerdict: z.enum(['require_approval', 'auto_deny']).describe('What happens when no rule matches'),
  defaultApprovalDurationMinutes: z
    .number()
    .int()
    .min(PAM_DURATION.min)
    .max(PAM_DURATION.max)
    .nullable()
    .optional()
    .describe('Auto-approval lifetime when the rule sets none (else 15)'),
});
const OrgQuery = z.object({ orgId: UuidSchema.optional().describe('Required for partner and system callers') });

// ---- Elevation requests (01 §2.11, §3) ----

export const ElevationRequestSchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  deviceId: UuidSchema,
  deviceHostname: z.string().nullable(),
  siteId: UuidSchema.nullable(),
  siteName: z.string().nullable(),
  flowType: ElevationFlowTypeSchema,
  status: ElevationStatusSchema,
  enforcementStatus: EnforcementStatusSchema.nullable(),
  subjectUsername: z.string().nullable(),
  subjectUserId: UuidSchema.nullable(),
  requesterUserId: UuidSchema.nullable(),
  reason: z.string().nullable(),
  targetExecutablePath: z.string().nullable(),
  targetExecutableHash: z.string().nullable(),
  targetExecutableSigner: z.string().nullable(),
  targetExecutableSignerThumbprint: z.string().nullable(),
  targetPublisher: z.string().nullable(),
  parentImage: z.string().nullable(),
  commandLine: z.string().nullable(),
  toolName: z.string().nullable(),
  riskTier: z.number().int().nullable(),
  actionDigest: z.string().nullable(),
  executionId: z.string().nullable(),
  observedAt: TimestampSchema,
  requestedAt: TimestampSchema,
  requestedDurationMinutes: z.number().int().nullable(),
  matchedPolicyName: z.string().nullable(),
  pamRuleId: UuidSchema.nullable(),
  pamRuleName: z.string().nullable(),
  decisionSource: DecisionSourceSchema.nullable(),
  decidedAssuranceLevel: AssuranceLevelSchema.nullable(),
  decidedVia: DecidedViaSchema.nullable(),
  approvedAt: TimestampSchema.nullable(),
  approvedByUserId: UuidSchema.nullable(),
  approvedByName: z.string().nullable(),
  deniedAt: TimestampSchema.nullable(),
  deniedByUserId: UuidSchema.nullable(),
  deniedByName: z.string().nullable(),
  denialReason: z.string().nullable(),
  expiresAt: TimestampSchema.nullable(),
  revokedAt: TimestampSchema.nullable(),
  revokedByUserId: UuidSchema.nullable(),
  revokedByName: z.string().nullable(),
  revokedReason: z.string().nullable(),
  revision: z.number().int(),
  updatedAt: TimestampSchema,
});
export type ElevationRequest = z.infer<typeof ElevationRequestSchema>;

export const ElevationListQuerySchema = PageQuerySchema.extend({
  status: ElevationStatusSchema.optional(),
  flowType: ElevationFlowTypeSchema.optional(),
  orgId: UuidSchema.optional().describe('Only requests of this organization'),
  deviceId: UuidSchema.optional(),
  siteId: UuidSchema.optional(),
  from: DateTimeSchema.optional().describe('Requested at or after (ISO 8601)'),
  to: DateTimeSchema.optional().describe('Requested before (ISO 8601)'),
});

export const ElevationActiveQuerySchema = z.object({
  orgId: UuidSchema.optional(),
  deviceId: UuidSchema.optional(),
});

/** 04 wire notes "Agent ingest": snake_case, as agents send it. */
export const ElevationIngestSchema = z
  .object({
    flow_type: z
      .enum(['uac_intercept', 'ai_tool_action'])
      .optional()
      .describe('Default: ai_tool_action when tool_name is given, else uac_intercept'),
    subject_username: Text(255),
    subject_groups: z.array(Text(255)).max(500).optional().describe("The subject user's directory groups"),
    target_executable_path: Text(1024).optional(),
    target_executable_hash: Sha256Hex.optional(),
    target_executable_signer: Text(255).optional(),
    target_executable_signer_thumbprint: Sha256Hex.optional(),
    target_publisher: Text(255).optional(),
    parent_image: Text(1024).optional(),
    command_line: z.string().max(8192).optional(),
    observed_at: DateTimeSchema.optional().describe('When the agent saw the request (default: receipt)'),
    reason: z.string().max(PAM_REASON_MAX).optional(),
    tool_name: Text(255).optional(),
    risk_tier: z.number().int().min(0).max(4).optional(),
    action_digest: Text(512).optional(),
    execution_id: Text(255).optional(),
  })
  .superRefine((body, ctx) => {
    const tool = body.flow_type === 'ai_tool_action' || (body.flow_type === undefined && body.tool_name !== undefined);
    if (tool) {
      for (const key of ['tool_name', 'risk_tier', 'action_digest'] as const) {
        if (body[key] === undefined)
          ctx.addIssue({ code: 'custom', path: [key], message: 'required for ai_tool_action' });
      }
    } else {
      if (body.target_executable_path === undefined)
        ctx.addIssue({ code: 'custom', path: ['target_executable_path'], message: 'required for uac_intercept' });
      for (const key of ['tool_name', 'risk_tier', 'action_digest'] as const) {
        if (body[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: 'only for ai_tool_action' });
      }
    }
  });
export type ElevationIngest = z.infer<typeof ElevationIngestSchema>;

export const ElevationIngestedSchema = z.object({
  id: UuidSchema,
  status: z.enum(['pending', 'auto_approved', 'denied']),
  expiresAt: TimestampSchema.nullable().optional(),
  reason: z.string().optional().describe('Why the request was denied'),
});
export const ElevationIgnoredSchema = z.object({ id: z.null(), status: z.literal('ignored') });

export const TechJitRequestSchema = z.strictObject({
  deviceId: UuidSchema,
  reason: Text(PAM_REASON_MAX).describe('Why administrator rights are needed'),
  durationMinutes: z
    .number()
    .int()
    .min(PAM_DURATION.min)
    .max(PAM_DURATION.max)
    .optional()
    .describe('Requested duration (the approver decides)'),
});

/** A WebAuthn assertion as @simplewebauthn/browser's startAuthentication() returns it. */
export const WebAuthnAssertionSchema = z.object({
  id: z.string().min(1).max(1024),
  rawId: z.string().min(1).max(1024),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: z.string().min(1).max(8192),
    authenticatorData: z.string().min(1).max(8192),
    signature: z.string().min(1).max(8192),
    userHandle: z.string().max(1024).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
});

/** A WebAuthn attestation as @simplewebauthn/browser's startRegistration() returns it. */
export const WebAuthnAttestationSchema = z.object({
  id: z.string().min(1).max(1024),
  rawId: z.string().min(1).max(1024),
  type: z.literal('public-key'),
  response: z.object({
    clientDataJSON: z.string().min(1).max(8192),
    attestationObject: z.string().min(1).max(32_768),
    transports: z.array(z.string().max(32)).max(10).optional(),
  }),
  clientExtensionResults: z.record(z.string(), z.unknown()).default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
});

export const ElevationRespondSchema = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  reason: z.string().max(PAM_REASON_MAX).optional(),
  durationMinutes: z.number().int().min(PAM_DURATION.min).max(PAM_DURATION.max).default(PAM_DURATION.default),
  proof: WebAuthnAssertionSchema.optional().describe(
    'WebAuthn assertion of a registered approver device; absent = plain session approval',
  ),
  reauthPassword: z.string().min(1).max(1024).optional().describe('Current password (critical-tier approvals)'),
  reauthMfaCode: z
    .string()
    .min(1)
    .max(32)
    .optional()
    .describe('TOTP code, for accounts without a password (critical-tier approvals)'),
});

export const ElevationDecisionSchema = successWith({
  id: UuidSchema,
  status: ElevationStatusSchema,
  enforcementStatus: EnforcementStatusSchema.nullable(),
  expiresAt: TimestampSchema.nullable().optional(),
  // What was decided and how, as a later GET shows it (respond only; revoke does not change them).
  decisionSource: DecisionSourceSchema.nullable().optional(),
  decidedAssuranceLevel: AssuranceLevelSchema.nullable().optional(),
  decidedVia: DecidedViaSchema.nullable().optional(),
  reason: z.string().optional(),
});

export const ElevationRevokeSchema = z.strictObject({ reason: Text(PAM_REASON_MAX) });

const WebAuthnOptionsSchema = z.record(z.string(), z.unknown());

// ---- Approver devices (WebAuthn platform authenticators; 01 §4.9 "assertion-challenge") ----

export const ApproverDeviceSchema = z.object({
  id: UuidSchema,
  name: z.string(),
  credentialId: z.string(),
  transports: z.array(z.string()),
  createdAt: TimestampSchema,
  lastUsedAt: TimestampSchema.nullable(),
});
export const ApproverDeviceRegisterSchema = z.strictObject({
  name: Text(100).describe('A name for the device'),
  response: WebAuthnAttestationSchema,
});

// ---- Audit export (01 §4.9 "Audit export", 04 "Audit export") ----

export const ELEVATION_EXPORT_MAX_WINDOW_DAYS = 366;

export const ElevationAuditExportQuerySchema = z
  .object({
    from: DateTimeSchema.describe('Window start, inclusive (ISO 8601 with offset), by the time the row was recorded'),
    to: DateTimeSchema.describe('Window end, exclusive (ISO 8601 with offset)'),
    orgId: UuidSchema.optional().describe('Required for partner and system callers'),
    format: z.enum(['csv', 'jsonl']).default('csv'),
    siteId: UuidSchema.optional(),
    deviceId: UuidSchema.optional(),
    elevationRequestId: UuidSchema.optional(),
    eventType: ElevationEventTypeSchema.optional(),
    limit: z.coerce.number().int().min(1).max(1000).default(1000),
    cursor: z.string().min(1).max(512).optional().describe('X-Next-Cursor of the previous page'),
  })
  .superRefine((q, ctx) => {
    const from = Date.parse(q.from);
    const to = Date.parse(q.to);
    if (!(from < to)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'from must be before to' });
    else if (to - from > ELEVATION_EXPORT_MAX_WINDOW_DAYS * 86_400_000)
      ctx.addIssue({
        code: 'custom',
        path: ['to'],
        message: `the window may span at most ${ELEVATION_EXPORT_MAX_WINDOW_DAYS} days`,
      });
  });
export type ElevationAuditExportQuery = z.infer<typeof ElevationAuditExportQuerySchema>;

/** 04 "Audit export": the columns, in order. */
export const ELEVATION_EXPORT_COLUMNS = [
  'id',
  'org_id',
  'elevation_request_id',
  'event_type',
  'actor',
  'actor_user_id',
  'occurred_at',
  'created_at',
  'details',
  'request_device_id',
  'request_site_id',
  'request_flow_type',
  'request_subject_user_id',
  'request_subject_username',
  'request_reason',
  'request_target_executable_path',
  'request_target_executable_hash',
  'request_target_executable_signer',
  'request_target_publisher',
  'request_status',
  'request_revision',
  'request_requested_at',
  'request_approved_at',
  'request_approved_by_user_id',
  'request_denied_by_user_id',
  'request_denial_reason',
  'request_expires_at',
  'request_revoked_at',
  'request_revoked_by_user_id',
  'request_revoked_reason',
  'request_execution_id',
  'request_tool_name',
  'request_action_digest',
  'request_risk_tier',
  'request_decided_assurance_level',
  'request_decided_via',
] as const;

export const ELEVATION_EXPORT_HEADERS = [
  'X-Next-Cursor',
  'X-Has-More',
  'X-Window-Complete',
  'X-Settled-Through',
  'X-Row-Count',
  'X-Export-Schema-Version',
] as const;

/** The answers that carry one rule, signer group or configuration, in PAM's `{ success: true, … }` envelope. */
const PamRuleAnswerSchema = successWith({ rule: PamRuleSchema });
const PamSignerGroupAnswerSchema = successWith({ signerGroup: PamSignerGroupSchema });
const PamConfigAnswerSchema = successWith({ config: PamConfigSchema });

export const pam = {
  listRules: endpoint({
    method: 'GET',
    path: '/pam/rules',
    query: PamRuleListQuerySchema,
    responses: { 200: successWith({ rules: z.array(PamRuleSchema) }) },
    auth: { permission: 'devices:read' },
    summary: 'List elevation rules, by priority then creation time',
  }),
  createRule: createOne('/pam/rules', PamRuleCreateSchema, PamRuleAnswerSchema,
    { permission: 'pam:manage_policy', mfa: true }, 'Create an elevation rule'),
  previewRule: endpoint({
    method: 'POST',
    path: '/pam/rules/preview',
    body: PamRulePreviewSchema,
    responses: {
      200: successWith({
        totalMatched: z.number().int(),
        totalScanned: z.number().int(),
        windowDays: z.number().int(),
        truncated: z.boolean(),
        statusBreakdown: z.record(z.string(), z.number().int()),
        sample: z.array(ElevationRequestSchema),
      }),
    },
    auth: { permission: 'pam:manage_policy' },
    summary: "Which recent requests a rule's criteria would have matched",
  }),
  getRule: getById('/pam/rules/:id', PamRuleAnswerSchema, { permission: 'devices:read' }, 'Get an elevation rule'),
  updateRule: updateById('/pam/rules/:id', PamRulePatchSchema, PamRuleAnswerSchema,
    { permission: 'pam:manage_policy', mfa: true },
    'Update an elevation rule (partial), or re-approve a suspended one'),
  deleteRule: deleteById('/pam/rules/:id', SuccessSchema, { permission: 'pam:manage_policy', mfa: true },
    'Delete an elevation rule'),

  listSignerGroups: endpoint({
    method: 'GET',
    path: '/pam/signer-groups',
    query: OrgQuery,
    responses: { 200: successWith({ signerGroups: z.array(PamSignerGroupSchema) }) },
    auth: { permission: 'devices:read' },
    summary: 'List signer groups, by name',
  }),
  createSignerGroup: createOne('/pam/signer-groups', PamSignerGroupCreateSchema, PamSignerGroupAnswerSchema,
    { permission: 'pam:manage_policy', mfa: true }, 'Create a reusable signer group'),
  getSignerGroup: getById('/pam/signer-groups/:id', PamSignerGroupAnswerSchema, { permission: 'devices:read' },
    'Get a signer group'),
  updateSignerGroup: updateById('/pam/signer-groups/:id', PamSignerGroupPatchSchema, PamSignerGroupAnswerSchema,
    { permission: 'pam:manage_policy', mfa: true }, 'Update a signer group (lists are replaced)'),
  deleteSignerGroup: deleteById('/pam/signer-groups/:id', SuccessSchema, { permission: 'pam:manage_policy', mfa: true },
    'Delete a signer group no rule uses'),

  getConfig: endpoint({
    method: 'GET',
    path: '/pam/config',
    query: OrgQuery,
    responses: { 200: PamConfigAnswerSchema },
    auth: { permission: 'devices:read' },
    summary: "The organization's elevation defaults",
  }),
  putConfig: endpoint({
    method: 'PUT',
    path: '/pam/config',
    body: PamConfigPutSchema,
    responses: { 200: PamConfigAnswerSchema },
    auth: { permission: 'pam:manage_policy', mfa: true },
    summary: "Set the organization's elevation defaults",
  }),

  ingest: endpoint({
    method: 'POST',
    path: '/agents/:agentId/elevation-requests',
    params: z.object({ agentId: UuidSchema }),
    body: ElevationIngestSchema,
    responses: { 200: ElevationIgnoredSchema, 201: ElevationIngestedSchema },
    auth: { agent: true },
    bodyLimit: ELEVATION_INGEST_BODY_LIMIT,
    summary: 'Agent: report an elevation request (UAC prompt or AI tool action); the rule engine decides or queues it',
  }),
  requestJit: endpoint({
    method: 'POST',
    path: '/pam/elevation-requests',
    body: TechJitRequestSchema,
    responses: { 201: successWith({ request: ElevationRequestSchema }) },
    auth: { permission: 'devices:execute', sessionOnly: true },
    summary: 'Ask for just-in-time administrator rights on a device (always waits for an approver)',
  }),
  listRequests: endpoint({
    method: 'GET',
    path: '/pam/elevation-requests',
    query: ElevationListQuerySchema,
    responses: {
      200: successWith({
        requests: z.array(ElevationRequestSchema),
        pagination: PaginationSchema,
      }),
    },
    auth: { permission: 'devices:read' },
    summary: 'List elevation requests, newest first',
  }),
  getRequest: getById('/pam/elevation-requests/:id', successWith({ request: ElevationRequestSchema }),
    { permission: 'devices:read' }, 'Get an elevation request'),
  listActive: endpoint({
    method: 'GET',
    path: '/pam/active',
    query: ElevationActiveQuerySchema,
    responses: { 200: successWith({ active: z.array(ElevationRequestSchema) }) },
    auth: { permission: 'devices:read' },
    summary: 'Elevations in force now (at most 500), soonest expiry first',
  }),
  assertionChallenge: endpoint({
    method: 'POST',
    path: '/pam/elevation-requests/:id/assertion-challenge',
    params: IdParams,
    responses: { 200: z.object({ options: WebAuthnOptionsSchema }) },
    auth: { permission: 'devices:execute', sessionOnly: true },
    summary:
      'A WebAuthn challenge (120 s, bound to the request and the caller) for approving with a platform approver device',
  }),
  respond: endpoint({
    method: 'POST',
    path: '/pam/elevation-requests/:id/respond',
    params: IdParams,
    body: ElevationRespondSchema,
    responses: { 200: ElevationDecisionSchema },
    auth: { permission: 'pam:approve', mfa: true, sessionOnly: true },
    summary: 'Approve or deny a pending elevation request',
  }),
  revoke: endpoint({
    method: 'POST',
    path: '/pam/elevation-requests/:id/revoke',
    params: IdParams,
    body: ElevationRevokeSchema,
    responses: { 200: ElevationDecisionSchema },
    auth: { permission: 'pam:approve', mfa: true, sessionOnly: true },
    summary: 'Revoke an elevation in force; the device is told to clean up',
  }),

  approverRegistrationOptions: endpoint({
    method: 'POST',
    path: '/pam/approver-devices/registration-options',
    responses: { 200: z.object({ options: WebAuthnOptionsSchema }) },
    auth: { permission: 'pam:approve', mfa: true, sessionOnly: true },
    summary: 'WebAuthn registration options (120 s) for a new platform approver device of the caller',
  }),
  registerApproverDevice: endpoint({
    method: 'POST',
    path: '/pam/approver-devices',
    body: ApproverDeviceRegisterSchema,
    responses: { 201: successWith({ device: ApproverDeviceSchema }) },
    auth: { permission: 'pam:approve', mfa: true, sessionOnly: true },
    summary: 'Register a platform approver device of the caller from its attestation',
  }),
  listApproverDevices: endpoint({
    method: 'GET',
    path: '/pam/approver-devices',
    responses: { 200: successWith({ devices: z.array(ApproverDeviceSchema) }) },
    auth: { sessionOnly: true },
    summary: "The caller's registered approver devices",
  }),
  deleteApproverDevice: deleteById('/pam/approver-devices/:id', SuccessSchema, { mfa: true, sessionOnly: true },
    'Remove one of the caller’s approver devices'),

  exportAudit: endpoint({
    method: 'GET',
    path: '/pam/elevation-audit/export',
    query: ElevationAuditExportQuerySchema,
    responses: {
      200: { raw: true, contentTypes: ['text/csv', 'application/x-ndjson'], headers: [...ELEVATION_EXPORT_HEADERS] },
    },
    auth: { permission: ['devices:read', 'audit:export'], mfa: true, sessionOnly: true },
    description:
      'Pages are keyset-paged by (recorded time, id); continue with X-Next-Cursor while X-Has-More is true; the window is complete only when X-Window-Complete is true.',
    summary: 'Export the elevation audit trail of one organization, one page at a time (CSV or JSON lines)',
  }),
} as const;
