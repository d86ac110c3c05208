import { and, asc, count, desc, inArray, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { filters as filtersContract } from '../../../contract/filters.js';
import { transaction, type Db } from '../../db/connection.js';
import { deleteById, inJson, insertRow, preparedShapes, rowById, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { devices, savedFilters } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { DomainError, forbidden, notFound } from '../../errors.js';
import { recordAudit } from '../audit/recorder.js';
import type { DevicesService } from '../devices/service.js';
import type { TenancyService } from '../tenancy/service.js';
import { resolveWriteOrg } from '../tenancy/access.js';
import { compileFilter, registerFilterFunctions, type CompileOptions } from './compile.js';
import { containsPattern } from '../../lib/like.js';

type Body<K extends 'create' | 'update'> = z.infer<(typeof filtersContract)[K]['body']>;
type FilterRow = typeof savedFilters.$inferSelect;

export interface PreviewOptions {
  orgId?: string;
  limit?: number;
  idsOnly?: boolean;
}

/** Does the tree name the status field anywhere? (Then decommissioned devices are not left out.) */
function usesStatus(fields: string[]): boolean {
  return fields.includes('status');
}

/** The saved filters of a list, one statement per shape: 'o' within the organizations of the JSON array `orgIds`,
 * 's' whose name or description is LIKE `pattern`. */
const filterListOf = preparedShapes((db, shape) => {
  const pattern = sql.placeholder('pattern');
  return db
    .select()
    .from(savedFilters)
    .where(
      and(
        ...shapeConditions(shape, {
          o: () => inJson(savedFilters.orgId, 'orgIds'),
          s: () => sql`(${savedFilters.name} LIKE ${pattern} ESCAPE '\\' OR ${savedFilters.description} LIKE ${pattern} ESCAPE '\\')`,
        }),
      ),
    )
    .orderBy(desc(savedFilters.createdAt), desc(savedFilters.id))
    .prepare();
});

/**
 * Saved filters and previews (02 §2.9, §4.5): a saved filter is a condition tree of one organization; a
 * preview counts what a tree matches across every organization the caller reaches.
 */
export class FiltersService {
  constructor(
    private readonly db: Db,
    private readonly tenancy: TenancyService,
    private readonly devices: DevicesService,
  ) {
    registerFilterFunctions(db.$client);
  }

  /**
   * The devices a tree matches within what the caller may see, as one condition: decommissioned devices are
   * left out unless the tree names `status`. null: the caller sees no device.
   */
  matchWhere(ctx: RequestContext, tree: unknown, orgIds?: string[], options: CompileOptions = {}): { where: SQL | null; fields: string[] } {
    const compiled = compileFilter(tree, options);
    const scope = this.devices.visibleWhere(ctx, orgIds);
    if (!scope) return { where: null, fields: compiled.fields };
    const live = usesStatus(compiled.fields) ? undefined : sql`${devices.status} <> 'decommissioned'`;
    return { where: and(scope, compiled.where, live) ?? scope, fields: compiled.fields };
  }

  list(ctx: RequestContext, query: { search?: string | undefined; orgId?: string | undefined }) {
    const reach = query.orgId ? [this.tenancy.requireOrg(ctx, query.orgId).id] : this.tenancy.accessibleOrgIds(ctx);
    if (reach !== null && reach.length === 0) return { data: [], total: 0 };
    const pattern = query.search ? containsPattern(query.search) : null;
    const shape = shapeOf({ o: reach !== null, s: pattern !== null });
    const data = filterListOf(this.db, shape).all({ orgIds: JSON.stringify(reach), pattern });
    return { data, total: data.length };
  }

  create(ctx: RequestContext, body: Body<'create'>) {
    compileFilter(body.conditions);
    const org = resolveWriteOrg(this.db, ctx.caller, body.orgId, { requireGiven: true });
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, savedFilters, {
        orgId: org.id,
        name: body.name,
        description: body.description ?? null,
        conditions: body.conditions,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'filter.create', row, { name: row.name });
      return { data: row };
    })();
  }

  get(ctx: RequestContext, id: string) {
    return { data: this.findVisible(ctx, id) };
  }

  update(ctx: RequestContext, id: string, body: Body<'update'>) {
    if (body.conditions !== undefined) compileFilter(body.conditions);
    return this.db.$client.transaction(() => {
      const current = this.findVisible(ctx, id);
      const row = updateRow(this.db, savedFilters, current, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.description !== undefined ? { description: body.description } : {}),
        ...(body.conditions !== undefined ? { conditions: body.conditions } : {}),
        updatedAt: new Date().toISOString(),
      });
      if (!row) throw notFound('Saved filter not found', 'FILTER_NOT_FOUND');
      this.audit(ctx, 'filter.update', row, { changedFields: Object.keys(body) });
      return { data: row };
    })();
  }

  delete(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const row = this.findVisible(ctx, id);
      deleteById(this.db, savedFilters, id);
      this.audit(ctx, 'filter.delete', row, { name: row.name });
      return { data: row };
    })();
  }

  /** POST /filters/preview: a foreign orgId is 403 `Forbidden` (05 wire notes "4.5"). */
  preview(ctx: RequestContext, tree: unknown, options: PreviewOptions) {
    let orgIds: string[] | undefined;
    if (options.orgId !== undefined) {
      try {
        orgIds = [this.tenancy.requireOrg(ctx, options.orgId).id];
      } catch (err) {
        if (err instanceof DomainError && err.kind === 'forbidden') throw forbidden('Forbidden');
        throw err;
      }
    }
    const result = this.evaluate(ctx, tree, orgIds, options);
    transaction(this.db, () =>
      this.audit(ctx, 'filter.preview', null, { totalCount: result.data.totalCount, orgId: options.orgId ?? null }, options.orgId ?? ctx.caller.orgId),
    );
    return result;
  }

  previewSaved(ctx: RequestContext, id: string, options: PreviewOptions) {
    const row = this.findVisible(ctx, id);
    const result = this.evaluate(ctx, row.conditions, undefined, options);
    transaction(this.db, () => this.audit(ctx, 'filter.saved.preview', row, { totalCount: result.data.totalCount }));
    return result;
  }

  /** The conditions of a saved filter the caller may see (device lists and groups use a filterId through this). */
  conditionsOf(ctx: RequestContext, id: string): Record<string, unknown> {
    return this.findVisible(ctx, id).conditions;
  }

  private evaluate(ctx: RequestContext, tree: unknown, orgIds: string[] | undefined, options: PreviewOptions) {
    const evaluatedAt = new Date();
    const { where } = this.matchWhere(ctx, tree, orgIds, { now: evaluatedAt });
    const at = evaluatedAt.toISOString();
    if (options.idsOnly) {
      const ids = where ? this.db.select({ id: devices.id }).from(devices).where(where).orderBy(devices.hostname, devices.id).all().map((r) => r.id) : [];
      return { data: { totalCount: ids.length, deviceIds: ids, evaluatedAt: at } };
    }
    if (!where) return { data: { totalCount: 0, devices: [], evaluatedAt: at } };
    return { data: { ...this.previewOf(where, options.limit ?? 10), evaluatedAt: at } };
  }

  /**
   * The count and the first `limit` devices (hostname order) of a device condition, for previews. Two narrow
   * statements instead of one window over every matching row: the count, and the ids of the first rows, both
   * answered from devices_filter_idx when the condition reads only its columns; then the shown columns of those
   * few rows alone (bench/filters.js).
   */
  previewOf(where: SQL, limit: number) {
    const totalCount = this.db.select({ n: count() }).from(devices).where(where).get()?.n ?? 0;
    if (totalCount === 0 || limit === 0) return { totalCount, devices: [] };
    const first = this.db.select({ id: devices.id }).from(devices).where(where).orderBy(asc(devices.hostname), asc(devices.id)).limit(limit);
    const shown = this.db
      .select({ id: devices.id, hostname: devices.hostname, displayName: devices.displayName, osType: devices.osType, status: devices.status, lastSeenAt: devices.lastSeenAt })
      .from(devices)
      .where(inArray(devices.id, first))
      .orderBy(asc(devices.hostname), asc(devices.id))
      .all();
    return { totalCount, devices: shown };
  }

  private findVisible(ctx: RequestContext, id: string): FilterRow {
    const row = rowById(this.db, savedFilters, id);
    if (!row) throw notFound('Saved filter not found', 'FILTER_NOT_FOUND');
    if (!this.tenancy.canAccessOrg(ctx, row.orgId)) throw notFound('Saved filter not found', 'FILTER_NOT_FOUND');
    return row;
  }

  private audit(ctx: RequestContext, action: string, row: FilterRow | null, details: Record<string, unknown>, orgId?: string | null): void {
    recordAudit(this.db, ctx, {
      action,
      resourceType: 'filter',
      resourceId: row?.id ?? null,
      resourceName: row?.name ?? null,
      orgId: row?.orgId ?? orgId ?? null,
      details,
    });
  }
}
