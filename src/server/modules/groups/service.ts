import { and, asc, count, desc, eq, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { groups as groupsContract } from '../../../contract/groups.js';
import type { Db } from '../../db/connection.js';
import { deleteById, inJson, insertRow, preparedQueries, preparedShapes, rowById, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { deviceGroupMembers, deviceGroupMembershipLog, deviceGroups, devices } from '../../db/schema/index.js';
import { systemContext, type RequestContext } from '../../context.js';
import { badRequest, deviceGroupAccessDenied, notFound } from '../../errors.js';
import { enqueueJob } from '../../jobs/queue.js';
import { recordAudit } from '../audit/recorder.js';
import { restrictedDeviceInPrepared, restrictionShape, visibleDeviceInPrepared, visibleWherePrepared, type DevicesService } from '../devices/service.js';
import { compileFilter } from '../filters/compile.js';
import { containsPattern } from '../../lib/like.js';
import { preparedSelectPage, readPage } from '../../lib/paging.js';
import type { FiltersService } from '../filters/service.js';
import type { TenancyService } from '../tenancy/service.js';
import { resolveWriteOrg } from '../tenancy/access.js';
import { newId } from '../../db/ids.js';

type Body<K extends 'create' | 'update'> = z.infer<(typeof groupsContract)[K]['body']>;
type GroupRow = typeof deviceGroups.$inferSelect;

/** The job that re-evaluates an organization's dynamic groups after its devices changed. */
export const REEVALUATE_JOB = 'groups.reevaluate-org';
/** Every dynamic group is also re-evaluated this often: conditions on time (lastSeenAt withinLast…) move alone. */
export const PERIODIC_MS = 5 * 60_000;

/** Which of the ids name device groups of the organization (an invitation's deviceGroupIds, a user's reach). */
export function groupsOfOrg(db: Db, orgId: string, ids: readonly string[]): Set<string> {
  if (ids.length === 0) return new Set();
  const rows = groupWrites(db).ofOrgAmong.all({ orgId, ids: JSON.stringify(ids) });
  return new Set(rows.map((r) => r.id));
}

const MATCHED = 'Matched filter conditions';
/** The per-connection temp table of one re-evaluation's difference (device, added|removed). */
const DELTA = 'svc_group_delta';
/** A SQL function answering a random UUID, for the membership-log ids written set-based. */
const UUID_FUNCTION = 'svc_uuid';
const UNMATCHED = 'No longer matches filter conditions';
/** What decides a group's members: a caller restricted to the group may not change it, or it could widen its own
 * reach (01 §2.6). */
const REACH_FIELDS = ['filterConditions', 'filterId', 'siteId', 'type'] as const;

function isoNow(): string {
  return new Date().toISOString();
}

/** One group by id and the member counts of the groups of the JSON array `groupIds`, prepared once per database
 * (db/prepared.ts). */
const groupReads = preparedQueries((db) => ({
  memberCounts: db
    .select({ id: deviceGroupMembers.groupId, n: count() })
    .from(deviceGroupMembers)
    .where(inJson(deviceGroupMembers.groupId, 'groupIds'))
    .groupBy(deviceGroupMembers.groupId)
    .prepare(),
}));

/** The statements of the groups' writes and of the reads they make, prepared once per database. */
const groupWrites = preparedQueries((db) => {
  const m = deviceGroupMembers;
  const member = and(eq(m.groupId, sql.placeholder('groupId')), eq(m.deviceId, sql.placeholder('deviceId')));
  return {
    /** Those of the groups of the JSON array `ids` that belong to organization `orgId`. */
    ofOrgAmong: db
      .select({ id: deviceGroups.id })
      .from(deviceGroups)
      .where(and(eq(deviceGroups.orgId, sql.placeholder('orgId')), inJson(deviceGroups.id, 'ids')))
      .prepare(),
    /** How many groups have `parentId` as their parent. */
    childCount: db.select({ n: count() }).from(deviceGroups).where(eq(deviceGroups.parentId, sql.placeholder('parentId'))).prepare(),
    /** The parent of group `id`. */
    parentOf: db.select({ p: deviceGroups.parentId }).from(deviceGroups).where(eq(deviceGroups.id, sql.placeholder('id'))).prepare(),
    /** A dynamic group of organization `orgId`, if there is one. */
    anyDynamicOf: db
      .select({ id: deviceGroups.id })
      .from(deviceGroups)
      .where(and(eq(deviceGroups.orgId, sql.placeholder('orgId')), eq(deviceGroups.type, 'dynamic')))
      .limit(1)
      .prepare(),
    /** The dynamic groups of organization `orgId`, and of every organization. */
    dynamicOf: rowQuery(db, deviceGroups, and(eq(deviceGroups.type, 'dynamic'), eq(deviceGroups.orgId, sql.placeholder('orgId')))),
    allDynamic: rowQuery(db, deviceGroups, eq(deviceGroups.type, 'dynamic')),
    /** Group `id` was evaluated `at`. */
    markEvaluated: db
      .update(deviceGroups)
      .set({ evaluatedAt: sql`${sql.placeholder('at')}` })
      .where(eq(deviceGroups.id, sql.placeholder('id')))
      .prepare(),
    /** The membership of device `deviceId` in group `groupId`. */
    member: rowQuery(db, m, member),
    /** Adds device `deviceId` to group `groupId` unless it is a member (0 changes), by `addedBy` at `at`. */
    addMember: db
      .insert(m)
      .values({
        groupId: sql`${sql.placeholder('groupId')}`,
        deviceId: sql`${sql.placeholder('deviceId')}`,
        isPinned: false,
        addedAt: sql`${sql.placeholder('at')}`,
        addedBy: sql`${sql.placeholder('addedBy')}`,
      })
      .onConflictDoNothing()
      .prepare(),
    removeMember: db.delete(m).where(member).prepare(),
    /** Pins the member at `pinnedAt`; unpins it. */
    pin: db
      .update(m)
      .set({ isPinned: true, pinnedAt: sql`${sql.placeholder('pinnedAt')}` })
      .where(member)
      .prepare(),
    unpin: db.update(m).set({ isPinned: false, pinnedAt: null }).where(member).prepare(),
  };
});

/** Those of the devices of the JSON array `ids` in organization `orgId` that a caller sees, per VisibleScope shape
 * (devices/service.ts). */
const visibleDevicesOfOrgAmong = preparedShapes((db, shape) =>
  db
    .select({ id: devices.id })
    .from(devices)
    .where(and(inJson(devices.id, 'ids'), eq(devices.orgId, sql.placeholder('orgId')), visibleWherePrepared(shape)))
    .prepare(),
);

/** The groups of a device (GET /devices/:id), prepared once per database. */
const deviceGroupsOf = preparedQueries((db) =>
  db
    .select({ groupId: deviceGroups.id, groupName: deviceGroups.name, groupType: deviceGroups.type, addedAt: deviceGroupMembers.addedAt, addedBy: deviceGroupMembers.addedBy })
    .from(deviceGroupMembers)
    .innerJoin(deviceGroups, eq(deviceGroups.id, deviceGroupMembers.groupId))
    .where(eq(deviceGroupMembers.deviceId, sql.placeholder('deviceId')))
    .orderBy(asc(deviceGroups.name))
    .prepare(),
);

/** The visible members of group `groupId`, per the caller's VisibleScope shape (devices/service.ts). */
const membersOf = preparedShapes((db, shape) =>
  db
    .select({
      deviceId: deviceGroupMembers.deviceId,
      hostname: devices.hostname,
      displayName: devices.displayName,
      status: devices.status,
      osType: devices.osType,
      isPinned: deviceGroupMembers.isPinned,
      addedAt: deviceGroupMembers.addedAt,
      addedBy: deviceGroupMembers.addedBy,
    })
    .from(deviceGroupMembers)
    .innerJoin(devices, eq(devices.id, deviceGroupMembers.deviceId))
    .where(and(eq(deviceGroupMembers.groupId, sql.placeholder('groupId')), visibleWherePrepared(shape)))
    .orderBy(asc(devices.hostname), asc(devices.id))
    .prepare(),
);

/** A page of a group's membership log and its total, per shape `<filters>:<restriction>`: filters `d` deviceId, `a`
 * action; then the caller's device restriction (devices' restrictionShape). */
const membershipLogOf = preparedShapes((db, shape) => {
  const l = deviceGroupMembershipLog;
  const [filters = '', restriction = ''] = shape.split(':');
  const where = and(
    eq(l.groupId, sql.placeholder('groupId')),
    ...shapeConditions(filters, {
      d: () => eq(l.deviceId, sql.placeholder('deviceId')),
      a: () => eq(l.action, sql.placeholder('action')),
    }),
    restrictedDeviceInPrepared(restriction, l.deviceId),
  );
  const select = db
    .select({ id: l.id, groupId: l.groupId, deviceId: l.deviceId, hostname: devices.hostname, displayName: devices.displayName, action: l.action, reason: l.reason, createdAt: l.createdAt })
    .from(l)
    .leftJoin(devices, eq(devices.id, l.deviceId))
    .$dynamic();
  return preparedSelectPage(db, l, select, where, [desc(l.createdAt), desc(l.id)]);
});

/** Member counts of the groups of the JSON array `ids` (`groupIds` names the scope's groups), among the devices
 * visible under a VisibleScope shape. */
const visibleMemberCountsOf = preparedShapes((db, shape) =>
  db
    .select({ id: deviceGroupMembers.groupId, n: count() })
    .from(deviceGroupMembers)
    .where(and(inJson(deviceGroupMembers.groupId, 'ids'), visibleDeviceInPrepared(shape, deviceGroupMembers.deviceId)))
    .groupBy(deviceGroupMembers.groupId)
    .prepare(),
);

/** The groups of a list, per shape: which filters the request has, as letters (o the organizations of the JSON
 * array `orgIds`, s siteId, t type, p parentId, q name LIKE `pattern`). */
const groupListOf = preparedShapes((db, shape) =>
  db
    .select()
    .from(deviceGroups)
    .where(
      and(
        ...shapeConditions(shape, {
          o: () => inJson(deviceGroups.orgId, 'orgIds'),
          s: () => eq(deviceGroups.siteId, sql.placeholder('siteId')),
          t: () => eq(deviceGroups.type, sql.placeholder('type')),
          p: () => eq(deviceGroups.parentId, sql.placeholder('parentId')),
          q: () => sql`${deviceGroups.name} LIKE ${sql.placeholder('pattern')} ESCAPE '\\'`,
        }),
      ),
    )
    .orderBy(asc(deviceGroups.name), asc(deviceGroups.id))
    .prepare(),
);

/**
 * Device groups (05 wire notes "4.7"). Membership is stored: static groups by hand, dynamic groups computed by
 * the filter compiler and re-evaluated by a durable per-organization job when devices change (and periodically),
 * never per request. Pins keep a device in a dynamic group; every change is in the membership log.
 */
export class GroupsService {
  constructor(
    private readonly db: Db,
    private readonly tenancy: TenancyService,
    private readonly devices: DevicesService,
    private readonly filters: FiltersService,
  ) {
    db.$client.function(UUID_FUNCTION, { deterministic: false }, newId);
    db.$client.exec(`CREATE TEMP TABLE IF NOT EXISTS ${DELTA} (device_id TEXT NOT NULL, action TEXT NOT NULL)`);
  }

  // ---- reads ----

  list(ctx: RequestContext, query: z.infer<(typeof groupsContract)['list']['query']>) {
    const reach = query.orgId ? [this.tenancy.requireOrg(ctx, query.orgId).id] : this.tenancy.accessibleOrgIds(ctx);
    if (reach !== null && reach.length === 0) return { data: [], total: 0 };
    const shape = shapeOf({ o: reach !== null, s: query.siteId, t: query.type, p: query.parentId, q: query.search });
    const rows = groupListOf(this.db, shape).all({
      orgIds: JSON.stringify(reach),
      siteId: query.siteId,
      type: query.type,
      parentId: query.parentId,
      pattern: query.search ? containsPattern(query.search) : null,
    });
    const counts = this.memberCounts(ctx, rows.map((r) => r.id));
    return { data: rows.map((r) => this.out(ctx, r, counts.get(r.id) ?? 0)), total: rows.length };
  }

  get(ctx: RequestContext, id: string) {
    return { data: this.out(ctx, this.findVisible(ctx, id)) };
  }

  members(ctx: RequestContext, id: string) {
    const group = this.findVisible(ctx, id);
    const scope = this.devices.visibleScope(ctx);
    const data = scope ? membersOf(this.db, scope.shape).all({ ...scope.values, groupId: group.id }) : [];
    return { data, total: data.length };
  }

  /** The groups a device is in (GET /devices/:id). */
  groupsOfDevice(deviceId: string) {
    return deviceGroupsOf(this.db).all({ deviceId });
  }

  membershipLog(ctx: RequestContext, id: string, query: z.infer<(typeof groupsContract)['membershipLog']['query']>) {
    const group = this.findVisible(ctx, id);
    const { limit, offset } = query;
    // 01 §2.6: a caller restricted to sites or device groups sees only the entries of devices it may see.
    const restriction = this.devices.restrictedScope(ctx);
    if (restriction === null) return { data: [], total: 0, limit, offset };
    const shape = `${shapeOf({ d: query.deviceId, a: query.action })}:${restrictionShape(restriction)}`;
    const values = { ...restriction?.values, groupId: group.id, deviceId: query.deviceId, action: query.action };
    const { rows: data, total } = readPage(membershipLogOf(this.db, shape), values, { limit, offset });
    return { data, total, limit, offset };
  }

  preview(ctx: RequestContext, id: string, limit = 10) {
    const group = this.findVisible(ctx, id);
    if (group.type !== 'dynamic' || !group.filterConditions) throw badRequest('Preview is only available for dynamic groups', 'GROUP_NOT_DYNAMIC');
    const evaluatedAt = new Date();
    // The group's members are evaluated in its own scope; the caller is shown only those it may see (01 §2.6).
    const where = and(this.matchOf(group, evaluatedAt), this.devices.restrictedDeviceWhere(ctx, devices.id)) as SQL;
    return { data: { ...this.filters.previewOf(where, limit), evaluatedAt: evaluatedAt.toISOString() } };
  }

  // ---- writes ----

  create(ctx: RequestContext, body: Body<'create'>) {
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
    const conditions = body.filterId !== undefined ? this.filters.conditionsOf(ctx, body.filterId) : (body.filterConditions ?? null);
    const type = body.type ?? (conditions ? 'dynamic' : 'static');
    if (type === 'dynamic' && !conditions) throw badRequest('Invalid filter conditions', 'INVALID_FILTER', { details: ['A dynamic group needs filterConditions'] });
    if (type === 'static' && body.filterConditions) throw badRequest('A static group has no filter conditions', 'GROUP_NOT_DYNAMIC');
    const fields = conditions ? compileFilter(conditions, { message: 'Invalid filter conditions' }).fields : [];
    if (body.siteId) this.requireSiteOfOrg(ctx, body.siteId, org.id);
    if (body.parentId) this.requireParent(ctx, body.parentId, org.id);
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, deviceGroups, {
        orgId: org.id,
        siteId: body.siteId ?? null,
        name: body.name,
        type,
        filterConditions: conditions,
        filterFieldsUsed: fields,
        parentId: body.parentId ?? null,
      });
      if (type === 'static' && body.deviceIds) this.addStatic(ctx, row, body.deviceIds);
      if (type === 'dynamic') this.reevaluate(row, 'Group created');
      this.audit(ctx, 'device_group.create', row, { type, filterFieldsUsed: fields });
      return { data: this.out(ctx, this.findRow(row.id)) };
    })();
  }

  update(ctx: RequestContext, id: string, body: Body<'update'>) {
    const group = this.findVisible(ctx, id);
    this.requireReachKept(ctx, group, body);
    if (body.filterConditions !== undefined && group.type !== 'dynamic') throw badRequest('A static group has no filter conditions', 'GROUP_NOT_DYNAMIC');
    const fields = body.filterConditions ? compileFilter(body.filterConditions, { message: 'Invalid filter conditions' }).fields : undefined;
    if (body.siteId) this.requireSiteOfOrg(ctx, body.siteId, group.orgId);
    if (body.parentId) {
      if (body.parentId === id) throw badRequest('A group cannot be its own parent', 'GROUP_PARENT_CYCLE');
      this.requireParent(ctx, body.parentId, group.orgId);
      if (this.ancestorsOf(body.parentId).includes(id)) throw badRequest('A group cannot be its own ancestor', 'GROUP_PARENT_CYCLE');
    }
    return this.db.$client.transaction(() => {
      const row = updateRow(this.db, deviceGroups, id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.siteId !== undefined ? { siteId: body.siteId } : {}),
        ...(body.parentId !== undefined ? { parentId: body.parentId } : {}),
        ...(body.filterConditions !== undefined ? { filterConditions: body.filterConditions, filterFieldsUsed: fields ?? [] } : {}),
        updatedAt: isoNow(),
      });
      if (!row) throw notFound('Group not found', 'GROUP_NOT_FOUND');
      if (row.type === 'dynamic' && (body.filterConditions !== undefined || body.siteId !== undefined)) this.reevaluate(row, 'Group conditions changed');
      this.audit(ctx, 'device_group.update', row, { changedFields: Object.keys(body) });
      return { data: this.out(ctx, row) };
    })();
  }

  delete(ctx: RequestContext, id: string) {
    const group = this.findVisible(ctx, id);
    const children = groupWrites(this.db).childCount.get({ parentId: id })?.n ?? 0;
    if (children > 0) throw badRequest('Cannot delete group with child groups', 'GROUP_HAS_CHILDREN');
    return this.db.$client.transaction(() => {
      const out = this.out(ctx, group);
      deleteById(this.db, deviceGroups, id);
      this.audit(ctx, 'device_group.delete', group, { type: group.type });
      return { data: out };
    })();
  }

  addMembers(ctx: RequestContext, id: string, deviceIds: string[]) {
    const group = this.findVisible(ctx, id);
    if (group.type === 'dynamic') throw badRequest('Cannot manually add devices to a dynamic group', 'GROUP_IS_DYNAMIC');
    return this.db.$client.transaction(() => {
      const result = this.addStatic(ctx, group, deviceIds);
      this.audit(ctx, 'device_group.members.add', group, { added: result.added, skipped: result.skipped });
      return { data: result };
    })();
  }

  removeMember(ctx: RequestContext, id: string, deviceId: string) {
    const group = this.findVisible(ctx, id);
    // A device the caller may not see is 404 whatever its membership (01 §2.6).
    this.devices.findVisible(ctx, deviceId);
    if (group.type === 'dynamic') throw badRequest('Cannot manually remove devices from a dynamic group; unpin it or change the conditions', 'GROUP_IS_DYNAMIC');
    return this.db.$client.transaction(() => {
      const gone = groupWrites(this.db).removeMember.run({ groupId: id, deviceId }).changes;
      if (gone === 0) throw notFound('Device is not a member of this group', 'GROUP_MEMBER_NOT_FOUND');
      this.log(id, [deviceId], 'removed', `Removed by ${ctx.caller.email ?? ctx.caller.name ?? 'a user'}`);
      this.audit(ctx, 'device_group.members.remove', group, { deviceId });
      return { data: { deviceId, groupId: id, removed: true as const } };
    })();
  }

  pin(ctx: RequestContext, id: string, deviceId: string) {
    const group = this.requireDynamic(ctx, id);
    const device = this.devices.findVisible(ctx, deviceId);
    if (device.orgId !== group.orgId) throw badRequest('Device is not in the organization of the group', 'DEVICE_OTHER_ORG');
    const pinnedAt = isoNow();
    return this.db.$client.transaction(() => {
      const existing = this.memberRow(id, deviceId);
      if (existing) {
        groupWrites(this.db).pin.run({ groupId: id, deviceId, pinnedAt });
      } else {
        insertRow(this.db, deviceGroupMembers, { groupId: id, deviceId, isPinned: true, pinnedAt, addedAt: pinnedAt, addedBy: ctx.caller.userId });
        this.log(id, [deviceId], 'added', 'Pinned');
      }
      this.audit(ctx, 'device_group.pin', group, { deviceId });
      return { data: { groupId: id, deviceId, isPinned: true as const, pinnedAt } };
    })();
  }

  unpin(ctx: RequestContext, id: string, deviceId: string) {
    const group = this.requireDynamic(ctx, id);
    this.devices.findVisible(ctx, deviceId);
    const existing = this.memberRow(id, deviceId);
    if (!existing?.isPinned) throw notFound('Device is not pinned in this group', 'GROUP_PIN_NOT_FOUND');
    const unpinnedAt = isoNow();
    return this.db.$client.transaction(() => {
      groupWrites(this.db).unpin.run({ groupId: id, deviceId });
      // Unpinned, the device stays only while the conditions match.
      this.reevaluate(group, 'Unpinned');
      this.audit(ctx, 'device_group.unpin', group, { deviceId });
      return { data: { groupId: id, deviceId, isPinned: false as const, unpinnedAt } };
    })();
  }

  // ---- dynamic membership ----

  /** Devices changed in an organization: one pending re-evaluation job for it (durable, coalesced). */
  deviceChanged(orgId: string): void {
    const dynamic = groupWrites(this.db).anyDynamicOf.get({ orgId });
    if (!dynamic) return;
    enqueueJob(this.db, REEVALUATE_JOB, { orgId }, { uniqueKey: `${REEVALUATE_JOB}:${orgId}`, runAt: new Date(Date.now() + 1000) });
  }

  /** Re-evaluates every dynamic group of an organization (or of all, without one); answers the changes made. */
  reevaluateOrg(orgId: string | null, now = new Date()): { added: number; removed: number } {
    const queries = groupWrites(this.db);
    const rows = orgId ? queries.dynamicOf.all({ orgId }) : queries.allDynamic.all({});
    const total = { added: 0, removed: 0 };
    for (const row of rows) {
      const r = this.db.$client.transaction(() => this.reevaluate(row, 'Device changed', now))();
      total.added += r.added;
      total.removed += r.removed;
    }
    return total;
  }

  /**
   * Brings the stored membership of a dynamic group in line with its conditions, in SQL (no device is evaluated
   * in JavaScript): the newly matching devices go into a per-connection temp table; the members that no longer
   * match are looked for only when the counts allow one (members − (matching − new) > 0: in the steady state,
   * nothing changed, the count over devices_filter_idx answers instead of a second anti-join over every member);
   * then the additions, removals and their membership-log rows are written from the temp table, set-based.
   */
  reevaluate(group: GroupRow, why: string, now = new Date()): { added: number; removed: number } {
    if (group.type !== 'dynamic' || !group.filterConditions) return { added: 0, removed: 0 };
    const at = now.toISOString();
    const match = this.matchOf(group, now);
    const m = deviceGroupMembers;
    const l = deviceGroupMembershipLog;
    this.db.run(sql`DELETE FROM temp.${sql.identifier(DELTA)}`);
    const entering = this.db.run(sql`INSERT INTO temp.${sql.identifier(DELTA)} (device_id, action)
      SELECT ${devices.id}, 'added' FROM ${devices} WHERE ${match}
        AND NOT EXISTS (SELECT 1 FROM ${m} WHERE ${m.groupId} = ${group.id} AND ${m.deviceId} = ${devices.id})`).changes;
    const matching = this.db.select({ n: count() }).from(devices).where(match).get()?.n ?? 0;
    const members = this.memberCounts(null, [group.id]).get(group.id) ?? 0;
    if (members - (matching - entering) > 0) {
      this.db.run(sql`INSERT INTO temp.${sql.identifier(DELTA)} (device_id, action)
        SELECT ${m.deviceId}, 'removed' FROM ${m} WHERE ${m.groupId} = ${group.id} AND ${m.isPinned} = 0
          AND ${m.deviceId} NOT IN (SELECT ${devices.id} FROM ${devices} WHERE ${match})`);
    }
    const added = this.db.run(sql`INSERT INTO ${m} (group_id, device_id, is_pinned, added_at, added_by)
      SELECT ${group.id}, device_id, 0, ${at}, NULL FROM temp.${sql.identifier(DELTA)} WHERE action = 'added'`).changes;
    const removed = this.db.run(sql`DELETE FROM ${m} WHERE ${m.groupId} = ${group.id}
      AND ${m.deviceId} IN (SELECT device_id FROM temp.${sql.identifier(DELTA)} WHERE action = 'removed')`).changes;
    if (added + removed > 0) {
      this.db.run(sql`INSERT INTO ${l} (id, group_id, device_id, action, reason, created_at)
        SELECT ${sql.raw(UUID_FUNCTION)}(), ${group.id}, device_id, action,
          CASE action WHEN 'added' THEN ${`${MATCHED} (${why})`} ELSE ${`${UNMATCHED} (${why})`} END, ${at}
        FROM temp.${sql.identifier(DELTA)}`);
    }
    groupWrites(this.db).markEvaluated.run({ id: group.id, at });
    return { added, removed };
  }

  /** The devices a dynamic group's conditions select: its organization (and site), live devices unless the
   * conditions name status. The system context: the group's own scope is the limit, not a caller's. */
  private matchOf(group: GroupRow, now: Date): SQL {
    const { where } = this.filters.matchWhere(systemContext(), group.filterConditions, [group.orgId], { now, message: 'Invalid filter conditions' });
    const site = group.siteId ? eq(devices.siteId, group.siteId) : undefined;
    return and(where ?? sql`0 = 1`, site) as SQL;
  }

  // ---- helpers ----

  private addStatic(ctx: RequestContext, group: GroupRow, deviceIds: string[]) {
    const unique = [...new Set(deviceIds)];
    const scope = this.devices.visibleScope(ctx);
    const valid = scope
      ? visibleDevicesOfOrgAmong(this.db, scope.shape)
          .all({ ...scope.values, ids: JSON.stringify(unique), orgId: group.orgId })
          .map((r) => r.id)
      : [];
    const at = isoNow();
    // One prepared insert a device; a member already there is skipped (0 changes), as ON CONFLICT DO NOTHING was.
    const addMember = groupWrites(this.db).addMember;
    const inserted = valid.filter((deviceId) => addMember.run({ groupId: group.id, deviceId, at, addedBy: ctx.caller.userId ?? null }).changes === 1);
    this.log(group.id, inserted, 'added', `Added by ${ctx.caller.email ?? ctx.caller.name ?? 'a user'}`, at);
    return { added: inserted.length, skipped: unique.length - inserted.length, total: this.memberCounts(ctx, [group.id]).get(group.id) ?? 0 };
  }

  private log(groupId: string, deviceIds: string[], action: 'added' | 'removed', reason: string, at = isoNow()): void {
    for (const deviceId of deviceIds) insertRow(this.db, deviceGroupMembershipLog, { groupId, deviceId, action, reason, createdAt: at });
  }

  private memberRow(groupId: string, deviceId: string) {
    return groupWrites(this.db).member.get({ groupId, deviceId });
  }

  /** The member counts of groups: the members `ctx` may see (01 §2.6), or every member without one. */
  private memberCounts(ctx: RequestContext | null, ids: string[]): Map<string, number> {
    if (ids.length === 0) return new Map();
    const groupIds = JSON.stringify(ids);
    // Only a caller restricted to sites or device groups is limited to the devices it sees.
    const restriction = ctx === null ? undefined : this.devices.restrictedScope(ctx);
    if (restriction === null) return new Map();
    const rows = restriction
      ? visibleMemberCountsOf(this.db, restriction.shape).all({ ...restriction.values, ids: groupIds })
      : groupReads(this.db).memberCounts.all({ groupIds });
    return new Map(rows.map((r) => [r.id, r.n]));
  }

  /** Refuses a change of what decides the members of a group the caller's reach is restricted to (REACH_FIELDS). */
  private requireReachKept(ctx: RequestContext, group: GroupRow, body: Body<'update'>): void {
    if (ctx.caller.deviceGroupIds === null || !ctx.caller.deviceGroupIds.includes(group.id)) return;
    const asked: Record<string, unknown> = body;
    // A filterId is never the current value: it brings a saved filter's conditions. The same value again is no change.
    const current: Record<string, unknown> = { filterConditions: group.filterConditions, siteId: group.siteId, type: group.type };
    const changed = REACH_FIELDS.some((k) => asked[k] !== undefined && JSON.stringify(asked[k]) !== JSON.stringify(current[k]));
    if (changed) throw deviceGroupAccessDenied();
  }

  private out(ctx: RequestContext, row: GroupRow, deviceCount?: number) {
    return {
      id: row.id,
      orgId: row.orgId,
      siteId: row.siteId,
      name: row.name,
      type: row.type,
      rules: row.rules,
      filterConditions: row.filterConditions,
      filterFieldsUsed: row.filterFieldsUsed,
      parentId: row.parentId,
      deviceCount: deviceCount ?? this.memberCounts(ctx, [row.id]).get(row.id) ?? 0,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
    };
  }

  private findRow(id: string): GroupRow {
    const row = rowById(this.db, deviceGroups, id);
    if (!row) throw notFound('Group not found', 'GROUP_NOT_FOUND');
    return row;
  }

  private findVisible(ctx: RequestContext, id: string): GroupRow {
    const row = this.findRow(id);
    if (!this.tenancy.canAccessOrg(ctx, row.orgId)) throw notFound('Group not found', 'GROUP_NOT_FOUND');
    return row;
  }

  private requireDynamic(ctx: RequestContext, id: string): GroupRow {
    const group = this.findVisible(ctx, id);
    if (group.type !== 'dynamic') throw badRequest('Pins are only available for dynamic groups', 'GROUP_NOT_DYNAMIC');
    return group;
  }

  private requireParent(ctx: RequestContext, parentId: string, orgId: string): void {
    const parent = this.findVisible(ctx, parentId);
    if (parent.orgId !== orgId) throw badRequest('The parent group belongs to another organization', 'GROUP_PARENT_OTHER_ORG');
  }

  private ancestorsOf(id: string): string[] {
    const out: string[] = [];
    let current: string | null = id;
    while (current && out.length < 100) {
      out.push(current);
      current = groupWrites(this.db).parentOf.get({ id: current })?.p ?? null;
    }
    return out;
  }

  private requireSiteOfOrg(ctx: RequestContext, siteId: string, orgId: string): void {
    const site = this.tenancy.requireSite(ctx, siteId);
    if (site.orgId !== orgId) throw badRequest('The site belongs to another organization', 'SITE_OTHER_ORG');
  }

  private audit(ctx: RequestContext, action: string, row: GroupRow, details: Record<string, unknown>): void {
    recordAudit(this.db, ctx, { action, resourceType: 'device_group', resourceId: row.id, resourceName: row.name, orgId: row.orgId, details });
  }
}
