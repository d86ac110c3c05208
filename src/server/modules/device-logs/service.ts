import { and, desc, eq, getTableColumns, gte, lte, sql } from 'drizzle-orm';
import type { z } from 'zod';
import {
  DIAGNOSTIC_LEVELS,
  type DeviceEventBatchSchema,
  type DeviceEventQuerySchema,
  type DiagnosticLogBatchSchema,
  type DiagnosticLogQuerySchema,
} from '../../../contract/device-logs.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { deviceDiagnosticLogs, deviceEventLogs } from '../../db/schema/index.js';
import { notFound } from '../../errors.js';
import { driverValue, inJson, insertRow, preparedQueries, rawStatement, shapeConditions, shapeOf } from '../../db/prepared.js';
import { paged, preparedPages } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import type { DevicesService } from '../devices/service.js';
import { containsPattern } from '../../lib/like.js';

/** 03 §8: entries are inserted in groups of this many, each group its own transaction. */
export const INSERT_GROUP = 100;
/** 05 wire notes: an event stamped further ahead than this is stamped with its receive time. */
const MAX_FUTURE_MS = 10 * 60_000;

type DiagnosticLevel = (typeof DIAGNOSTIC_LEVELS)[number];
const isDiagnosticLevel = (s: string): s is DiagnosticLevel => (DIAGNOSTIC_LEVELS as readonly string[]).includes(s);

/** An ISO 8601 time as stored: UTC with milliseconds, so that stored times sort and compare as text. */
function utc(text: string): string {
  const at = Date.parse(text);
  return Number.isNaN(at) ? text : new Date(at).toISOString();
}

/** What a batch came to: rows stored, rows sent, and whether a group of them failed. */
export interface Stored {
  stored: number;
  total: number;
  failedGroups: number;
}

/** A page of a device's diagnostic log, newest first, per shape: which filters the request has (`l` the JSON array
 * `levels`, `c` component, `a` since, `b` until, `q` message or fields LIKE `pattern`). */
const diagnosticPageOf = preparedPages(deviceDiagnosticLogs, [desc(deviceDiagnosticLogs.timestamp), desc(deviceDiagnosticLogs.id)], (shape) => {
  const t = deviceDiagnosticLogs;
  const pattern = sql.placeholder('pattern');
  return and(
    eq(t.deviceId, sql.placeholder('deviceId')),
    ...shapeConditions(shape, {
      l: () => inJson(t.level, 'levels'),
      c: () => eq(t.component, sql.placeholder('component')),
      a: () => gte(t.timestamp, sql.placeholder('since')),
      b: () => lte(t.timestamp, sql.placeholder('until')),
      q: () => sql`(${t.message} LIKE ${pattern} ESCAPE '\\' OR ${t.fields} LIKE ${pattern} ESCAPE '\\')`,
    }),
  );
});

/** A page of a device's event log, newest first, per shape: `c` category, `l` level, `s` source, `a` startDate,
 * `b` endDate. */
const eventPageOf = preparedPages(deviceEventLogs, [desc(deviceEventLogs.timestamp), desc(deviceEventLogs.id)], (shape) => {
  const t = deviceEventLogs;
  return and(
    eq(t.deviceId, sql.placeholder('deviceId')),
    ...shapeConditions(shape, {
      c: () => eq(t.category, sql.placeholder('category')),
      l: () => eq(t.level, sql.placeholder('level')),
      s: () => eq(t.source, sql.placeholder('source')),
      a: () => gte(t.timestamp, sql.placeholder('from')),
      b: () => lte(t.timestamp, sql.placeholder('to')),
    }),
  );
});

const EVENT_COLUMNS = Object.entries(getTableColumns(deviceEventLogs));

/** One event inserted unless its (device, source, eventId) is there already, prepared once per database: every
 * column a placeholder of its own name, bound as the driver takes it (insertEvent). */
const eventInsert = preparedQueries((db) =>
  rawStatement(
    db,
    db
      .insert(deviceEventLogs)
      .values(Object.fromEntries(EVENT_COLUMNS.map(([name]) => [name, sql`${sql.placeholder(name)}`])) as never)
      .onConflictDoNothing(),
  ),
);

/** Inserts one event (a repeated one is ignored, as a conflict) and answers how many rows were stored (0 or 1). As
 * db/prepared.ts insertRow: a column left out takes its `$defaultFn` (id, createdAt), else its default, else null;
 * each value through its column's encoder (details: JSON). */
function insertEvent(db: Db, row: typeof deviceEventLogs.$inferInsert): number {
  const given = row as Record<string, unknown>;
  const values: Record<string, unknown> = {};
  for (const [name, column] of EVENT_COLUMNS) {
    let value = given[name];
    if (value === undefined) value = column.defaultFn ? column.defaultFn() : (column.default ?? null);
    values[name] = driverValue(column, value);
  }
  const insert = eventInsert(db);
  return insert.stmt.run(insert.bind(values)).changes;
}

/**
 * The agent's diagnostic log and the device's OS event log (03 §2.7, §2.8, §4.4): sent by the device's agent with
 * its token, read by users who may read the device (devices:read and the device's visibility, as GET /devices/:id).
 */
export class DeviceLogsService {
  constructor(
    private readonly db: Db,
    private readonly devices: DevicesService,
    /** Told of a group that could not be stored and of an audit entry that could not be written (only logged). */
    private readonly onError: (err: unknown, what: string) => void,
  ) {}

  /** The device of the calling agent (the guard has matched the token to the path's agent): 404 when gone. */
  private agentDevice(ctx: RequestContext, agentId: string) {
    const device = this.devices.byAgentId(agentId);
    if (!device || device.status === 'decommissioned' || ctx.caller.agentId !== agentId) throw notFound('Device not found', 'DEVICE_NOT_FOUND');
    return device;
  }

  /** Inserts rows in groups of INSERT_GROUP, each in its own transaction: a failing group loses only its rows. */
  private insertInGroups<R>(rows: readonly R[], what: string, insert: (group: R[]) => number): Stored {
    let stored = 0;
    let failedGroups = 0;
    for (let i = 0; i < rows.length; i += INSERT_GROUP) {
      const group = rows.slice(i, i + INSERT_GROUP);
      try {
        stored += this.db.$client.transaction(() => insert(group))();
      } catch (err) {
        failedGroups += 1;
        this.onError(err, `${what}: a group of ${group.length} could not be stored`);
      }
    }
    return { stored, total: rows.length, failedGroups };
  }

  /** POST /agents/:id/logs: stores the entries with the device's id and organization. */
  ingest(ctx: RequestContext, agentId: string, body: z.infer<typeof DiagnosticLogBatchSchema>): Stored {
    const device = this.agentDevice(ctx, agentId);
    const rows = body.logs.map((entry) => ({
      deviceId: device.id,
      orgId: device.orgId,
      timestamp: utc(entry.timestamp),
      level: entry.level,
      component: entry.component,
      message: entry.message,
      fields: entry.fields ?? null,
      agentVersion: entry.agentVersion ?? null,
    }));
    return this.insertInGroups(rows, 'diagnostic logs', (group) => {
      for (const row of group) insertRow(this.db, deviceDiagnosticLogs, row);
      return group.length;
    });
  }

  /** GET /devices/:id/diagnostic-logs: newest first (timestamp, then id). */
  diagnosticLogs(ctx: RequestContext, deviceId: string, query: z.infer<typeof DiagnosticLogQuerySchema>) {
    const device = this.devices.findVisible(ctx, deviceId);
    // Unknown levels are dropped (05 wire notes); none left: no level condition.
    const levels = (query.level ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(isDiagnosticLevel);
    const shape = shapeOf({ l: levels.length > 0, c: query.component, a: query.since, b: query.until, q: query.search });
    const values = {
      deviceId: device.id,
      levels: JSON.stringify(levels),
      component: query.component,
      since: query.since ? utc(query.since) : undefined,
      until: query.until ? utc(query.until) : undefined,
      pattern: query.search ? containsPattern(query.search) : undefined,
    };
    const { page, limit } = query;
    const { rows, total } = diagnosticPageOf(this.db, shape, values, { page, limit });
    return { logs: rows, total, limit, offset: (page - 1) * limit };
  }

  /** PUT /agents/:id/eventlogs: repeated (source, eventId) pairs are ignored; a time far ahead becomes now. */
  submitEvents(ctx: RequestContext, agentId: string, body: z.infer<typeof DeviceEventBatchSchema>, now = Date.now()): Stored {
    const device = this.agentDevice(ctx, agentId);
    const receivedAt = new Date(now).toISOString();
    let clamped = 0;
    const rows = body.events.map((event) => {
      const ahead = Date.parse(event.timestamp) > now + MAX_FUTURE_MS;
      if (ahead) clamped += 1;
      return {
        deviceId: device.id,
        orgId: device.orgId,
        timestamp: ahead ? receivedAt : utc(event.timestamp),
        level: event.level,
        category: event.category,
        source: event.source,
        eventId: event.eventId ?? null,
        message: event.message,
        details: ahead ? { ...(event.details ?? {}), originalTimestamp: event.timestamp, timestampClamped: true } : (event.details ?? null),
      };
    });
    const outcome = this.insertInGroups(rows, 'event logs', (group) => group.reduce((stored, row) => stored + insertEvent(this.db, row), 0));
    if (rows.length > 0) {
      // 03 §6: audited; a failed audit write is only logged and never fails the submission.
      try {
        this.db.$client.transaction(() =>
          recordAudit(this.db, ctx, {
            action: 'agent.eventlogs.submit',
            resourceType: 'device',
            resourceId: device.id,
            resourceName: device.hostname,
            orgId: device.orgId,
            details: { received: rows.length, inserted: outcome.stored, duplicates: rows.length - outcome.stored, timestampClamped: clamped, failedGroups: outcome.failedGroups },
          }),
        )();
      } catch (err) {
        this.onError(err, 'event logs: the audit entry could not be written');
      }
    }
    return outcome;
  }

  /** GET /devices/:id/eventlogs: newest first (timestamp, then id). */
  events(ctx: RequestContext, deviceId: string, query: z.infer<typeof DeviceEventQuerySchema>) {
    const device = this.devices.findVisible(ctx, deviceId);
    const shape = shapeOf({ c: query.category, l: query.level, s: query.source, a: query.startDate, b: query.endDate });
    const values = {
      deviceId: device.id,
      category: query.category,
      level: query.level,
      source: query.source,
      from: query.startDate ? utc(query.startDate) : undefined,
      to: query.endDate ? utc(query.endDate) : undefined,
    };
    const { rows, total } = eventPageOf(this.db, shape, values, query);
    return paged(rows, query, total);
  }
}
