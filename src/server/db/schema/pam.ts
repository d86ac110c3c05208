import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { ELEVATION_EVENT_TYPES } from '../../../contract/pam.js';
import type {
  ElevationActor,
  ElevationEventType,
  ElevationFlowType,
  ElevationStatus,
  EnforcementStatus,
  PamNegatable,
  PamVerdict,
  TimeWindow,
} from '../../../contract/pam.js';
import { createdAt, id, json, ref, timestamps, updatedAt } from './columns.js';
import { devices } from './devices.js';
import { users } from './identity.js';
import { organizations, sites } from './tenancy.js';

/** Privileged elevation (01 §2.11, §2.12, §4.9): rules, signer groups, defaults, requests and their trail. */

/** Reusable lists of trusted signers and signing-certificate thumbprints (04: "referenced but not shown"). */
export const pamSignerGroups = sqliteTable(
  'pam_signer_groups',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    name: text().notNull(),
    description: text(),
    signers: json<string[]>().notNull().default([]),
    /** SHA-256 hex, lower case. */
    thumbprints: json<string[]>().notNull().default([]),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [uniqueIndex('pam_signer_groups_org_name_unique').on(t.orgId, t.name)],
);

/** Elevation rules (01 §4.9 "Rule body"). */
export const pamRules = sqliteTable(
  'pam_rules',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    /** A site-scoped rule goes with its site: it never silently widens to the whole organization. */
    siteId: text().references(() => sites.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    verdict: text({ enum: ['auto_approve', 'auto_deny', 'require_approval', 'ignore'] })
      .$type<PamVerdict>()
      .notNull(),
    /** The verdict the v0.112.0 upgrade suspended (auto_approve) until a PATCH `{reapprove:true}`. */
    suspendedVerdict: text({ enum: ['auto_approve', 'auto_deny', 'require_approval', 'ignore'] }).$type<PamVerdict>(),
    priority: integer().notNull().default(100),
    enabled: integer({ mode: 'boolean' }).notNull().default(true),
    matchSigner: text(),
    /** A group in use cannot be deleted. */
    matchSignerGroupId: text().references(() => pamSignerGroups.id),
    matchSignerThumbprint: text(),
    matchHash: text(),
    matchPathGlob: text(),
    matchParentImage: text(),
    matchCommandLine: text(),
    matchUser: text(),
    matchAdGroup: text(),
    matchToolName: text(),
    matchRiskTier: integer(),
    matchNegate: json<PamNegatable[]>(),
    timeWindow: json<TimeWindow>(),
    approvalDurationMinutes: integer(),
    reapprovedAt: text(),
    reapprovedByUserId: text(),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [
    index('pam_rules_org_order_idx').on(t.orgId, t.priority, t.createdAt, t.id),
    index('pam_rules_signer_group_idx').on(t.matchSignerGroupId),
    index('pam_rules_site_idx').on(t.siteId),
  ],
);

/** An organization's elevation defaults; absent means require_approval and no default duration. */
export const pamOrgConfig = sqliteTable('pam_org_config', {
  orgId: text()
    .primaryKey()
    .references(() => organizations.id),
  defaultUnmatchedVerdict: text({ enum: ['require_approval', 'auto_deny'] })
    .notNull()
    .default('require_approval'),
  defaultApprovalDurationMinutes: integer(),
  updatedBy: text(),
  updatedAt: updatedAt(),
});

/** Elevation requests (01 §2.11, §3). */
export const elevationRequests = sqliteTable(
  'elevation_requests',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    deviceId: ref(() => devices.id),
    /** The device's site when the request was made. */
    siteId: text().references(() => sites.id, { onDelete: 'set null' }),
    flowType: text({ enum: ['uac_intercept', 'tech_jit_admin', 'ai_tool_action'] })
      .$type<ElevationFlowType>()
      .notNull(),
    status: text({ enum: ['pending', 'approved', 'auto_approved', 'denied', 'expired', 'revoked', 'actuating'] })
      .$type<ElevationStatus>()
      .notNull(),
    enforcementStatus: text({
      enum: ['pending_dispatch', 'dispatched', 'active', 'refused', 'cleanup_pending', 'cleaned_up'],
    }).$type<EnforcementStatus>(),
    subjectUsername: text(),
    subjectUserId: text(),
    subjectGroups: json<string[]>(),
    requesterUserId: text(),
    reason: text(),
    requestedDurationMinutes: integer(),
    targetExecutablePath: text(),
    targetExecutableHash: text(),
    targetExecutableSigner: text(),
    targetExecutableSignerThumbprint: text(),
    targetPublisher: text(),
    parentImage: text(),
    commandLine: text(),
    toolName: text(),
    riskTier: integer(),
    actionDigest: text(),
    executionId: text(),
    observedAt: text().notNull(),
    requestedAt: text().notNull(),
    matchedPolicyName: text(),
    /** The rule that decided (or queued) the request; kept as a plain id with its name, since rules are deleted. */
    pamRuleId: text(),
    pamRuleName: text(),
    decisionSource: text({ enum: ['software_policy', 'pam_rule', 'human'] }),
    decidedAssuranceLevel: text({ enum: ['policy', 'session', 'reauth', 'webauthn'] }),
    decidedVia: text({ enum: ['policy', 'api', 'system'] }),
    approvedAt: text(),
    approvedByUserId: text(),
    deniedAt: text(),
    deniedByUserId: text(),
    denialReason: text(),
    expiresAt: text(),
    revokedAt: text(),
    revokedByUserId: text(),
    revokedReason: text(),
    expiredAt: text(),
    /** +1 on every change of state. */
    revision: integer().notNull().default(1),
    ...timestamps(),
  },
  (t) => [
    index('elevation_requests_org_requested_idx').on(t.orgId, t.requestedAt, t.id),
    index('elevation_requests_status_expiry_idx').on(t.status, t.expiresAt),
    index('elevation_requests_device_idx').on(t.deviceId),
    index('elevation_requests_site_idx').on(t.siteId),
  ],
);

/** The elevation audit trail: one row per change of a request, written in the transaction of the change.
 * createdAt is the time the row was recorded, the export's clock; occurredAt the time of the event itself. */
export const elevationAuditEvents = sqliteTable(
  'elevation_audit_events',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    elevationRequestId: ref(() => elevationRequests.id),
    eventType: text({ enum: ELEVATION_EVENT_TYPES })
      .$type<ElevationEventType>()
      .notNull(),
    actor: text({ enum: ['end_user', 'technician', 'system', 'policy'] })
      .$type<ElevationActor>()
      .notNull(),
    actorUserId: text(),
    occurredAt: text().notNull(),
    createdAt: createdAt(),
    details: json<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [
    index('elevation_audit_events_export_idx').on(t.orgId, t.createdAt, t.id),
    index('elevation_audit_events_request_idx').on(t.elevationRequestId),
  ],
);

/** WebAuthn platform authenticators registered by approvers (01 §4.9 "registered platform approver devices"). */
export const pamApproverDevices = sqliteTable(
  'pam_approver_devices',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    /** base64url credential id. */
    credentialId: text().notNull(),
    /** base64url COSE public key. */
    publicKey: text().notNull(),
    counter: integer().notNull().default(0),
    transports: json<string[]>().notNull().default([]),
    createdAt: createdAt(),
    lastUsedAt: text(),
  },
  (t) => [
    uniqueIndex('pam_approver_devices_credential_unique').on(t.credentialId),
    index('pam_approver_devices_user_idx').on(t.userId),
  ],
);

/** Outstanding WebAuthn challenges: 120 s, single use, bound to the caller (and, for assertions, the request). */
export const pamWebauthnChallenges = sqliteTable(
  'pam_webauthn_challenges',
  {
    id: id(),
    purpose: text({ enum: ['registration', 'assertion'] }).notNull(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    elevationRequestId: text().references(() => elevationRequests.id, { onDelete: 'cascade' }),
    challenge: text().notNull(),
    expiresAt: text().notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex('pam_webauthn_challenges_challenge_unique').on(t.challenge),
    index('pam_webauthn_challenges_expiry_idx').on(t.expiresAt),
  ],
);
