import { and, desc, eq, gte, inArray, lt, lte, sql, asc, type SQL } from 'drizzle-orm';
import { alias } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import type {
  ElevationActiveQuerySchema,
  ElevationFlowType,
  ElevationIngest,
  ElevationListQuerySchema,
  ElevationRespondSchema,
  ElevationStatus,
  EnforcementStatus,
  PamRulePreview,
  TechJitRequestSchema,
} from '../../../contract/pam.js';
import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { devices, elevationRequests, pamSignerGroups, sites, users } from '../../db/schema/index.js';
import { systemContext, type RequestContext } from '../../context.js';
import {
  DomainError,
  badRequest,
  conflict,
  fieldError,
  forbidden,
  notFound,
  siteAccessDenied,
  tooManyRequests,
  unauthorized,
} from '../../errors.js';
import { publishEvent } from '../../jobs/queue.js';
import type { SecretBox } from '../../security/crypto.js';
import { verifyPassword } from '../../security/passwords.js';
import { SlidingWindowLimiter } from '../../security/sliding-window.js';
import { recordAudit } from '../audit/recorder.js';
import type { DevicesService } from '../devices/service.js';
import type { AuthService } from '../identity/auth-service.js';
import { TOTP_CODE_USED, checkTotp } from '../identity/totp-verifier.js';
import { canAccessOrg, requireSite } from '../tenancy/access.js';
import type { TenancyService } from '../tenancy/service.js';
import type { PamApproversService } from './approvers-service.js';
import { firstMatchingRule, ruleMatches, type EngineRequest } from './engine.js';
import { validateRuleShape } from './rule-validation.js';
import { criteriaOf, liveOrg, type PamRulesService } from './rules-service.js';
import { listOrgs, targetOrg } from './scope.js';
import type { ElevationTrail } from './trail.js';

export type ElevationRow = typeof elevationRequests.$inferSelect;
export type ElevationView = ElevationRow & {
  deviceHostname: string | null;
  siteName: string | null;
  approvedByName: string | null;
  deniedByName: string | null;
  revokedByName: string | null;
};

/** Statuses in which an elevation is in force (01 §3: the ones revoke applies to). */
export const ACTIVE_STATUSES = ['approved', 'auto_approved', 'actuating'] as const satisfies readonly ElevationStatus[];
/** 01 §3: an approval of an executable no file hash identifies is refused. */
export const REFUSAL_REASON = 'No file hash identifies a specific executable; the approval is refused';
/** Approvals of AI tool actions of this risk tier (the highest, 0-4) need a re-entered factor (01 §4.9). */
export const CRITICAL_RISK_TIER = 4;
/** 01 §4.9 /pam/active: at most 500. */
export const ACTIVE_LIMIT = 500;
/** Rule preview scans at most this many of the newest requests in its window (then `truncated`). */
export const PREVIEW_SCAN_LIMIT = 5000;
/** An agent clock this far ahead of the server is not believed (observed_at in the future → 400). */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;
const DEFAULT_APPROVAL_MINUTES = 15;

const MINUTE_MS = 60_000;
const addMinutes = (iso: string, minutes: number) => new Date(Date.parse(iso) + minutes * MINUTE_MS).toISOString();

const notPending = (status: string) =>
  conflict(`Request is not pending (current status: ${status})`, 'REQUEST_NOT_PENDING');
const notActive = (status: string) =>
  conflict(`Request is not active (current status: ${status})`, 'REQUEST_NOT_ACTIVE');

/** Whether approving this request is a critical-tier approval: an AI tool action of the top risk tier. A UAC
 * prompt or a technician's JIT request is never critical-tier (risk tiers belong to tool actions). */
export function isCriticalTier(row: Pick<ElevationRow, 'flowType' | 'riskTier'>): boolean {
  return row.flowType === 'ai_tool_action' && row.riskTier !== null && row.riskTier >= CRITICAL_RISK_TIER;
}

/** What a request offers the rule engine. */
export function engineRequestOf(row: ElevationRow): EngineRequest {
  return {
    flowType: row.flowType,
    subjectUsername: row.subjectUsername,
    subjectGroups: row.subjectGroups,
    targetExecutablePath: row.targetExecutablePath,
    targetExecutableHash: row.targetExecutableHash,
    targetExecutableSigner: row.targetExecutableSigner,
    targetExecutableSignerThumbprint: row.targetExecutableSignerThumbprint,
    parentImage: row.parentImage,
    commandLine: row.commandLine,
    toolName: row.toolName,
    riskTier: row.riskTier,
    observedAt: new Date(row.observedAt),
  };
}

/** The payload of the elevation.* bus events (01 §6). */
function eventPayload(row: ElevationRow, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    elevationRequestId: row.id,
    orgId: row.orgId,
    deviceId: row.deviceId,
    siteId: row.siteId,
    flowType: row.flowType,
    status: row.status,
    enforcementStatus: row.enforcementStatus,
    decisionSource: row.decisionSource,
    decidedAssuranceLevel: row.decidedAssuranceLevel,
    pamRuleId: row.pamRuleId,
    expiresAt: row.expiresAt,
    revision: row.revision,
    ...extra,
  };
}

function resourceNameOf(row: Pick<ElevationRow, 'toolName' | 'targetExecutablePath' | 'flowType'>): string {
  return row.toolName ?? row.targetExecutablePath ?? row.flowType;
}

/** A request with the names its list and get show (device, site, deciders). */
function toView(row: {
  request: ElevationRow;
  deviceHostname: string | null;
  siteName: string | null;
  approvedByName: string | null;
  deniedByName: string | null;
  revokedByName: string | null;
}): ElevationView {
  const { request, ...names } = row;
  return { ...request, ...names };
}

/**
 * Elevation requests (01 §2.11, §3, §4.9): agent ingest through the rule engine, technicians' JIT requests,
 * reads, respond (approve / deny, a compare-and-swap on pending), revoke, and the expiry enforcer. Every
 * change writes its trail events, its audit entry and its bus event in its own transaction.
 */
export class PamRequestsService {
  private readonly reauthLimiter = new SlidingWindowLimiter();

  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly box: SecretBox,
    private readonly rules: PamRulesService,
    private readonly trail: ElevationTrail,
    private readonly approvers: PamApproversService,
    private readonly auth: AuthService,
    private readonly tenancy: TenancyService,
    private readonly devices: DevicesService,
  ) {}

  // ---- reads ----

  private viewQuery() {
    const approver = alias(users, 'approver');
    const denier = alias(users, 'denier');
    const revoker = alias(users, 'revoker');
    return this.db
      .select({
        request: elevationRequests,
        deviceHostname: devices.hostname,
        siteName: sites.name,
        approvedByName: approver.name,
        deniedByName: denier.name,
        revokedByName: revoker.name,
      })
      .from(elevationRequests)
      .leftJoin(devices, eq(devices.id, elevationRequests.deviceId))
      .leftJoin(sites, eq(sites.id, elevationRequests.siteId))
      .leftJoin(approver, eq(approver.id, elevationRequests.approvedByUserId))
      .leftJoin(denier, eq(denier.id, elevationRequests.deniedByUserId))
      .leftJoin(revoker, eq(revoker.id, elevationRequests.revokedByUserId))
      .$dynamic();
  }

  /** The requests a caller sees: organizations in reach (or the one named), and their sites when restricted.
   * null when nothing is visible. */
  private visibility(ctx: RequestContext, orgId?: string): SQL | null {
    const { caller } = ctx;
    const orgIds = listOrgs(this.db, caller, orgId);
    if (orgIds !== null && orgIds.length === 0) return null;
    const parts: SQL[] = [];
    if (orgIds !== null) parts.push(inArray(elevationRequests.orgId, orgIds));
    if (caller.siteIds !== null) {
      if (caller.siteIds.length === 0) return null;
      parts.push(inArray(elevationRequests.siteId, caller.siteIds));
    }
    return and(...parts) ?? sql`1 = 1`;
  }

  list(ctx: RequestContext, query: z.infer<typeof ElevationListQuerySchema>) {
    const visible = this.visibility(ctx, query.orgId);
    const pagination = { page: query.page, limit: query.limit, total: 0 };
    if (visible === null) return { success: true as const, requests: [], pagination };
    if (query.siteId) requireSite(this.db, ctx.caller, query.siteId);
    const where = and(
      visible,
      query.status ? eq(elevationRequests.status, query.status) : undefined,
      query.flowType ? eq(elevationRequests.flowType, query.flowType) : undefined,
      query.deviceId ? eq(elevationRequests.deviceId, query.deviceId) : undefined,
      query.siteId ? eq(elevationRequests.siteId, query.siteId) : undefined,
      query.from ? gte(elevationRequests.requestedAt, new Date(query.from).toISOString()) : undefined,
      query.to ? lt(elevationRequests.requestedAt, new Date(query.to).toISOString()) : undefined,
    );
    const rows = this.viewQuery()
      .where(where)
      .orderBy(desc(elevationRequests.requestedAt), desc(elevationRequests.id))
      .limit(query.limit)
      .offset((query.page - 1) * query.limit)
      .all();
    const total =
      this.db
        .select({ n: sql<number>`count(*)` })
        .from(elevationRequests)
        .where(where)
        .get()?.n ?? 0;
    return { success: true as const, requests: rows.map(toView), pagination: { ...pagination, total } };
  }

  get(ctx: RequestContext, id: string): ElevationView {
    const visible = this.visibility(ctx);
    const row =
      visible === null
        ? undefined
        : this.viewQuery()
            .where(and(visible, eq(elevationRequests.id, id)))
            .get();
    if (!row) throw notFound('Elevation request not found');
    return toView(row);
  }

  private viewsOf(ids: string[]): ElevationView[] {
    if (ids.length === 0) return [];
    const rows = this.viewQuery().where(inArray(elevationRequests.id, ids)).all().map(toView);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)).filter((r): r is ElevationView => r !== undefined);
  }

  active(ctx: RequestContext, query: z.infer<typeof ElevationActiveQuerySchema>): ElevationView[] {
    const visible = this.visibility(ctx, query.orgId);
    if (visible === null) return [];
    return this.viewQuery()
      .where(
        and(
          visible,
          inArray(elevationRequests.status, [...ACTIVE_STATUSES]),
          sql`${elevationRequests.expiresAt} > ${new Date().toISOString()}`,
          query.deviceId ? eq(elevationRequests.deviceId, query.deviceId) : undefined,
        ),
      )
      .orderBy(asc(elevationRequests.expiresAt), asc(elevationRequests.id))
      .limit(ACTIVE_LIMIT)
      .all()
      .map(toView);
  }

  /** A request the caller may decide on: 404 out of the caller's organizations, 403 outside its sites. */
  private forDecision(ctx: RequestContext, id: string): ElevationRow {
    const row = this.db.select().from(elevationRequests).where(eq(elevationRequests.id, id)).get();
    if (!row || !canAccessOrg(this.db, ctx.caller, row.orgId)) throw notFound('Elevation request not found');
    const { siteIds } = ctx.caller;
    if (siteIds !== null && (row.siteId === null || !siteIds.includes(row.siteId))) throw siteAccessDenied();
    return row;
  }

  /** The request an assertion challenge is for: one the caller may decide on, still pending (409 else). */
  pendingForChallenge(ctx: RequestContext, id: string): ElevationRow {
    const row = this.forDecision(ctx, id);
    if (row.status !== 'pending') throw notPending(row.status);
    return row;
  }

  private currentStatus(id: string): string {
    return (
      this.db
        .select({ status: elevationRequests.status })
        .from(elevationRequests)
        .where(eq(elevationRequests.id, id))
        .get()?.status ?? 'unknown'
    );
  }

  // ---- agent ingest (04 wire notes "Agent ingest", "Rule engine") ----

  ingest(
    ctx: RequestContext,
    agentId: string,
    body: ElevationIngest,
  ):
    | {
        created: true;
        id: string;
        status: 'pending' | 'auto_approved' | 'denied';
        expiresAt: string | null;
        reason?: string;
      }
    | { created: false; id: null; status: 'ignored' } {
    const device = this.db
      .select({
        id: devices.id,
        orgId: devices.orgId,
        siteId: devices.siteId,
        status: devices.status,
        agentId: devices.agentId,
        hostname: devices.hostname,
      })
      .from(devices)
      .where(eq(devices.agentId, agentId))
      .get();
    if (!device || device.status === 'decommissioned' || ctx.caller.agentId !== agentId)
      throw notFound('Agent not found');
    const receivedAt = Date.now();
    const observedAt = body.observed_at ? new Date(body.observed_at) : new Date(receivedAt);
    if (observedAt.getTime() > receivedAt + MAX_CLOCK_SKEW_MS) throw fieldError('observed_at', 'is in the future');
    const flowType: ElevationFlowType =
      body.flow_type ?? (body.tool_name !== undefined ? 'ai_tool_action' : 'uac_intercept');
    const tool = flowType === 'ai_tool_action';
    const engineRequest: EngineRequest = {
      flowType,
      subjectUsername: body.subject_username,
      subjectGroups: body.subject_groups ?? null,
      targetExecutablePath: body.target_executable_path ?? null,
      targetExecutableHash: body.target_executable_hash ?? null,
      targetExecutableSigner: body.target_executable_signer ?? null,
      targetExecutableSignerThumbprint: body.target_executable_signer_thumbprint ?? null,
      parentImage: body.parent_image ?? null,
      commandLine: body.command_line ?? null,
      toolName: tool ? (body.tool_name ?? null) : null,
      riskTier: tool ? (body.risk_tier ?? null) : null,
      observedAt,
    };

    return this.trail.write((recordedAt, append) => {
      const { rules, groups, defaults } = this.rules.engineInputs(device.orgId, device.siteId);
      const rule = firstMatchingRule(rules, engineRequest, device.siteId, groups);
      const verdict = rule ? rule.verdict : defaults.defaultUnmatchedVerdict;
      if (verdict === 'ignore') return { created: false as const, id: null, status: 'ignored' as const };

      const refused =
        verdict === 'auto_approve' && flowType === 'uac_intercept' && engineRequest.targetExecutableHash === null;
      let decision: Partial<ElevationRow> & { status: 'pending' | 'auto_approved' | 'denied' };
      if (verdict === 'auto_approve' && !refused) {
        const minutes =
          rule?.approvalDurationMinutes ?? defaults.defaultApprovalDurationMinutes ?? DEFAULT_APPROVAL_MINUTES;
        decision = {
          status: 'auto_approved',
          enforcementStatus: 'pending_dispatch',
          decisionSource: 'pam_rule',
          decidedAssuranceLevel: 'policy',
          decidedVia: 'policy',
          approvedAt: recordedAt,
          expiresAt: addMinutes(recordedAt, minutes),
        };
      } else if (verdict === 'auto_approve' || verdict === 'auto_deny') {
        decision = {
          status: 'denied',
          enforcementStatus: refused ? 'refused' : null,
          decisionSource: 'pam_rule',
          decidedAssuranceLevel: 'policy',
          decidedVia: 'policy',
          deniedAt: recordedAt,
          denialReason: refused
            ? REFUSAL_REASON
            : rule
              ? `Denied by rule "${rule.name}"`
              : 'Denied by the organization default (no rule matched)',
        };
      } else {
        decision = { status: 'pending' };
      }

      const row = this.db
        .insert(elevationRequests)
        .values({
          orgId: device.orgId,
          deviceId: device.id,
          siteId: device.siteId,
          flowType,
          subjectUsername: body.subject_username,
          subjectGroups: body.subject_groups ?? null,
          reason: body.reason ?? null,
          targetExecutablePath: body.target_executable_path ?? null,
          targetExecutableHash: body.target_executable_hash ?? null,
          targetExecutableSigner: body.target_executable_signer ?? null,
          targetExecutableSignerThumbprint: body.target_executable_signer_thumbprint ?? null,
          targetPublisher: body.target_publisher ?? null,
          parentImage: body.parent_image ?? null,
          commandLine: body.command_line ?? null,
          toolName: engineRequest.toolName,
          riskTier: engineRequest.riskTier,
          actionDigest: tool ? (body.action_digest ?? null) : null,
          executionId: body.execution_id ?? null,
          observedAt: observedAt.toISOString(),
          requestedAt: recordedAt,
          pamRuleId: rule?.id ?? null,
          pamRuleName: rule?.name ?? null,
          createdAt: recordedAt,
          updatedAt: recordedAt,
          ...decision,
        })
        .returning()
        .get();

      const ruleRef = { pamRuleId: row.pamRuleId, pamRuleName: row.pamRuleName, verdict, matched: rule !== null };
      append({
        elevationRequestId: row.id,
        orgId: row.orgId,
        eventType: 'requested',
        actor: tool ? 'system' : 'end_user',
        occurredAt: row.observedAt,
        details: {
          agentId,
          flowType,
          subjectUsername: row.subjectUsername,
          ...(tool
            ? { toolName: row.toolName, riskTier: row.riskTier }
            : { targetExecutablePath: row.targetExecutablePath }),
        },
      });
      if (row.status === 'auto_approved') {
        append({
          elevationRequestId: row.id,
          orgId: row.orgId,
          eventType: 'auto_approved',
          actor: 'policy',
          details: { ...ruleRef, expiresAt: row.expiresAt },
        });
        publishEvent(this.db, 'elevation.approved', eventPayload(row, { approvedByUserId: null }), row.orgId);
      } else if (row.status === 'denied') {
        append({
          elevationRequestId: row.id,
          orgId: row.orgId,
          eventType: 'denied',
          actor: 'policy',
          details: {
            ...ruleRef,
            reason: row.denialReason,
            ...(refused ? { refused: true, enforcementStatus: 'refused' } : {}),
          },
        });
        publishEvent(
          this.db,
          'elevation.denied',
          eventPayload(row, { reason: row.denialReason, deniedByUserId: null }),
          row.orgId,
        );
      }
      recordAudit(this.db, ctx, {
        action: 'pam.elevation_request.create',
        resourceType: 'elevation_request',
        resourceId: row.id,
        resourceName: resourceNameOf(row),
        orgId: row.orgId,
        result: row.status === 'denied' ? 'denied' : 'success',
        errorMessage: row.status === 'denied' ? row.denialReason : null,
        details: { flowType, deviceId: row.deviceId, status: row.status, ...ruleRef },
      });
      return {
        created: true as const,
        id: row.id,
        status: decision.status,
        expiresAt: row.expiresAt,
        ...(row.status === 'denied' && row.denialReason ? { reason: row.denialReason } : {}),
      };
    });
  }

  // ---- technicians' just-in-time requests ----

  /** A technician asks for administrator rights on a device. Always pending: no rule auto-approves (or
   * auto-denies) a person's own request for administrator rights; an approver decides. */
  requestJit(ctx: RequestContext, body: z.infer<typeof TechJitRequestSchema>): ElevationView {
    const { caller } = ctx;
    if (!caller.userId) throw forbidden('A user session is required', 'SESSION_REQUIRED');
    const device = this.devices.get(ctx, body.deviceId);
    if (device.status === 'decommissioned') throw badRequest('Device is decommissioned', 'DEVICE_DECOMMISSIONED');
    const id = this.trail.write((recordedAt, append) => {
      const row = this.db
        .insert(elevationRequests)
        .values({
          orgId: device.orgId,
          deviceId: device.id,
          siteId: device.siteId,
          flowType: 'tech_jit_admin',
          status: 'pending',
          subjectUsername: caller.email,
          subjectUserId: caller.userId,
          requesterUserId: caller.userId,
          reason: body.reason,
          requestedDurationMinutes: body.durationMinutes ?? null,
          observedAt: recordedAt,
          requestedAt: recordedAt,
          createdAt: recordedAt,
          updatedAt: recordedAt,
        })
        .returning()
        .get();
      append({
        elevationRequestId: row.id,
        orgId: row.orgId,
        eventType: 'requested',
        actor: 'technician',
        actorUserId: caller.userId,
        details: { flowType: row.flowType, reason: row.reason, requestedDurationMinutes: row.requestedDurationMinutes },
      });
      recordAudit(this.db, ctx, {
        action: 'pam.elevation_request.create',
        resourceType: 'elevation_request',
        resourceId: row.id,
        resourceName: device.hostname,
        orgId: row.orgId,
        details: {
          flowType: row.flowType,
          deviceId: row.deviceId,
          requestedDurationMinutes: row.requestedDurationMinutes,
        },
      });
      return row.id;
    });
    return this.get(ctx, id);
  }

  // ---- respond (01 §3, §4.9) ----

  async respond(ctx: RequestContext, id: string, body: z.infer<typeof ElevationRespondSchema>) {
    const { caller } = ctx;
    const current = this.forDecision(ctx, id);
    const approve = body.decision === 'approve';
    if (approve && current.requesterUserId !== null && current.requesterUserId === caller.userId) {
      throw forbidden('You cannot approve your own elevation request', 'SELF_APPROVAL_FORBIDDEN');
    }
    if (current.status !== 'pending') throw notPending(current.status);

    let assurance: 'session' | 'reauth' | 'webauthn' = 'session';
    if (approve && isCriticalTier(current)) {
      await this.reauthenticate(ctx, body);
      assurance = 'reauth';
    }
    if (approve && body.proof === undefined && this.stepUpRequired(current.orgId)) {
      throw forbidden(
        'Approvals in this organization need a registered approver device (WebAuthn proof)',
        'STEP_UP_REQUIRED',
      );
    }
    if (body.proof !== undefined) {
      await this.approvers.verifyAssertion(ctx, current.id, body.proof);
      assurance = 'webauthn';
    }
    const refused = approve && current.flowType === 'uac_intercept' && current.targetExecutableHash === null;

    return this.trail.write((recordedAt, append) => {
      let set: Partial<ElevationRow>;
      if (refused) {
        set = { status: 'denied', enforcementStatus: 'refused', deniedAt: recordedAt, denialReason: REFUSAL_REASON };
      } else if (approve) {
        set = {
          status: 'approved',
          enforcementStatus: 'pending_dispatch',
          approvedAt: recordedAt,
          approvedByUserId: caller.userId,
          expiresAt: addMinutes(recordedAt, body.durationMinutes),
        };
      } else {
        set = {
          status: 'denied',
          deniedAt: recordedAt,
          deniedByUserId: caller.userId,
          denialReason: body.reason ?? null,
        };
      }
      // The compare-and-swap of 01 §3: only a request still pending changes; of two racing decisions one wins.
      const row = this.db
        .update(elevationRequests)
        .set({
          ...set,
          decisionSource: 'human',
          decidedAssuranceLevel: assurance,
          decidedVia: 'api',
          revision: sql`${elevationRequests.revision} + 1`,
          updatedAt: recordedAt,
        })
        .where(and(eq(elevationRequests.id, id), eq(elevationRequests.status, 'pending')))
        .returning()
        .get();
      if (!row) throw notPending(this.currentStatus(id));

      const common = { decision: body.decision, assurance, reason: body.reason ?? null };
      if (refused) {
        append({
          elevationRequestId: id,
          orgId: row.orgId,
          eventType: 'denied',
          actor: 'system',
          actorUserId: caller.userId,
          details: { ...common, refused: true, enforcementStatus: 'refused', refusalReason: REFUSAL_REASON },
        });
        publishEvent(
          this.db,
          'elevation.denied',
          eventPayload(row, { reason: REFUSAL_REASON, attemptedByUserId: caller.userId }),
          row.orgId,
        );
      } else if (approve) {
        append({
          elevationRequestId: id,
          orgId: row.orgId,
          eventType: 'approved',
          actor: 'technician',
          actorUserId: caller.userId,
          details: { ...common, durationMinutes: body.durationMinutes, expiresAt: row.expiresAt },
        });
        publishEvent(this.db, 'elevation.approved', eventPayload(row, { approvedByUserId: caller.userId }), row.orgId);
      } else {
        append({
          elevationRequestId: id,
          orgId: row.orgId,
          eventType: 'denied',
          actor: 'technician',
          actorUserId: caller.userId,
          details: common,
        });
        publishEvent(
          this.db,
          'elevation.denied',
          eventPayload(row, { reason: row.denialReason, deniedByUserId: caller.userId }),
          row.orgId,
        );
      }
      recordAudit(this.db, ctx, {
        action: approve ? 'pam.elevation_request.approve' : 'pam.elevation_request.deny',
        resourceType: 'elevation_request',
        resourceId: id,
        resourceName: resourceNameOf(row),
        orgId: row.orgId,
        result: refused ? 'denied' : 'success',
        errorMessage: refused ? REFUSAL_REASON : null,
        details: {
          ...common,
          status: row.status,
          enforcementStatus: row.enforcementStatus,
          flowType: row.flowType,
          deviceId: row.deviceId,
          ...(approve && !refused ? { durationMinutes: body.durationMinutes } : {}),
        },
      });
      return {
        success: true as const,
        id,
        status: row.status,
        enforcementStatus: row.enforcementStatus,
        expiresAt: row.expiresAt,
        decisionSource: row.decisionSource,
        decidedAssuranceLevel: row.decidedAssuranceLevel,
        decidedVia: row.decidedVia,
        ...(refused ? { reason: REFUSAL_REASON } : {}),
      };
    });
  }

  /** The re-entered factor of a critical-tier approval: the account password, or for accounts without one a
   * TOTP code. Missing or wrong → 401 reauth_required; failures are throttled like sign-in. */
  private async reauthenticate(
    ctx: RequestContext,
    body: { reauthPassword?: string | undefined; reauthMfaCode?: string | undefined },
  ): Promise<void> {
    const userId = ctx.caller.userId;
    const user = userId ? this.auth.getUser(userId) : null;
    const factor = user?.passwordHash ? 'password' : 'mfa_code';
    const required = (message: string) => unauthorized(message, 'reauth_required', { factor });
    if (!user) throw required('Re-authentication required for a critical-tier approval');
    const t = this.config.throttle;
    const windowMs = t.loginWindowSeconds * 1000;
    const key = `pam-reauth:${user.id}`;
    if (this.reauthLimiter.count(key, windowMs) >= t.loginPerEmail) {
      const { retryAfterSeconds } = this.reauthLimiter.hit(key, t.loginPerEmail, windowMs);
      throw tooManyRequests('Too many re-authentication attempts', retryAfterSeconds, 'TOO_MANY_REAUTH_ATTEMPTS');
    }
    let failure = 'Re-authentication failed';
    if (user.passwordHash) {
      if (body.reauthPassword === undefined)
        throw required('Re-authentication required for a critical-tier approval: send reauthPassword');
      if (await verifyPassword(body.reauthPassword, user.passwordHash)) return;
    } else {
      if (body.reauthMfaCode === undefined)
        throw required('Re-authentication required for a critical-tier approval: send reauthMfaCode');
      const check =
        user.mfaEnabled && user.mfaMethod !== 'sms' && user.mfaSecretEnc
          ? checkTotp(this.db, this.box, user.id, user.mfaSecretEnc, body.reauthMfaCode)
          : 'invalid';
      if (check === 'accepted') return;
      if (check === 'used') failure = TOTP_CODE_USED;
    }
    this.reauthLimiter.hit(key, Number.MAX_SAFE_INTEGER, windowMs);
    throw required(failure);
  }

  /** Step-up policy: `pamStepUpRequired: true` in the settings of the organization or of its partner makes a
   * plain session approval under-assured (403); a deny is never blocked. */
  private stepUpRequired(orgId: string): boolean {
    const org = liveOrg(this.db, orgId);
    if (!org) return false;
    if (org.settings.pamStepUpRequired === true) return true;
    try {
      return this.tenancy.getPartner(org.partnerId).settings.pamStepUpRequired === true;
    } catch (err) {
      if (err instanceof DomainError) return false;
      throw err;
    }
  }

  // ---- revoke ----

  revoke(ctx: RequestContext, id: string, reason: string) {
    const { caller } = ctx;
    const current = this.forDecision(ctx, id);
    if (!(ACTIVE_STATUSES as readonly string[]).includes(current.status)) throw notActive(current.status);
    return this.trail.write((recordedAt, append) => {
      const row = this.db
        .update(elevationRequests)
        .set({
          status: 'revoked',
          enforcementStatus: 'cleanup_pending',
          revokedAt: recordedAt,
          revokedByUserId: caller.userId,
          revokedReason: reason,
          revision: sql`${elevationRequests.revision} + 1`,
          updatedAt: recordedAt,
        })
        .where(and(eq(elevationRequests.id, id), inArray(elevationRequests.status, [...ACTIVE_STATUSES])))
        .returning()
        .get();
      if (!row) throw notActive(this.currentStatus(id));
      append({
        elevationRequestId: id,
        orgId: row.orgId,
        eventType: 'revoked',
        actor: 'technician',
        actorUserId: caller.userId,
        details: { reason, previousStatus: current.status },
      });
      publishEvent(
        this.db,
        'elevation.revoked',
        eventPayload(row, { reason, revokedByUserId: caller.userId }),
        row.orgId,
      );
      recordAudit(this.db, ctx, {
        action: 'pam.elevation_request.revoke',
        resourceType: 'elevation_request',
        resourceId: id,
        resourceName: resourceNameOf(row),
        orgId: row.orgId,
        details: { reason, previousStatus: current.status, deviceId: row.deviceId },
      });
      return { success: true as const, id, status: row.status, enforcementStatus: row.enforcementStatus };
    });
  }

  // ---- expiry enforcement ----

  /** Moves every elevation in force whose expiresAt has passed (by `now`) to expired, including those that
   * expired while the server was down; the device is told to clean up. Returns how many. */
  expireDue(now: Date = new Date()): number {
    const system = systemContext('pam.expire-elevations');
    return this.trail.write((recordedAt, append) => {
      const rows = this.db
        .update(elevationRequests)
        .set({
          status: 'expired',
          enforcementStatus: 'cleanup_pending' satisfies EnforcementStatus,
          expiredAt: recordedAt,
          revision: sql`${elevationRequests.revision} + 1`,
          updatedAt: recordedAt,
        })
        .where(
          and(
            inArray(elevationRequests.status, [...ACTIVE_STATUSES]),
            lte(elevationRequests.expiresAt, now.toISOString()),
          ),
        )
        .returning()
        .all();
      for (const row of rows) {
        append({
          elevationRequestId: row.id,
          orgId: row.orgId,
          eventType: 'expired',
          actor: 'system',
          occurredAt: row.expiresAt ?? recordedAt,
          details: { expiresAt: row.expiresAt },
        });
        publishEvent(this.db, 'elevation.expired', eventPayload(row), row.orgId);
        recordAudit(this.db, system, {
          action: 'pam.elevation_request.expire',
          resourceType: 'elevation_request',
          resourceId: row.id,
          resourceName: resourceNameOf(row),
          orgId: row.orgId,
          partnerId: null,
          details: { expiresAt: row.expiresAt, deviceId: row.deviceId },
        });
      }
      return rows.length;
    });
  }

  // ---- rule preview (04 wire notes "Rule preview") ----

  preview(ctx: RequestContext, body: PamRulePreview) {
    const { caller } = ctx;
    const org = targetOrg(this.db, caller, body.orgId);
    const siteId = body.siteId ?? null;
    if (siteId !== null) {
      const site = requireSite(this.db, caller, siteId);
      if (site.orgId !== org.id) throw fieldError('siteId', 'not a site of the organization');
    }
    const criteria = criteriaOf(body);
    validateRuleShape({ verdict: body.verdict ?? 'require_approval', ...criteria });
    if (criteria.matchSignerGroupId !== null) {
      const group = this.db
        .select({ id: pamSignerGroups.id })
        .from(pamSignerGroups)
        .where(and(eq(pamSignerGroups.id, criteria.matchSignerGroupId), eq(pamSignerGroups.orgId, org.id)))
        .get();
      if (!group) throw fieldError('matchSignerGroupId', 'no such signer group in the organization');
    }
    const since = new Date(Date.now() - body.windowDays * 86_400_000).toISOString();
    let siteFilter: SQL | undefined;
    if (siteId !== null) siteFilter = eq(elevationRequests.siteId, siteId);
    else if (caller.siteIds !== null)
      siteFilter = caller.siteIds.length ? inArray(elevationRequests.siteId, caller.siteIds) : sql`0`;
    const rows = this.db
      .select()
      .from(elevationRequests)
      .where(and(eq(elevationRequests.orgId, org.id), gte(elevationRequests.requestedAt, since), siteFilter))
      .orderBy(desc(elevationRequests.requestedAt), desc(elevationRequests.id))
      .limit(PREVIEW_SCAN_LIMIT + 1)
      .all();
    const truncated = rows.length > PREVIEW_SCAN_LIMIT;
    const scanned = truncated ? rows.slice(0, PREVIEW_SCAN_LIMIT) : rows;
    const groups = this.rules.groupsOf(org.id);
    const rule = { verdict: body.verdict ?? 'require_approval', ...criteria } as const;
    const matched = scanned.filter((row) => ruleMatches(rule, engineRequestOf(row), groups));
    const statusBreakdown: Record<string, number> = {};
    for (const row of matched) statusBreakdown[row.status] = (statusBreakdown[row.status] ?? 0) + 1;
    return {
      success: true as const,
      totalMatched: matched.length,
      totalScanned: scanned.length,
      windowDays: body.windowDays,
      truncated,
      statusBreakdown,
      sample: this.viewsOf(matched.slice(0, 10).map((r) => r.id)),
    };
  }
}
