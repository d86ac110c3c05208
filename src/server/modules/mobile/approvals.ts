import type { z } from 'zod';
import type { MobileApprovalDecideSchema } from '../../../contract/mobile.js';
import { PAM_DURATION } from '../../../contract/pam.js';
import type { RequestContext } from '../../context.js';
import { DomainError } from '../../errors.js';
import type { DevicesService } from '../devices/service.js';
import type { PendingApprovals, PendingRow } from '../pam/pending-approvals.js';
import type { ElevationRow } from '../pam/requests-queries.js';
import type { PamService } from '../pam/service.js';
import { decodePosition, encodePosition } from './cursor.js';

type Decide = z.infer<typeof MobileApprovalDecideSchema>;

const notFound = () => new DomainError('not_found', 'Not found', 'NOT_FOUND');

/** 02 §4.6: a refused approval reads as denied with its reason; decidedAt is when the approver decided. */
function approvalOf(row: PendingRow, hostname: string | null) {
  const refused = row.enforcementStatus === 'refused';
  return {
    id: row.id,
    orgId: row.orgId,
    deviceId: row.deviceId,
    deviceHostname: hostname,
    flowType: row.flowType,
    status: row.status,
    enforcementStatus: row.enforcementStatus,
    refusalReason: refused ? row.denialReason : null,
    subjectUsername: row.subjectUsername,
    reason: row.reason,
    targetExecutablePath: row.targetExecutablePath,
    toolName: row.toolName,
    riskTier: row.riskTier,
    requestedAt: row.requestedAt,
    decidedAt: row.approvedAt ?? row.deniedAt ?? null,
    expiresAt: row.expiresAt,
  };
}

/** The approvals inbox (02 §4.6, 05 wire notes "4.6"): PAM elevation requests awaiting a decision, decided
 * through the PAM decisions' respond (re-authentication, step-up, the refused approval) unchanged. */
export class MobileApprovals {
  constructor(
    private readonly pamOf: () => PamService,
    private readonly pending: PendingApprovals,
    private readonly devices: DevicesService,
  ) {}

  private shown(rows: PendingRow[]) {
    const names = this.devices.hostnamesOf(rows.map((r) => r.deviceId));
    return rows.map((r) => approvalOf(r, names.get(r.deviceId) ?? null));
  }

  list(ctx: RequestContext, limit: number, cursor: string | undefined) {
    const after = cursor === undefined ? undefined : decodePosition(cursor);
    const rows = this.pending.list(ctx.caller, limit + 1, after);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { approvals: this.shown(page), nextCursor: rows.length > limit && last ? encodePosition(last.requestedAt, last.id) : null };
  }

  count(ctx: RequestContext) {
    return { count: this.pending.count(ctx.caller) };
  }

  /** A request the caller may decide on; absent, out of reach or outside the caller's sites: 404 `Not found`. */
  private find(ctx: RequestContext, id: string): ElevationRow {
    try {
      return this.pamOf().requests.forDecision(ctx, id);
    } catch (err) {
      if (err instanceof DomainError && (err.kind === 'not_found' || err.kind === 'forbidden')) throw notFound();
      throw err;
    }
  }

  get(ctx: RequestContext, id: string) {
    const [approval] = this.shown([this.find(ctx, id)]);
    if (!approval) throw notFound();
    return { approval };
  }

  async decide(ctx: RequestContext, id: string, decision: 'approve' | 'deny', body: Decide) {
    const current = this.find(ctx, id);
    if (current.status === 'expired') throw new DomainError('gone', 'Expired', 'EXPIRED', { extra: { finalStatus: 'expired' } });
    if (current.status !== 'pending') throw new DomainError('conflict', 'Already decided', 'ALREADY_DECIDED', { extra: { finalStatus: current.status } });
    let result;
    try {
      result = await this.pamOf().decisions.respond(ctx, id, {
        decision,
        durationMinutes: body.durationMinutes ?? PAM_DURATION.default,
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
        ...(body.proof !== undefined ? { proof: body.proof } : {}),
        ...(body.reauthPassword !== undefined ? { reauthPassword: body.reauthPassword } : {}),
        ...(body.reauthMfaCode !== undefined ? { reauthMfaCode: body.reauthMfaCode } : {}),
      });
    } catch (err) {
      // Another approver decided first (the compare-and-swap lost).
      if (err instanceof DomainError && err.code === 'REQUEST_NOT_PENDING') {
        const now = this.pamOf().requests.currentStatus(id);
        if (now === 'expired') throw new DomainError('gone', 'Expired', 'EXPIRED', { extra: { finalStatus: 'expired' } });
        throw new DomainError('conflict', 'Already decided', 'ALREADY_DECIDED', { extra: { finalStatus: now } });
      }
      throw err;
    }
    const [approval] = this.shown([this.find(ctx, id)]);
    if (!approval) throw notFound();
    return { approval, enforcementStatus: result.enforcementStatus, ...(result.reason !== undefined ? { reason: result.reason } : {}) };
  }
}
