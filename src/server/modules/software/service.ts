import { and, asc, count, desc, eq, inArray, max, or, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { DeploymentCreateSchema, DeploymentListQuerySchema, InventoryQuerySchema, UninstallSchema } from '../../../contract/software.js';
import { systemContext, type RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { deviceSoftware, softwareDeploymentResults, softwareDeployments, type DeploymentPackage } from '../../db/schema/index.js';
import { DomainError, badRequest, conflict, notFound } from '../../errors.js';
import { enqueueJob, type JobWorker } from '../../jobs/queue.js';
import { paged, preparedSelectPage, readPage, type Paged } from '../../lib/paging.js';
import { inJson, insertRow, preparedQueries, preparedShapes, rowById, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { recordAudit } from '../audit/recorder.js';
import { reaches } from '../alerts/scope.js';
import type { CommandRow, DeviceCommandsService } from '../device-commands/service.js';
import type { ReportedSoftware } from '../devices/inventory.js';
import { restrictedDeviceInPrepared, restrictionShape, visibleDeviceInPrepared, type DeviceRow, type DevicesService } from '../devices/service.js';
import { readOrgIds, requireOrg, resolveWriteOrg, type OrgRef } from '../tenancy/access.js';
import { SoftwareCatalog, offeredTo, type CatalogRow, type VersionRow } from './catalog.js';

type DeploymentRow = typeof softwareDeployments.$inferSelect;
type ResultRow = typeof softwareDeploymentResults.$inferSelect;
type InventoryRow = typeof deviceSoftware.$inferSelect;
type Action = DeploymentRow['deploymentType'];

/** The durable job that starts a scheduled deployment when its time comes. */
const DISPATCH_JOB = 'software.deployment-dispatch';
const CANCELLABLE: readonly DeploymentRow['status'][] = ['pending', 'queued'];
const OPEN_RESULTS: readonly ResultRow['status'][] = ['pending', 'running'];
const OPEN_DEPLOYMENTS: readonly DeploymentRow['status'][] = ['pending', 'queued', 'running'];
/** 05 wire notes "4.3": the message of each result when the deployment is made. */
export const QUEUED_MESSAGE = 'Queued for execution.';
export const SCHEDULED_MESSAGE = 'Scheduled deployment.';
export const CANCELLED_MESSAGE = 'Cancelled by operator.';
/** Output kept per result (the agent's own limit is larger). */
const OUTPUT_MAX = 100_000;

const SYSTEM = systemContext();
const isoNow = () => new Date().toISOString();
const clip = (text: string | null | undefined, n: number): string | null => (text === undefined || text === null || text.trim() === '' ? null : text.trim().slice(0, n));
const label = (action: Action) => action.charAt(0).toUpperCase() + action.slice(1);

/**
 * The writes of deployments and their results, and the reads they make, prepared once per database
 * (db/prepared.ts). What `.set()` takes from a placeholder (a status, a message, a time) is a text column's,
 * bound bare: nothing to encode.
 */
const deploymentWrites = preparedQueries((db) => {
  const d = softwareDeployments;
  const r = softwareDeploymentResults;
  const now = sql`${sql.placeholder('now')}`;
  const openResult = inArray(r.status, [...OPEN_RESULTS]);
  return {
    /** A deployment's results by status (settleDeployment). */
    resultCounts: db
      .select({ status: r.status, n: count() })
      .from(r)
      .where(eq(r.deploymentId, sql.placeholder('deploymentId')))
      .groupBy(r.status)
      .prepare(),
    /** The deployment `id`, still open, ends with `status` at `now`. */
    settle: db
      .update(d)
      .set({ status: sql`${sql.placeholder('status')}`, completedAt: now, updatedAt: now })
      .where(and(eq(d.id, sql.placeholder('id')), inArray(d.status, [...OPEN_DEPLOYMENTS])))
      .prepare(),
    /** The open results of the device `deviceId` fail with `message` (failOpenResultsOf). */
    failOpenOfDevice: db
      .update(r)
      .set({ status: 'failed', message: sql`${sql.placeholder('message')}`, errorMessage: sql`${sql.placeholder('message')}`, completedAt: now, updatedAt: now })
      .where(and(eq(r.deviceId, sql.placeholder('deviceId')), openResult))
      .returning({ deploymentId: r.deploymentId })
      .prepare(),
    /** The open results of the deployment `deploymentId` are cancelled with `message`. */
    cancelOpenOf: db
      .update(r)
      .set({ status: 'cancelled', message: sql`${sql.placeholder('message')}`, completedAt: now, updatedAt: now })
      .where(and(eq(r.deploymentId, sql.placeholder('deploymentId')), openResult))
      .returning()
      .prepare(),
    /** The pending result of the command `commandId` is running (the agent fetched it). */
    start: db
      .update(r)
      .set({ status: 'running', startedAt: now, message: 'Running.', updatedAt: now })
      .where(and(eq(r.commandId, sql.placeholder('commandId')), eq(r.status, 'pending')))
      .returning()
      .prepare(),
    /** The deployment `id`, pending or queued, is running. */
    run: db
      .update(d)
      .set({ status: 'running', updatedAt: now })
      .where(and(eq(d.id, sql.placeholder('id')), inArray(d.status, ['pending', 'queued'])))
      .prepare(),
    /** The open result of the command `commandId`. */
    openOfCommand: rowQuery(db, r, and(eq(r.commandId, sql.placeholder('commandId')), openResult)),
    /** The pending results of the deployment `deploymentId` (a scheduled dispatch). */
    pendingOf: rowQuery(db, r, and(eq(r.deploymentId, sql.placeholder('deploymentId')), eq(r.status, 'pending'))),
  };
});

/** A deployment whose every result has ended is completed (all completed) or failed (any failed). */
function settleDeployment(db: Db, deploymentId: string): void {
  const queries = deploymentWrites(db);
  const counts = queries.resultCounts.all({ deploymentId });
  const n = (status: ResultRow['status']) => counts.find((c) => c.status === status)?.n ?? 0;
  if (n('pending') + n('running') > 0) return;
  queries.settle.run({ id: deploymentId, status: n('failed') > 0 ? 'failed' : 'completed', now: isoNow() });
}

/**
 * Ends the open software results of a device that is being decommissioned, in the caller's transaction (the
 * devices module's decommission, whose commands it ends through the device-commands module): they fail, since
 * the software never reached the device, and each deployment settles. Answers how many ended.
 */
export function failOpenResultsOf(db: Db, deviceId: string, message: string): number {
  const ended = deploymentWrites(db).failOpenOfDevice.all({ deviceId, message, now: isoNow() });
  for (const deploymentId of new Set(ended.map((e) => e.deploymentId))) settleDeployment(db, deploymentId);
  return ended.length;
}

/** The columns of a deployment deploymentOut shows (lists read only these). */
const DEPLOYMENT_COLUMNS = {
  id: softwareDeployments.id,
  orgId: softwareDeployments.orgId,
  name: softwareDeployments.name,
  softwareId: softwareDeployments.softwareId,
  softwareName: softwareDeployments.softwareName,
  deploymentType: softwareDeployments.deploymentType,
  status: softwareDeployments.status,
  version: softwareDeployments.version,
  targetIds: softwareDeployments.targetIds,
  requestedBy: softwareDeployments.requestedBy,
  requestReason: softwareDeployments.requestReason,
  createdAt: softwareDeployments.createdAt,
  scheduleType: softwareDeployments.scheduleType,
  scheduledAt: softwareDeployments.scheduledAt,
  completedAt: softwareDeployments.completedAt,
  cancelReason: softwareDeployments.cancelReason,
};

/** A deployment as the API shows it (05 wire notes "4.3", older build names). */
function deploymentOut(row: Pick<DeploymentRow, keyof typeof DEPLOYMENT_COLUMNS>) {
  return {
    id: row.id,
    orgId: row.orgId,
    name: row.name,
    softwareId: row.softwareId,
    softwareName: row.softwareName,
    action: row.deploymentType,
    status: row.status,
    version: row.version,
    deviceIds: row.targetIds,
    requestedBy: row.requestedBy,
    requestReason: row.requestReason,
    requestedAt: row.createdAt,
    scheduleType: row.scheduleType,
    scheduledAt: row.scheduledAt,
    completedAt: row.completedAt,
    cancelReason: row.cancelReason,
  };
}

/** A result as the API shows it: its row without orgId, commandId, createdAt and updatedAt (in column order). */
const RESULT_COLUMNS = {
  id: softwareDeploymentResults.id,
  deploymentId: softwareDeploymentResults.deploymentId,
  deviceId: softwareDeploymentResults.deviceId,
  status: softwareDeploymentResults.status,
  message: softwareDeploymentResults.message,
  startedAt: softwareDeploymentResults.startedAt,
  completedAt: softwareDeploymentResults.completedAt,
  exitCode: softwareDeploymentResults.exitCode,
  output: softwareDeploymentResults.output,
  errorMessage: softwareDeploymentResults.errorMessage,
  retryCount: softwareDeploymentResults.retryCount,
};

/** For callers restricted to sites or device groups: a deployment with a device they see, by the devices module's
 * restrictionShape (its placeholders are the caller's VisibleScope values); undefined for '' (no restriction). */
function restrictedDeployment(restriction: string): SQL | undefined {
  const r = softwareDeploymentResults;
  const visible = restrictedDeviceInPrepared(restriction, r.deviceId);
  return visible && sql`EXISTS (SELECT 1 FROM ${r} WHERE ${r.deploymentId} = ${softwareDeployments.id} AND ${visible})`;
}

/**
 * The deployment list's condition, per shape `<own>:<restriction>` (db/prepared.ts): 'o' within the organizations
 * of the JSON array `listOrgIds`, 's' `status`, 'a' `action`, 'w' `softwareId`, 'b' `requestedBy`, 'd' with a
 * result of `deviceId`; then the caller's device restriction (restrictedDeployment).
 */
function deploymentsWhere(shape: string): SQL | undefined {
  const d = softwareDeployments;
  const r = softwareDeploymentResults;
  const [own = '', restriction = ''] = shape.split(':');
  return and(
    restrictedDeployment(restriction),
    ...shapeConditions(own, {
      o: () => inJson(d.orgId, 'listOrgIds'),
      s: () => eq(d.status, sql.placeholder('status')),
      a: () => eq(d.deploymentType, sql.placeholder('action')),
      w: () => eq(d.softwareId, sql.placeholder('softwareId')),
      b: () => eq(d.requestedBy, sql.placeholder('requestedBy')),
      d: () => sql`EXISTS (SELECT 1 FROM ${r} WHERE ${r.deploymentId} = ${d.id} AND ${r.deviceId} = ${sql.placeholder('deviceId')})`,
    }),
  );
}

/** The two statements of a deployment page (readPage), newest first, per deploymentsWhere shape. */
const deploymentPageOf = preparedShapes((db, shape) => {
  const d = softwareDeployments;
  return preparedSelectPage(db, d, db.select(DEPLOYMENT_COLUMNS).from(d).$dynamic(), deploymentsWhere(shape), [desc(d.createdAt), desc(d.id)]);
});

/** One deployment by id for a restricted caller, per restrictionShape (other callers read it with rowById). */
const restrictedDeploymentOf = preparedShapes((db, restriction) =>
  rowQuery(db, softwareDeployments, and(eq(softwareDeployments.id, sql.placeholder('id')), restrictedDeployment(restriction))),
);

/** A deployment's results in order, per restrictionShape: only those of devices a restricted caller sees. */
const resultsOf = preparedShapes((db, restriction) => {
  const r = softwareDeploymentResults;
  return db
    .select(RESULT_COLUMNS)
    .from(r)
    .where(and(eq(r.deploymentId, sql.placeholder('deploymentId')), restrictedDeviceInPrepared(restriction, r.deviceId)))
    .orderBy(asc(r.createdAt), asc(r.id))
    .prepare();
});

/** The inventory's page of device ids and their count, per shape `<inventoryWhere shape>:<VisibleScope shape>`. */
const inventoryPageOf = preparedShapes((db, shape) => {
  const s = deviceSoftware;
  const [own = '', visible = ''] = shape.split(':');
  const where = and(visibleDeviceInPrepared(visible, s.deviceId), inventoryWhere(own));
  return {
    count: db.select({ n: sql<number>`count(DISTINCT ${s.deviceId})` }).from(s).where(where).prepare(),
    page: db
      .selectDistinct({ deviceId: s.deviceId })
      .from(s)
      .where(where)
      .orderBy(asc(s.deviceId))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(),
  };
});

/**
 * The inventory's conditions on device_software rows, per shape: 'd' of the device `deviceId`, 'w' of the
 * catalog item or inventory row `softwareId`, 'q' name or vendor containing `needle` (lower case).
 */
function inventoryWhere(shape: string): SQL | undefined {
  const s = deviceSoftware;
  const needle = sql.placeholder('needle');
  return and(
    ...shapeConditions(shape, {
      d: () => eq(s.deviceId, sql.placeholder('deviceId')),
      w: () => or(eq(s.catalogId, sql.placeholder('softwareId')), eq(s.id, sql.placeholder('softwareId'))),
      q: () => sql`(instr(lower(${s.name}), ${needle}) > 0 OR instr(lower(coalesce(${s.vendor}, '')), ${needle}) > 0)`,
    }),
  );
}

/** The shape (inventoryWhere) of an inventory query's item filters, and their placeholders' values. */
function itemFilter(query: { softwareId?: string | undefined; search?: string | undefined }): { shape: string; values: Record<string, unknown> } {
  const needle = query.search?.trim().toLowerCase();
  return { shape: shapeOf({ w: query.softwareId, q: needle }), values: { softwareId: query.softwareId, needle } };
}

/** The inventory rows of the devices of the JSON array `deviceIds` (what entries shows of them), per item shape. */
const inventoryRowsOf = preparedShapes((db, shape) => {
  const s = deviceSoftware;
  return db
    .select({
      id: s.id,
      deviceId: s.deviceId,
      catalogId: s.catalogId,
      name: s.name,
      version: s.version,
      vendor: s.vendor,
      installDate: s.installDate,
      installLocation: s.installLocation,
      isManaged: s.isManaged,
      lastSeen: s.lastSeen,
    })
    .from(s)
    .where(and(inJson(s.deviceId, 'deviceIds'), inventoryWhere(shape)))
    .orderBy(asc(sql`lower(${s.name})`), asc(s.id))
    .prepare();
});

/** The reads of the inventory entries and of one deployment, prepared once per database (db/prepared.ts). */
const softwareQueries = preparedQueries((db) => {
  const s = deviceSoftware;
  const d = softwareDeployments;
  const r = softwareDeploymentResults;
  return {
    lastScanned: db
      .select({ deviceId: s.deviceId, at: max(s.lastSeen) })
      .from(s)
      .where(inJson(s.deviceId, 'deviceIds'))
      .groupBy(s.deviceId)
      .prepare(),
    // `deviceId softwareId` of every uninstall still to run on these devices.
    pendingUninstalls: db
      .select({ deviceId: r.deviceId, softwareId: d.softwareId })
      .from(r)
      .innerJoin(d, eq(d.id, r.deploymentId))
      .where(and(inJson(r.deviceId, 'deviceIds'), inArray(r.status, [...OPEN_RESULTS]), eq(d.deploymentType, 'uninstall'), inArray(d.status, [...OPEN_DEPLOYMENTS])))
      .prepare(),
  };
});

/**
 * The device software inventory's statements, prepared once per database (db/prepared.ts): a device's rows (all,
 * and those of the row or catalog item `softwareId`, oldest first), the rows of the JSON array `ids` removed, a
 * device's rows seen at `now`; `ofSoftware` the rows of a deployment's software (`softwareId` the inventory row or
 * catalog item, or the same name as `softwareName` whatever its case), `replace` the reported fields of row `id`.
 */
const inventoryWrites = preparedQueries((db) => {
  const s = deviceSoftware;
  const ofDevice = eq(s.deviceId, sql.placeholder('deviceId'));
  const softwareId = sql.placeholder('softwareId');
  const ofSoftware = and(ofDevice, or(eq(s.id, softwareId), eq(s.catalogId, softwareId), sql`lower(${s.name}) = lower(${sql.placeholder('softwareName')})`));
  const bare = (name: string) => sql`${sql.placeholder(name)}`;
  return {
    ofDevice: rowQuery(db, s, ofDevice),
    firstOf: rowQuery(db, s, and(ofDevice, or(eq(s.id, softwareId), eq(s.catalogId, softwareId))), { orderBy: [asc(s.createdAt), asc(s.id)] }),
    firstOfSoftware: rowQuery(db, s, ofSoftware),
    deleteOfSoftware: db.delete(s).where(ofSoftware).prepare(),
    deleteIds: db.delete(s).where(inJson(s.id, 'ids')).prepare(),
    seen: db.update(s).set({ lastSeen: bare('now') }).where(ofDevice).prepare(),
    replace: db
      .update(s)
      .set({
        name: bare('name'),
        version: bare('version'),
        vendor: bare('vendor'),
        installDate: bare('installDate'),
        installLocation: bare('installLocation'),
        uninstallString: bare('uninstallString'),
        catalogId: bare('catalogId'),
      })
      .where(eq(s.id, sql.placeholder('id')))
      .prepare(),
  };
});

/** What a new deployment is made of, once its catalog item, version and devices are settled. */
interface NewDeployment {
  org: OrgRef;
  softwareId: string;
  softwareName: string;
  version: VersionRow | undefined;
  versionName: string | null;
  action: Action;
  devices: DeviceRow[];
  requestedBy: string;
  reason: string | undefined;
  scheduleAt: string | undefined;
  pkg: DeploymentPackage;
}

/**
 * Software deployments and device software inventory (03 §2.5, §3, §4.3): one result and one agent command
 * (install_software / uninstall_software) per device, sent now or by a durable job at scheduleAt; the agents'
 * reports move results and deployments to their ends. The inventory is what the heartbeats report.
 */
export class SoftwareService {
  readonly catalog: SoftwareCatalog;

  constructor(
    private readonly db: Db,
    private readonly devices: DevicesService,
    private readonly commands: DeviceCommandsService,
  ) {
    this.catalog = new SoftwareCatalog(db);
    const listener = { delivered: (c: CommandRow) => this.started(c), finished: (c: CommandRow) => this.finished(c) };
    commands.on('install_software', listener);
    commands.on('uninstall_software', listener);
  }

  register(worker: JobWorker): void {
    worker.handle(DISPATCH_JOB, (payload) => {
      this.dispatchScheduled(String(payload.deploymentId));
    });
  }

  // ---- Deployments ----

  /** Each target device: visible to the caller (else 404), of the organization, live, and (install, update) of a
   * platform the item supports (else 400). Repeated ids count once. */
  private targets(ctx: RequestContext, org: OrgRef, deviceIds: readonly string[], item: CatalogRow, action: Action): DeviceRow[] {
    return [...new Set(deviceIds)].map((id) => {
      let device: DeviceRow;
      try {
        device = this.devices.findVisible(ctx, id);
      } catch (err) {
        if (err instanceof DomainError && err.kind === 'not_found') throw notFound(`Device not found: ${id}`, 'DEVICE_NOT_FOUND');
        throw err;
      }
      if (device.orgId !== org.id) throw badRequest(`Device ${id} does not belong to organization ${org.id}`, 'DEVICE_ORG_MISMATCH');
      if (device.status === 'decommissioned') throw badRequest(`Device ${id} is decommissioned`, 'DEVICE_DECOMMISSIONED');
      if (action !== 'uninstall' && !item.platforms.includes(device.osType)) {
        throw badRequest(`${item.name} does not support ${device.osType} (device ${id})`, 'PLATFORM_NOT_SUPPORTED');
      }
      return device;
    });
  }

  createDeployment(ctx: RequestContext, body: z.infer<typeof DeploymentCreateSchema>) {
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId, { missing: 'orgId is required for this scope' });
    return this.db.$client.transaction(() => {
      const item = this.catalog.visible(ctx, body.softwareId);
      if (!offeredTo(item, org)) throw badRequest('Catalog item is not available to this organization', 'CATALOG_ITEM_NOT_AVAILABLE');
      const versionName = body.version ?? item.latestVersion;
      const version = versionName ? this.catalog.versionOf(item.id, versionName) : undefined;
      if (body.action !== 'uninstall') {
        if (!versionName) throw badRequest('No version to deploy: give version or add one to the catalog item', 'SOFTWARE_VERSION_REQUIRED');
        if (!version) throw badRequest(`Version ${versionName} not found for ${item.name}`, 'SOFTWARE_VERSION_NOT_FOUND');
      }
      const targets = this.targets(ctx, org, body.deviceIds, item, body.action);
      const pkg: DeploymentPackage = {
        downloadUrl: version?.downloadUrl ?? null,
        sha256: version?.checksum ?? null,
        silentInstallArg: version?.silentInstallArg ?? null,
        silentUninstallArg: version?.silentUninstallArg ?? null,
        uninstallString: null,
      };
      const row = this.insertDeployment(ctx, {
        org,
        softwareId: item.id,
        softwareName: item.name,
        version,
        versionName: versionName ?? null,
        action: body.action,
        devices: targets,
        requestedBy: body.requestedBy,
        reason: body.reason,
        scheduleAt: body.scheduleAt,
        pkg,
      });
      return { data: deploymentOut(row) };
    })();
  }

  /** Writes the deployment and its results, then queues the agents' commands (or the dispatch job); audited. Runs
   * in the caller's transaction. */
  private insertDeployment(ctx: RequestContext, input: NewDeployment): DeploymentRow {
    const now = Date.now();
    const scheduled = input.scheduleAt !== undefined && Date.parse(input.scheduleAt) > now;
    const scheduledAt = input.scheduleAt !== undefined ? new Date(Date.parse(input.scheduleAt)).toISOString() : null;
    const name = `${label(input.action)} ${input.softwareName}${input.versionName ? ` ${input.versionName}` : ''}`.slice(0, 255);
    const row = insertRow(this.db, softwareDeployments, {
      orgId: input.org.id,
      name,
      softwareId: input.softwareId,
      softwareName: input.softwareName,
      softwareVersionId: input.version?.id ?? null,
      version: input.versionName,
      deploymentType: input.action,
      targetIds: input.devices.map((d) => d.id),
      scheduleType: scheduled ? 'scheduled' : 'immediate',
      scheduledAt,
      options: input.pkg,
      status: scheduled ? 'queued' : 'pending',
      requestedBy: input.requestedBy,
      requestReason: input.reason ?? null,
      createdBy: ctx.caller.userId,
    });
    const results = input.devices.map((d) =>
      insertRow(this.db, softwareDeploymentResults, { deploymentId: row.id, deviceId: d.id, orgId: d.orgId, message: scheduled ? SCHEDULED_MESSAGE : QUEUED_MESSAGE }),
    );
    if (scheduled) enqueueJob(this.db, DISPATCH_JOB, { deploymentId: row.id }, { runAt: new Date(Date.parse(input.scheduleAt ?? '')), maxAttempts: 3 });
    else for (const result of results) this.sendCommand(row, result, ctx.caller.userId);
    recordAudit(this.db, ctx, {
      action: 'software.deployment.create',
      resourceType: 'software_deployment',
      resourceId: row.id,
      resourceName: row.name,
      orgId: row.orgId,
      details: { softwareId: row.softwareId, action: row.deploymentType, deviceCount: results.length, version: row.version, scheduledAt: row.scheduledAt },
    });
    return row;
  }

  /** Queues the agent command of one result (in the caller's transaction). */
  private sendCommand(deployment: DeploymentRow, result: ResultRow, createdBy: string | null): void {
    const command = this.commands.queue({
      orgId: result.orgId,
      deviceId: result.deviceId,
      type: deployment.deploymentType === 'uninstall' ? 'uninstall_software' : 'install_software',
      payload: {
        deploymentId: deployment.id,
        action: deployment.deploymentType,
        softwareId: deployment.softwareId,
        name: deployment.softwareName,
        version: deployment.version,
        ...deployment.options,
      },
      createdBy,
    });
    updateRow(this.db, softwareDeploymentResults, result, { commandId: command.id, message: QUEUED_MESSAGE, updatedAt: isoNow() });
  }

  /** The durable job at scheduleAt: a deployment still queued sends its commands and is pending; a device
   * decommissioned meanwhile fails its result. A cancelled one is left alone. */
  dispatchScheduled(deploymentId: string): void {
    this.db.$client.transaction(() => {
      const row = rowById(this.db, softwareDeployments, deploymentId);
      if (!row || row.status !== 'queued') return;
      const now = isoNow();
      const deployment = updateRow(this.db, softwareDeployments, row, { status: 'pending', updatedAt: now }) ?? row;
      const open = deploymentWrites(this.db).pendingOf.all({ deploymentId: row.id });
      for (const result of open) {
        const device = this.devices.findVisible(SYSTEM, result.deviceId);
        if (device.status === 'decommissioned') {
          updateRow(this.db, softwareDeploymentResults, result, {
            status: 'failed',
            message: 'Device is decommissioned.',
            errorMessage: 'Device is decommissioned',
            completedAt: now,
            updatedAt: now,
          });
        } else this.sendCommand(deployment, result, row.createdBy);
      }
      this.settle(row.id);
    })();
  }

  /** A deployment the caller sees: its organization reached and (site or device-group restricted callers) one of
   * its devices visible; 404 `Deployment not found` otherwise. */
  private visibleDeployment(ctx: RequestContext, id: string): DeploymentRow {
    const restriction = this.devices.restrictedScope(ctx);
    const row =
      restriction === undefined
        ? rowById(this.db, softwareDeployments, id)
        : restrictedDeploymentOf(this.db, restrictionShape(restriction)).get({ ...restriction?.values, id });
    if (!row || !reaches(this.db, ctx.caller, row.orgId)) throw notFound('Deployment not found', 'DEPLOYMENT_NOT_FOUND');
    return row;
  }

  listDeployments(ctx: RequestContext, query: z.infer<typeof DeploymentListQuerySchema>): Paged<ReturnType<typeof deploymentOut>> {
    const orgIds = readOrgIds(this.db, ctx.caller, query.orgId);
    if (orgIds !== null && orgIds.length === 0) return paged([], query, 0);
    const restriction = this.devices.restrictedScope(ctx);
    const own = shapeOf({
      o: orgIds !== null,
      s: query.status,
      a: query.action,
      w: query.softwareId,
      b: query.requestedBy,
      d: query.deviceId,
    });
    const values = { ...restriction?.values, ...query, listOrgIds: orgIds === null ? null : JSON.stringify(orgIds) };
    const { rows, total } = readPage(deploymentPageOf(this.db, `${own}:${restrictionShape(restriction)}`), values, query);
    return paged(rows.map(deploymentOut), query, total);
  }

  getDeployment(ctx: RequestContext, id: string) {
    return { data: deploymentOut(this.visibleDeployment(ctx, id)) };
  }

  results(ctx: RequestContext, id: string) {
    const row = this.visibleDeployment(ctx, id);
    const restriction = this.devices.restrictedScope(ctx);
    return { data: resultsOf(this.db, restrictionShape(restriction)).all({ ...restriction?.values, deploymentId: row.id }) };
  }

  /** 03 §3: only from pending or queued (else 409); open results end as cancelled and their commands are closed. */
  cancel(ctx: RequestContext, id: string, reason: string | undefined) {
    return this.db.$client.transaction(() => {
      const current = this.visibleDeployment(ctx, id);
      if (!CANCELLABLE.includes(current.status)) throw conflict('Deployment cannot be cancelled', 'DEPLOYMENT_NOT_CANCELLABLE');
      const now = isoNow();
      const cancelReason = clip(reason, 500);
      const row = updateRow(this.db, softwareDeployments, current, { status: 'cancelled', cancelReason, completedAt: now, updatedAt: now });
      const ended = deploymentWrites(this.db).cancelOpenOf.all({ deploymentId: current.id, message: cancelReason ?? CANCELLED_MESSAGE, now });
      for (const result of ended) if (result.commandId) this.commands.close(result.commandId, 'cancelled');
      recordAudit(this.db, ctx, {
        action: 'software.deployment.cancel',
        resourceType: 'software_deployment',
        resourceId: current.id,
        resourceName: current.name,
        orgId: current.orgId,
        details: { previousStatus: current.status, reason: cancelReason, resultsCancelled: ended.length },
      });
      return { data: deploymentOut(row ?? current) };
    })();
  }

  // ---- The command channel's reports (inside its transactions) ----

  /** The agent fetched the command: its result is running, and so is the deployment. */
  private started(command: CommandRow): void {
    const now = isoNow();
    const queries = deploymentWrites(this.db);
    const result = queries.start.get({ commandId: command.id, now });
    if (!result) return;
    queries.run.run({ id: result.deploymentId, now });
  }

  /** The agent's report: completed with exit code 0 (or none) is completed, anything else failed; the device's
   * inventory follows a success; the deployment ends when its last result does. */
  private finished(command: CommandRow): void {
    const current = deploymentWrites(this.db).openOfCommand.get({ commandId: command.id });
    if (!current) return;
    const succeeded = command.status === 'completed' && (command.exitCode === null || command.exitCode === 0);
    const errorMessage = succeeded ? null : clip(command.errorMessage ?? command.stderr, 10_000);
    const now = isoNow();
    updateRow(this.db, softwareDeploymentResults, current, {
      status: succeeded ? 'completed' : 'failed',
      message: succeeded ? 'Completed successfully.' : (errorMessage ?? `Exited with code ${command.exitCode ?? 'unknown'}.`),
      exitCode: command.exitCode,
      output: command.stdout === null ? null : command.stdout.slice(0, OUTPUT_MAX),
      errorMessage,
      startedAt: current.startedAt ?? command.sentAt ?? now,
      completedAt: now,
      updatedAt: now,
    });
    const deployment = rowById(this.db, softwareDeployments, current.deploymentId);
    if (deployment && succeeded) this.applyToInventory(deployment, current.deviceId);
    this.settle(current.deploymentId);
  }

  private settle(deploymentId: string): void {
    settleDeployment(this.db, deploymentId);
  }

  /** What a successful deployment changes in the device's inventory: an install or update is there, managed; an
   * uninstall is gone. The agent's next report has the last word. */
  private applyToInventory(deployment: DeploymentRow, deviceId: string): void {
    const queries = inventoryWrites(this.db);
    const ofSoftware = { deviceId, softwareId: deployment.softwareId, softwareName: deployment.softwareName };
    if (deployment.deploymentType === 'uninstall') {
      queries.deleteOfSoftware.run(ofSoftware);
      return;
    }
    const now = isoNow();
    const catalogId = this.catalog.byId(deployment.softwareId) ? deployment.softwareId : null;
    const existing = queries.firstOfSoftware.get(ofSoftware);
    if (existing) {
      updateRow(this.db, deviceSoftware, existing, { version: deployment.version, catalogId, isManaged: true, lastSeen: now });
      return;
    }
    insertRow(this.db, deviceSoftware, { deviceId, orgId: deployment.orgId, catalogId, name: deployment.softwareName, version: deployment.version, isManaged: true, lastSeen: now });
  }

  // ---- Inventory ----

  /**
   * A heartbeat's software list replaces the device's inventory: rows of the same name (case-insensitive) and
   * version are kept (their id, first sighting and managed mark), changed fields updated; rows not reported are
   * removed, new ones added. Each row is linked to the catalog item of its name offered to the device's
   * organization (its own, else its partner's, else a platform one). Every row's lastSeen is the report's time.
   */
  replaceDeviceSoftware(device: { id: string; orgId: string }, reported: readonly ReportedSoftware[]): void {
    this.db.$client.transaction(() => {
      const org = requireOrg(this.db, SYSTEM.caller, device.orgId);
      const names = this.catalog.namesOfferedTo(org);
      const keyOf = (name: string, version: string | null) => `${name.toLowerCase()}\u0000${version ?? ''}`;
      const wanted = new Map<string, Omit<typeof deviceSoftware.$inferInsert, 'deviceId' | 'orgId' | 'lastSeen'>>();
      for (const item of reported) {
        const name = item.name.trim().slice(0, 500);
        if (!name) continue;
        const version = clip(item.version, 100);
        wanted.set(keyOf(name, version), {
          name,
          version,
          vendor: clip(item.vendor, 200),
          installDate: clip(item.installDate, 64),
          installLocation: clip(item.installLocation, 1024),
          uninstallString: clip(item.uninstallString, 2048),
          catalogId: names.get(name.toLowerCase()) ?? null,
        });
      }
      const queries = inventoryWrites(this.db);
      const now = isoNow();
      const gone: string[] = [];
      for (const row of queries.ofDevice.all({ deviceId: device.id })) {
        const key = keyOf(row.name, row.version);
        const next = wanted.get(key);
        if (!next) {
          gone.push(row.id);
          continue;
        }
        wanted.delete(key);
        const changed = (Object.keys(next) as (keyof typeof next)[]).some((k) => (next[k] ?? null) !== row[k as keyof InventoryRow]);
        if (changed) queries.replace.run({ ...next, id: row.id });
      }
      // The ids as one JSON array: one statement whatever their number.
      if (gone.length > 0) queries.deleteIds.run({ ids: JSON.stringify(gone) });
      for (const item of wanted.values()) insertRow(this.db, deviceSoftware, { ...item, deviceId: device.id, orgId: device.orgId, lastSeen: now });
      queries.seen.run({ deviceId: device.id, now });
    })();
  }

  /** GET /software/inventory: a page of the visible devices that have inventory rows (matching the filters). */
  inventory(ctx: RequestContext, query: z.infer<typeof InventoryQuerySchema>) {
    const scope = this.devices.visibleScope(ctx);
    if (!scope) return { data: [], total: 0 };
    const items = itemFilter(query);
    const statements = inventoryPageOf(this.db, `${shapeOf({ d: query.deviceId })}${items.shape}:${scope.shape}`);
    const values = { ...scope.values, ...items.values, deviceId: query.deviceId };
    const total = statements.count.get(values)?.n ?? 0;
    const deviceIds = statements.page
      .all({ ...values, limit: query.limit, offset: (query.page - 1) * query.limit })
      .map((d) => d.deviceId);
    return { data: this.entries(ctx, deviceIds, query), total };
  }

  /** GET /software/inventory/:deviceId: 404 `Device inventory not found` for a device not seen or without rows. */
  deviceInventory(ctx: RequestContext, deviceId: string) {
    let entry;
    try {
      [entry] = this.entries(ctx, [this.devices.findVisible(ctx, deviceId).id], {});
    } catch (err) {
      if (!(err instanceof DomainError && err.kind === 'not_found')) throw err;
    }
    if (!entry) throw notFound('Device inventory not found', 'DEVICE_INVENTORY_NOT_FOUND');
    return { data: entry };
  }

  /** The inventory entries of these devices (in this order; devices without matching rows are left out). */
  private entries(ctx: RequestContext, deviceIds: readonly string[], query: { softwareId?: string | undefined; search?: string | undefined }) {
    if (deviceIds.length === 0) return [];
    // The ids as one JSON array: one prepared statement whatever their number.
    const ids = JSON.stringify(deviceIds);
    const items = itemFilter(query);
    const rows = inventoryRowsOf(this.db, items.shape).all({ ...items.values, deviceIds: ids });
    const rowsOf = new Map<string, typeof rows>();
    for (const row of rows) {
      const items = rowsOf.get(row.deviceId);
      if (items) items.push(row);
      else rowsOf.set(row.deviceId, [row]);
    }
    const queries = softwareQueries(this.db);
    const scanned = new Map(queries.lastScanned.all({ deviceIds: ids }).map((r) => [r.deviceId, r.at]));
    const pending = new Set(queries.pendingUninstalls.all({ deviceIds: ids }).map((row) => `${row.deviceId} ${row.softwareId}`));
    return deviceIds.flatMap((deviceId) => {
      const items = rowsOf.get(deviceId);
      if (!items) return [];
      const device = this.devices.findVisible(ctx, deviceId);
      return [
        {
          deviceId,
          deviceName: device.displayName || device.hostname,
          os: device.osType,
          lastScannedAt: scanned.get(deviceId) ?? null,
          items: items.map((row) => ({
            softwareId: row.id,
            catalogId: row.catalogId,
            name: row.name,
            version: row.version,
            vendor: row.vendor,
            installedAt: row.installDate,
            installLocation: row.installLocation,
            source: row.isManaged ? ('managed' as const) : ('discovered' as const),
            lastSeen: row.lastSeen,
            ...(pending.has(`${deviceId} ${row.id}`) || (row.catalogId !== null && pending.has(`${deviceId} ${row.catalogId}`)) ? { pendingUninstall: true } : {}),
          })),
        },
      ];
    });
  }

  /**
   * POST /software/inventory/:deviceId/:softwareId/uninstall: an uninstall deployment of one device. softwareId is
   * the inventory row's id (an item's softwareId in the inventory answers) or the catalog item it is linked to.
   */
  uninstall(ctx: RequestContext, deviceId: string, softwareId: string, body: z.infer<typeof UninstallSchema>) {
    return this.db.$client.transaction(() => {
      const device = this.devices.findVisible(ctx, deviceId);
      const row = inventoryWrites(this.db).firstOf.get({ deviceId: device.id, softwareId });
      if (!row) throw notFound('Software not found on device', 'SOFTWARE_NOT_FOUND_ON_DEVICE');
      if (device.status === 'decommissioned') throw badRequest(`Device ${device.id} is decommissioned`, 'DEVICE_DECOMMISSIONED');
      const item = row.catalogId ? this.catalog.byId(row.catalogId) : undefined;
      const version = item && row.version ? this.catalog.versionOf(item.id, row.version) : undefined;
      const deployment = this.insertDeployment(ctx, {
        org: requireOrg(this.db, ctx.caller, device.orgId),
        softwareId: item?.id ?? row.id,
        softwareName: item?.name ?? row.name,
        version,
        versionName: row.version,
        action: 'uninstall',
        devices: [device],
        requestedBy: body.requestedBy,
        reason: body.reason,
        scheduleAt: body.scheduleAt,
        pkg: {
          downloadUrl: null,
          sha256: null,
          silentInstallArg: null,
          silentUninstallArg: version?.silentUninstallArg ?? null,
          uninstallString: row.uninstallString,
        },
      });
      return { data: deploymentOut(deployment) };
    })();
  }
}
