import { and, count, desc, eq, ne, or, sql } from 'drizzle-orm';
import type { Caller } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { inJson, preparedShapes, shapeConditions, shapeOf } from '../../db/prepared.js';
import { elevationRequests } from '../../db/schema/index.js';
import { deviceInGroups } from '../devices/service.js';
import type { ElevationRow } from './requests-queries.js';
import { callerReach } from '../tenancy/access.js';

/** What the approvals inbox shows of a request (mobile/approvals.ts approvalOf): only these columns are read. */
const shownColumns = {
  id: elevationRequests.id,
  orgId: elevationRequests.orgId,
  deviceId: elevationRequests.deviceId,
  flowType: elevationRequests.flowType,
  status: elevationRequests.status,
  enforcementStatus: elevationRequests.enforcementStatus,
  denialReason: elevationRequests.denialReason,
  subjectUsername: elevationRequests.subjectUsername,
  reason: elevationRequests.reason,
  targetExecutablePath: elevationRequests.targetExecutablePath,
  toolName: elevationRequests.toolName,
  riskTier: elevationRequests.riskTier,
  requestedAt: elevationRequests.requestedAt,
  approvedAt: elevationRequests.approvedAt,
  deniedAt: elevationRequests.deniedAt,
  expiresAt: elevationRequests.expiresAt,
};

export type PendingRow = Pick<ElevationRow, keyof typeof shownColumns>;

/** The reach of a shape (db/prepared.ts): 'o' the organizations of the JSON array `orgIds`, 's' the sites of
 * `siteIds`, 'g' devices in the groups of `groupIds` (01 §2.6), 'u' not requested by `userId` (no self-approval). */
function pendingIn(shape: string) {
  return and(
    eq(elevationRequests.status, 'pending'),
    ...shapeConditions(shape, {
      o: () => inJson(elevationRequests.orgId, 'orgIds'),
      s: () => inJson(elevationRequests.siteId, 'siteIds'),
      g: () => deviceInGroups(elevationRequests.deviceId),
      u: () => or(sql`${elevationRequests.requesterUserId} IS NULL`, ne(elevationRequests.requesterUserId, sql.placeholder('userId'))),
    }),
  );
}

/** The page (newest first by (requestedAt, id), 'k' after the keyset position `ts`, `afterId`) and the count, per
 * shape. */
const pendingQueries = preparedShapes((db, shape) => {
  const keyset = sql`(${elevationRequests.requestedAt} < ${sql.placeholder('ts')} OR (${elevationRequests.requestedAt} = ${sql.placeholder('ts')} AND ${elevationRequests.id} < ${sql.placeholder('afterId')}))`;
  return {
    page: db
      .select(shownColumns)
      .from(elevationRequests)
      .where(and(pendingIn(shape), ...shapeConditions(shape, { k: () => keyset })))
      .orderBy(desc(elevationRequests.requestedAt), desc(elevationRequests.id))
      .limit(sql.placeholder('limit'))
      .prepare(),
    count: db.select({ n: count() }).from(elevationRequests).where(pendingIn(shape)).prepare(),
  };
});

/**
 * The elevation requests awaiting a decision that a user could decide (the mobile approvals inbox, 02 §4.6):
 * pending, in the organizations and sites the user reaches and (01 §2.6) on devices of its device groups, not the
 * user's own (01 §4.9 forbids self-approval). Read-only; deciding goes through ElevationDecisions.respond.
 */
export class PendingApprovals {
  constructor(private readonly db: Db) {}

  /** The caller's reach as a shape (pendingIn) and its values; null when it is nothing. */
  private reach(caller: Caller): { shape: string; values: Record<string, unknown> } | null {
    const reach = callerReach(this.db, caller);
    if (reach === null) return null;
    return { shape: reach.shape + shapeOf({ u: caller.userId !== null }), values: { ...reach.values, userId: caller.userId } };
  }

  /** Newest first by (requestedAt, id); `after` is the last row of the previous page. */
  list(caller: Caller, limit: number, after?: { ts: string; id: string }): PendingRow[] {
    const reach = this.reach(caller);
    if (reach === null) return [];
    const shape = reach.shape + shapeOf({ k: after });
    return pendingQueries(this.db, shape).page.all({ ...reach.values, ts: after?.ts, afterId: after?.id, limit });
  }

  count(caller: Caller): number {
    const reach = this.reach(caller);
    if (reach === null) return 0;
    return pendingQueries(this.db, reach.shape).count.get(reach.values)?.n ?? 0;
  }
}
