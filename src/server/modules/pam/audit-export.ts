import { Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { stringify } from 'csv-stringify';
import { ELEVATION_EXPORT_COLUMNS, type ElevationAuditExportQuery } from '../../../contract/pam.js';
import type { Db } from '../../db/connection.js';
import type { RequestContext } from '../../http/caller.js';
import { HttpError, forbidden } from '../../http/errors.js';
import { grants } from '../../http/caller.js';
import { neutraliseFormula } from '../../lib/csv-safety.js';
import { recordAudit } from '../audit/recorder.js';
import { requireSite } from '../tenancy/access.js';
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
  const invalid = () => new HttpError(400, 'Invalid cursor', 'INVALID_CURSOR');
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

/** One exported row: the event joined to its request's current state, keyed by the export's column names. */
type ExportRow = Record<(typeof ELEVATION_EXPORT_COLUMNS)[number], string | number | null>;

const SELECT_COLUMNS = `
  e.id AS id, e.org_id AS org_id, e.elevation_request_id AS elevation_request_id, e.event_type AS event_type,
  e.actor AS actor, e.actor_user_id AS actor_user_id, e.occurred_at AS occurred_at, e.created_at AS created_at,
  e.details AS details, r.device_id AS request_device_id, r.site_id AS request_site_id,
  r.flow_type AS request_flow_type, r.subject_user_id AS request_subject_user_id,
  r.subject_username AS request_subject_username, r.reason AS request_reason,
  r.target_executable_path AS request_target_executable_path, r.target_executable_hash AS request_target_executable_hash,
  r.target_executable_signer AS request_target_executable_signer, r.target_publisher AS request_target_publisher,
  r.status AS request_status, r.revision AS request_revision, r.requested_at AS request_requested_at,
  r.approved_at AS request_approved_at, r.approved_by_user_id AS request_approved_by_user_id,
  r.denied_by_user_id AS request_denied_by_user_id, r.denial_reason AS request_denial_reason,
  r.expires_at AS request_expires_at, r.revoked_at AS request_revoked_at,
  r.revoked_by_user_id AS request_revoked_by_user_id, r.revoked_reason AS request_revoked_reason,
  r.execution_id AS request_execution_id, r.tool_name AS request_tool_name, r.action_digest AS request_action_digest,
  r.risk_tier AS request_risk_tier, r.decided_assurance_level AS request_decided_assurance_level,
  r.decided_via AS request_decided_via`;

/** Filters of one page; every optional one is null when unused (one prepared statement for all pages). */
const WHERE = `
  FROM elevation_audit_events e JOIN elevation_requests r ON r.id = e.elevation_request_id
  WHERE e.org_id = @orgId
    AND e.created_at >= @from AND e.created_at < @upper
    AND (@siteId IS NULL OR r.site_id = @siteId)
    AND (@siteIds IS NULL OR r.site_id IN (SELECT value FROM json_each(@siteIds)))
    AND (@deviceId IS NULL OR r.device_id = @deviceId)
    AND (@requestId IS NULL OR e.elevation_request_id = @requestId)
    AND (@eventType IS NULL OR e.event_type = @eventType)
    AND (@afterAt IS NULL OR e.created_at > @afterAt OR (e.created_at = @afterAt AND e.id > @afterId))`;

interface PageParams {
  orgId: string;
  from: string;
  upper: string;
  siteId: string | null;
  siteIds: string | null;
  deviceId: string | null;
  requestId: string | null;
  eventType: string | null;
  afterAt: string | null;
  afterId: string | null;
}

export interface ExportPage {
  headers: Record<string, string>;
  contentType: string;
  body: Readable;
  rowCount: number;
}

/**
 * The elevation audit export (01 §4.9 "Audit export", 04 "Audit export"): one organization, the window
 * [from, to) over the time rows were recorded, keyset-paged by (recorded time, id), only rows recorded before
 * the settle watermark. The page's boundaries are read first (keys only, at most limit + 1) so the headers can
 * be sent; the rows themselves are then streamed from a read-only connection of their own (a better-sqlite3
 * iterator keeps its connection busy until it is done, and the socket may drain slowly) through csv-stringify
 * or as JSON lines.
 */
export class ElevationAuditExport {
  constructor(
    private readonly db: Db,
    private readonly inFlight: InFlightWrites,
    private readonly settleSeconds: number,
  ) {}

  /** X-Settled-Through: now − settle, capped at the recorded time of the oldest write still in progress. */
  watermark(now = Date.now()): string {
    const settled = new Date(now - this.settleSeconds * 1000).toISOString();
    const oldest = this.inFlight.oldest();
    return oldest !== null && oldest < settled ? oldest : settled;
  }

  page(ctx: RequestContext, query: ElevationAuditExportQuery): ExportPage {
    const { caller } = ctx;
    // The guard checked audit:export (+ MFA, user session); the export also needs devices:read (01 §4.9).
    if (!grants(caller.permissions, 'devices:read')) throw forbidden();
    const org = targetOrg(this.db, caller, query.orgId);
    if (query.siteId !== undefined) {
      const site = requireSite(this.db, caller, query.siteId);
      if (site.orgId !== org.id) throw new HttpError(400, 'siteId: not a site of the organization', 'VALIDATION_ERROR');
    }
    const after = query.cursor !== undefined ? decodeCursor(query.cursor) : null;

    const watermark = this.watermark();
    const from = new Date(query.from).toISOString();
    const to = new Date(query.to).toISOString();
    const params: PageParams = {
      orgId: org.id,
      from,
      upper: to < watermark ? to : watermark,
      siteId: query.siteId ?? null,
      siteIds: caller.siteIds === null ? null : JSON.stringify(caller.siteIds),
      deviceId: query.deviceId ?? null,
      requestId: query.elevationRequestId ?? null,
      eventType: query.eventType ?? null,
      afterAt: after?.createdAt ?? null,
      afterId: after?.id ?? null,
    };

    const reader = this.openReader();
    let handedOver = false;
    try {
      const keys = reader.db
        .prepare<PageParams & { limit: number }, ExportKey>(
          `SELECT e.created_at AS createdAt, e.id AS id ${WHERE} ORDER BY e.created_at, e.id LIMIT @limit`,
        )
        .all({ ...params, limit: query.limit + 1 });
      const hasMore = keys.length > query.limit;
      const pageKeys = hasMore ? keys.slice(0, query.limit) : keys;
      const last = pageKeys[pageKeys.length - 1];
      const nextCursor = last ? encodeCursor(last) : (query.cursor ?? '');
      const windowComplete = !hasMore && to <= watermark;

      this.recordPage(ctx, org.id, query, pageKeys.length, watermark);

      const headers: Record<string, string> = {
        'x-next-cursor': nextCursor,
        'x-has-more': String(hasMore),
        'x-window-complete': String(windowComplete),
        'x-settled-through': watermark,
        'x-row-count': String(pageKeys.length),
        'x-export-schema-version': EXPORT_SCHEMA_VERSION,
        'cache-control': 'no-store',
      };
      const rows = last ? this.streamRows(reader, params, last, query.limit) : emptyRows(reader);
      handedOver = true;
      const body = query.format === 'jsonl' ? toJsonLines(rows) : toCsv(rows);
      // However the response ends (drained, aborted, never read), the reader goes with it.
      body.once('close', () => reader.close());
      return {
        headers,
        contentType: query.format === 'jsonl' ? 'application/x-ndjson; charset=utf-8' : 'text/csv; charset=utf-8',
        body,
        rowCount: pageKeys.length,
      };
    } finally {
      if (!handedOver) reader.close();
    }
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

  private openReader(): Reader {
    const main = this.db.$client;
    if (main.memory || main.name === '' || main.name === ':memory:') {
      // An in-memory database has no second connection: read through the main one, all at once.
      return { db: main, close: () => undefined, shared: true };
    }
    const db = new Database(main.name, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      db.close();
    };
    return { db, close, shared: false };
  }

  private async *streamRows(
    reader: Reader,
    params: PageParams,
    last: ExportKey,
    limit: number,
  ): AsyncGenerator<ExportRow> {
    try {
      const statement = reader.db.prepare<PageParams & { lastAt: string; lastId: string; limit: number }, ExportRow>(
        `SELECT ${SELECT_COLUMNS} ${WHERE}
           AND (e.created_at < @lastAt OR (e.created_at = @lastAt AND e.id <= @lastId))
         ORDER BY e.created_at, e.id LIMIT @limit`,
      );
      const args = { ...params, lastAt: last.createdAt, lastId: last.id, limit };
      if (reader.shared) {
        for (const row of statement.all(args)) yield row;
        return;
      }
      const iterator = statement.iterate(args);
      try {
        for (const row of iterator) yield row;
      } finally {
        iterator.return?.();
      }
    } finally {
      reader.close();
    }
  }
}

interface Reader {
  db: Database.Database;
  close(): void;
  shared: boolean;
}

async function* emptyRows(reader: Reader): AsyncGenerator<ExportRow> {
  reader.close();
  yield* [];
}

function parseDetails(value: string | number | null): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function toJsonLines(rows: AsyncGenerator<ExportRow>): Readable {
  return Readable.from(
    (async function* () {
      for await (const row of rows) {
        const out: Record<string, unknown> = {};
        for (const column of ELEVATION_EXPORT_COLUMNS)
          out[column] = column === 'details' ? parseDetails(row[column]) : row[column];
        yield `${JSON.stringify(out)}\n`;
      }
    })(),
  );
}

/** RFC 4180 through csv-stringify: a header on every page (even an empty one), `\n` line ends, details as
 * its JSON text, cells a spreadsheet would run as a formula neutralised. */
function toCsv(rows: AsyncGenerator<ExportRow>): Readable {
  const csv = stringify({
    header: true,
    columns: [...ELEVATION_EXPORT_COLUMNS],
    record_delimiter: '\n',
    cast: { string: neutraliseFormula },
  });
  const source = Readable.from(rows, { objectMode: true });
  source.on('error', (err) => csv.destroy(err));
  csv.on('close', () => source.destroy());
  return source.pipe(csv);
}
