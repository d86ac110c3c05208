import { and, asc, count, desc, eq, isNull, ne, or, sql, type Placeholder, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type { CatalogCreateSchema, CatalogListQuerySchema, CatalogUpdateSchema, CatalogVersionCreateSchema } from '../../../contract/software.js';
import type { Caller, RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { softwareCatalog, softwareVersions } from '../../db/schema/index.js';
import { conflict, forbidden, notFound, orgAccessDenied } from '../../errors.js';
import { deleteById, inJson, insertRow, preparedQueries, rowById, rowQuery, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { paged, preparedPages, type Paged } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import { accessibleOrgIds, assertOrgWideWriter, canAccessOrg, partnerIdOfOrg, requireOrg } from '../tenancy/access.js';

export type CatalogRow = typeof softwareCatalog.$inferSelect;
export type VersionRow = typeof softwareVersions.$inferSelect;

const MB = 1024 * 1024;
/** GET /software/catalog/search answers at most this many matches (total counts them all). */
const SEARCH_MAX = 100;

const isoNow = () => new Date().toISOString();

/** An ISO 8601 date or date-time as stored: UTC with milliseconds (a date alone is midnight UTC). */
const utc = (text: string) => new Date(Date.parse(text)).toISOString();

/** A catalog item as the API shows it (no createdBy). */
export function catalogOut(row: CatalogRow) {
  const { createdBy: _by, ...rest } = row;
  return rest;
}

/** A version as the API shows it: the create request's names (05 wire notes "4.3", older build). */
export function versionOut(row: VersionRow) {
  return {
    id: row.id,
    softwareId: row.catalogId,
    version: row.version,
    releaseDate: row.releaseDate,
    notes: row.releaseNotes,
    downloadUrl: row.downloadUrl,
    sha256: row.checksum,
    sizeMB: row.fileSize === null ? null : Math.round((row.fileSize / MB) * 1000) / 1000,
    fileSize: row.fileSize,
    supportedPlatforms: row.supportedOs,
    architecture: row.architecture,
    silentInstallArg: row.silentInstallArg,
    silentUninstallArg: row.silentUninstallArg,
    isLatest: row.isLatest,
    createdAt: row.createdAt,
  };
}

/** The partner a caller acts within: a partner caller's own, an organization caller's organization's. */
function partnerOf(db: Db, caller: Caller): string | null {
  if (caller.scope === 'partner') return caller.partnerId;
  if (caller.scope === 'organization' && caller.orgId) return partnerIdOfOrg(db, caller.orgId) ?? null;
  return null;
}

/** A platform-wide item: no owner. */
const isPlatform = (row: Pick<CatalogRow, 'orgId' | 'partnerId'>) => row.orgId === null && row.partnerId === null;

/** Whether an item is offered to the organization (of the partner): platform-wide, the partner's, or its own. */
export function offeredTo(row: Pick<CatalogRow, 'orgId' | 'partnerId'>, org: { id: string; partnerId: string }): boolean {
  if (row.orgId !== null) return row.orgId === org.id;
  return row.partnerId === null || row.partnerId === org.partnerId;
}

/**
 * What a caller sees of the catalog (SoftwareCatalog.reach), as a shape of placeholders (db/prepared.ts): '' for
 * everything (system callers), else 'v' platform items, 'p' also the partner `partnerId`'s, 'o' also those of the
 * organizations of the JSON array `orgIds`.
 */
function visibleIn(shape: string): SQL | undefined {
  if (!shape.includes('v')) return undefined;
  const t = softwareCatalog;
  return or(
    and(isNull(t.orgId), isNull(t.partnerId)),
    ...shapeConditions(shape, {
      p: () => and(isNull(t.orgId), eq(t.partnerId, sql.placeholder('partnerId'))),
      o: () => inJson(t.orgId, 'orgIds'),
    }),
  );
}

/** Name, vendor or description (and, with `tags`, a tag) contains the placeholder `needle` (lower case). */
function matches(tags: boolean): SQL {
  const t = softwareCatalog;
  const needle = sql.placeholder('needle');
  return sql`(instr(lower(${t.name}), ${needle}) > 0 OR instr(lower(${t.vendor}), ${needle}) > 0 OR instr(lower(coalesce(${t.description}, '')), ${needle}) > 0${
    tags ? sql` OR EXISTS (SELECT 1 FROM json_each(${t.tags}) WHERE instr(lower(value), ${needle}) > 0)` : sql``
  })`;
}

/** The catalog list and search, per shape: the reach (visibleIn), then 'q' a match without tags (the list) or 't'
 * with them (the search; never both), 'c' one `category`, 'f' one `platform`. */
const catalogPageOf = preparedPages(softwareCatalog, [asc(sql`lower(${softwareCatalog.name})`), asc(softwareCatalog.id)], (shape) => {
  const t = softwareCatalog;
  return and(
    visibleIn(shape),
    ...shapeConditions(shape, {
      q: () => matches(false),
      t: () => matches(true),
      c: () => eq(t.category, sql.placeholder('category')),
      f: () => sql`EXISTS (SELECT 1 FROM json_each(${t.platforms}) WHERE value = ${sql.placeholder('platform')})`,
    }),
  );
});

/** The item and version reads, prepared once per database (db/prepared.ts). */
const catalogQueries = preparedQueries((db) => {
  const v = softwareVersions;
  const ofItem = eq(v.catalogId, sql.placeholder('catalogId'));
  return {
    versionCount: db.select({ n: count() }).from(v).where(ofItem).prepare(),
    versions: rowQuery(db, v, ofItem, { orderBy: [desc(v.releaseDate), desc(v.createdAt), desc(v.id)] }),
    versionOf: rowQuery(db, v, and(ofItem, eq(v.version, sql.placeholder('version')))),
    // A new version is the only latest one of its item.
    clearLatest: db.update(v).set({ isLatest: false }).where(and(ofItem, ne(v.isLatest, false))).prepare(),
    offeredTo: db
      .select({ id: softwareCatalog.id, name: softwareCatalog.name, orgId: softwareCatalog.orgId, partnerId: softwareCatalog.partnerId })
      .from(softwareCatalog)
      .where(offeredToWhere({ id: sql.placeholder('orgId'), partnerId: sql.placeholder('partnerId') }))
      .orderBy(asc(softwareCatalog.id))
      .prepare(),
  };
});

/** The SQL form of offeredTo over the catalog table (the organization's id and partner as values or placeholders). */
export function offeredToWhere(org: { id: string | Placeholder; partnerId: string | Placeholder }): SQL {
  const t = softwareCatalog;
  return or(and(isNull(t.orgId), or(isNull(t.partnerId), eq(t.partnerId, org.partnerId))), eq(t.orgId, org.id)) as SQL;
}

/**
 * The software catalog (03 §2.5, §4.3) with its owners: platform-wide items (made by system callers; every tenant
 * sees them, only system callers change them), a partner's (seen by the partner and its organizations' callers,
 * changed by the partner's callers) and an organization's (seen and changed by those who reach the organization).
 * Items a caller cannot see answer 404 like absent ones.
 */
export class SoftwareCatalog {
  constructor(private readonly db: Db) {}

  /** What the caller sees, as a shape of visibleIn and its placeholders' values; '' is everything (system). */
  private reach(caller: Caller): { shape: string; values: Record<string, unknown> } {
    const orgIds = accessibleOrgIds(this.db, caller);
    if (orgIds === null) return { shape: '', values: {} };
    const partnerId = partnerOf(this.db, caller);
    return { shape: `v${shapeOf({ p: partnerId, o: orgIds.length > 0 })}`, values: { partnerId, orgIds: JSON.stringify(orgIds) } };
  }

  private canSee(caller: Caller, row: CatalogRow): boolean {
    if (caller.scope === 'system' || isPlatform(row)) return true;
    if (row.orgId !== null) return canAccessOrg(this.db, caller, row.orgId);
    return row.partnerId === partnerOf(this.db, caller);
  }

  /** An item the caller sees: 404 `Catalog item not found` otherwise. */
  visible(ctx: RequestContext, id: string): CatalogRow {
    const row = rowById(this.db, softwareCatalog, id);
    if (!row || !this.canSee(ctx.caller, row)) throw notFound('Catalog item not found', 'CATALOG_ITEM_NOT_FOUND');
    return row;
  }

  /** An item the caller may change: seen (else 404) and its own tenant's (else 403; platform items: system only). */
  private writable(ctx: RequestContext, id: string): CatalogRow {
    const row = this.visible(ctx, id);
    const { caller } = ctx;
    assertOrgWideWriter(caller);
    if (caller.scope === 'system') return row;
    const owns = row.orgId !== null ? canAccessOrg(this.db, caller, row.orgId) : row.partnerId !== null && caller.scope === 'partner' && caller.partnerId === row.partnerId;
    if (!owns) throw forbidden('Catalog item is read-only for this caller', 'CATALOG_ITEM_READ_ONLY');
    return row;
  }

  /** The owner of a new item: the given organization (access-checked), else the caller's own tenant. */
  private ownerFor(ctx: RequestContext, orgId: string | undefined): { orgId: string | null; partnerId: string | null } {
    const { caller } = ctx;
    if (caller.scope === 'organization') {
      if (!caller.orgId) throw forbidden('Organization context required', 'ORG_CONTEXT_REQUIRED');
      if (orgId !== undefined && orgId !== caller.orgId) throw orgAccessDenied();
      const org = requireOrg(this.db, caller, caller.orgId);
      return { orgId: org.id, partnerId: org.partnerId };
    }
    if (orgId !== undefined) {
      const org = requireOrg(this.db, caller, orgId);
      return { orgId: org.id, partnerId: org.partnerId };
    }
    if (caller.scope === 'partner') {
      if (!caller.partnerId) throw forbidden('Partner context required', 'PARTNER_CONTEXT_REQUIRED');
      return { orgId: null, partnerId: caller.partnerId };
    }
    return { orgId: null, partnerId: null };
  }

  private audit(ctx: RequestContext, action: string, row: CatalogRow, details: Record<string, unknown>): void {
    recordAudit(this.db, ctx, {
      action,
      resourceType: 'software_catalog',
      resourceId: row.id,
      resourceName: row.name,
      orgId: row.orgId,
      partnerId: row.partnerId,
      details,
    });
  }

  create(ctx: RequestContext, body: z.infer<typeof CatalogCreateSchema>) {
    assertOrgWideWriter(ctx.caller);
    const owner = this.ownerFor(ctx, body.orgId);
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, softwareCatalog, {
        ...owner,
        name: body.name,
        vendor: body.vendor,
        category: body.category,
        description: body.description ?? null,
        platforms: body.platforms,
        latestVersion: body.latestVersion ?? null,
        homepage: body.homepage ?? null,
        licenseType: body.licenseType ?? null,
        tags: body.tags ?? [],
        deprecated: body.deprecated ?? false,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'software.catalog.create', row, { category: row.category, platforms: row.platforms });
      return { data: catalogOut(row) };
    })();
  }

  list(ctx: RequestContext, query: z.infer<typeof CatalogListQuerySchema>): Paged<ReturnType<typeof catalogOut>> {
    const { shape, values } = this.reach(ctx.caller);
    const needle = (query.search ?? query.q ?? '').trim().toLowerCase();
    const filters = shapeOf({ q: needle, c: query.category, f: query.platform });
    const { rows, total } = catalogPageOf(this.db, shape + filters, { ...values, needle, category: query.category, platform: query.platform }, query);
    return paged(rows.map(catalogOut), query, total);
  }

  search(ctx: RequestContext, q: string, category: string | undefined) {
    const { shape, values } = this.reach(ctx.caller);
    const needle = q.trim().toLowerCase();
    // The first SEARCH_MAX matches: page 1 of that size.
    const { rows, total } = catalogPageOf(this.db, `${shape}t${shapeOf({ c: category })}`, { ...values, needle, category }, { page: 1, limit: SEARCH_MAX });
    return { data: rows.map(catalogOut), total };
  }

  private versionCount(id: string): number {
    return catalogQueries(this.db).versionCount.get({ catalogId: id })?.n ?? 0;
  }

  get(ctx: RequestContext, id: string) {
    const row = this.visible(ctx, id);
    const versionCount = this.versionCount(id);
    return { data: { ...catalogOut(row), versionCount } };
  }

  update(ctx: RequestContext, id: string, body: z.infer<typeof CatalogUpdateSchema>) {
    return this.db.$client.transaction(() => {
      const current = this.writable(ctx, id);
      const row = updateRow(this.db, softwareCatalog, current, { ...body, updatedAt: isoNow() });
      // Found by writable in this transaction: always there.
      if (!row) throw notFound('Catalog item not found', 'CATALOG_ITEM_NOT_FOUND');
      this.audit(ctx, 'software.catalog.update', row, { changedFields: Object.keys(body) });
      return { data: catalogOut(row) };
    })();
  }

  /** Deletes the item and (foreign key cascade) its versions; inventory rows linked to it lose the link. */
  delete(ctx: RequestContext, id: string) {
    return this.db.$client.transaction(() => {
      const row = this.writable(ctx, id);
      const versions = this.versionCount(id);
      deleteById(this.db, softwareCatalog, id);
      this.audit(ctx, 'software.catalog.delete', row, { versionsDeleted: versions });
      return { success: true as const, id };
    })();
  }

  versions(ctx: RequestContext, id: string) {
    this.visible(ctx, id);
    const rows = catalogQueries(this.db).versions.all({ catalogId: id });
    return { data: rows.map(versionOut) };
  }

  /** A new version becomes the latest: the item's latestVersion, and the only one with isLatest. */
  createVersion(ctx: RequestContext, id: string, body: z.infer<typeof CatalogVersionCreateSchema>) {
    return this.db.$client.transaction(() => {
      const item = this.writable(ctx, id);
      if (this.versionOf(id, body.version)) throw conflict(`Version ${body.version} already exists`, 'SOFTWARE_VERSION_EXISTS');
      catalogQueries(this.db).clearLatest.run({ catalogId: id });
      const row = insertRow(this.db, softwareVersions, {
        catalogId: id,
        version: body.version,
        releaseDate: utc(body.releaseDate),
        releaseNotes: body.notes ?? null,
        downloadUrl: body.downloadUrl,
        checksum: body.sha256?.toLowerCase() ?? null,
        fileSize: body.sizeMB === undefined ? null : Math.round(body.sizeMB * MB),
        supportedOs: [...new Set(body.supportedPlatforms)],
        architecture: body.architecture ?? null,
        silentInstallArg: body.silentInstallArg ?? null,
        silentUninstallArg: body.silentUninstallArg ?? null,
        isLatest: true,
      });
      const updated = updateRow(this.db, softwareCatalog, item, { latestVersion: row.version, updatedAt: isoNow() });
      this.audit(ctx, 'software.catalog.version.create', updated ?? item, { versionId: row.id, version: row.version });
      return { data: versionOut(row) };
    })();
  }

  /** The item's version named `version`, if it has one. */
  versionOf(catalogId: string, version: string): VersionRow | undefined {
    return catalogQueries(this.db).versionOf.get({ catalogId, version });
  }

  /** The item by id whatever the caller (the agents' reports, the scheduled dispatch). */
  byId(id: string): CatalogRow | undefined {
    return rowById(this.db, softwareCatalog, id);
  }

  /** The items offered to an organization, by lower-case name: its own before its partner's before platform ones. */
  namesOfferedTo(org: { id: string; partnerId: string }): Map<string, string> {
    const rows = catalogQueries(this.db).offeredTo.all({ orgId: org.id, partnerId: org.partnerId });
    const rank = (r: { orgId: string | null; partnerId: string | null }) => (r.orgId !== null ? 2 : r.partnerId !== null ? 1 : 0);
    const best = new Map<string, { id: string; rank: number }>();
    for (const r of rows) {
      const key = r.name.toLowerCase();
      const seen = best.get(key);
      if (!seen || rank(r) > seen.rank) best.set(key, { id: r.id, rank: rank(r) });
    }
    return new Map([...best].map(([name, { id }]) => [name, id]));
  }
}
