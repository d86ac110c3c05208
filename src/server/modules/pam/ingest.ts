import type { ElevationFlowType, ElevationIngest } from '../../../contract/pam.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { fieldError, notFound } from '../../errors.js';
import type { DevicesService } from '../devices/service.js';
import { firstMatchingRule, type EngineRequest } from './engine.js';
import type { ElevationRow } from './requests-queries.js';
import type { PamOrgDefaults, PamRuleRow, PamRulesService } from './rules-service.js';
import { insertRequest, recordTransition, type Transition } from './transitions.js';
import type { ElevationTrail } from './trail.js';

/** 01 §3: an approval of an executable no file hash identifies is refused. */
export const REFUSAL_REASON = 'No file hash identifies a specific executable; the approval is refused';
/** An agent clock this far ahead of the server is not believed (observed_at in the future → 400). */
const MAX_CLOCK_SKEW_MS = 5 * 60_000;
const DEFAULT_APPROVAL_MINUTES = 15;

export const addMinutes = (iso: string, minutes: number) => new Date(Date.parse(iso) + minutes * 60_000).toISOString();

export type IngestStatus = 'pending' | 'auto_approved' | 'denied';
export type Verdict = PamRuleRow['verdict'] | PamOrgDefaults['defaultUnmatchedVerdict'];

/** What the rule engine's verdict makes of a new request: ignored, or the fields it is recorded with. */
export type IngestDecision =
  | { ignored: true; verdict: 'ignore' }
  | { ignored: false; verdict: Verdict; refused: boolean; fields: Partial<ElevationRow> & { status: IngestStatus } };

/**
 * The decision on an agent's request (04 wire notes "Rule engine"), without side effects: the matched rule's
 * verdict or the organization default; an auto-approval of a UAC prompt without a file hash is refused (01 §3).
 */
export function decideIngest(
  rule: Pick<PamRuleRow, 'verdict' | 'name' | 'approvalDurationMinutes'> | null,
  defaults: Pick<PamOrgDefaults, 'defaultUnmatchedVerdict' | 'defaultApprovalDurationMinutes'>,
  request: Pick<EngineRequest, 'flowType' | 'targetExecutableHash'>,
  recordedAt: string,
): IngestDecision {
  const verdict: Verdict = rule ? rule.verdict : defaults.defaultUnmatchedVerdict;
  if (verdict === 'ignore') return { ignored: true, verdict };
  const refused =
    verdict === 'auto_approve' && request.flowType === 'uac_intercept' && request.targetExecutableHash === null;
  const byPolicy = { decisionSource: 'pam_rule', decidedAssuranceLevel: 'policy', decidedVia: 'policy' } as const;
  if (verdict === 'auto_approve' && !refused) {
    const minutes =
      rule?.approvalDurationMinutes ?? defaults.defaultApprovalDurationMinutes ?? DEFAULT_APPROVAL_MINUTES;
    return {
      ignored: false,
      verdict,
      refused,
      fields: {
        status: 'auto_approved',
        enforcementStatus: 'pending_dispatch',
        ...byPolicy,
        approvedAt: recordedAt,
        expiresAt: addMinutes(recordedAt, minutes),
      },
    };
  }
  if (verdict === 'auto_approve' || verdict === 'auto_deny') {
    const reason = refused
      ? REFUSAL_REASON
      : rule
        ? `Denied by rule "${rule.name}"`
        : 'Denied by the organization default (no rule matched)';
    return {
      ignored: false,
      verdict,
      refused,
      fields: {
        status: 'denied',
        enforcementStatus: refused ? 'refused' : null,
        ...byPolicy,
        deniedAt: recordedAt,
        denialReason: reason,
      },
    };
  }
  return { ignored: false, verdict, refused, fields: { status: 'pending' } };
}

/** Agent ingest (04 wire notes "Agent ingest"): a UAC prompt or an AI tool action, decided by the rule engine. */
export class ElevationIngestService {
  constructor(
    private readonly db: Db,
    private readonly trail: ElevationTrail,
    private readonly rules: PamRulesService,
    private readonly devices: DevicesService,
  ) {}

  ingest(
    ctx: RequestContext,
    agentId: string,
    body: ElevationIngest,
  ):
    | { created: true; id: string; status: IngestStatus; expiresAt: string | null; reason?: string }
    | { created: false; id: null; status: 'ignored' } {
    const device = this.devices.byAgentId(agentId);
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
      const decision = decideIngest(rule, defaults, engineRequest, recordedAt);
      if (decision.ignored) return { created: false as const, id: null, status: 'ignored' as const };

      // The engine's view of the request is what is stored, plus what only the record keeps.
      const { observedAt: _observed, ...matched } = engineRequest;
      const row = insertRequest(this.db, device, recordedAt, {
        ...matched,
        subjectGroups: body.subject_groups ?? null,
        reason: body.reason ?? null,
        targetPublisher: body.target_publisher ?? null,
        actionDigest: tool ? (body.action_digest ?? null) : null,
        executionId: body.execution_id ?? null,
        observedAt: observedAt.toISOString(),
        pamRuleId: rule?.id ?? null,
        pamRuleName: rule?.name ?? null,
        ...decision.fields,
      });

      const { verdict, refused } = decision;
      const ruleRef = { pamRuleId: row.pamRuleId, pamRuleName: row.pamRuleName, verdict, matched: rule !== null };
      const denied = row.status === 'denied';
      const audit: Transition['audit'] = {
        action: 'pam.elevation_request.create',
        result: denied ? 'denied' : 'success',
        errorMessage: denied ? row.denialReason : null,
        details: { flowType, deviceId: row.deviceId, status: row.status, ...ruleRef },
      };
      const requested: Transition['trail'] = {
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
      };
      const decided = policyTransition(row, ruleRef, refused);
      recordTransition(this.db, ctx, append, row, { trail: requested, ...(decided ? {} : { audit }) });
      if (decided) recordTransition(this.db, ctx, append, row, { ...decided, audit });
      return {
        created: true as const,
        id: row.id,
        status: decision.fields.status,
        expiresAt: row.expiresAt,
        ...(denied && row.denialReason ? { reason: row.denialReason } : {}),
      };
    });
  }
}

/** The policy's own decision on a new request, when it made one (auto-approved or denied). */
function policyTransition(
  row: ElevationRow,
  ruleRef: Record<string, unknown>,
  refused: boolean,
): Omit<Transition, 'audit'> | null {
  if (row.status === 'auto_approved') {
    return {
      trail: { eventType: 'auto_approved', actor: 'policy', details: { ...ruleRef, expiresAt: row.expiresAt } },
      bus: { type: 'elevation.approved', extra: { approvedByUserId: null } },
    };
  }
  if (row.status === 'denied') {
    return {
      trail: {
        eventType: 'denied',
        actor: 'policy',
        details: {
          ...ruleRef,
          reason: row.denialReason,
          ...(refused ? { refused: true, enforcementStatus: 'refused' } : {}),
        },
      },
      bus: { type: 'elevation.denied', extra: { reason: row.denialReason, deniedByUserId: null } },
    };
  }
  return null;
}
