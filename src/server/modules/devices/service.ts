import { randomUUID } from 'node:crypto';
import { and, asc, count, desc, eq, getTableColumns, inArray, ne, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { SQLiteUpdateSetSource } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import { AGENT_HEALTH, AGENT_TOKEN_PATTERN, type AgentEnrollSchema, type AgentHeartbeatSchema } from '../../../contract/agents.js';
import type { DeviceListQuerySchema, DeviceUpdateSchema } from '../../../contract/devices.js';
import type { Db } from '../../db/connection.js';
import { driverValue, inJson, insertRow, preparedQueries, preparedShapes, rowById, rowQuery, selectRows, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { deviceGroupMembers, devices, organizations } from '../../db/schema/index.js';
import { systemContext, type RequestContext } from '../../context.js';
import { DomainError, badRequest, forbidden, notFound, partnerInactive, unauthorized } from '../../errors.js';
import { publishEvent } from '../../jobs/queue.js';
import { namesById } from '../../lib/names.js';
import { pageOfRows, paged, preparedPage, readPage, type Paged } from '../../lib/paging.js';
import { secureRandomBytes, sha256Hex } from '../../security/crypto.js';
import { recentMetricSamples } from '../alerts/queries.js';
import { recordAudit } from '../audit/recorder.js';
import { cancelOpenCommandsOf } from '../device-commands/service.js';
import { cancelActiveExecutionsOf } from '../scripts/service.js';
import { failOpenResultsOf } from '../software/service.js';
import { visibleOr404 } from '../shared/visible.js';
import type { EnrollmentKeysService } from '../enrollment-keys/service.js';
import { compileFilter, type FilterCondition } from '../filters/compile.js';
import { containsPattern } from '../../lib/like.js';
import { callerReach, requireOrg, requireOrgRow, requireSite, type CallerReach } from '../tenancy/access.js';
import type { TenancyService } from '../tenancy/service.js';
import { agentCaller } from './agent-authenticator.js';
import { inventoryColumns, type ReportedSoftware } from './inventory.js';
import { decodeCursor, deviceOut, type DeviceOut, encodeCursor, mergeCustomFields, parseInlineFilter, sortKey, sortValue, type DeviceRow } from './out.js';

/** A device in one of the groups of the JSON array `groupIds` (the filters' `groupId` field, filters/compile.ts
 * inDeviceGroups): a placeholder, or bound from `values` (db/prepared.ts inJson). */
function inGroups(values?: ReachValues): SQL {
  return sql`(${devices.id} IN (SELECT ${deviceGroupMembers.deviceId} FROM ${deviceGroupMembers} WHERE ${inJson(deviceGroupMembers.groupId, 'groupIds', values)}))`;
}

/** For another module's device-keyed rows (alerts, PAM's pending approvals): their device is in one of the groups
 * of `groupIds` (a reach's `g`, 01 §2.6), as a placeholder or bound from `values`. */
export function deviceInGroups(deviceIdColumn: SQLWrapper, values?: ReachValues): SQL {
  return sql`${deviceIdColumn} IN (SELECT ${devices.id} FROM ${devices} WHERE ${inGroups(values)})`;
}

/** A device of a live organization: a deleted organization's devices go with it (GET /devices/:id is 404 for them),
 * for callers of no organization restriction too (system callers). */
const ofLiveOrg = sql`${devices.orgId} IN (SELECT ${organizations.id} FROM ${organizations} WHERE ${organizations.deletedAt} IS NULL)`;

type ReachValues = CallerReach['values'];

/** The devices a caller reaches (tenancy callerReach), by its letters: 'o' the organizations of `orgIds` (else those
 * still live), 's' the sites of `siteIds`, 'g' the device groups of `groupIds`; other letters are ignored. The lists
 * are placeholders, or bound from `values` for a statement built per call: one condition for both. */
function reachWhere(shape: string, values?: ReachValues): SQL {
  return and(
    shape.includes('o') ? inJson(devices.orgId, 'orgIds', values) : ofLiveOrg,
    ...shapeConditions(shape, { s: () => inJson(devices.siteId, 'siteIds', values), g: () => inGroups(values) }),
  ) as SQL;
}

/** A caller's device visibility (DevicesService.visibleScope): the caller's reach (tenancy callerReach). */
export type VisibleScope = CallerReach;

/** visibleWhere's condition over `devices` for a VisibleScope shape, with its placeholders. A caller keeps the
 * scope's shape as its own part of a longer shape string (its letters clash). */
export function visibleWherePrepared(shape: string): SQL {
  return reachWhere(shape);
}

/** DEVICEIDCOLUMN names an existing device visible under the VisibleScope shape (for another module's device-keyed
 * rows); with `values`, bound in place. */
export function visibleDeviceInPrepared(shape: string, deviceIdColumn: SQLWrapper, values?: ReachValues): SQL {
  return sql`${deviceIdColumn} IN (SELECT ${devices.id} FROM ${devices} WHERE ${reachWhere(shape, values)})`;
}

/** DevicesService.restrictedScope as its part of a shape string: '' no restriction, 'X' nothing visible, else 'R'
 * and the VisibleScope's shape. Keep it apart from the caller's own letters (e.g. after a ':'). */
export function restrictionShape(scope: VisibleScope | null | undefined): string {
  return scope === undefined ? '' : scope === null ? 'X' : `R${scope.shape}`;
}

/** restrictedDeviceWhere for a statement prepared once, by restrictionShape: undefined for '' (no condition). */
export function restrictedDeviceInPrepared(shape: string, deviceIdColumn: SQLWrapper, values?: ReachValues): SQL | undefined {
  if (shape === '') return undefined;
  return shape === 'X' ? sql`0 = 1` : visibleDeviceInPrepared(shape.slice(1), deviceIdColumn, values);
}

/** GET /search's devices, per VisibleScope shape: hostname, display name or last user LIKE `pattern`. */
const deviceSearchOf = preparedShapes((db, shape) => {
  const pattern = sql.placeholder('pattern');
  return db
    .select({ id: devices.id, hostname: devices.hostname, displayName: devices.displayName, status: devices.status, lastUser: devices.lastUser })
    .from(devices)
    .where(
      and(
        visibleWherePrepared(shape),
        sql`(${devices.hostname} LIKE ${pattern} ESCAPE '\\' OR ${devices.displayName} LIKE ${pattern} ESCAPE '\\' OR ${devices.lastUser} LIKE ${pattern} ESCAPE '\\')`,
      ),
    )
    .orderBy(asc(devices.hostname))
    .limit(sql.placeholder('limit'))
    .prepare();
});

/** GET /tags, per VisibleScope shape: the tags of visible live devices by count; `pattern` null for all. */
const tagCountsOf = preparedShapes((db, shape) => {
  const tag = sql<string>`t.value`;
  const pattern = sql.placeholder('pattern');
  return db
    .select({ tag, n: count() })
    .from(sql`${devices}, json_each(${devices.tags}) AS t`)
    .where(and(visibleWherePrepared(shape), ne(devices.status, 'decommissioned'), sql`(${pattern} IS NULL OR t.value LIKE ${pattern} ESCAPE '\\')`))
    .groupBy(tag)
    .orderBy(desc(count()), asc(tag))
    .limit(1000)
    .prepare();
});

/** GET /tags/devices, per VisibleScope shape: the filter compiler's tags `contains` (filters/compile.ts element():
 * the lower-cased JSON text holds the JSON string of the tag, `needle`). */
const devicesWithTagOf = preparedShapes((db, shape) =>
  db
    .select({ id: devices.id, hostname: devices.hostname, displayName: devices.displayName, status: devices.status, osType: devices.osType, tags: devices.tags })
    .from(devices)
    .where(and(visibleWherePrepared(shape), sql`(instr(lower(${devices.tags}), ${sql.placeholder('needle')}) > 0)`, ne(devices.status, 'decommissioned')))
    .orderBy(asc(devices.hostname), asc(devices.id))
    .limit(5000)
    .prepare(),
);

/** The read paths of one device, prepared once per database (db/prepared.ts). */
const deviceQueries = preparedQueries((db) => ({
  // Every agent request finds its device by agent id: what the agent routes need of it, or (a heartbeat) all of it.
  byAgentId: db
    .select({ id: devices.id, orgId: devices.orgId, siteId: devices.siteId, status: devices.status, agentId: devices.agentId, hostname: devices.hostname })
    .from(devices)
    .where(eq(devices.agentId, sql.placeholder('agentId')))
    .prepare(),
  rowByAgentId: rowQuery(db, devices, eq(devices.agentId, sql.placeholder('agentId'))),
  inGroups: db.select({ id: devices.id }).from(devices).where(and(eq(devices.id, sql.placeholder('id')), inGroups())).prepare(),
  // A re-enrolment finds its device by the hash of its current token.
  rowByTokenHash: rowQuery(db, devices, eq(devices.agentTokenHash, sql.placeholder('tokenHash'))),
  customFieldsOf: db.select({ customFields: devices.customFields }).from(devices).where(eq(devices.id, sql.placeholder('id'))).prepare(),
  // The caps of 01 §2.3 and §2.4: the devices of an organization, of a partner, that are not decommissioned.
  liveOfOrg: db
    .select({ n: count() })
    .from(devices)
    .where(and(eq(devices.orgId, sql.placeholder('orgId')), ne(devices.status, 'decommissioned')))
    .prepare(),
  liveOfPartner: db
    .select({ n: count() })
    .from(devices)
    .where(and(eq(devices.partnerId, sql.placeholder('partnerId')), ne(devices.status, 'decommissioned')))
    .prepare(),
}));

/** The devices of an organization the alert evaluator checks (DevicesService.forEvaluation), per shape: 'i' only
 * those of the JSON array `ids`. */
const forEvaluationOf = preparedShapes((db, shape) =>
  db
    .select({ id: devices.id, orgId: devices.orgId, siteId: devices.siteId, hostname: devices.hostname, status: devices.status, tags: devices.tags })
    .from(devices)
    .where(and(eq(devices.orgId, sql.placeholder('orgId')), ne(devices.status, 'decommissioned'), ...shapeConditions(shape, { i: () => inJson(devices.id, 'ids') })))
    .orderBy(asc(devices.hostname), asc(devices.id))
    .prepare(),
);

const DEVICE_COLUMNS = getTableColumns(devices);

/** The key of a heartbeat's write in heartbeatWriteOf (what `id` is bound as: no column has that name). */
const HEARTBEAT_ID = '\0id';

/**
 * A heartbeat's write, per set of columns it sets (the shape: their names joined by ','): those columns of the
 * device `HEARTBEAT_ID`, unless it was decommissioned meanwhile. The values are bound as the driver takes them
 * (heartbeatValues): a placeholder bare, not as drizzle's column parameter, which would encode a null too.
 */
const heartbeatWriteOf = preparedShapes((db, shape) =>
  db
    .update(devices)
    .set(Object.fromEntries(shape.split(',').map((name) => [name, sql`${sql.placeholder(name)}`])) as SQLiteUpdateSetSource<typeof devices>)
    .where(and(eq(devices.id, sql.placeholder(HEARTBEAT_ID)), ne(devices.status, 'decommissioned')))
    .prepare(),
);

/** The columns a heartbeat sets as heartbeatWriteOf binds them: each defined one through its column's encoder
 * (a JSON column stringified, a boolean 0/1), a null as null, as drizzle's `.set()` writes them. */
function heartbeatValues(columns: Partial<DeviceRow>): { shape: string; values: Record<string, unknown> } {
  const values: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(columns)) {
    const column = DEVICE_COLUMNS[name as keyof typeof DEVICE_COLUMNS];
    if (value !== undefined && column) values[name] = driverValue(column, value);
  }
  return { shape: Object.keys(values).join(','), values };
}

/** The live (not decommissioned) devices by status within a reach, one statement per shape: which of the
 * organization, site and device-group restrictions apply ('o', 's', 'g' in the shape), as visibleWhere. */
const statusCountsOf = preparedShapes((db, shape) =>
  db
    .select({ status: devices.status, n: count() })
    .from(devices)
    .where(and(ne(devices.status, 'decommissioned'), reachWhere(shape)))
    .groupBy(devices.status)
    .prepare(),
);

/**
 * The device list without condition trees (DevicesService.list), prepared per shape: `P` a counted page or `C` a
 * cursor page (`k`: after the position afterKey, afterId), the sort (`h` hostname, `l` lastSeen, `e` enrolled;
 * `a` ascending, `z` descending), then the letters of the conditions: the reach (`o` orgIds, `s` siteIds, `g`
 * groupIds), the query's sites (`S` querySiteIds), statuses (`T` statuses, else `d` not decommissioned), `O`
 * osType, `R` role, `Q` a LIKE pattern on hostname or display name. Lists are JSON array placeholders.
 */
const deviceListOf = preparedShapes((db, shape) => {
  const by = shape[1] === 'l' ? 'lastSeen' : shape[1] === 'e' ? 'enrolled' : 'hostname';
  const ascending = shape[2] === 'a';
  const flags = shape.slice(3);
  const key = sortKey(by);
  const pattern = sql.placeholder('pattern');
  const [afterKey, afterId] = [sql.placeholder('afterKey'), sql.placeholder('afterId')];
  const keyset = ascending
    ? sql`(${key} > ${afterKey} OR (${key} = ${afterKey} AND ${devices.id} > ${afterId}))`
    : sql`(${key} < ${afterKey} OR (${key} = ${afterKey} AND ${devices.id} < ${afterId}))`;
  const where = and(
    reachWhere(flags),
    ...shapeConditions(flags, {
      S: () => inJson(devices.siteId, 'querySiteIds'),
      T: () => inJson(devices.status, 'statuses'),
      d: () => ne(devices.status, 'decommissioned'), // never with T (preparedList)
      O: () => eq(devices.osType, sql.placeholder('osType')),
      R: () => eq(devices.deviceRole, sql.placeholder('role')),
      Q: () => sql`(${devices.hostname} LIKE ${pattern} ESCAPE '\\' OR ${devices.displayName} LIKE ${pattern} ESCAPE '\\')`,
      k: () => keyset,
    }),
  );
  return preparedPage(db, devices, where, ascending ? [asc(key), asc(devices.id)] : [desc(key), desc(devices.id)]);
});

export type { DeviceRow } from './out.js';
/** A device as lists show it (other modules read devices through this). */
export type ListedDevice = DeviceOut;
type ListQuery = z.infer<typeof DeviceListQuerySchema>;
type CursorPage = { data: DeviceOut[]; pagination: { nextCursor: string | null; limit: number }; sort: { by: string; dir: string } };

/** What every agent is told at enrollment and on each heartbeat. */
export const AGENT_CONFIG = { heartbeatIntervalSeconds: 60, metricsCollectionIntervalSeconds: 30 } as const;

/** A device reporting in (HEARTBEATING) that has missed this many heartbeats is marked offline. */
const MISSED_HEARTBEATS = 3;
/** Devices marked offline per statement (the job yields to the event loop between statements). */
export const MARK_OFFLINE_BATCH = 2000;
/** The statuses of a device whose agent reports in: missing its heartbeats makes it offline (markOffline). */
const HEARTBEATING: readonly DeviceRow['status'][] = ['online', 'maintenance', 'updating'];

/** markOffline's two statements, prepared once per database: at most `limit` devices reporting in whose last
 * heartbeat is before `cutoff`, and those of the JSON array `ids` made offline at `now`. */
const offlineQueries = preparedQueries((db) => ({
  stale: db
    .select({ id: devices.id, status: devices.status })
    .from(devices)
    .where(and(inArray(devices.status, [...HEARTBEATING]), sql`${devices.lastSeenAt} < ${sql.placeholder('cutoff')}`))
    .limit(sql.placeholder('limit'))
    .prepare(),
  markOffline: db
    .update(devices)
    .set({ status: 'offline', updatedAt: sql`${sql.placeholder('now')}` })
    .where(inJson(devices.id, 'ids'))
    .returning({ id: devices.id, agentId: devices.agentId, orgId: devices.orgId, siteId: devices.siteId, hostname: devices.hostname, lastSeenAt: devices.lastSeenAt })
    .prepare(),
}));

const SYSTEM = systemContext().caller;

/** A day of five-minute samples (05 wire notes "4.7": recentMetrics ≤ 288). */
const RECENT_METRICS = 288;

function isoNow(): string {
  return new Date().toISOString();
}

/** What every device event (02 §6) says of its device; each type adds its own fields. */
function deviceEvent(device: Pick<DeviceRow, 'id' | 'agentId' | 'orgId' | 'siteId' | 'hostname'>) {
  return { deviceId: device.id, agentId: device.agentId, orgId: device.orgId, siteId: device.siteId, hostname: device.hostname };
}

/** `svc_` + 64 hex characters (04 wire notes); stored only as SHA-256. */
function newAgentToken(): string {
  return `svc_${secureRandomBytes(32).toString('hex')}`;
}

/** What an enrolment (first or again) tells about the device itself. */
function inventoryOf(body: z.infer<typeof AgentEnrollSchema>) {
  return {
    hostname: body.hostname,
    displayName: body.displayName ?? body.hostname,
    osType: body.osType,
    osVersion: body.osVersion,
    architecture: body.architecture,
    agentVersion: body.agentVersion,
  };
}

/** The inventory an enrolment reports (hardware and network blobs), flattened for the filters. */
function enrolledInventory(body: z.infer<typeof AgentEnrollSchema>) {
  return inventoryColumns({
    ...(body.hardwareInfo !== undefined ? { hardwareInfo: body.hardwareInfo } : {}),
    ...(body.networkInfo !== undefined ? { networkInfo: body.networkInfo } : {}),
  });
}

function isAgentHealth(status: string): status is (typeof AGENT_HEALTH)[number] {
  return (AGENT_HEALTH as readonly string[]).includes(status);
}

/**
 * Devices and their agents (01 §1, 04 wire notes "Enrollment keys and agents"): enrollment with a key (the
 * token it gives is checked by agent-authenticator.ts), heartbeats, and the scoped device reads and
 * decommissioning.
 */
export class DevicesService {
  constructor(
    private readonly db: Db,
    private readonly tenancy: TenancyService,
    private readonly enrollmentKeys: EnrollmentKeysService,
  ) {}

  // ---- Agents ----

  /**
   * Creates the device in the key's organization and site. The key's use, the device, its audit entry and the
   * `device.enrolled` event commit together or not at all: a refused enrollment leaves the key untouched.
   */
  enroll(ctx: RequestContext, body: z.infer<typeof AgentEnrollSchema>, reenrollmentToken?: string) {
    const authToken = newAgentToken();
    const agentId = randomUUID();
    return this.db.$client.transaction(() => {
      const key = this.enrollmentKeys.claim(body.enrollmentKey);
      const org = requireOrgRow(this.db, SYSTEM, key.orgId);
      const partner = this.partnerState(org.partnerId);
      if (partner.status !== 'active') {
        throw partnerInactive(partner.status);
      }
      if (reenrollmentToken !== undefined) {
        return this.reenroll(ctx, body, reenrollmentToken, { key, org, partnerStatus: partner.status, authToken });
      }
      this.assertDeviceCaps(org.id, org.maxDevices, org.partnerId, partner.maxDevices);
      const now = isoNow();
      const device = insertRow(this.db, devices, {
        orgId: org.id,
        partnerId: org.partnerId,
        siteId: key.siteId,
        agentId,
        agentTokenHash: sha256Hex(authToken),
        ...inventoryOf(body),
        status: 'online',
        lastUser: body.lastUser ?? null,
        hardwareInfo: body.hardwareInfo ?? null,
        networkInfo: body.networkInfo ?? null,
        ...enrolledInventory(body),
        lastSeenIp: ctx.ip,
        lastSeenAt: now,
        enrolledAt: now,
        enrollmentKeyId: key.id,
      });
      const agentCtx: RequestContext = { ...ctx, caller: agentCaller(device, partner.status) };
      recordAudit(this.db, agentCtx, {
        action: 'device.create',
        resourceType: 'device',
        resourceId: device.id,
        resourceName: device.hostname,
        orgId: org.id,
        partnerId: org.partnerId,
        details: { enrollmentKeyId: key.id, enrollmentKeyName: key.name, siteId: key.siteId, osType: device.osType, agentVersion: device.agentVersion },
      });
      this.changed(device.id, org.id);
      publishEvent(this.db, 'device.enrolled', { ...deviceEvent(device), osType: device.osType, enrollmentKeyId: key.id }, org.id);
      return { agentId, deviceId: device.id, authToken, orgId: org.id, siteId: key.siteId, config: AGENT_CONFIG };
    })();
  }

  /**
   * Re-enrolment in place (issue 15 item 10): the agent proves which device it is with that device's current
   * bearer token, never with an id, so no credential reaches another device. The key must be valid and of the
   * device's own organization; the device keeps its id and agent id and gets a new token (the old one stops
   * working), the inventory sent, and the key's site when the key is pinned to one. Runs inside enroll's
   * transaction: a refusal leaves the key and the device untouched.
   */
  private reenroll(
    ctx: RequestContext,
    body: z.infer<typeof AgentEnrollSchema>,
    token: string,
    claimed: { key: { id: string; name: string; orgId: string; siteId: string | null }; org: { id: string; partnerId: string }; partnerStatus: string; authToken: string },
  ) {
    const { key, org, partnerStatus, authToken } = claimed;
    const found = AGENT_TOKEN_PATTERN.test(token) ? deviceQueries(this.db).rowByTokenHash.get({ tokenHash: sha256Hex(token) }) : undefined;
    if (!found) throw unauthorized('Invalid re-enrollment token', 'INVALID_REENROLLMENT_TOKEN');
    if (found.status === 'decommissioned') throw unauthorized('Device has been decommissioned', 'DEVICE_DECOMMISSIONED');
    if (found.orgId !== key.orgId) {
      throw forbidden("The enrollment key belongs to another organization than the device's", 'REENROLLMENT_ORG_MISMATCH');
    }
    const now = isoNow();
    const siteId = key.siteId ?? found.siteId;
    const device = updateRow(this.db, devices, found, {
      agentTokenHash: sha256Hex(authToken),
      siteId,
      ...inventoryOf(body),
      // An administrator's quarantine outlives a re-enrolment, as it outlives heartbeats.
      status: found.status === 'quarantined' ? 'quarantined' : 'online',
      ...(body.lastUser !== undefined ? { lastUser: body.lastUser } : {}),
      ...enrolledInventory(body),
      lastSeenAt: now,
      enrolledAt: now,
      enrollmentKeyId: key.id,
      updatedAt: now,
    });
    if (!device) throw unauthorized('Invalid re-enrollment token', 'INVALID_REENROLLMENT_TOKEN');
    const agentCtx: RequestContext = { ...ctx, caller: agentCaller(device, partnerStatus) };
    recordAudit(this.db, agentCtx, {
      action: 'device.reenroll',
      resourceType: 'device',
      resourceId: device.id,
      resourceName: device.hostname,
      orgId: org.id,
      partnerId: org.partnerId,
      details: { enrollmentKeyId: key.id, enrollmentKeyName: key.name, siteId, osType: device.osType, agentVersion: device.agentVersion },
    });
    return { agentId: device.agentId, deviceId: device.id, authToken, orgId: org.id, siteId, config: AGENT_CONFIG };
  }

  private partnerState(partnerId: string): { status: string; maxDevices: number | null } {
    try {
      const partner = this.tenancy.getPartner(partnerId);
      return { status: partner.status, maxDevices: partner.maxDevices };
    } catch (err) {
      if (err instanceof DomainError) return { status: 'deleted', maxDevices: null };
      throw err;
    }
  }

  /** The optional caps of 01 §2.3 and §2.4, over devices that are not decommissioned. */
  private assertDeviceCaps(orgId: string, orgMax: number | null, partnerId: string, partnerMax: number | null): void {
    const queries = deviceQueries(this.db);
    if (orgMax !== null && (queries.liveOfOrg.get({ orgId })?.n ?? 0) >= orgMax) {
      throw forbidden(`Device limit of the organization reached (${orgMax})`, 'DEVICE_LIMIT_REACHED');
    }
    if (partnerMax !== null && (queries.liveOfPartner.get({ partnerId })?.n ?? 0) >= partnerMax) {
      throw forbidden(`Device limit of the partner reached (${partnerMax})`, 'DEVICE_LIMIT_REACHED');
    }
  }

  /** Device id → hostname (other modules show device names without reading the devices table). */
  hostnamesOf(ids: Iterable<string | null>): Map<string, string> {
    return namesById(this.db, devices, { id: devices.id, name: devices.hostname }, ids);
  }

  /** The device of an agent id, if any (decommissioned ones included: the caller decides). */
  byAgentId(agentId: string): Pick<DeviceRow, 'id' | 'orgId' | 'siteId' | 'status' | 'agentId' | 'hostname'> | undefined {
    return deviceQueries(this.db).byAgentId.get({ agentId });
  }

  /** The devices of an organization the alert evaluator checks (not decommissioned; only `ids` when given), with
   * the few columns it reads, in the device list's default order (hostname, id). */
  forEvaluation(orgId: string, ids?: readonly string[]): Pick<DeviceRow, 'id' | 'orgId' | 'siteId' | 'hostname' | 'status' | 'tags'>[] {
    return forEvaluationOf(this.db, shapeOf({ i: ids })).all({ orgId, ids: ids && JSON.stringify(ids) });
  }

  /** Merges values into a device's custom fields (scripts' output marker, 03 §4.6); run inside the caller's
   * transaction. The caller decides which keys may be written. */
  mergeCustomFields(deviceId: string, values: Record<string, unknown>): void {
    const row = deviceQueries(this.db).customFieldsOf.get({ id: deviceId });
    if (!row) return;
    updateRow(this.db, devices, deviceId, { customFields: { ...row.customFields, ...values }, updatedAt: isoNow() });
  }

  /** A heartbeat: last seen now, and the reported state unless an administrator has quarantined the device.
   * Heartbeats are not audited (one a minute per device would drown the log). */
  heartbeat(ctx: RequestContext, agentId: string, body: z.infer<typeof AgentHeartbeatSchema>) {
    const device = deviceQueries(this.db).rowByAgentId.get({ agentId });
    if (!device || device.status === 'decommissioned' || ctx.caller.agentId !== agentId) throw notFound('Agent not found');
    // The agent's own health words (ok, warning, error) all say "alive": the device is online (issue 15 item 10).
    const reported = body.status === undefined || isAgentHealth(body.status) ? 'online' : body.status;
    const status = device.status === 'quarantined' ? device.status : reported;
    const reportedColumns: Partial<DeviceRow> = {
      status,
      ...(body.agentVersion !== undefined ? { agentVersion: body.agentVersion } : {}),
      ...(body.lastUser !== undefined ? { lastUser: body.lastUser } : {}),
      ...inventoryColumns(body),
      ...(ctx.ip !== null ? { lastSeenIp: ctx.ip } : {}),
    };
    // A transaction even for the write alone (db/connection.ts transaction): it joins the turn's group commit.
    this.db.$client.transaction(() => {
      const { shape, values } = heartbeatValues({ ...reportedColumns, lastSeenAt: isoNow(), updatedAt: isoNow() });
      heartbeatWriteOf(this.db, shape).run({ ...values, [HEARTBEAT_ID]: device.id });
      if (status === device.status) return;
      // 02 §6: a device that comes back (or reports a state of its own) is an event, in the write's transaction.
      const type = status === 'online' ? 'device.online' : 'device.updated';
      publishEvent(this.db, type, { ...deviceEvent(device), previousStatus: device.status, status }, device.orgId);
    })();
    // The software list is the device's software inventory, kept by the software module.
    if (body.software !== undefined) this.onSoftwareReported({ id: device.id, orgId: device.orgId }, body.software);
    // Dynamic groups follow what a device reports; lastSeenAt alone moves with the periodic re-evaluation.
    const moved = Object.entries(reportedColumns).some(([k, v]) => JSON.stringify(device[k as keyof DeviceRow]) !== JSON.stringify(v));
    if (moved) this.changed(device.id, device.orgId);
    return { success: true as const, config: AGENT_CONFIG };
  }

  /** Devices reporting in (online, in maintenance or updating: HEARTBEATING) that missed several heartbeats go
   * offline (periodic job): at most `batch` per call, so a backlog (a restart after downtime, a bulk import) is
   * worked in short statements; answers how many changed. */
  markOffline(now = Date.now(), batch = MARK_OFFLINE_BATCH): number {
    const cutoff = new Date(now - MISSED_HEARTBEATS * AGENT_CONFIG.heartbeatIntervalSeconds * 1000).toISOString();
    return this.db.$client.transaction(() => {
      // The status each had before, for its event: read and changed in the one transaction.
      const queries = offlineQueries(this.db);
      const stale = queries.stale.all({ cutoff, limit: batch });
      if (stale.length === 0) return 0;
      const before = new Map(stale.map((d) => [d.id, d.status]));
      const gone = queries.markOffline.all({ ids: JSON.stringify([...before.keys()]), now: new Date(now).toISOString() });
      // 02 §6: each one is a device.offline event, published with the change.
      for (const device of gone) {
        const previousStatus = before.get(device.id) ?? 'online';
        publishEvent(this.db, 'device.offline', { ...deviceEvent(device), previousStatus, status: 'offline', lastSeenAt: device.lastSeenAt }, device.orgId);
      }
      return gone.length;
    })();
  }

  // ---- Devices ----

  /**
   * The devices a caller may see, as one SQL condition (01 §1, §2.6): accessible organizations (optionally only
   * `orgIds`, each access-checked: 403 when out of reach), the caller's sites and device groups (01 §2.6: a user
   * restricted to device groups sees only their members, wherever devices are read). null: nothing is visible.
   */
  visibleWhere(ctx: RequestContext, orgIds?: string[]): SQL | null {
    const reach = this.visibleScope(ctx, orgIds);
    return reach && reachWhere(reach.shape, reach.values);
  }

  /** visibleWhere for statements prepared once (visibleWherePrepared, visibleDeviceInPrepared): the same reach,
   * the same 403 for an `orgIds` entry out of reach; null when nothing is visible. */
  visibleScope(ctx: RequestContext, orgIds?: string[]): VisibleScope | null {
    return callerReach(this.db, ctx.caller, orgIds);
  }

  /**
   * The device list of 05 wire notes "4.7": with `page` a counted page, without it cursor mode (keyset on the
   * sort key and id). `saved` is the condition tree of `filterId`, resolved by the caller (the filters module).
   */
  list(ctx: RequestContext, query: ListQuery & { page: number }, saved?: unknown): Paged<DeviceOut>;
  list(ctx: RequestContext, query: ListQuery, saved?: unknown): Paged<DeviceOut> | CursorPage;
  list(ctx: RequestContext, query: ListQuery, saved?: unknown): Paged<DeviceOut> | CursorPage {
    const orgIds = query.orgId ? [query.orgId, ...(query.orgIds ?? [])] : query.orgIds;
    const reach = this.visibleScope(ctx, orgIds);
    const sortBy = query.sort ?? 'hostname';
    const dir = query.sortDir ?? 'asc';
    const pageMode = query.page !== undefined;
    const limit = pageMode ? Math.min(query.limit ?? 50, 100) : (query.limit ?? 500);
    const empty = pageMode ? paged([], { page: query.page ?? 1, limit }, 0) : { data: [], pagination: { nextCursor: null, limit }, sort: { by: sortBy, dir } };
    if (!reach) return empty;
    // Without condition trees (saved or inline filters, tags, groups) the list is one of a few prepared shapes.
    if (saved === undefined && query.filter === undefined && query.tag === undefined && !query.groupIds?.length) {
      return this.preparedList(ctx, query, reach, limit);
    }
    const where = and(reachWhere(reach.shape, reach.values), ...this.listConditions(ctx, query, saved)) as SQL;
    const key = sortKey(sortBy);
    const order = dir === 'asc' ? [asc(key), asc(devices.id)] : [desc(key), desc(devices.id)];
    if (pageMode) {
      const page = query.page ?? 1;
      const { rows, total } = pageOfRows(this.db, devices, where, order, { page, limit });
      return paged(rows.map(deviceOut), { page, limit }, total);
    }
    const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
    const keyset = after && (dir === 'asc' ? sql`(${key} > ${after[0]} OR (${key} = ${after[0]} AND ${devices.id} > ${after[1]}))` : sql`(${key} < ${after[0]} OR (${key} = ${after[0]} AND ${devices.id} < ${after[1]}))`);
    const rows = selectRows(this.db, devices, (q) => q.where(keyset ? and(where, keyset) : where).orderBy(...order).limit(limit + 1));
    const more = rows.length > limit;
    const data = rows.slice(0, limit);
    const last = data.at(-1);
    return { data: data.map(deviceOut), pagination: { nextCursor: more && last ? encodeCursor(sortValue(last, sortBy), last.id) : null, limit }, sort: { by: sortBy, dir } };
  }

  /** `list` as prepared statements (deviceListOf): the same conditions, order, pages and cursors. */
  private preparedList(ctx: RequestContext, query: ListQuery, reach: VisibleScope, limit: number): Paged<DeviceOut> | CursorPage {
    const siteIds = [...(query.siteId ? [query.siteId] : []), ...(query.siteIds ?? [])];
    for (const siteId of siteIds) requireSite(this.db, ctx.caller, siteId);
    const sortBy = query.sort ?? 'hostname';
    const dir = query.sortDir ?? 'asc';
    const byStatus = query.status !== undefined && query.status.length > 0;
    const shape =
      (sortBy === 'lastSeen' ? 'l' : sortBy === 'enrolled' ? 'e' : 'h') +
      (dir === 'asc' ? 'a' : 'z') +
      reach.shape +
      shapeOf({
        S: siteIds.length > 0,
        T: byStatus,
        d: !byStatus && query.includeDecommissioned !== true,
        O: query.osType,
        R: query.role,
        Q: query.search,
      });
    const values: Record<string, unknown> = {
      ...reach.values,
      querySiteIds: JSON.stringify(siteIds),
      statuses: JSON.stringify(query.status ?? []),
      osType: query.osType,
      role: query.role,
      pattern: query.search ? containsPattern(query.search) : undefined,
    };
    if (query.page !== undefined) {
      const page = query.page;
      const statements = deviceListOf(this.db, `P${shape}`);
      const { rows, total } = readPage(statements, values, { page, limit });
      return paged(rows.map(deviceOut), { page, limit }, total);
    }
    const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined;
    const rows = deviceListOf(this.db, `C${shape}${shapeOf({ k: after })}`).page.all({
      ...values,
      afterKey: after?.[0],
      afterId: after?.[1],
      limit: limit + 1,
      offset: 0,
    });
    const more = rows.length > limit;
    const data = rows.slice(0, limit);
    const last = data.at(-1);
    return { data: data.map(deviceOut), pagination: { nextCursor: more && last ? encodeCursor(sortValue(last, sortBy), last.id) : null, limit }, sort: { by: sortBy, dir } };
  }

  /**
   * The visible live devices by status (what `list` counts per status, without a status filter: decommissioned
   * ones left out), in one prepared statement: the same reach as visibleWhere (orgId access-checked, 403).
   */
  statusCounts(ctx: RequestContext, orgId?: string): Map<string, number> {
    const reach = callerReach(this.db, ctx.caller, orgId);
    const counts = new Map<string, number>();
    if (reach === null) return counts;
    for (const { status, n } of statusCountsOf(this.db, reach.shape).all(reach.values)) counts.set(status, n);
    return counts;
  }

  private listConditions(ctx: RequestContext, query: z.infer<typeof DeviceListQuerySchema>, saved: unknown): SQL[] {
    const parts: SQL[] = [];
    const { caller } = ctx;
    const siteIds = [...(query.siteId ? [query.siteId] : []), ...(query.siteIds ?? [])];
    for (const siteId of siteIds) requireSite(this.db, caller, siteId);
    if (siteIds.length > 0) parts.push(sql`${devices.siteId} IN (SELECT value FROM json_each(${JSON.stringify(siteIds)}))`);
    if (query.status && query.status.length > 0) parts.push(sql`${devices.status} IN (SELECT value FROM json_each(${JSON.stringify(query.status)}))`);
    else if (query.includeDecommissioned !== true) parts.push(ne(devices.status, 'decommissioned'));
    if (query.osType) parts.push(eq(devices.osType, query.osType));
    if (query.role) parts.push(eq(devices.deviceRole, query.role));
    const conditions: FilterCondition[] = [];
    if (query.groupIds && query.groupIds.length > 0) conditions.push({ field: 'groupId', operator: 'in', value: query.groupIds });
    if (query.tag) conditions.push({ field: 'tags', operator: 'contains', value: query.tag });
    if (conditions.length > 0) parts.push(compileFilter({ operator: 'AND', conditions }).where);
    if (query.search) {
      const pattern = containsPattern(query.search);
      parts.push(sql`(${devices.hostname} LIKE ${pattern} ESCAPE '\\' OR ${devices.displayName} LIKE ${pattern} ESCAPE '\\')`);
    }
    if (saved !== undefined) parts.push(compileFilter(saved).where);
    if (query.filter !== undefined) parts.push(compileFilter(parseInlineFilter(query.filter)).where);
    return parts;
  }

  /** GET /devices/:id (05 wire notes "4.7"): the row plus hardware, interfaces, recent metrics and names;
   * `groups` is filled by the caller from the groups module. */
  get(ctx: RequestContext, id: string) {
    const row = this.findVisible(ctx, id);
    const site = row.siteId ? this.tenancy.requireSite(ctx, row.siteId) : undefined;
    const org = this.tenancy.requireOrgRow(ctx, row.orgId);
    return {
      ...deviceOut(row),
      hardware: row.hardwareInfo,
      networkInterfaces: row.networkInfo ?? [],
      recentMetrics: recentMetricSamples(this.db, row.id, RECENT_METRICS),
      siteName: site?.name ?? null,
      siteTimezone: site?.timezone ?? null,
      orgName: org.name,
    };
  }

  /** GET /devices/:id/metrics: the newest samples the agent reported (stored by the alerts module). */
  metrics(ctx: RequestContext, id: string, query: { metric?: string | undefined; limit?: number | undefined }) {
    const row = this.findVisible(ctx, id);
    return { data: recentMetricSamples(this.db, row.id, query.limit ?? RECENT_METRICS, query.metric) };
  }

  /** Display name, tags, custom fields and role, changed by an administrator; audited. */
  update(ctx: RequestContext, id: string, body: z.infer<typeof DeviceUpdateSchema>) {
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      // A decommissioned device is history: as commands are refused to it, so are changes (05 4.7).
      if (current.status === 'decommissioned') throw badRequest('Cannot change a decommissioned device', 'DEVICE_DECOMMISSIONED');
      const customFields = body.customFields === undefined ? undefined : mergeCustomFields(current.customFields, body.customFields);
      const tags = body.tags === undefined ? undefined : [...new Set(body.tags)];
      const row = updateRow(this.db, devices, current, {
        ...(body.displayName !== undefined ? { displayName: body.displayName } : {}),
        ...(tags !== undefined ? { tags } : {}),
        ...(customFields !== undefined ? { customFields } : {}),
        ...(body.deviceRole !== undefined ? { deviceRole: body.deviceRole } : {}),
        updatedAt: isoNow(),
      });
      // Found by findVisible in this transaction: always there.
      if (!row) throw notFound('Device not found');
      recordAudit(this.db, ctx, {
        action: 'device.update',
        resourceType: 'device',
        resourceId: id,
        resourceName: row.hostname,
        orgId: row.orgId,
        partnerId: row.partnerId,
        details: { changedFields: Object.keys(body) },
      });
      this.changed(row.id, row.orgId);
      publishEvent(this.db, 'device.updated', { ...deviceEvent(row), changedFields: Object.keys(body) }, row.orgId);
      return { data: deviceOut(row) };
    })();
  }

  /** Devices for GET /search: hostname, display name or last user contains `q`; title displayName || hostname,
   * description hostname (when it differs), status and last user joined by " · " (05 wire notes "4.5"). */
  search(ctx: RequestContext, q: string, limit: number) {
    const scope = this.visibleScope(ctx);
    if (!scope) return [];
    const rows = deviceSearchOf(this.db, scope.shape).all({ ...scope.values, pattern: containsPattern(q), limit });
    return rows.map((d) => ({
      id: d.id,
      type: 'devices' as const,
      title: d.displayName || d.hostname || 'Unknown device',
      description: [d.displayName && d.displayName !== d.hostname ? d.hostname : null, d.status, d.lastUser].filter((x): x is string => !!x).join(' · '),
    }));
  }

  /** GET /tags (05 wire notes "4.7"): the tags of visible, live devices with their device counts. */
  listTags(ctx: RequestContext, search?: string) {
    const scope = this.visibleScope(ctx);
    if (!scope) return { data: [], total: 0 };
    const rows = tagCountsOf(this.db, scope.shape).all({ ...scope.values, pattern: search ? containsPattern(search) : null });
    const data = rows.map((r) => ({ id: r.tag, name: r.tag, tag: r.tag, deviceCount: r.n }));
    return { data, total: data.length };
  }

  /** GET /tags/devices?tag=: the visible, live devices with that tag (case-insensitive). */
  devicesWithTag(ctx: RequestContext, tag: string) {
    const scope = this.visibleScope(ctx);
    if (!scope) return { data: [], total: 0 };
    const data = devicesWithTagOf(this.db, scope.shape).all({ ...scope.values, needle: JSON.stringify(tag.toLowerCase()) });
    return { data, total: data.length };
  }

  /** Told of the software list of each heartbeat that carries one, after the heartbeat is recorded (set by the
   * software module, which keeps the device software inventory). */
  onSoftwareReported: (device: { id: string; orgId: string }, software: readonly ReportedSoftware[]) => void = () => undefined;

  /** Told of every device change that may move it in or out of a dynamic group (set by the groups module). */
  onDeviceChanged: (deviceId: string, orgId: string) => void = () => undefined;

  private changed(deviceId: string, orgId: string): void {
    this.onDeviceChanged(deviceId, orgId);
  }

  decommission(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      if (current.status === 'decommissioned') throw badRequest('Device is already decommissioned', 'DEVICE_ALREADY_DECOMMISSIONED');
      const now = isoNow();
      const device = updateRow(this.db, devices, current, { status: 'decommissioned', decommissionedAt: now, updatedAt: now });
      // Found by findVisible in this transaction: always there.
      if (!device) throw notFound('Device not found');
      // Its agent can no longer fetch or report anything: what was queued for it ends now, through the modules
      // that own commands and script runs (so a script whose only runs were here can be deleted).
      const commandsCancelled = cancelOpenCommandsOf(this.db, id);
      const executionsCancelled = cancelActiveExecutionsOf(this.db, id, 'Device decommissioned');
      const softwareResultsFailed = failOpenResultsOf(this.db, id, 'Device decommissioned.');
      recordAudit(this.db, ctx, {
        action: 'device.decommission',
        resourceType: 'device',
        resourceId: id,
        resourceName: device.hostname,
        orgId: device.orgId,
        partnerId: device.partnerId,
        details: { agentId: device.agentId, previousStatus: current.status, commandsCancelled, executionsCancelled, softwareResultsFailed },
      });
      this.changed(device.id, device.orgId);
      publishEvent(this.db, 'device.decommissioned', { ...deviceEvent(device), previousStatus: current.status }, device.orgId);
      return { success: true as const, message: 'Device decommissioned', device: deviceOut(device) };
    })();
  }

  /**
   * For other modules' rows keyed by device (script executions): the condition that their device is one the caller
   * may see, or undefined when the caller has no site or device-group restriction (01 §2.6) beyond the
   * organizations the module checks itself.
   */
  /** restrictedDeviceWhere for statements prepared once (restrictionShape, restrictedDeviceInPrepared): undefined
   * without a site or device-group restriction, else the caller's VisibleScope (null: nothing visible). */
  restrictedScope(ctx: RequestContext): VisibleScope | null | undefined {
    const { siteIds, deviceGroupIds } = ctx.caller;
    return siteIds === null && deviceGroupIds === null ? undefined : this.visibleScope(ctx);
  }

  restrictedDeviceWhere(ctx: RequestContext, deviceIdColumn: SQLWrapper): SQL | undefined {
    const scope = this.restrictedScope(ctx);
    return restrictedDeviceInPrepared(restrictionShape(scope), deviceIdColumn, scope?.values);
  }

  /** A device the caller may see: absent, out of reach or outside a site or device-group restriction all answer 404. */
  findVisible(ctx: RequestContext, id: string): DeviceRow {
    const row = visibleOr404(
      rowById(this.db, devices, id),
      (r) => requireOrg(this.db, ctx.caller, r.orgId),
      () => notFound('Device not found'),
    );
    const { siteIds, deviceGroupIds } = ctx.caller;
    if (siteIds !== null && (row.siteId === null || !siteIds.includes(row.siteId))) throw notFound('Device not found');
    if (deviceGroupIds !== null && !deviceQueries(this.db).inGroups.get({ id: row.id, groupIds: JSON.stringify(deviceGroupIds) })) {
      throw notFound('Device not found');
    }
    return row;
  }
}
