import { randomBytes, randomUUID } from 'node:crypto';
import { and, asc, count, eq, ne, sql } from 'drizzle-orm';
import type { z } from 'zod';
import { AGENT_HEALTH, AGENT_TOKEN_PATTERN, type AgentEnrollSchema, type AgentHeartbeatSchema } from '../../../contract/agents.js';
import type { DeviceListQuerySchema } from '../../../contract/devices.js';
import type { Db } from '../../db/connection.js';
import { devices } from '../../db/schema/index.js';
import { systemContext, type Caller, type RequestContext } from '../../context.js';
import { DomainError, badRequest, forbidden, notFound, partnerInactive, unauthorized } from '../../errors.js';
import { publishEvent } from '../../jobs/queue.js';
import { namesById } from '../../lib/names.js';
import { countRows, paged, type Paged } from '../../lib/paging.js';
import { sha256Hex } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import type { EnrollmentKeysService } from '../enrollment-keys/service.js';
import { accessibleOrgIds, requireOrg, requireSite } from '../tenancy/access.js';
import type { TenancyService } from '../tenancy/service.js';

export type DeviceRow = typeof devices.$inferSelect;

/** The columns a list shows (inventory blobs and the token hash stay behind). */
const LISTED = {
  id: devices.id,
  orgId: devices.orgId,
  siteId: devices.siteId,
  agentId: devices.agentId,
  hostname: devices.hostname,
  displayName: devices.displayName,
  osType: devices.osType,
  osVersion: devices.osVersion,
  architecture: devices.architecture,
  agentVersion: devices.agentVersion,
  status: devices.status,
  tags: devices.tags,
  customFields: devices.customFields,
  lastSeenAt: devices.lastSeenAt,
  enrolledAt: devices.enrolledAt,
  lastUser: devices.lastUser,
  createdAt: devices.createdAt,
  updatedAt: devices.updatedAt,
};
export type ListedDevice = { [K in keyof typeof LISTED]: DeviceRow[K] };

/** What every agent is told at enrollment and on each heartbeat. */
export const AGENT_CONFIG = { heartbeatIntervalSeconds: 60, metricsCollectionIntervalSeconds: 30 } as const;

/** An online device that has missed this many heartbeats is marked offline. */
const MISSED_HEARTBEATS = 3;

const SYSTEM = systemContext().caller;

function isoNow(): string {
  return new Date().toISOString();
}

/** `svc_` + 64 hex characters (04 wire notes); stored only as SHA-256. */
function newAgentToken(): string {
  return `svc_${randomBytes(32).toString('hex')}`;
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

function isAgentHealth(status: string): status is (typeof AGENT_HEALTH)[number] {
  return (AGENT_HEALTH as readonly string[]).includes(status);
}

interface AgentAuthRow {
  id: string;
  agentId: string;
  orgId: string;
  siteId: string | null;
  partnerId: string;
  hostname: string;
  status: DeviceRow['status'];
}

/** The context of an agent's own request: attribution as the agent, organization scope, no permissions. */
function agentCaller(device: Pick<AgentAuthRow, 'agentId' | 'orgId' | 'siteId' | 'hostname'>, partnerId: string | null, partnerStatus: string | null): Caller {
  return {
    kind: 'agent',
    userId: null,
    email: null,
    name: device.hostname,
    scope: 'organization',
    partnerId,
    orgId: device.orgId,
    orgAccess: null,
    orgIds: null,
    siteIds: device.siteId ? [device.siteId] : [],
    deviceGroupIds: null,
    roleId: null,
    permissions: [],
    mfa: false,
    sessionId: null,
    apiKeyId: null,
    agentId: device.agentId,
    partnerStatus,
  };
}

/**
 * Devices and their agents (01 §1, 04 wire notes "Enrollment keys and agents"): enrollment with a key,
 * the agent bearer token, heartbeats, and the scoped device reads and decommissioning.
 */
export class DevicesService {
  private readonly byTokenHash;
  private readonly listQuery;
  private readonly countQuery;

  constructor(
    private readonly db: Db,
    private readonly tenancy: TenancyService,
    private readonly enrollmentKeys: EnrollmentKeysService,
  ) {
    this.byTokenHash = db.$client.prepare<[string], AgentAuthRow>(
      `SELECT id, agent_id AS agentId, org_id AS orgId, site_id AS siteId, partner_id AS partnerId, hostname, status
         FROM devices WHERE agent_token_hash = ?`,
    );
    // The list is one prepared statement whose optional filters are null when unused (ids as JSON arrays).
    const p = (name: string) => sql.placeholder(name);
    const where = sql`${devices.orgId} IN (SELECT value FROM json_each(${p('orgIds')}))
      AND (${p('siteId')} IS NULL OR ${devices.siteId} = ${p('siteId')})
      AND (${p('siteIds')} IS NULL OR ${devices.siteId} IN (SELECT value FROM json_each(${p('siteIds')})))
      AND (${p('status')} IS NULL OR ${devices.status} = ${p('status')})
      AND (${p('osType')} IS NULL OR ${devices.osType} = ${p('osType')})
      AND (${p('search')} IS NULL OR instr(lower(${devices.hostname}), ${p('search')}) > 0)`;
    this.listQuery = db
      .select(LISTED)
      .from(devices)
      .where(where)
      .orderBy(asc(devices.hostname), asc(devices.id))
      .limit(p('limit'))
      .offset(p('offset'))
      .prepare();
    this.countQuery = db.select({ n: count() }).from(devices).where(where).prepare();
  }

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
      const org = requireOrg(this.db, SYSTEM, key.orgId);
      const partner = this.partnerState(org.partnerId);
      if (partner.status !== 'active') {
        throw partnerInactive(partner.status);
      }
      if (reenrollmentToken !== undefined) {
        return this.reenroll(ctx, body, reenrollmentToken, { key, org, partnerStatus: partner.status, authToken });
      }
      this.assertDeviceCaps(org.id, org.maxDevices, org.partnerId, partner.maxDevices);
      const now = isoNow();
      const device = this.db
        .insert(devices)
        .values({
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
          lastSeenAt: now,
          enrolledAt: now,
          enrollmentKeyId: key.id,
        })
        .returning()
        .get();
      const agentCtx: RequestContext = { ...ctx, caller: agentCaller(device, org.partnerId, partner.status) };
      recordAudit(this.db, agentCtx, {
        action: 'device.create',
        resourceType: 'device',
        resourceId: device.id,
        resourceName: device.hostname,
        orgId: org.id,
        partnerId: org.partnerId,
        details: { enrollmentKeyId: key.id, enrollmentKeyName: key.name, siteId: key.siteId, osType: device.osType, agentVersion: device.agentVersion },
      });
      publishEvent(
        this.db,
        'device.enrolled',
        { deviceId: device.id, agentId, orgId: org.id, siteId: key.siteId, hostname: device.hostname, osType: device.osType, enrollmentKeyId: key.id },
        org.id,
      );
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
    const found = AGENT_TOKEN_PATTERN.test(token) ? this.byTokenHash.get(sha256Hex(token)) : undefined;
    if (!found) throw unauthorized('Invalid re-enrollment token', 'INVALID_REENROLLMENT_TOKEN');
    if (found.status === 'decommissioned') throw unauthorized('Device has been decommissioned', 'DEVICE_DECOMMISSIONED');
    if (found.orgId !== key.orgId) {
      throw forbidden("The enrollment key belongs to another organization than the device's", 'REENROLLMENT_ORG_MISMATCH');
    }
    const now = isoNow();
    const siteId = key.siteId ?? found.siteId;
    const device = this.db
      .update(devices)
      .set({
        agentTokenHash: sha256Hex(authToken),
        siteId,
        ...inventoryOf(body),
        // An administrator's quarantine outlives a re-enrolment, as it outlives heartbeats.
        status: found.status === 'quarantined' ? 'quarantined' : 'online',
        ...(body.lastUser !== undefined ? { lastUser: body.lastUser } : {}),
        ...(body.hardwareInfo !== undefined ? { hardwareInfo: body.hardwareInfo } : {}),
        ...(body.networkInfo !== undefined ? { networkInfo: body.networkInfo } : {}),
        lastSeenAt: now,
        enrolledAt: now,
        enrollmentKeyId: key.id,
        updatedAt: now,
      })
      .where(eq(devices.id, found.id))
      .returning()
      .get();
    if (!device) throw unauthorized('Invalid re-enrollment token', 'INVALID_REENROLLMENT_TOKEN');
    const agentCtx: RequestContext = { ...ctx, caller: agentCaller(device, org.partnerId, partnerStatus) };
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
    const live = ne(devices.status, 'decommissioned');
    if (orgMax !== null && countRows(this.db, devices, and(eq(devices.orgId, orgId), live)) >= orgMax) {
      throw forbidden(`Device limit of the organization reached (${orgMax})`, 'DEVICE_LIMIT_REACHED');
    }
    if (partnerMax !== null && countRows(this.db, devices, and(eq(devices.partnerId, partnerId), live)) >= partnerMax) {
      throw forbidden(`Device limit of the partner reached (${partnerMax})`, 'DEVICE_LIMIT_REACHED');
    }
  }

  /** Device id → hostname (other modules show device names without reading the devices table). */
  hostnamesOf(ids: Iterable<string | null>): Map<string, string> {
    return namesById(this.db, devices, { id: devices.id, name: devices.hostname }, ids);
  }

  /** The device of an agent id, if any (decommissioned ones included: the caller decides). */
  byAgentId(agentId: string): Pick<DeviceRow, 'id' | 'orgId' | 'siteId' | 'status' | 'agentId' | 'hostname'> | undefined {
    return this.db
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
  }

  /** Merges values into a device's custom fields (scripts' output marker, 03 §4.6); run inside the caller's
   * transaction. The caller decides which keys may be written. */
  mergeCustomFields(deviceId: string, values: Record<string, unknown>): void {
    const row = this.db.select({ customFields: devices.customFields }).from(devices).where(eq(devices.id, deviceId)).get();
    if (!row) return;
    this.db
      .update(devices)
      .set({ customFields: { ...row.customFields, ...values }, updatedAt: isoNow() })
      .where(eq(devices.id, deviceId))
      .run();
  }

  /**
   * The caller of an agent route (01 §5.13): the bearer token must be a live device's. A decommissioned
   * device's token stops working at once. That the token is the agent's the path names is checked by the
   * guard, against the validated path parameter.
   */
  authenticateAgent(token: string): Caller {
    if (!AGENT_TOKEN_PATTERN.test(token)) throw unauthorized('Invalid agent token', 'INVALID_AGENT_TOKEN');
    const device = this.byTokenHash.get(sha256Hex(token));
    if (!device) throw unauthorized('Invalid agent token', 'INVALID_AGENT_TOKEN');
    if (device.status === 'decommissioned') throw unauthorized('Device has been decommissioned', 'DEVICE_DECOMMISSIONED');
    let partnerStatus: string;
    try {
      requireOrg(this.db, SYSTEM, device.orgId);
      partnerStatus = this.partnerState(device.partnerId).status;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      partnerStatus = 'deleted';
    }
    return agentCaller(device, device.partnerId, partnerStatus);
  }

  /** A heartbeat: last seen now, and the reported state unless an administrator has quarantined the device.
   * Heartbeats are not audited (one a minute per device would drown the log). */
  heartbeat(ctx: RequestContext, agentId: string, body: z.infer<typeof AgentHeartbeatSchema>) {
    const device = this.db.select().from(devices).where(eq(devices.agentId, agentId)).get();
    if (!device || device.status === 'decommissioned' || ctx.caller.agentId !== agentId) throw notFound('Agent not found');
    // The agent's own health words (ok, warning, error) all say "alive": the device is online (issue 15 item 10).
    const reported = body.status === undefined || isAgentHealth(body.status) ? 'online' : body.status;
    const status = device.status === 'quarantined' ? device.status : reported;
    this.db
      .update(devices)
      .set({
        status,
        lastSeenAt: isoNow(),
        updatedAt: isoNow(),
        ...(body.agentVersion !== undefined ? { agentVersion: body.agentVersion } : {}),
        ...(body.lastUser !== undefined ? { lastUser: body.lastUser } : {}),
        ...(body.metrics !== undefined ? { lastMetrics: body.metrics } : {}),
      })
      .where(and(eq(devices.id, device.id), ne(devices.status, 'decommissioned')))
      .run();
    return { success: true as const, config: AGENT_CONFIG };
  }

  /** Online devices that missed several heartbeats go offline (periodic job). */
  markOffline(now = Date.now()): number {
    const cutoff = new Date(now - MISSED_HEARTBEATS * AGENT_CONFIG.heartbeatIntervalSeconds * 1000).toISOString();
    return this.db
      .update(devices)
      .set({ status: 'offline', updatedAt: new Date(now).toISOString() })
      .where(and(eq(devices.status, 'online'), sql`${devices.lastSeenAt} < ${cutoff}`))
      .run().changes;
  }

  // ---- Devices ----

  list(ctx: RequestContext, query: z.infer<typeof DeviceListQuerySchema>): Paged<ListedDevice> {
    const { caller } = ctx;
    let orgIds: string[];
    if (query.orgId) {
      requireOrg(this.db, caller, query.orgId);
      orgIds = [query.orgId];
    } else {
      orgIds = accessibleOrgIds(this.db, caller) ?? this.tenancy.listAccessibleOrganizations(ctx).map((o) => o.id);
    }
    if (orgIds.length === 0) return paged([], query, 0);
    if (query.siteId) requireSite(this.db, caller, query.siteId);
    if (caller.siteIds !== null && caller.siteIds.length === 0) return paged([], query, 0);
    const filter = {
      orgIds: JSON.stringify(orgIds),
      siteId: query.siteId ?? null,
      siteIds: caller.siteIds === null ? null : JSON.stringify(caller.siteIds),
      status: query.status ?? null,
      osType: query.osType ?? null,
      search: query.search ? query.search.toLowerCase() : null,
    };
    const rows = this.listQuery.all({ ...filter, limit: query.limit, offset: (query.page - 1) * query.limit });
    return paged(rows, query, this.countQuery.get(filter)?.n ?? 0);
  }

  get(ctx: RequestContext, id: string): DeviceRow {
    return this.findVisible(ctx, id);
  }

  decommission(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      if (current.status === 'decommissioned') throw badRequest('Device is already decommissioned', 'DEVICE_ALREADY_DECOMMISSIONED');
      const now = isoNow();
      const device = this.db
        .update(devices)
        .set({ status: 'decommissioned', decommissionedAt: now, updatedAt: now })
        .where(eq(devices.id, id))
        .returning()
        .get();
      recordAudit(this.db, ctx, {
        action: 'device.decommission',
        resourceType: 'device',
        resourceId: id,
        resourceName: device.hostname,
        orgId: device.orgId,
        partnerId: device.partnerId,
        details: { agentId: device.agentId, previousStatus: current.status },
      });
      return { success: true as const, message: 'Device decommissioned', device };
    })();
  }

  /** A device the caller may see: absent, out of reach or outside a site restriction all answer 404. */
  private findVisible(ctx: RequestContext, id: string): DeviceRow {
    const row = this.db.select().from(devices).where(eq(devices.id, id)).get();
    if (!row) throw notFound('Device not found');
    try {
      requireOrg(this.db, ctx.caller, row.orgId);
    } catch (err) {
      if (err instanceof DomainError) throw notFound('Device not found');
      throw err;
    }
    const { siteIds } = ctx.caller;
    if (siteIds !== null && (row.siteId === null || !siteIds.includes(row.siteId))) throw notFound('Device not found');
    return row;
  }
}
