import { Readable } from 'node:stream';
import { and, asc, desc, eq, gt, gte, isNull, lte, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import {
  auditCategoryOf,
  AUDIT_EXPORT_KNOWN_COLUMNS,
  type AuditCategory,
  type AuditExportColumn,
  type AuditFilterSchema,
  type AuditLog,
  type AuditRangeSchema,
} from '../../../contract/audit.js';
import type { Db } from '../../db/connection.js';
import { inJson, preparedShapes, shapeConditions, shapeOf } from '../../db/prepared.js';
import { auditLogs } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { notFound, orgAccessDenied } from '../../errors.js';
import { paged, preparedPage, readPage } from '../../lib/paging.js';
import { csvRecord } from '../../lib/csv.js';
import { Utf8Builder } from '../../lib/utf8-builder.js';
import { Directory, userIdsNamedLike } from '../identity/directory.js';
import { accessibleOrgIds, canAccessOrg } from '../tenancy/access.js';
import { recordAudit, verifyChain, type ChainReport } from './recorder.js';
import { containsPattern } from '../../lib/like.js';

type AuditRow = typeof auditLogs.$inferSelect;
type AuditFilter = Omit<z.infer<typeof AuditFilterSchema>, 'page' | 'limit'> & {
  q?: string | undefined;
  /** The export's exact actor id. */
  userId?: string | undefined;
};
type AuditRange = z.infer<typeof AuditRangeSchema>;

/** What an export writes unless `columns` says otherwise: every known column but `category`. */
export const AUDIT_EXPORT_COLUMNS = AUDIT_EXPORT_KNOWN_COLUMNS.filter((c) => c !== 'category');

/** The export's options beyond the filters (05 "03 §2.6/§4.4"). */
export interface AuditExportOptions {
  columns?: AuditExportColumn[] | undefined;
  includeDetails?: boolean | undefined;
}

/** 03 §2.6 security actions (the security-events report). */
export const SECURITY_ACTIONS = [
  'user.login',
  'user.login.failed',
  'user.permission.change',
  'policy.update',
  'policy.create',
  'policy.evaluate',
  'automation.policy.evaluate',
] as const;

/** 03 §2.6 compliance actions (the compliance report). */
export const COMPLIANCE_ACTIONS = [
  'data.access',
  'data.export',
  'device.create',
  'device.delete',
  'policy.update',
  'policy.evaluate',
  'automation.policy.evaluate',
  'script.execute',
  'organization.update',
] as const;

/** The most entries a report or the stats consider (05 "03 §2.6/§4.4"), newest first. */
export const REPORT_ROWS = 5000;
/** Entries a report lists as recent, and users as top. */
const RECENT_ENTRIES = 10;
const TOP_USERS = 5;

/** An entry as the API answers it: the row's fields (not its chain links) with its 03 §2.6 category. Field by
 * field (docs/api-notes.md, "Output objects"): `{ ...row, category }` cost ~1 µs a row of a page. */
export function auditEntryView(row: AuditRow): AuditLog {
  return {
    id: row.id,
    orgId: row.orgId,
    partnerId: row.partnerId,
    timestamp: row.timestamp,
    actorType: row.actorType,
    actorId: row.actorId,
    actorEmail: row.actorEmail,
    action: row.action,
    resourceType: row.resourceType,
    resourceId: row.resourceId,
    resourceName: row.resourceName,
    details: row.details,
    ipAddress: row.ipAddress,
    userAgent: row.userAgent,
    result: row.result,
    errorMessage: row.errorMessage,
    checksum: row.checksum,
    category: auditCategoryOf(row.action),
  };
}

/** Case-insensitive "contains" of a LIKE pattern placeholder (03 §4.4). Both sides go through SQLite's lower(),
 * which folds ASCII only: lowering the needle in JS as well would fold "É" to "é" and then never match the stored
 * "É". */
function ciContainsPlaceholder(column: SQL | SQLiteColumn, name: string): SQL {
  return sql`lower(${column}) LIKE lower(${sql.placeholder(name)}) ESCAPE '\\'`;
}

/**
 * The conditions of one shape of the list, get, export, verify and reports (the values go in as placeholders,
 * db/prepared.ts). Letters: reach `P` (a partner's rows: its partner id, organization-less or in its organizations
 * `reachIds`), `O` (one organization's rows: `callerOrgId`), `g` (the organization named: `orgId`); filters `u`
 * user (e-mail, exact id or the actor user's name), `a` action, `r` resource, `f` from, `t` to (both inclusive),
 * `q` full text, `x` actions left out (`excludeActions`, a JSON array), `i` exact actor id (`userId`), `A` only
 * these actions (`onlyActions`, a JSON array); `K` the export's keyset (after `afterTs`, `afterId`).
 */
function auditConditions(shape: string): (SQL | undefined)[] {
  return shapeConditions(shape, {
    P: () => and(eq(auditLogs.partnerId, sql.placeholder('partnerId')), or(isNull(auditLogs.orgId), inJson(auditLogs.orgId, 'reachIds'))),
    O: () => eq(auditLogs.orgId, sql.placeholder('callerOrgId')),
    g: () => eq(auditLogs.orgId, sql.placeholder('orgId')),
    // The actor user's name (05: "ILIKE actorEmail or user name"): the users it matches, read once per statement.
    u: () =>
      or(
        ciContainsPlaceholder(sql`coalesce(${auditLogs.actorEmail}, '')`, 'userLike'),
        eq(auditLogs.actorId, sql.placeholder('user')),
        sql`${auditLogs.actorId} IN ${userIdsNamedLike(sql`${sql.placeholder('userLike')}`)}`,
      ),
    a: () => ciContainsPlaceholder(auditLogs.action, 'actionLike'),
    r: () =>
      or(
        ciContainsPlaceholder(auditLogs.resourceType, 'resourceLike'),
        ciContainsPlaceholder(sql`coalesce(${auditLogs.resourceName}, '')`, 'resourceLike'),
        eq(sql`coalesce(${auditLogs.resourceId}, '')`, sql.placeholder('resource')),
      ),
    f: () => gte(auditLogs.timestamp, sql.placeholder('from')),
    t: () => lte(auditLogs.timestamp, sql.placeholder('to')),
    q: () =>
      or(
        ciContainsPlaceholder(auditLogs.action, 'qLike'),
        ciContainsPlaceholder(sql`coalesce(${auditLogs.actorEmail}, '')`, 'qLike'),
        ciContainsPlaceholder(auditLogs.resourceType, 'qLike'),
        ciContainsPlaceholder(sql`coalesce(${auditLogs.resourceName}, '')`, 'qLike'),
        ciContainsPlaceholder(sql`${auditLogs.details}`, 'qLike'),
      ),
    x: () => sql`NOT ${inJson(auditLogs.action, 'excludeActions')}`,
    i: () => eq(auditLogs.actorId, sql.placeholder('userId')),
    A: () => inJson(auditLogs.action, 'onlyActions'),
    K: () => {
      const afterTs = sql.placeholder('afterTs');
      return or(gt(auditLogs.timestamp, afterTs), and(eq(auditLogs.timestamp, afterTs), gt(auditLogs.id, sql.placeholder('afterId'))));
    },
  });
}

/** Rows an export reads per statement and sends as one chunk. */
const EXPORT_BATCH_ROWS = 500;

const listOf = preparedShapes((db, shape) => {
  const where = and(...auditConditions(shape));
  return preparedPage(db, auditLogs, where, [desc(auditLogs.timestamp), desc(auditLogs.id)]);
});
const getOf = preparedShapes((db, shape) =>
  db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.id, sql.placeholder('id')), ...auditConditions(shape)))
    .prepare(),
);
/** The first `limit` matching entries, oldest (`asc`) or newest (`desc`) first. */
const firstRowsOf = (direction: typeof asc, limit: number) =>
  preparedShapes((db, shape) =>
    db
      .select()
      .from(auditLogs)
      .where(and(...auditConditions(shape)))
      .orderBy(direction(auditLogs.timestamp), direction(auditLogs.id))
      .limit(limit)
      .prepare(),
  );
/** One batch of an export, oldest first (the next ones with the keyset `K`). */
const exportBatchOf = firstRowsOf(asc, EXPORT_BATCH_ROWS);
/** The entries a report considers: the newest `REPORT_ROWS`. */
const reportRowsOf = firstRowsOf(desc, REPORT_ROWS);
const chainsOf = preparedShapes((db, shape) =>
  db
    .selectDistinct({ chain: auditLogs.chain })
    .from(auditLogs)
    .where(and(...auditConditions(shape)))
    .orderBy(asc(auditLogs.chain))
    .prepare(),
);

/** A shape and the values of its placeholders. */
interface Shaped {
  shape: string;
  values: Record<string, unknown>;
}

/** The audit lists' page (05 "03 §2.6/§4.4"): the entries and the paging with totalPages; -1 when not counted. */
function auditPage(rows: AuditRow[], p: { page: number; limit: number }, total: number) {
  const { data, pagination } = paged(rows.map(auditEntryView), p, total);
  return { data, pagination: { ...pagination, totalPages: total < 0 ? -1 : Math.ceil(total / p.limit) } };
}

/** How many of each key, most first (ties by key). */
function countsBy<T>(items: readonly T[], keyOf: (item: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(keyOf(item), (counts.get(keyOf(item)) ?? 0) + 1);
  return [...counts].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
}

/** One actor's activity among a report's entries (newest first: the first entry seen is the last activity). */
interface ActorActivity {
  userId: string;
  userName: string;
  userEmail: string;
  actionCount: number;
  lastActiveAt: string;
}

/** The platform audit log (03 §2.6, §4.4): read, search, export, reports and verify, within the caller's reach. */
export class AuditService {
  constructor(private readonly db: Db) {}

  /** The rows the caller may see, as a shape: system all; partner its partner's rows for organizations it reaches
   * and the partner-level rows; organization its own organization's rows. */
  private reachShape(ctx: RequestContext, orgId?: string): Shaped {
    const { caller } = ctx;
    if (orgId && !canAccessOrg(this.db, caller, orgId)) throw orgAccessDenied();
    const byOrg = shapeOf({ g: orgId });
    if (caller.scope === 'system') return { shape: byOrg, values: { orgId } };
    if (caller.scope === 'organization') return { shape: 'O', values: { callerOrgId: caller.orgId ?? '' } };
    const reachIds = JSON.stringify(accessibleOrgIds(this.db, caller) ?? []);
    return { shape: `P${byOrg}`, values: { partnerId: caller.partnerId ?? '', reachIds, orgId } };
  }

  /** The reach and the filters as a shape. */
  private shaped(ctx: RequestContext, filter: AuditFilter): Shaped {
    const { shape, values } = this.reachShape(ctx, filter.orgId);
    let letters = shape;
    const add = (letter: string, more: Record<string, unknown>) => {
      letters += letter;
      Object.assign(values, more);
    };
    if (filter.user) add('u', { userLike: containsPattern(filter.user), user: filter.user });
    if (filter.action) add('a', { actionLike: containsPattern(filter.action) });
    if (filter.resource) add('r', { resourceLike: containsPattern(filter.resource), resource: filter.resource });
    if (filter.from) add('f', { from: new Date(filter.from).toISOString() });
    if (filter.to) add('t', { to: new Date(filter.to).toISOString() });
    if (filter.q) add('q', { qLike: containsPattern(filter.q) });
    if (filter.excludeActions?.length) add('x', { excludeActions: JSON.stringify(filter.excludeActions) });
    if (filter.userId) add('i', { userId: filter.userId });
    return { shape: letters, values };
  }

  list(ctx: RequestContext, query: AuditFilter & { page: number; limit: number; skipCount?: boolean | undefined }) {
    const { shape, values } = this.shaped(ctx, query);
    const statements = listOf(this.db, shape);
    // skipCount=true (05): no COUNT statement at all.
    const { rows, total } = readPage(query.skipCount ? { ...statements, count: { get: () => ({ n: -1 }) } } : statements, values, query);
    return auditPage(rows, query, total);
  }

  /** The list, with the text searched echoed (05: `{data, query, pagination}`). */
  search(ctx: RequestContext, query: AuditFilter & { page: number; limit: number; skipCount?: boolean | undefined }) {
    const { data, pagination } = this.list(ctx, query);
    return { data, query: query.q ?? '', pagination };
  }

  get(ctx: RequestContext, id: string): AuditLog {
    const { shape, values } = this.reachShape(ctx);
    const row = getOf(this.db, shape).get({ ...values, id });
    if (!row) throw notFound('Audit log not found');
    return auditEntryView(row);
  }

  /** Matching rows oldest first, read from the database in keyset-paged batches as the socket drains; each
   * batch goes out as one chunk of bytes (lib/utf8-builder.ts), the CSV header in the first. */
  exportStream(ctx: RequestContext, filter: AuditFilter, format: 'csv' | 'jsonl', options: AuditExportOptions = {}): Readable {
    const { shape, values } = this.shaped(ctx, filter);
    const db = this.db;
    const columns = (options.columns ?? AUDIT_EXPORT_COLUMNS).filter((c) => options.includeDetails !== false || c !== 'details');
    // actorName (05 export columns): the acting user's name now, looked up once per batch; null for other actors.
    const directory = columns.includes('actorName') ? new Directory(db) : undefined;
    let names = new Map<string, string>();
    const cell = (row: AuditRow, column: AuditExportColumn) =>
      column === 'category' ? auditCategoryOf(row.action) : column === 'actorName' ? (names.get(row.actorId) ?? null) : row[column];
    const line =
      format === 'jsonl'
        ? (row: AuditRow) => `${JSON.stringify(Object.fromEntries(columns.map((c) => [c, cell(row, c)])))}\n`
        : (row: AuditRow) => csvRecord(columns.map((c) => cell(row, c)));
    async function* chunks(): AsyncGenerator<Buffer> {
      let after: { afterTs: string; afterId: string } | null = null;
      let first = true;
      for (;;) {
        const batch: AuditRow[] = after
          ? exportBatchOf(db, `${shape}K`).all({ ...values, ...after })
          : exportBatchOf(db, shape).all(values);
        if (directory) names = directory.namesOf(batch.filter((r) => r.actorType === 'user').map((r) => r.actorId));
        const out = new Utf8Builder();
        if (first && format === 'csv') out.append(csvRecord(columns));
        first = false;
        for (const row of batch) out.append(line(row));
        if (out.byteLength > 0) yield out.bytes();
        const last: AuditRow | undefined = batch[batch.length - 1];
        if (batch.length < EXPORT_BATCH_ROWS || !last) return;
        after = { afterTs: last.timestamp, afterId: last.id };
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  /** An export is itself a data export worth auditing (03 §2.6 "data.export"): who pulled which entries. */
  recordExport(ctx: RequestContext, filter: AuditFilter, format: 'csv' | 'jsonl'): void {
    const { caller } = ctx;
    const orgId = filter.orgId ?? (caller.scope === 'organization' ? caller.orgId : null);
    const criteria = Object.fromEntries(
      Object.entries(filter).filter(([key, v]) => v !== undefined && key !== 'format'),
    );
    this.db.$client.transaction(() => {
      recordAudit(this.db, ctx, {
        action: 'audit_log.export',
        resourceType: 'audit_log',
        orgId,
        details: { format, filter: criteria },
      });
    })();
  }

  /** The entries of from..to the caller may see, as the list shows them (its reach and filters), newest first,
   * at most REPORT_ROWS; only `actions` when given. */
  private reportRows(ctx: RequestContext, range: AuditRange, actions?: readonly string[]): AuditRow[] {
    const { shape, values } = this.shaped(ctx, range);
    if (!actions) return reportRowsOf(this.db, shape).all(values);
    return reportRowsOf(this.db, `${shape}A`).all({ ...values, onlyActions: JSON.stringify(actions) });
  }

  /** Each actor of `rows` with its count, most active first; named as 05's entry `user.name`: the user's name, the
   * e-mail, `API Key <8 chars>`, `Agent`, `System`, else `Unknown User`. */
  private actors(rows: readonly AuditRow[]): ActorActivity[] {
    const names = new Directory(this.db).namesOf(rows.filter((r) => r.actorType === 'user').map((r) => r.actorId));
    const byActor = new Map<string, ActorActivity>();
    for (const row of rows) {
      const seen = byActor.get(row.actorId);
      if (seen) {
        seen.actionCount++;
        continue;
      }
      const fallback = { api_key: `API Key ${row.actorId.slice(0, 8)}`, agent: 'Agent', system: 'System', user: 'Unknown User' }[row.actorType];
      byActor.set(row.actorId, {
        userId: row.actorId,
        userName: names.get(row.actorId) || row.actorEmail || fallback,
        userEmail: row.actorEmail ?? '',
        actionCount: 1,
        lastActiveAt: row.timestamp,
      });
    }
    return [...byActor.values()].sort((x, y) => y.actionCount - x.actionCount || y.lastActiveAt.localeCompare(x.lastActiveAt));
  }

  /** 05 `/reports/user-activity`. */
  userActivityReport(ctx: RequestContext, range: AuditRange) {
    const rows = this.reportRows(ctx, range);
    const actionsPerUser = this.actors(rows);
    return {
      totalUsers: actionsPerUser.length,
      totalEvents: rows.length,
      actionsPerUser,
      topUsers: actionsPerUser.slice(0, TOP_USERS),
      recentActivity: rows.slice(0, RECENT_ENTRIES).map(auditEntryView),
    };
  }

  /** 05 `/reports/security-events`: the 03 §2.6 security actions. */
  securityReport(ctx: RequestContext, range: AuditRange) {
    const rows = this.reportRows(ctx, range, SECURITY_ACTIONS);
    const count = (...actions: string[]) => rows.filter((r) => actions.includes(r.action)).length;
    return {
      totalEvents: rows.length,
      loginAttempts: count('user.login', 'user.login.failed'),
      failedLogins: count('user.login.failed'),
      permissionChanges: count('user.permission.change'),
      byAction: countsBy(rows, (r) => r.action).map(([action, n]) => ({ action, count: n })),
      recentEvents: rows.slice(0, RECENT_ENTRIES).map(auditEntryView),
    };
  }

  /** 05 `/reports/compliance`: the 03 §2.6 compliance actions; data changes are its create, update and delete
   * actions. */
  complianceReport(ctx: RequestContext, range: AuditRange) {
    const rows = this.reportRows(ctx, range, COMPLIANCE_ACTIONS);
    return {
      totalEvents: rows.length,
      dataAccess: rows.filter((r) => r.action === 'data.access').length,
      dataChanges: rows.filter((r) => /\.(create|update|delete)$/.test(r.action)).length,
      exports: rows.filter((r) => r.action === 'data.export').length,
      byAction: countsBy(rows, (r) => r.action).map(([action, n]) => ({ action, count: n })),
      recentEvents: rows.slice(0, RECENT_ENTRIES).map(auditEntryView),
    };
  }

  /** 05 `/stats`: the entries by category and by actor; range echoes the window asked (null when open). */
  stats(ctx: RequestContext, range: AuditRange) {
    const rows = this.reportRows(ctx, range);
    const iso = (at: string | undefined) => (at === undefined ? null : new Date(at).toISOString());
    return {
      totalEvents: rows.length,
      byCategory: countsBy(rows, (r) => auditCategoryOf(r.action)).map(([category, n]) => ({
        category: category as AuditCategory,
        count: n,
      })),
      byUser: this.actors(rows).map(({ userId, userName, actionCount }) => ({ userId, userName, actionCount })),
      range: { from: iso(range.from), to: iso(range.to) },
    };
  }

  /** Verifies every chain the caller can see (or one organization's). */
  verify(ctx: RequestContext, orgId?: string): { valid: boolean; chains: ChainReport[] } {
    const { shape, values } = this.reachShape(ctx, orgId);
    const chains = chainsOf(this.db, shape)
      .all(values)
      .map((r) => verifyChain(this.db, r.chain));
    return { valid: chains.every((c) => c.valid), chains };
  }
}
