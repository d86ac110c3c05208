import { randomUUID } from 'node:crypto';
import { and, asc, count, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { z } from 'zod';
import {
  CUSTOM_FIELDS_MARKER,
  type CustomFieldCreateSchema,
  type ScriptCreateSchema,
  type ScriptExecuteSchema,
  type ScriptExecutionListQuerySchema,
  type ScriptListQuerySchema,
  type ScriptUpdateSchema,
} from '../../../contract/scripts.js';
import type { Db } from '../../db/connection.js';
import { customFieldDefinitions, scriptExecutions, scripts, type ScriptParameter } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { DomainError, badRequest, conflict, forbidden, notFound } from '../../errors.js';
import { enqueueJob, publishEvent, type JobWorker } from '../../jobs/queue.js';
import { paged, preparedPage, preparedPages, readPage, type Paged } from '../../lib/paging.js';
import { deleteById, inJson, insertRow, preparedQueries, preparedShapes, rowById, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { recordAudit } from '../audit/recorder.js';
import { reaches } from '../alerts/scope.js';
import { assertOrgWideWriter, readOrgIds, resolveWriteOrg } from '../tenancy/access.js';
import type { CommandRow, DeviceCommandsService } from '../device-commands/service.js';
import { restrictedDeviceInPrepared, restrictionShape, type DeviceRow, type DevicesService } from '../devices/service.js';
import { SYSTEM_SCRIPTS } from './system-library.js';
import { newId } from '../../db/ids.js';

export type ScriptRow = typeof scripts.$inferSelect;
export type ExecutionRow = typeof scriptExecutions.$inferSelect;

const TIMEOUT_JOB = 'scripts.execution-timeout';
/** What an execution record shows in place of a secret parameter's value. */
export const SECRET_MARK = '[secret]';
const ACTIVE: readonly ExecutionRow['status'][] = ['pending', 'running'];
const VAR_REFERENCE = /\{\{\s*var\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

const isoNow = () => new Date().toISOString();

/** 03 §4.6: a secret parameter reaches the script as the environment variable SVC_VAR_<NAME>. */
export function secretEnvName(name: string): string {
  return `SVC_VAR_${name.toUpperCase()}`;
}

/** The parameters a secret may not be referenced by in the content: it would be written into the command. */
function assertNoSecretReferences(content: string, parameters: readonly ScriptParameter[]): void {
  const secrets = new Set(parameters.filter((p) => p.secret).map((p) => p.name));
  for (const match of content.matchAll(VAR_REFERENCE)) {
    const name = match[1] ?? '';
    if (secrets.has(name))
      throw badRequest(`Secret variable ${name} can only be read from the environment variable ${secretEnvName(name)}`, 'SECRET_VARIABLE_REFERENCED');
  }
}

/** The custom field values of a run's output: the last marker line wins per key (03 §4.6). */
export function parseCustomFieldMarkers(stdout: string | null): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const line of (stdout ?? '').split(/\r?\n/)) {
    if (!line.startsWith(CUSTOM_FIELDS_MARKER)) continue;
    try {
      const parsed: unknown = JSON.parse(line.slice(CUSTOM_FIELDS_MARKER.length));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) Object.assign(values, parsed);
    } catch {
      // A malformed marker line writes nothing; the output keeps it for the reader.
    }
  }
  return values;
}

/** A value fit for a custom field of the type, or undefined. */
function coerceFieldValue(type: 'text' | 'number' | 'boolean', value: unknown): string | number | boolean | undefined {
  if (type === 'number') return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  if (type === 'boolean') return typeof value === 'boolean' ? value : undefined;
  if (typeof value === 'string') return value.slice(0, 10_000);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** A parameter value of `record` under `key`: its own property (never one inherited from Object.prototype, such as
 * `toString` or `constructor`) holding a string, number or boolean; anything else is no value. */
function ownValue(record: Readonly<Record<string, unknown>>, key: string): string | number | boolean | undefined {
  if (!Object.hasOwn(record, key)) return undefined;
  const value = record[key];
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

/** The statements of the scripts' writes and of the reads they make, prepared once per database. */
const writeQueries = preparedQueries((db) => {
  const now = sql`${sql.placeholder('now')}`;
  const active = inArray(scriptExecutions.status, [...ACTIVE]);
  return {
    /** Ends the active runs of device `deviceId` as cancelled with `message` at `now`. */
    cancelActiveOf: db
      .update(scriptExecutions)
      .set({ status: 'cancelled', errorMessage: sql`${sql.placeholder('message')}`, completedAt: now, updatedAt: now })
      .where(and(eq(scriptExecutions.deviceId, sql.placeholder('deviceId')), active))
      .prepare(),
    /** How many runs of script `scriptId` are active. */
    activeCountOf: db
      .select({ n: count() })
      .from(scriptExecutions)
      .where(and(eq(scriptExecutions.scriptId, sql.placeholder('scriptId')), active))
      .prepare(),
    /** The pending run of command `commandId` starts at `now`; the row as it is then. */
    start: db
      .update(scriptExecutions)
      .set({ status: 'running', startedAt: now, updatedAt: now })
      .where(and(eq(scriptExecutions.commandId, sql.placeholder('commandId')), eq(scriptExecutions.status, 'pending')))
      .returning()
      .prepare(),
    /** The run of command `commandId`. */
    executionOfCommand: rowQuery(db, scriptExecutions, eq(scriptExecutions.commandId, sql.placeholder('commandId'))),
    /** The custom field definitions of organization `orgId` whose keys are in the JSON array `keys`. */
    fieldsOfOrg: rowQuery(db, customFieldDefinitions, and(eq(customFieldDefinitions.orgId, sql.placeholder('orgId')), inJson(customFieldDefinitions.key, 'keys'))),
    /** The id of organization `orgId`'s custom field `key`. */
    fieldIdOf: db
      .select({ id: customFieldDefinitions.id })
      .from(customFieldDefinitions)
      .where(and(eq(customFieldDefinitions.orgId, sql.placeholder('orgId')), eq(customFieldDefinitions.key, sql.placeholder('key'))))
      .prepare(),
  };
});

/**
 * Ends every active run (pending or running) of a device as cancelled with `message`, inside the caller's
 * transaction: the devices module's decommission (whose commands it ends through the device-commands module).
 * Answers how many ended. A script with no active run left can be deleted.
 */
export function cancelActiveExecutionsOf(db: Db, deviceId: string, message: string): number {
  return writeQueries(db).cancelActiveOf.run({ deviceId, message, now: isoNow() }).changes;
}

/** The payload of the script.started, script.completed and script.failed events (05 wire notes "4.7"; api-notes). */
function scriptEvent(row: ExecutionRow) {
  return {
    executionId: row.id,
    scriptId: row.scriptId,
    scriptName: row.scriptName,
    deviceId: row.deviceId,
    batchId: row.batchId,
    status: row.status,
    exitCode: row.exitCode,
    severity: row.severity,
  };
}

/** The script list's page and count, one prepared statement per shape (db/prepared.ts): the reach (`A` every
 * organization's scripts, `O` those of the organizations in `orgIds`, `N` none), `y` with the system library,
 * then the letters of the filters given (c category, l language, t osType, s search: placeholders of those names). */
const scriptListOf = preparedShapes((db, shape) => {
  const reach = shape[0];
  const own = reach === 'A' ? sql`${scripts.orgId} IS NOT NULL` : reach === 'O' ? inJson(scripts.orgId, 'orgIds') : sql`0`;
  const search = sql.placeholder('search');
  const where = and(
    shape.includes('y') ? or(own, eq(scripts.isSystem, true)) : own,
    ...shapeConditions(shape, {
      c: () => eq(scripts.category, sql.placeholder('category')),
      l: () => eq(scripts.language, sql.placeholder('language')),
      t: () => sql`EXISTS (SELECT 1 FROM json_each(${scripts.osTypes}) WHERE value = ${sql.placeholder('osType')})`,
      s: () => sql`(instr(lower(${scripts.name}), ${search}) > 0 OR instr(lower(coalesce(${scripts.description}, '')), ${search}) > 0)`,
    }),
  );
  return preparedPage(db, scripts, where, [desc(scripts.updatedAt), desc(scripts.id)]);
});

/** A page of a script's executions, per shape `<own>:<restriction>`: the reach ('a' every organization, 'o' those
 * of `reachOrgIds`, 'n' none), 's' status, 'd' deviceId, 'b' batchId; then the caller's device restriction
 * (devices' restrictionShape, whose placeholders are the caller's VisibleScope values). */
const executionPageOf = preparedPages(scriptExecutions, [desc(scriptExecutions.createdAt), desc(scriptExecutions.id)], (shape) => {
  const [own = '', restriction = ''] = shape.split(':');
  return and(
    eq(scriptExecutions.scriptId, sql.placeholder('scriptId')),
    own[0] === 'o' ? inJson(scriptExecutions.orgId, 'reachOrgIds') : own[0] === 'n' ? sql`0` : undefined,
    ...shapeConditions(own, {
      s: () => eq(scriptExecutions.status, sql.placeholder('status')),
      d: () => eq(scriptExecutions.deviceId, sql.placeholder('deviceId')),
      b: () => eq(scriptExecutions.batchId, sql.placeholder('batchId')),
    }),
    restrictedDeviceInPrepared(restriction, scriptExecutions.deviceId),
  );
});

/** One execution by id within a device restriction (a restrictionShape but ''; that one is rowById). */
const executionOf = preparedShapes((db, shape) =>
  rowQuery(db, scriptExecutions, and(eq(scriptExecutions.id, sql.placeholder('id')), restrictedDeviceInPrepared(shape, scriptExecutions.deviceId))),
);

/** GET /search's scripts, per reach ('a' every organization's, 'o' those of `orgIds`, 'n' none) and the system
 * library: name, description or category containing `needle` (lower case), by name, `limit` of them. */
const scriptSearchOf = preparedShapes((db, shape) => {
  const needle = sql.placeholder('needle');
  const own = shape === 'a' ? sql`${scripts.orgId} IS NOT NULL` : shape === 'o' ? inJson(scripts.orgId, 'orgIds') : sql`0`;
  return db
    .select({ id: scripts.id, orgId: scripts.orgId, name: scripts.name, description: scripts.description, category: scripts.category, language: scripts.language, isSystem: scripts.isSystem })
    .from(scripts)
    .where(
      and(
        or(own, eq(scripts.isSystem, true)),
        sql`(instr(lower(${scripts.name}), ${needle}) > 0 OR instr(lower(coalesce(${scripts.description}, '')), ${needle}) > 0 OR instr(lower(coalesce(${scripts.category}, '')), ${needle}) > 0)`,
      ),
    )
    .orderBy(scripts.name)
    .limit(sql.placeholder('limit'))
    .prepare();
});

/** The system library, and the custom field definitions of every organization ('all') or of `orgIds` ('of'). */
const readQueries = preparedQueries((db) => {
  const fieldOrder = [asc(customFieldDefinitions.key), asc(customFieldDefinitions.orgId)];
  return {
    systemLibrary: rowQuery(db, scripts, eq(scripts.isSystem, true), { orderBy: [asc(scripts.name)] }),
    customFields: {
      all: rowQuery(db, customFieldDefinitions, undefined, { orderBy: fieldOrder }),
      of: rowQuery(db, customFieldDefinitions, inJson(customFieldDefinitions.orgId, 'orgIds'), { orderBy: fieldOrder }),
    },
  };
});

interface ResolvedRun {
  content: string;
  shownParameters: Record<string, unknown>;
  secretEnv: Record<string, string>;
}

/**
 * Scripts (03 §4.6, §4.7; 05 wire notes 4.7): the organization's scripts and the read-only system library, runs
 * on devices through the device command channel (one execution record and one command per device), results and
 * the custom-field output marker, timeouts enforced by a durable job, cancel.
 */
export class ScriptsService {
  constructor(
    private readonly db: Db,
    private readonly devices: DevicesService,
    private readonly commands: DeviceCommandsService,
  ) {
    commands.on('script', {
      delivered: (command) => this.started(command),
      finished: (command) => this.finished(command),
    });
  }

  /** Upserts the built-in library (start-up). */
  ensureSystemLibrary(): void {
    this.db.$client.transaction(() => {
      for (const script of SYSTEM_SCRIPTS) {
        const values = { ...script, orgId: null, isSystem: true, createdBy: null };
        this.db
          .insert(scripts)
          .values(values)
          .onConflictDoUpdate({ target: scripts.id, set: { ...values, updatedAt: isoNow() } })
          .run();
      }
    })();
  }

  register(worker: JobWorker): void {
    worker.handle(TIMEOUT_JOB, (payload) => {
      this.timeOut(String(payload.executionId));
    });
  }

  // ---- Scripts ----

  list(ctx: RequestContext, query: z.infer<typeof ScriptListQuerySchema>): Paged<ScriptRow> {
    const orgIds = readOrgIds(this.db, ctx.caller, query.orgId);
    // An empty search matches everything (no condition); an empty category or language matches itself.
    const search = query.search ? query.search.toLowerCase() : undefined;
    const values = {
      orgIds: JSON.stringify(orgIds ?? []),
      category: query.category,
      language: query.language,
      osType: query.osType,
      search,
    };
    const shape =
      (orgIds === null ? 'A' : orgIds.length ? 'O' : 'N') +
      shapeOf({ y: query.includeSystem, c: query.category !== undefined, l: query.language, t: query.osType, s: search });
    const statements = scriptListOf(this.db, shape);
    const { rows, total } = readPage(statements, values, query);
    return paged(rows, query, total);
  }

  systemLibrary(): { data: ScriptRow[] } {
    return { data: readQueries(this.db).systemLibrary.all({}) };
  }

  get(ctx: RequestContext, id: string): ScriptRow {
    const row = rowById(this.db, scripts, id);
    if (!row || (!row.isSystem && (row.orgId === null || !reaches(this.db, ctx.caller, row.orgId)))) throw notFound('Script not found');
    return row;
  }

  create(ctx: RequestContext, body: z.infer<typeof ScriptCreateSchema>): ScriptRow {
    assertOrgWideWriter(ctx.caller);
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
    const parameters = (body.parameters ?? []) as ScriptParameter[];
    assertNoSecretReferences(body.content, parameters);
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, scripts, {
        orgId: org.id,
        name: body.name,
        description: body.description ?? null,
        category: body.category ?? null,
        osTypes: body.osTypes,
        language: body.language,
        content: body.content,
        parameters,
        timeoutSeconds: body.timeoutSeconds,
        runAs: body.runAs,
        exitCodeSeverityMapping: body.exitCodeSeverityMapping ?? null,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'script.create', row, { language: row.language, osTypes: row.osTypes });
      return row;
    })();
  }

  importSystem(ctx: RequestContext, id: string, orgId: string | undefined): ScriptRow {
    const source = rowById(this.db, scripts, id);
    if (!source?.isSystem) throw notFound('Script not found');
    const { id: _id, orgId: _org, isSystem: _sys, createdAt: _c, updatedAt: _u, createdBy: _b, version: _v, ...copy } = source;
    const row = this.create(ctx, {
      ...copy,
      ...(orgId !== undefined ? { orgId } : {}),
      parameters: copy.parameters,
      exitCodeSeverityMapping: copy.exitCodeSeverityMapping as z.infer<typeof ScriptCreateSchema>['exitCodeSeverityMapping'],
    });
    return row;
  }

  update(ctx: RequestContext, id: string, body: z.infer<typeof ScriptUpdateSchema>): ScriptRow {
    return this.db.$client.transaction(() => {
      const current = this.writable(ctx, id);
      const parameters = (body.parameters ?? current.parameters);
      assertNoSecretReferences(body.content ?? current.content, parameters);
      const row = updateRow(this.db, scripts, current, {
        ...body,
        ...(body.parameters !== undefined ? { parameters } : {}),
        version: current.version + 1,
        updatedAt: isoNow(),
      });
      if (!row) throw notFound('Script not found');
      this.audit(ctx, 'script.update', row, { changedFields: Object.keys(body), version: row.version });
      return row;
    })();
  }

  delete(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const current = this.writable(ctx, id);
      const active = writeQueries(this.db).activeCountOf.get({ scriptId: id });
      if ((active?.n ?? 0) > 0) throw conflict('Cannot delete script with active executions', 'SCRIPT_HAS_ACTIVE_EXECUTIONS');
      deleteById(this.db, scripts, id);
      this.audit(ctx, 'script.delete', current, {});
      return { success: true as const };
    })();
  }

  /** Scripts whose name, description or category holds `q`, among those the caller may read (for `/search`). */
  search(ctx: RequestContext, q: string, limit: number) {
    const needle = q.trim().toLowerCase();
    if (!needle) return [];
    const orgIds = readOrgIds(this.db, ctx.caller, undefined);
    const shape = orgIds === null ? 'a' : orgIds.length ? 'o' : 'n';
    return scriptSearchOf(this.db, shape).all({ orgIds: JSON.stringify(orgIds ?? []), needle, limit: Math.max(1, Math.min(50, limit)) });
  }

  private writable(ctx: RequestContext, id: string): ScriptRow {
    const row = this.get(ctx, id);
    if (row.isSystem) throw forbidden('System scripts are read-only', 'SYSTEM_SCRIPT_READ_ONLY');
    assertOrgWideWriter(ctx.caller);
    // An organization caller may read another organization's script only if it reaches it: get() checked that.
    return row;
  }

  private audit(ctx: RequestContext, action: string, row: ScriptRow, details: Record<string, unknown>): void {
    recordAudit(this.db, ctx, { action, resourceType: 'script', resourceId: row.id, resourceName: row.name, orgId: row.orgId, details });
  }

  // ---- Runs ----

  /**
   * One execution record and one agent command per device, in one transaction. A device that cannot run it
   * (absent or out of reach, decommissioned, another organization, an OS the script does not support, a missing
   * required parameter) is listed in `failures`; when none can, 422 and nothing is created.
   */
  execute(ctx: RequestContext, id: string, body: z.infer<typeof ScriptExecuteSchema>, options: { requireOnline?: boolean } = {}) {
    const script = this.get(ctx, id);
    const declared = new Map((script.parameters).map((p) => [p.name, p]));
    for (const name of Object.keys(body.parameters ?? {})) if (!declared.has(name)) throw badRequest(`Unknown parameter: ${name}`, 'UNKNOWN_PARAMETER');
    const batchId = randomUUID();
    const runAs = body.runAs ?? script.runAs;
    const triggerType = body.triggerType ?? 'manual';
    return this.db.$client.transaction(() => {
      const executions: { executionId: string; deviceId: string; commandId: string }[] = [];
      const failures: { deviceId: string; error: string }[] = [];
      /** Per organization of the devices reached: its devices that run the script and how many of its devices failed. */
      const byOrg = new Map<string, { deviceIds: string[]; failures: number }>();
      const orgTally = (orgId: string) => {
        let tally = byOrg.get(orgId);
        if (!tally) byOrg.set(orgId, (tally = { deviceIds: [], failures: 0 }));
        return tally;
      };
      for (const deviceId of body.deviceIds) {
        let device: DeviceRow;
        try {
          device = this.devices.findVisible(ctx, deviceId);
        } catch (err) {
          if (err instanceof DomainError) {
            failures.push({ deviceId, error: err.message });
            continue;
          }
          throw err;
        }
        const refusal = this.refusal(script, device, options.requireOnline === true);
        if (refusal) {
          failures.push({ deviceId, error: refusal });
          orgTally(device.orgId).failures++;
          continue;
        }
        let run: ResolvedRun;
        try {
          run = this.resolve(script, declared, body.parameters ?? {}, device);
        } catch (err) {
          if (err instanceof DomainError) {
            failures.push({ deviceId, error: err.message });
            orgTally(device.orgId).failures++;
            continue;
          }
          throw err;
        }
        const executionId = newId();
        const command = this.commands.queue({
          orgId: device.orgId,
          deviceId,
          type: 'script',
          payload: { executionId, scriptId: script.id, language: script.language, content: run.content, timeoutSeconds: script.timeoutSeconds, runAs },
          secretEnv: run.secretEnv,
          createdBy: ctx.caller.userId,
        });
        insertRow(this.db, scriptExecutions, {
          id: executionId,
          batchId,
          scriptId: script.id,
          scriptName: script.name,
          orgId: device.orgId,
          deviceId,
          commandId: command.id,
          triggerType,
          runAs,
          parameters: run.shownParameters,
          timeoutSeconds: script.timeoutSeconds,
          createdBy: ctx.caller.userId,
        });
        executions.push({ executionId, deviceId, commandId: command.id });
        orgTally(device.orgId).deviceIds.push(deviceId);
      }
      if (executions.length === 0) {
        throw new DomainError('unprocessable', 'No devices could be targeted', 'NO_DEVICES_TARGETED', { extra: { failures } });
      }
      // 01 §6: one entry per organization whose devices run it (a partner may run a system script across several),
      // each naming only that organization's devices, so no organization's log shows another's.
      for (const [orgId, tally] of byOrg) {
        if (tally.deviceIds.length === 0) continue;
        recordAudit(this.db, ctx, {
          action: 'script.execute',
          resourceType: 'script',
          resourceId: script.id,
          resourceName: script.name,
          orgId,
          details: { batchId, triggerType, runAs, deviceIds: tally.deviceIds, failures: tally.failures },
        });
      }
      return {
        batchId,
        scriptId: script.id,
        devicesTargeted: executions.length,
        executions,
        ...(failures.length ? { failures } : {}),
        status: failures.length ? ('partial' as const) : ('queued' as const),
      };
    })();
  }

  /** Why the device cannot run the script, if it cannot. */
  private refusal(script: ScriptRow, device: DeviceRow, requireOnline: boolean): string | null {
    if (device.status === 'decommissioned') return 'Device is decommissioned';
    if (!script.isSystem && script.orgId !== device.orgId) return "Script does not belong to the device's organization";
    if (!script.osTypes.includes(device.osType)) return `Script does not support the device's OS (${device.osType})`;
    if (requireOnline && device.status !== 'online') return 'Device is not online';
    return null;
  }

  /** The values of a run on one device: given, else the device custom field named, else the default. */
  private resolve(script: ScriptRow, declared: Map<string, ScriptParameter>, given: Record<string, string | number | boolean>, device: DeviceRow): ResolvedRun {
    const shownParameters: Record<string, unknown> = {};
    const secretEnv: Record<string, string> = {};
    const plain = new Map<string, string>();
    for (const p of declared.values()) {
      const value = ownValue(given, p.name) ?? (p.customField !== undefined ? ownValue(device.customFields, p.customField) : undefined) ?? p.defaultValue;
      if (value === undefined) {
        if (p.required) throw badRequest(`Missing required parameter: ${p.name}`, 'MISSING_PARAMETER');
        continue;
      }
      if (p.type === 'number' && !Number.isFinite(Number(value))) throw badRequest(`Parameter ${p.name} must be a number`, 'INVALID_PARAMETER');
      if (p.type === 'boolean' && !['true', 'false'].includes(String(value))) throw badRequest(`Parameter ${p.name} must be a boolean`, 'INVALID_PARAMETER');
      if (p.secret) {
        secretEnv[secretEnvName(p.name)] = String(value);
        shownParameters[p.name] = SECRET_MARK;
      } else {
        plain.set(p.name, String(value));
        shownParameters[p.name] = value;
      }
    }
    const content = script.content.replace(VAR_REFERENCE, (whole, name: string) => plain.get(name) ?? whole);
    return { content, shownParameters, secretEnv };
  }

  executions(ctx: RequestContext, scriptId: string, query: z.infer<typeof ScriptExecutionListQuerySchema>): Paged<ExecutionRow> {
    this.get(ctx, scriptId);
    const orgIds = readOrgIds(this.db, ctx.caller, undefined);
    const restriction = this.devices.restrictedScope(ctx);
    // Empty filters are no filters, as before (falsy values add no condition).
    const own = (orgIds === null ? 'a' : orgIds.length ? 'o' : 'n') + shapeOf({ s: query.status, d: query.deviceId, b: query.batchId });
    const shape = `${own}:${restrictionShape(restriction)}`;
    const values = {
      ...restriction?.values,
      scriptId,
      reachOrgIds: JSON.stringify(orgIds ?? []),
      status: query.status,
      deviceId: query.deviceId,
      batchId: query.batchId,
    };
    const { rows, total } = executionPageOf(this.db, shape, values, query);
    return paged(rows, query, total);
  }

  execution(ctx: RequestContext, id: string): ExecutionRow {
    const restriction = this.devices.restrictedScope(ctx);
    const row =
      restriction === undefined
        ? rowById(this.db, scriptExecutions, id)
        : executionOf(this.db, restrictionShape(restriction)).get({ ...restriction?.values, id });
    if (!row || !reaches(this.db, ctx.caller, row.orgId)) throw notFound('Script execution not found');
    return row;
  }

  cancel(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const current = this.execution(ctx, id);
      if (!ACTIVE.includes(current.status)) throw badRequest(`Cannot cancel execution with status: ${current.status}`, 'EXECUTION_NOT_CANCELLABLE');
      const row = this.end(current, { status: 'cancelled', errorMessage: 'Cancelled' });
      if (current.commandId) this.commands.close(current.commandId, 'cancelled');
      recordAudit(this.db, ctx, {
        action: 'script.execution.cancel',
        resourceType: 'script_execution',
        resourceId: row.id,
        resourceName: row.scriptName,
        orgId: row.orgId,
        details: { scriptId: row.scriptId, deviceId: row.deviceId, previousStatus: current.status },
      });
      return { success: true as const, execution: { id: row.id, status: row.status, completedAt: row.completedAt } };
    })();
  }

  // ---- The command channel's reports (inside its transactions) ----

  /** The agent fetched the run's command: it is running, and its timeout clock starts. */
  private started(command: CommandRow): void {
    const now = isoNow();
    const row = writeQueries(this.db).start.get({ commandId: command.id, now });
    if (!row) return;
    enqueueJob(this.db, TIMEOUT_JOB, { executionId: row.id }, { runAt: new Date(Date.parse(now) + row.timeoutSeconds * 1000), maxAttempts: 3 });
    publishEvent(this.db, 'script.started', scriptEvent(row), row.orgId);
  }

  /** The agent's result (secrets already masked out by the command channel): status, severity, custom fields. */
  private finished(command: CommandRow): void {
    const current = writeQueries(this.db).executionOfCommand.get({ commandId: command.id });
    if (!current || !ACTIVE.includes(current.status)) return;
    const script = current.scriptId ? rowById(this.db, scripts, current.scriptId) : undefined;
    const succeeded = command.status === 'completed' && command.exitCode === 0;
    const severity = command.exitCode !== null ? (script?.exitCodeSeverityMapping?.[String(command.exitCode)] ?? null) : null;
    const { written, rejected } = this.writeCustomFields(current, command.stdout);
    const row = this.end(current, {
      status: succeeded ? 'completed' : 'failed',
      exitCode: command.exitCode,
      stdout: command.stdout,
      stderr: command.stderr,
      errorMessage: command.errorMessage,
      severity,
      customFieldsWritten: Object.keys(written).length ? written : null,
      customFieldsRejected: rejected.length ? rejected : null,
      startedAt: current.startedAt ?? command.sentAt,
    });
    publishEvent(this.db, succeeded ? 'script.completed' : 'script.failed', scriptEvent(row), row.orgId);
  }

  /** 03 §4.6: the marker's values go to the custom fields whose definition allows script writes; the rest are
   * listed as rejected. */
  private writeCustomFields(execution: ExecutionRow, stdout: string | null): { written: Record<string, unknown>; rejected: string[] } {
    const values = parseCustomFieldMarkers(stdout);
    const keys = Object.keys(values);
    if (keys.length === 0) return { written: {}, rejected: [] };
    const definitions = new Map(
      writeQueries(this.db)
        .fieldsOfOrg.all({ orgId: execution.orgId, keys: JSON.stringify(keys) })
        .map((d) => [d.key, d]),
    );
    const written: Record<string, unknown> = {};
    const rejected: string[] = [];
    for (const key of keys) {
      const definition = definitions.get(key);
      const value = definition?.allowScriptWrite ? coerceFieldValue(definition.type, values[key]) : undefined;
      if (value === undefined) rejected.push(key);
      else written[key] = value;
    }
    if (Object.keys(written).length) this.devices.mergeCustomFields(execution.deviceId, written);
    return { written, rejected };
  }

  /** The durable timeout: a run still active when its time is up ends as timeout and its command is closed. */
  timeOut(executionId: string): void {
    this.db.$client.transaction(() => {
      const current = rowById(this.db, scriptExecutions, executionId);
      if (!current || !ACTIVE.includes(current.status)) return;
      const row = this.end(current, { status: 'timeout', errorMessage: `Timed out after ${current.timeoutSeconds} seconds` });
      if (current.commandId) this.commands.close(current.commandId, 'timeout');
      publishEvent(this.db, 'script.failed', scriptEvent(row), row.orgId);
    })();
  }

  private end(current: ExecutionRow, values: Partial<ExecutionRow> & { status: ExecutionRow['status'] }): ExecutionRow {
    const now = isoNow();
    const row = updateRow(this.db, scriptExecutions, current, { ...values, completedAt: now, updatedAt: now });
    if (!row) throw notFound('Script execution not found');
    return row;
  }

  // ---- Custom field definitions (minimal: what the output marker may write) ----

  listCustomFields(ctx: RequestContext, orgId: string | undefined) {
    const orgIds = readOrgIds(this.db, ctx.caller, orgId);
    if (orgIds !== null && orgIds.length === 0) return { data: [] };
    const fields = readQueries(this.db).customFields;
    return { data: orgIds === null ? fields.all.all({}) : fields.of.all({ orgIds: JSON.stringify(orgIds) }) };
  }

  createCustomField(ctx: RequestContext, body: z.infer<typeof CustomFieldCreateSchema>) {
    assertOrgWideWriter(ctx.caller);
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId);
    return this.db.$client.transaction(() => {
      const exists = writeQueries(this.db).fieldIdOf.get({ orgId: org.id, key: body.key });
      if (exists) throw conflict('A custom field with this key already exists', 'CUSTOM_FIELD_EXISTS');
      const row = insertRow(this.db, customFieldDefinitions, { orgId: org.id, key: body.key, name: body.name, type: body.type, allowScriptWrite: body.allowScriptWrite });
      recordAudit(this.db, ctx, { action: 'custom_field.create', resourceType: 'custom_field', resourceId: row.id, resourceName: row.key, orgId: org.id, details: { type: row.type, allowScriptWrite: row.allowScriptWrite } });
      return row;
    })();
  }

  deleteCustomField(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const row = rowById(this.db, customFieldDefinitions, id);
      if (!row || !reaches(this.db, ctx.caller, row.orgId)) throw notFound('Custom field not found');
      assertOrgWideWriter(ctx.caller);
      deleteById(this.db, customFieldDefinitions, id);
      recordAudit(this.db, ctx, { action: 'custom_field.delete', resourceType: 'custom_field', resourceId: row.id, resourceName: row.key, orgId: row.orgId, details: {} });
      return { success: true as const };
    })();
  }
}

