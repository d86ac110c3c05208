import type { Statement } from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { ELEVATION_EXPORT_COLUMNS, type ElevationAuditExportQuery } from '../../../contract/pam.js';
import type { Db } from '../../db/connection.js';
import type { RequestContext } from '../../context.js';
import { badRequest } from '../../errors.js';
import { csvFields, csvRecord } from '../../lib/csv.js';
import { Utf8Builder } from '../../lib/utf8-builder.js';
import { recordAudit } from '../audit/recorder.js';
import { requireSite } from '../tenancy/access.js';
import type { ElevationQueries } from './requests-queries.js';
import { targetOrg } from './scope.js';
import type { InFlightWrites } from './trail.js';

/** 04 "Audit export": X-Export-Schema-Version. */
export const EXPORT_SCHEMA_VERSION = '1';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface ExportKey {
  createdAt: string;
  id: string;
}

/** Opaque cursor: base64url of "<recorded time>|<row id>" (04 "Audit export"). */
export function encodeCursor(key: ExportKey): string {
  return Buffer.from(`${key.createdAt}|${key.id}`, 'utf8').toString('base64url');
}

/** The key a cursor names; 400 `Invalid cursor` for anything that is not a cursor this server wrote. */
export function decodeCursor(cursor: string): ExportKey {
  const invalid = () => badRequest('Invalid cursor', 'INVALID_CURSOR');
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  // Round trip: base64url decoding is lenient, the cursor must be exactly what encodeCursor wrote.
  if (Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw invalid();
  const [createdAt, id, ...rest] = text.split('|');
  if (rest.length > 0 || createdAt === undefined || id === undefined) throw invalid();
  if (!ISO_RE.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || new Date(createdAt).toISOString() !== createdAt)
    throw invalid();
  if (!UUID_RE.test(id)) throw invalid();
  return { createdAt, id };
}

type ExportColumn = (typeof ELEVATION_EXPORT_COLUMNS)[number];
type RequestColumn = Extract<ExportColumn, `request_${string}`>;
type EventColumn = Exclude<ExportColumn, RequestColumn>;

/** The event's own columns: the first ones of the export (04 "Audit export"). */
const EVENT_SQL: Record<EventColumn, string> = {
  id: 'e.id',
  org_id: 'e.org_id',
  elevation_request_id: 'e.elevation_request_id',
  event_type: 'e.event_type',
  actor: 'e.actor',
  actor_user_id: 'e.actor_user_id',
  occurred_at: 'e.occurred_at',
  created_at: 'e.created_at',
  details: 'e.details',
};

/** The columns of the event's request, in its current state: the rest of the export. */
const REQUEST_SQL: Record<RequestColumn, string> = {
  request_device_id: 'r.device_id',
  request_site_id: 'r.site_id',
  request_flow_type: 'r.flow_type',
  request_subject_user_id: 'r.subject_user_id',
  request_subject_username: 'r.subject_username',
  request_reason: 'r.reason',
  request_target_executable_path: 'r.target_executable_path',
  request_target_executable_hash: 'r.target_executable_hash',
  request_target_executable_signer: 'r.target_executable_signer',
  request_target_publisher: 'r.target_publisher',
  request_status: 'r.status',
  request_revision: 'r.revision',
  request_requested_at: 'r.requested_at',
  request_approved_at: 'r.approved_at',
  request_approved_by_user_id: 'r.approved_by_user_id',
  request_denied_by_user_id: 'r.denied_by_user_id',
  request_denial_reason: 'r.denial_reason',
  request_expires_at: 'r.expires_at',
  request_revoked_at: 'r.revoked_at',
  request_revoked_by_user_id: 'r.revoked_by_user_id',
  request_revoked_reason: 'r.revoked_reason',
  request_execution_id: 'r.execution_id',
  request_tool_name: 'r.tool_name',
  request_action_digest: 'r.action_digest',
  request_risk_tier: 'r.risk_tier',
  request_decided_assurance_level: 'r.decided_assurance_level',
  request_decided_via: 'r.decided_via',
};

const EVENT_COLUMNS = ELEVATION_EXPORT_COLUMNS.filter((c): c is EventColumn => c in EVENT_SQL);
const REQUEST_COLUMNS = ELEVATION_EXPORT_COLUMNS.filter((c): c is RequestColumn => c in REQUEST_SQL);
// A row is its event's cells followed by its request's, so the export's order must be events first.
if ([...EVENT_COLUMNS, ...REQUEST_COLUMNS].join() !== ELEVATION_EXPORT_COLUMNS.join())
  throw new Error('ELEVATION_EXPORT_COLUMNS: the request_* columns must follow the event columns');

/** A row as SQLite returns it in raw mode: values in column order. */
type Cells = (string | number | null)[];

const ID = EVENT_COLUMNS.indexOf('id');
const CREATED_AT = EVENT_COLUMNS.indexOf('created_at');
const DETAILS = EVENT_COLUMNS.indexOf('details');
const REQUEST_ID = EVENT_COLUMNS.indexOf('elevation_request_id');

/**
 * The events of one page, in one statement. The keyset condition is a row value, `(created_at, id) >
 * (after)`, which SQLite answers from the (org_id, created_at, id) index as a range: every page starts where
 * the last one ended instead of scanning the window from its start. Filters that are not used are null. The
 * request is joined for the filters only; its columns are read once per request (REQUESTS_SQL), not per event.
 * `restriction` is one more condition (SQL text whose `?` parameters are bound before the named ones).
 */
const pageSql = (restriction?: string) => `
  SELECT ${EVENT_COLUMNS.map((column) => EVENT_SQL[column]).join(', ')}
  FROM elevation_audit_events e JOIN elevation_requests r ON r.id = e.elevation_request_id
  WHERE e.org_id = @orgId
    AND (e.created_at, e.id) > (@afterAt, @afterId)
    AND e.created_at < @upper
    AND (@siteId IS NULL OR r.site_id = @siteId)
    AND (@siteIds IS NULL OR r.site_id IN (SELECT value FROM json_each(@siteIds)))
    AND (@deviceId IS NULL OR r.device_id = @deviceId)
    AND (@requestId IS NULL OR e.elevation_request_id = @requestId)
    AND (@eventType IS NULL OR e.event_type = @eventType)
    ${restriction === undefined ? '' : `AND ${restriction}`}
  ORDER BY e.created_at, e.id
  LIMIT @limit`;

/** The requests of a page's events (a JSON array of ids): the id, then the request columns. */
const REQUESTS_SQL = `
  SELECT r.id, ${REQUEST_COLUMNS.map((column) => REQUEST_SQL[column]).join(', ')}
  FROM elevation_requests r WHERE r.id IN (SELECT value FROM json_each(?))`;

/** Renders a drizzle condition as SQL text and parameters, with the casing db/connection.ts gives drizzle. */
const dialect = new SQLiteSyncDialect({ casing: 'snake_case' });

interface PageParams {
  orgId: string;
  afterAt: string;
  afterId: string;
  upper: string;
  siteId: string | null;
  siteIds: string | null;
  deviceId: string | null;
  requestId: string | null;
  eventType: string | null;
  limit: number;
}

export interface ExportPage {
  headers: Record<string, string>;
  contentType: string;
  /** Bytes, not a string: its length is the Content-Length without encoding it twice. */
  body: Buffer;
  rowCount: number;
}

/**
 * The elevation audit export (01 §4.9 "Audit export", 04 "Audit export"): one organization, the window
 * [from, to) over the time rows were recorded, keyset-paged by (recorded time, id), only rows recorded before
 * the settle watermark. A page is at most 1000 rows, so it is read in one statement and formatted whole: its
 * headers (row count, next cursor) are known before the first byte is sent, and the memory a page takes is
 * bounded by the limit whatever the size of the window.
 */
export class ElevationAuditExport {
  private readonly pageStatement: Statement<[PageParams], Cells>;
  private readonly requestsStatement: Statement<[string], Cells>;

  constructor(
    private readonly db: Db,
    private readonly inFlight: InFlightWrites,
    private readonly settleSeconds: number,
    private readonly requests: Pick<ElevationQueries, 'deviceGroupWhere'>,
  ) {
    this.pageStatement = db.$client.prepare<[PageParams], Cells>(pageSql()).raw(true);
    this.requestsStatement = db.$client.prepare<[string], Cells>(REQUESTS_SQL).raw(true);
  }

  /** X-Settled-Through: now − settle, capped at the recorded time of the oldest write still in progress. */
  watermark(now = Date.now()): string {
    const settled = new Date(now - this.settleSeconds * 1000).toISOString();
    const oldest = this.inFlight.oldest();
    return oldest !== null && oldest < settled ? oldest : settled;
  }

  page(ctx: RequestContext, query: ElevationAuditExportQuery): ExportPage {
    const { caller } = ctx;
    const org = targetOrg(this.db, caller, query.orgId);
    if (query.siteId !== undefined) {
      const site = requireSite(this.db, caller, query.siteId);
      if (site.orgId !== org.id) throw badRequest('siteId: not a site of the organization', 'VALIDATION_ERROR');
    }
    const cursor = query.cursor !== undefined ? decodeCursor(query.cursor) : null;

    const watermark = this.watermark();
    const from = new Date(query.from).toISOString();
    const to = new Date(query.to).toISOString();
    // (from, '') as the lower key is `created_at >= from`: every id sorts after the empty string.
    const after = cursor !== null && cursor.createdAt >= from ? cursor : { createdAt: from, id: '' };
    const params: PageParams = {
      orgId: org.id,
      afterAt: after.createdAt,
      afterId: after.id,
      upper: to < watermark ? to : watermark,
      siteId: query.siteId ?? null,
      siteIds: caller.siteIds === null ? null : JSON.stringify(caller.siteIds),
      deviceId: query.deviceId ?? null,
      requestId: query.elevationRequestId ?? null,
      eventType: query.eventType ?? null,
      limit: query.limit + 1,
    };
    const rows = this.pageRows(ctx, params);
    const hasMore = rows.length > query.limit;
    if (hasMore) rows.pop();
    const last = rows[rows.length - 1];
    const nextCursor = last ? encodeCursor(keyOf(last)) : (query.cursor ?? '');
    const windowComplete = !hasMore && to <= watermark;

    // Read in the same tick as the events: no write can come between them.
    const requests = this.requestCells(rows);
    this.recordPage(ctx, org.id, query, rows.length, watermark);

    return {
      headers: {
        'x-next-cursor': nextCursor,
        'x-has-more': String(hasMore),
        'x-window-complete': String(windowComplete),
        'x-settled-through': watermark,
        'x-row-count': String(rows.length),
        'x-export-schema-version': EXPORT_SCHEMA_VERSION,
        'cache-control': 'no-store',
      },
      contentType: query.format === 'jsonl' ? 'application/x-ndjson; charset=utf-8' : 'text/csv; charset=utf-8',
      body: query.format === 'jsonl' ? toJsonLines(rows, requests) : toCsv(rows, requests),
      rowCount: rows.length,
    };
  }

  /** The events of a page. A caller restricted to device groups (01 §2.6) gets only the events of requests on
   * devices in them: the devices module's condition carries that caller's values, so its statement is prepared for
   * the request (the same SQL plus that condition). */
  private pageRows(ctx: RequestContext, params: PageParams): Cells[] {
    const devices = this.requests.deviceGroupWhere(ctx, sql.raw('r.device_id'));
    if (devices === undefined) return this.pageStatement.all(params);
    const restriction = dialect.sqlToQuery(devices);
    return this.db.$client
      .prepare<unknown[], Cells>(pageSql(restriction.sql))
      .raw(true)
      .all(...restriction.params, params);
  }

  /** The request columns of each request the events belong to, by request id. */
  private requestCells(events: Cells[]): Map<string, Cells> {
    const ids = [...new Set(events.map((row) => String(row[REQUEST_ID])))];
    const requests = new Map<string, Cells>();
    if (ids.length === 0) return requests;
    for (const [id, ...cells] of this.requestsStatement.all(JSON.stringify(ids))) requests.set(String(id), cells);
    return requests;
  }

  /** Each exported page is itself audited (04: `pam.elevation_audit.export`). */
  private recordPage(
    ctx: RequestContext,
    orgId: string,
    query: ElevationAuditExportQuery,
    rowCount: number,
    watermark: string,
  ): void {
    this.db.$client.transaction(() => {
      recordAudit(this.db, ctx, {
        action: 'pam.elevation_audit.export',
        resourceType: 'elevation_audit',
        orgId,
        details: {
          format: query.format,
          from: query.from,
          to: query.to,
          limit: query.limit,
          cursor: query.cursor ?? null,
          rowCount,
          settledThrough: watermark,
          filters: {
            siteId: query.siteId ?? null,
            deviceId: query.deviceId ?? null,
            elevationRequestId: query.elevationRequestId ?? null,
            eventType: query.eventType ?? null,
          },
        },
      });
    })();
  }
}

function keyOf(row: Cells): ExportKey {
  return { createdAt: String(row[CREATED_AT]), id: String(row[ID]) };
}

/** The request part of an event's row; the request was read with the page, so it is there. */
function requestOf<T>(requests: Map<string, T>, event: Cells): T {
  const request = requests.get(String(event[REQUEST_ID]));
  if (request === undefined) throw new Error(`export: request ${String(event[REQUEST_ID])} of an event was not read`);
  return request;
}

function parseDetails(value: string | number | null | undefined): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function toJsonLines(events: Cells[], requests: Map<string, Cells>): Buffer {
  const requestFields = new Map<string, Record<string, unknown>>();
  for (const [id, cells] of requests)
    requestFields.set(id, Object.fromEntries(REQUEST_COLUMNS.map((column, i) => [column, cells[i]])));
  const out = new Utf8Builder();
  for (const event of events) {
    const record: Record<string, unknown> = {};
    EVENT_COLUMNS.forEach((column, i) => {
      record[column] = i === DETAILS ? parseDetails(event[i]) : event[i];
    });
    out.append(`${JSON.stringify(Object.assign(record, requestOf(requestFields, event)))}\n`);
  }
  return out.bytes();
}

/** A header on every page (even an empty one), details as its JSON text (lib/csv.ts). A request's fields are
 * formatted once per page and follow each of its events'. */
function toCsv(events: Cells[], requests: Map<string, Cells>): Buffer {
  const requestFields = new Map<string, string>();
  for (const [id, cells] of requests) requestFields.set(id, csvFields(cells));
  const out = new Utf8Builder();
  out.append(csvRecord(ELEVATION_EXPORT_COLUMNS));
  for (const event of events) out.append(`${csvFields(event)},${requestOf(requestFields, event)}\n`);
  return out.bytes();
}
