import { and, count, desc, eq, inArray, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Caller } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { elevationRequests } from '../../db/schema/index.js';
import { inCallerDeviceGroups } from '../devices/service.js';
import type { ElevationRow } from './requests-queries.js';
import { listOrgs } from './scope.js';

/**
 * The elevation requests awaiting a decision that a user could decide (the mobile approvals inbox, 02 §4.6):
 * pending, in the organizations and sites the user reaches and (01 §2.6) on devices of its device groups, not the
 * user's own (01 §4.9 forbids self-approval). Read-only; deciding goes through ElevationDecisions.respond.
 */
export class PendingApprovals {
  constructor(private readonly db: Db) {}

  private where(caller: Caller): SQL | null {
    const orgIds = listOrgs(this.db, caller, undefined);
    if (orgIds !== null && orgIds.length === 0) return null;
    if (caller.siteIds !== null && caller.siteIds.length === 0) return null;
    if (caller.deviceGroupIds !== null && caller.deviceGroupIds.length === 0) return null;
    return (
      and(
        eq(elevationRequests.status, 'pending'),
        orgIds === null ? undefined : inArray(elevationRequests.orgId, orgIds),
        caller.siteIds === null ? undefined : inArray(elevationRequests.siteId, caller.siteIds),
        // Built by the mobile module with the database alone, so no DevicesService (restrictedDeviceWhere) here.
        inCallerDeviceGroups(caller, elevationRequests.deviceId),
        caller.userId === null
          ? undefined
          : or(sql`${elevationRequests.requesterUserId} IS NULL`, ne(elevationRequests.requesterUserId, caller.userId)),
      ) ?? null
    );
  }

  /** Newest first by (requestedAt, id); `after` is the last row of the previous page. */
  list(caller: Caller, limit: number, after?: { ts: string; id: string }): ElevationRow[] {
    const where = this.where(caller);
    if (where === null) return [];
    const keyset =
      after &&
      sql`(${elevationRequests.requestedAt} < ${after.ts} OR (${elevationRequests.requestedAt} = ${after.ts} AND ${elevationRequests.id} < ${after.id}))`;
    return this.db
      .select()
      .from(elevationRequests)
      .where(keyset ? and(where, keyset) : where)
      .orderBy(desc(elevationRequests.requestedAt), desc(elevationRequests.id))
      .limit(limit)
      .all();
  }

  count(caller: Caller): number {
    const where = this.where(caller);
    if (where === null) return 0;
    return this.db.select({ n: count() }).from(elevationRequests).where(where).get()?.n ?? 0;
  }
}
