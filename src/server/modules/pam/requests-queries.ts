import { and, asc, desc, eq, gte, inArray, lt, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { z } from 'zod';
import type { ElevationActiveQuerySchema, ElevationListQuerySchema, ElevationStatus } from '../../../contract/pam.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { inJson, preparedQueries, preparedShapes, rowQuery, shapeConditions, shapeOf } from '../../db/prepared.js';
import { elevationRequests } from '../../db/schema/index.js';
import { conflict, deviceAccessDenied, notFound, siteAccessDenied } from '../../errors.js';
import { restrictedDeviceInPrepared, restrictionShape, visibleDeviceInPrepared, type DevicesService } from '../devices/service.js';
import type { Directory } from '../identity/directory.js';
import { canAccessOrg, callerReach, requireSite, siteNamesOf } from '../tenancy/access.js';
import type { EngineRequest } from './engine.js';
import { preparedPage, readPage } from '../../lib/paging.js';
import { deviceGroupWhere } from './scope.js';

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
/** Approvals of AI tool actions of this risk tier (the highest, 0-4) need a re-entered factor (01 §4.9). */
export const CRITICAL_RISK_TIER = 4;
/** 01 §4.9 /pam/active: at most 500. */
export const ACTIVE_LIMIT = 500;

export const notPending = (status: string) =>
  conflict(`Request is not pending (current status: ${status})`, 'REQUEST_NOT_PENDING');
export const notActive = (status: string) =>
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

/** A caller's reach over requests (tenancy callerReach, its letters first in a shape): `o` the request's
 * organization in `orgIds`, `s` its site in `siteIds`; `g` (a user restricted to device groups, 01 §2.6) its
 * device one the caller sees, by the devices module's rule over the same values (a device never leaves its
 * organization, so the request's organizations are the device's). */
function reachConditions(shape: string): (SQL | undefined)[] {
  return shapeConditions(shape, {
    o: () => inJson(elevationRequests.orgId, 'orgIds'),
    s: () => inJson(elevationRequests.siteId, 'siteIds'),
    g: () => visibleDeviceInPrepared(shape, elevationRequests.deviceId),
  });
}

/** The optional filters of the list, by the letter that names each in a statement's shape: S status, F flowType,
 * D deviceId, I siteId, A from, B to (placeholders of those names; upper case, apart from the reach's letters). */
function filterConditions(shape: string): (SQL | undefined)[] {
  return shapeConditions(shape, {
    S: () => eq(elevationRequests.status, sql.placeholder('status')),
    F: () => eq(elevationRequests.flowType, sql.placeholder('flowType')),
    D: () => eq(elevationRequests.deviceId, sql.placeholder('deviceId')),
    I: () => eq(elevationRequests.siteId, sql.placeholder('siteId')),
    A: () => gte(elevationRequests.requestedAt, sql.placeholder('from')),
    B: () => lt(elevationRequests.requestedAt, sql.placeholder('to')),
  });
}

/** The active elevations (GET /pam/active): the reach part of the shape, and D of one `deviceId`; expiring after
 * `now`, soonest first, at most `limit`. */
const activeOf = preparedShapes((db, shape) =>
  db
    .select()
    .from(elevationRequests)
    .where(
      and(
        ...reachConditions(shape),
        inArray(elevationRequests.status, [...ACTIVE_STATUSES]),
        sql`${elevationRequests.expiresAt} > ${sql.placeholder('now')}`,
        ...shapeConditions(shape, { D: () => eq(elevationRequests.deviceId, sql.placeholder('deviceId')) }),
      ),
    )
    .orderBy(asc(elevationRequests.expiresAt), asc(elevationRequests.id))
    .limit(sql.placeholder('limit'))
    .prepare(),
);

/** The list's page and count, and the get. */
const listOf = preparedShapes((db, shape) =>
  preparedPage(db, elevationRequests, and(...reachConditions(shape), ...filterConditions(shape)), [
    desc(elevationRequests.requestedAt),
    desc(elevationRequests.id),
  ]),
);
const getOf = preparedShapes((db, shape) =>
  db
    .select()
    .from(elevationRequests)
    .where(and(...reachConditions(shape), eq(elevationRequests.id, sql.placeholder('id'))))
    .prepare(),
);
const byIdOf = preparedQueries((db) => ({
  row: db
    .select()
    .from(elevationRequests)
    .where(eq(elevationRequests.id, sql.placeholder('id')))
    .prepare(),
  // The requests of the JSON array `ids` (any order), and the status of one.
  rows: rowQuery(db, elevationRequests, inJson(elevationRequests.id, 'ids')),
  status: db
    .select({ status: elevationRequests.status })
    .from(elevationRequests)
    .where(eq(elevationRequests.id, sql.placeholder('id')))
    .prepare(),
}));

/** Whether the request `id` is on a device the caller sees, per shape of the devices module's restriction
 * (restrictionShape: never '' here, only callers restricted to device groups are asked). */
const onVisibleDeviceOf = preparedShapes((db, shape) =>
  db
    .select({ id: elevationRequests.id })
    .from(elevationRequests)
    .where(and(eq(elevationRequests.id, sql.placeholder('id')), restrictedDeviceInPrepared(shape, elevationRequests.deviceId)))
    .prepare(),
);

/** Reads of elevation requests (01 §4.9): list, get, active, and the request a caller may decide on. The names a
 * view shows (device, site, deciders) come from the modules that own them. */
export class ElevationQueries {
  constructor(
    private readonly db: Db,
    private readonly owners: { devices: DevicesService; directory: Directory },
  ) {}

  /** The requests with the names their list and get show. */
  private views(rows: ElevationRow[]): ElevationView[] {
    const hostnames = this.owners.devices.hostnamesOf(rows.map((r) => r.deviceId));
    const siteNames = siteNamesOf(
      this.db,
      rows.map((r) => r.siteId),
    );
    const userNames = this.owners.directory.namesOf(
      rows.flatMap((r) => [r.approvedByUserId, r.deniedByUserId, r.revokedByUserId]),
    );
    const nameOf = (names: Map<string, string>, id: string | null) => (id === null ? null : (names.get(id) ?? null));
    // The rows are this call's own (fresh from the driver): the names are added to them rather than to a copy of
    // every column of each (the response schema puts the fields in its order anyway).
    return rows.map((row) =>
      Object.assign(row, {
        deviceHostname: nameOf(hostnames, row.deviceId),
        siteName: nameOf(siteNames, row.siteId),
        approvedByName: nameOf(userNames, row.approvedByUserId),
        deniedByName: nameOf(userNames, row.deniedByUserId),
        revokedByName: nameOf(userNames, row.revokedByUserId),
      }),
    );
  }

  /** For a caller restricted to device groups (01 §2.6), the condition that a PAM row's device (by default the
   * request's) is in them; undefined for other callers. */
  deviceGroupWhere(ctx: RequestContext, deviceIdColumn: SQLWrapper = elevationRequests.deviceId): SQL | undefined {
    return deviceGroupWhere(this.owners.devices, ctx, deviceIdColumn);
  }

  list(ctx: RequestContext, query: z.infer<typeof ElevationListQuerySchema>) {
    const reach = callerReach(this.db, ctx.caller, query.orgId);
    const pagination = { page: query.page, limit: query.limit, total: 0 };
    if (reach === null) return { success: true as const, requests: [], pagination };
    if (query.siteId) requireSite(this.db, ctx.caller, query.siteId);
    const values: Record<string, unknown> = {
      ...reach.values,
      status: query.status,
      flowType: query.flowType,
      deviceId: query.deviceId,
      siteId: query.siteId,
      from: query.from ? new Date(query.from).toISOString() : undefined,
      to: query.to ? new Date(query.to).toISOString() : undefined,
    };
    const shape =
      reach.shape + shapeOf({ S: query.status, F: query.flowType, D: query.deviceId, I: query.siteId, A: query.from, B: query.to });
    const { rows, total } = readPage(listOf(this.db, shape), values, query);
    return { success: true as const, requests: this.views(rows), pagination: { ...pagination, total } };
  }

  get(ctx: RequestContext, id: string): ElevationView {
    const reach = callerReach(this.db, ctx.caller);
    const row = reach === null ? undefined : getOf(this.db, reach.shape).get({ ...reach.values, id });
    const [view] = row ? this.views([row]) : [];
    if (!view) throw notFound('Elevation request not found');
    return view;
  }

  /** The views of these requests, in the order of the ids. */
  viewsOf(ids: string[]): ElevationView[] {
    if (ids.length === 0) return [];
    const rows = this.views(byIdOf(this.db).rows.all({ ids: JSON.stringify(ids) }));
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id)).filter((r): r is ElevationView => r !== undefined);
  }

  active(ctx: RequestContext, query: z.infer<typeof ElevationActiveQuerySchema>): ElevationView[] {
    const reach = callerReach(this.db, ctx.caller, query.orgId);
    if (reach === null) return [];
    const rows = activeOf(this.db, reach.shape + shapeOf({ D: query.deviceId })).all({
      ...reach.values,
      now: new Date().toISOString(),
      deviceId: query.deviceId,
      limit: ACTIVE_LIMIT,
    });
    return this.views(rows);
  }

  /** A request the caller may decide on: 404 out of the caller's organizations, 403 outside its sites or (01 §2.6)
   * for a device outside its device groups. */
  forDecision(ctx: RequestContext, id: string): ElevationRow {
    const row = byIdOf(this.db).row.get({ id });
    if (!row || !canAccessOrg(this.db, ctx.caller, row.orgId)) throw notFound('Elevation request not found');
    const { siteIds } = ctx.caller;
    if (siteIds !== null && (row.siteId === null || !siteIds.includes(row.siteId))) throw siteAccessDenied();
    // deviceGroupWhere's condition (01 §2.6), prepared per shape of the caller's restriction.
    if (ctx.caller.deviceGroupIds !== null) {
      const scope = this.owners.devices.restrictedScope(ctx);
      if (!onVisibleDeviceOf(this.db, restrictionShape(scope)).get({ ...scope?.values, id: row.id })) throw deviceAccessDenied();
    }
    return row;
  }

  /** The request an assertion challenge is for: one the caller may decide on, still pending (409 else). */
  pendingForChallenge(ctx: RequestContext, id: string): ElevationRow {
    const row = this.forDecision(ctx, id);
    if (row.status !== 'pending') throw notPending(row.status);
    return row;
  }

  /** The status a request has now (after a lost compare-and-swap). */
  currentStatus(id: string): string {
    return byIdOf(this.db).status.get({ id })?.status ?? 'unknown';
  }
}
