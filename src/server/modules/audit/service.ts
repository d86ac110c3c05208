import { Readable } from 'node:stream';
import { and, asc, desc, eq, gt, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import type { AuditFilterSchema } from '../../../contract/audit.js';
import type { Db } from '../../db/connection.js';
import { inJson, preparedShapes } from '../../db/prepared.js';
import { auditLogs } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { notFound, orgAccessDenied } from '../../errors.js';
import { paged, preparedPage, readPage, type Paged } from '../../lib/paging.js';
import { csvRecord } from '../../lib/csv.js';
import { Utf8Builder } from '../../lib/utf8-builder.js';
import { accessibleOrgIds, canAccessOrg } from '../tenancy/access.js';
import { recordAudit, verifyChain, type ChainReport } from './recorder.js';

type AuditRow = typeof auditLogs.$inferSelect;
type AuditFilter = Omit<z.infer<typeof AuditFilterSchema>, 'page' | 'limit'> & { q?: string | undefined };

export const AUDIT_EXPORT_COLUMNS = [
  'id',
  'timestamp',
  'orgId',
  'partnerId',
  'actorType',
  'actorId',
  'actorEmail',
  'action',
  'resourceType',
  'resourceId',
  'resourceName',
  'result',
  'errorMessage',
  'ipAddress',
  'userAgent',
  'details',
  'checksum',
] as const;

function escapeLike(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Case-insensitive "contains" (03 §4.4). Both sides go through SQLite's lower(), which folds ASCII only:
 * lowering the needle in JS as well would fold "É" to "é" and then never match the stored "É". */
function ciContains(column: SQL | SQLiteColumn, value: string): SQL {
  return sql`lower(${column}) LIKE lower(${escapeLike(value)}) ESCAPE '\\'`;
}

/** A LIKE pattern placeholder, as ciContains takes a value. */
function ciContainsPlaceholder(column: SQL | SQLiteColumn, name: string): SQL {
  return sql`lower(${column}) LIKE lower(${sql.placeholder(name)}) ESCAPE '\\'`;
}

/**
 * The conditions of one shape of the list and get (the values go in as placeholders, db/prepared.ts). Letters:
 * reach `P` (a partner's rows: its partner id, organization-less or in its organizations `reachIds`), `O` (one
 * organization's rows: `callerOrgId`), `g` (the organization named: `orgId`); filters `u` user, `a` action,
 * `r` resource, `f` from, `t` to, `q` full text.
 */
function shapeConditions(shape: string): SQL[] {
  const parts: SQL[] = [];
  const has = (letter: string) => shape.includes(letter);
  if (has('P')) {
    parts.push(eq(auditLogs.partnerId, sql.placeholder('partnerId')));
    parts.push(or(isNull(auditLogs.orgId), inJson(auditLogs.orgId, 'reachIds')) as SQL);
  }
  if (has('O')) parts.push(eq(auditLogs.orgId, sql.placeholder('callerOrgId')));
  if (has('g')) parts.push(eq(auditLogs.orgId, sql.placeholder('orgId')));
  if (has('u')) {
    parts.push(
      or(
        ciContainsPlaceholder(sql`coalesce(${auditLogs.actorEmail}, '')`, 'userLike'),
        eq(auditLogs.actorId, sql.placeholder('user')),
      ) as SQL,
    );
  }
  if (has('a')) parts.push(ciContainsPlaceholder(auditLogs.action, 'actionLike'));
  if (has('r')) {
    parts.push(
      or(
        ciContainsPlaceholder(auditLogs.resourceType, 'resourceLike'),
        ciContainsPlaceholder(sql`coalesce(${auditLogs.resourceName}, '')`, 'resourceLike'),
        eq(sql`coalesce(${auditLogs.resourceId}, '')`, sql.placeholder('resource')),
      ) as SQL,
    );
  }
  if (has('f')) parts.push(gte(auditLogs.timestamp, sql.placeholder('from')));
  if (has('t')) parts.push(lt(auditLogs.timestamp, sql.placeholder('to')));
  if (has('q')) {
    parts.push(
      or(
        ciContainsPlaceholder(auditLogs.action, 'qLike'),
        ciContainsPlaceholder(sql`coalesce(${auditLogs.actorEmail}, '')`, 'qLike'),
        ciContainsPlaceholder(auditLogs.resourceType, 'qLike'),
        ciContainsPlaceholder(sql`coalesce(${auditLogs.resourceName}, '')`, 'qLike'),
        ciContainsPlaceholder(sql`${auditLogs.details}`, 'qLike'),
      ) as SQL,
    );
  }
  return parts;
}

/** Rows an export reads per statement and sends as one chunk. */
const EXPORT_BATCH_ROWS = 500;

const listOf = preparedShapes((db, shape) => {
  const where = and(...shapeConditions(shape));
  return preparedPage(db, auditLogs, where, [desc(auditLogs.timestamp), desc(auditLogs.id)]);
});
const getOf = preparedShapes((db, shape) =>
  db
    .select()
    .from(auditLogs)
    .where(and(eq(auditLogs.id, sql.placeholder('id')), ...shapeConditions(shape)))
    .prepare(),
);

/** A shape and the values of its placeholders. */
interface Shaped {
  shape: string;
  values: Record<string, unknown>;
}

/** The platform audit log (03 §2.6, §4.4): read, search, export and verify, within the caller's reach. */
export class AuditService {
  constructor(private readonly db: Db) {}

  /** Rows the caller may see: system all; partner its partner's rows for organizations it reaches and the
   * partner-level rows; organization its own organization's rows. */
  private visibility(ctx: RequestContext, orgId?: string): SQL | undefined {
    const { caller } = ctx;
    if (orgId && !canAccessOrg(this.db, caller, orgId)) throw orgAccessDenied();
    const byOrg = orgId ? eq(auditLogs.orgId, orgId) : undefined;
    if (caller.scope === 'system') return byOrg;
    if (caller.scope === 'organization') return eq(auditLogs.orgId, caller.orgId ?? '');
    const ids = accessibleOrgIds(this.db, caller) ?? [];
    const reach = or(isNull(auditLogs.orgId), ids.length ? inArray(auditLogs.orgId, ids) : sql`0`);
    return and(eq(auditLogs.partnerId, caller.partnerId ?? ''), reach, byOrg);
  }

  private conditions(ctx: RequestContext, filter: AuditFilter): SQL | undefined {
    const parts: (SQL | undefined)[] = [this.visibility(ctx, filter.orgId)];
    if (filter.user)
      parts.push(
        or(ciContains(sql`coalesce(${auditLogs.actorEmail}, '')`, filter.user), eq(auditLogs.actorId, filter.user)),
      );
    if (filter.action) parts.push(ciContains(auditLogs.action, filter.action));
    if (filter.resource) {
      parts.push(
        or(
          ciContains(auditLogs.resourceType, filter.resource),
          ciContains(sql`coalesce(${auditLogs.resourceName}, '')`, filter.resource),
          eq(sql`coalesce(${auditLogs.resourceId}, '')`, filter.resource),
        ),
      );
    }
    if (filter.from) parts.push(gte(auditLogs.timestamp, new Date(filter.from).toISOString()));
    if (filter.to) parts.push(lt(auditLogs.timestamp, new Date(filter.to).toISOString()));
    if (filter.q) {
      parts.push(
        or(
          ciContains(auditLogs.action, filter.q),
          ciContains(sql`coalesce(${auditLogs.actorEmail}, '')`, filter.q),
          ciContains(auditLogs.resourceType, filter.q),
          ciContains(sql`coalesce(${auditLogs.resourceName}, '')`, filter.q),
          ciContains(sql`${auditLogs.details}`, filter.q),
        ),
      );
    }
    return and(...parts.filter((p): p is SQL => p !== undefined));
  }

  /** The reach of visibility() as a shape: the same rows, through prepared statements. */
  private reachShape(ctx: RequestContext, orgId?: string): Shaped {
    const { caller } = ctx;
    if (orgId && !canAccessOrg(this.db, caller, orgId)) throw orgAccessDenied();
    const byOrg = orgId ? 'g' : '';
    if (caller.scope === 'system') return { shape: byOrg, values: { orgId } };
    if (caller.scope === 'organization') return { shape: 'O', values: { callerOrgId: caller.orgId ?? '' } };
    const reachIds = JSON.stringify(accessibleOrgIds(this.db, caller) ?? []);
    return { shape: `P${byOrg}`, values: { partnerId: caller.partnerId ?? '', reachIds, orgId } };
  }

  /** conditions() as a shape. */
  private shaped(ctx: RequestContext, filter: AuditFilter): Shaped {
    const { shape, values } = this.reachShape(ctx, filter.orgId);
    let letters = shape;
    const add = (letter: string, more: Record<string, unknown>) => {
      letters += letter;
      Object.assign(values, more);
    };
    if (filter.user) add('u', { userLike: escapeLike(filter.user), user: filter.user });
    if (filter.action) add('a', { actionLike: escapeLike(filter.action) });
    if (filter.resource) add('r', { resourceLike: escapeLike(filter.resource), resource: filter.resource });
    if (filter.from) add('f', { from: new Date(filter.from).toISOString() });
    if (filter.to) add('t', { to: new Date(filter.to).toISOString() });
    if (filter.q) add('q', { qLike: escapeLike(filter.q) });
    return { shape: letters, values };
  }

  list(ctx: RequestContext, query: AuditFilter & { page: number; limit: number }): Paged<AuditRow> {
    const { shape, values } = this.shaped(ctx, query);
    const statements = listOf(this.db, shape);
    const { rows, total } = readPage(statements, values, query);
    return paged(rows, query, total);
  }

  get(ctx: RequestContext, id: string): AuditRow {
    const { shape, values } = this.reachShape(ctx);
    const row = getOf(this.db, shape).get({ ...values, id });
    if (!row) throw notFound('Audit log entry not found');
    return row;
  }

  /** Matching rows oldest first, read from the database in keyset-paged batches as the socket drains; each
   * batch goes out as one chunk of bytes (lib/utf8-builder.ts), the CSV header in the first. */
  exportStream(ctx: RequestContext, filter: AuditFilter, format: 'csv' | 'jsonl'): Readable {
    const where = this.conditions(ctx, filter);
    const db = this.db;
    const line =
      format === 'jsonl'
        ? (row: AuditRow) => `${JSON.stringify(Object.fromEntries(AUDIT_EXPORT_COLUMNS.map((c) => [c, row[c]])))}\n`
        : (row: AuditRow) => csvRecord(AUDIT_EXPORT_COLUMNS.map((c) => row[c]));
    async function* chunks(): AsyncGenerator<Buffer> {
      let after: { timestamp: string; id: string } | null = null;
      let first = true;
      for (;;) {
        const keyset: SQL | undefined = after
          ? or(
              gt(auditLogs.timestamp, after.timestamp),
              and(eq(auditLogs.timestamp, after.timestamp), gt(auditLogs.id, after.id)),
            )
          : undefined;
        const batch: AuditRow[] = db
          .select()
          .from(auditLogs)
          .where(and(where, keyset))
          .orderBy(asc(auditLogs.timestamp), asc(auditLogs.id))
          .limit(EXPORT_BATCH_ROWS)
          .all();
        const out = new Utf8Builder();
        if (first && format === 'csv') out.append(csvRecord(AUDIT_EXPORT_COLUMNS));
        first = false;
        for (const row of batch) out.append(line(row));
        if (out.byteLength > 0) yield out.bytes();
        const last: AuditRow | undefined = batch[batch.length - 1];
        if (batch.length < EXPORT_BATCH_ROWS || !last) return;
        after = { timestamp: last.timestamp, id: last.id };
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

  /** Verifies every chain the caller can see (or one organization's). */
  verify(ctx: RequestContext, orgId?: string): { valid: boolean; chains: ChainReport[] } {
    const chains = this.db
      .selectDistinct({ chain: auditLogs.chain })
      .from(auditLogs)
      .where(this.visibility(ctx, orgId))
      .orderBy(asc(auditLogs.chain))
      .all()
      .map((r) => verifyChain(this.db, r.chain));
    return { valid: chains.every((c) => c.valid), chains };
  }
}
