import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import type { ElevationRespondSchema, ElevationStatus } from '../../../contract/pam.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { driverValue, inJson, preparedShapes } from '../../db/prepared.js';
import { elevationRequests } from '../../db/schema/index.js';
import { forbidden } from '../../errors.js';
import type { PamApproversService } from './approvers-service.js';
import { REFUSAL_REASON, addMinutes } from './ingest.js';
import type { ApprovalAssurance } from './reauth.js';
import {
  ACTIVE_STATUSES,
  isCriticalTier,
  notActive,
  notPending,
  type ElevationQueries,
  type ElevationRow,
} from './requests-queries.js';
import { recordTransition, type Transition } from './transitions.js';
import type { ElevationTrail } from './trail.js';

type Assurance = 'session' | 'reauth' | 'webauthn';

const requestColumns: Record<string, SQLiteColumn> = getTableColumns(elevationRequests);

/** The compare-and-swap's statement (ElevationDecisions.swap), per shape: the columns it sets, by name, joined by
 * `,` (each from the placeholder `set.<name>`), with the revision one up and updatedAt; of the request `id` only
 * while its status is one of the JSON array `from`. The row as it is after. */
const swapOf = preparedShapes((db, shape) =>
  db
    .update(elevationRequests)
    .set({
      ...Object.fromEntries((shape === '' ? [] : shape.split(',')).map((name) => [name, sql`${sql.placeholder(`set.${name}`)}`])),
      revision: sql`${elevationRequests.revision} + 1`,
      updatedAt: sql`${sql.placeholder('updatedAt')}`,
    })
    .where(and(eq(elevationRequests.id, sql.placeholder('id')), inJson(elevationRequests.status, 'from')))
    .returning()
    .prepare(),
);

/** Human decisions on a request (01 §3, §4.9): respond (approve / deny) and revoke, each a compare-and-swap on
 * the status it starts from, recorded through one transition. */
export class ElevationDecisions {
  constructor(
    private readonly db: Db,
    private readonly trail: ElevationTrail,
    private readonly queries: ElevationQueries,
    private readonly assurance: ApprovalAssurance,
    private readonly approvers: PamApproversService,
  ) {}

  /** The compare-and-swap of 01 §3: only a request still in one of `from` changes; of two racing decisions one
   * wins, the other answers `lost` with the status the request has now. */
  private swap(
    id: string,
    from: readonly ElevationStatus[],
    set: Partial<ElevationRow>,
    recordedAt: string,
    lost: (status: string) => Error,
  ): ElevationRow {
    // The columns set as drizzle's .set() takes them: those given a value (undefined leaves one alone), each as its
    // column writes it; revision and updatedAt are the swap's own.
    const values: Record<string, unknown> = { id, from: JSON.stringify(from), updatedAt: recordedAt };
    const names: string[] = [];
    for (const [name, value] of Object.entries(set)) {
      const column = requestColumns[name];
      if (value === undefined || !column || name === 'revision' || name === 'updatedAt') continue;
      names.push(name);
      values[`set.${name}`] = driverValue(column, value);
    }
    const row = swapOf(this.db, names.sort().join(',')).get(values);
    if (!row) throw lost(this.queries.currentStatus(id));
    return row;
  }

  async respond(ctx: RequestContext, id: string, body: z.infer<typeof ElevationRespondSchema>) {
    const { caller } = ctx;
    const current = this.queries.forDecision(ctx, id);
    const approve = body.decision === 'approve';
    if (approve && current.requesterUserId !== null && current.requesterUserId === caller.userId) {
      throw forbidden('You cannot approve your own elevation request', 'SELF_APPROVAL_FORBIDDEN');
    }
    if (current.status !== 'pending') throw notPending(current.status);

    let assurance: Assurance = 'session';
    if (approve && isCriticalTier(current)) {
      await this.assurance.reauthenticate(ctx, body);
      assurance = 'reauth';
    }
    if (approve && body.proof === undefined && this.assurance.stepUpRequired(current.orgId)) {
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
      const human = { decisionSource: 'human', decidedAssuranceLevel: assurance, decidedVia: 'api' } as const;
      const row = this.swap(id, ['pending'], { ...set, ...human }, recordedAt, notPending);

      const common = { decision: body.decision, assurance, reason: body.reason ?? null };
      const actorUserId = caller.userId;
      let decided: Omit<Transition, 'audit'>;
      if (refused) {
        decided = {
          trail: {
            eventType: 'denied',
            actor: 'system',
            actorUserId,
            details: { ...common, refused: true, enforcementStatus: 'refused', refusalReason: REFUSAL_REASON },
          },
          bus: { type: 'elevation.denied', extra: { reason: REFUSAL_REASON, attemptedByUserId: actorUserId } },
        };
      } else if (approve) {
        decided = {
          trail: {
            eventType: 'approved',
            actor: 'technician',
            actorUserId,
            details: { ...common, durationMinutes: body.durationMinutes, expiresAt: row.expiresAt },
          },
          bus: { type: 'elevation.approved', extra: { approvedByUserId: actorUserId } },
        };
      } else {
        decided = {
          trail: { eventType: 'denied', actor: 'technician', actorUserId, details: common },
          bus: { type: 'elevation.denied', extra: { reason: row.denialReason, deniedByUserId: actorUserId } },
        };
      }
      recordTransition(this.db, ctx, append, row, {
        ...decided,
        audit: {
          action: approve ? 'pam.elevation_request.approve' : 'pam.elevation_request.deny',
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

  revoke(ctx: RequestContext, id: string, reason: string) {
    const { caller } = ctx;
    const current = this.queries.forDecision(ctx, id);
    if (!(ACTIVE_STATUSES as readonly string[]).includes(current.status)) throw notActive(current.status);
    return this.trail.write((recordedAt, append) => {
      const row = this.swap(
        id,
        ACTIVE_STATUSES,
        {
          status: 'revoked',
          enforcementStatus: 'cleanup_pending',
          revokedAt: recordedAt,
          revokedByUserId: caller.userId,
          revokedReason: reason,
        },
        recordedAt,
        notActive,
      );
      const details = { reason, previousStatus: current.status };
      recordTransition(this.db, ctx, append, row, {
        trail: { eventType: 'revoked', actor: 'technician', actorUserId: caller.userId, details },
        bus: { type: 'elevation.revoked', extra: { reason, revokedByUserId: caller.userId } },
        audit: { action: 'pam.elevation_request.revoke', details: { ...details, deviceId: row.deviceId } },
      });
      return { success: true as const, id, status: row.status, enforcementStatus: row.enforcementStatus };
    });
  }
}
