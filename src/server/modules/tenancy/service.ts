import { and, asc, count, eq, isNull, ne, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  OrganizationCreateSchema,
  OrganizationListQuerySchema,
  OrganizationUpdateSchema,
  PartnerCreateSchema,
  PartnerSelfUpdateSchema,
  PartnerUpdateSchema,
  SiteCreateSchema,
  SiteListQuerySchema,
  SiteUpdateSchema,
} from '../../../contract/tenancy.js';
import type { PageQuerySchema } from '../../../contract/common.js';
import type { Db } from '../../db/connection.js';
import { inJson, insertRow, preparedQueries, preparedShapes, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { organizations, partnerUsers, partners, sites } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { badRequest, conflict, fieldError, forbidden, notFound, siteAccessDenied } from '../../errors.js';
import { deepMerge } from '../../lib/deep-merge.js';
import { countRows, paged, preparedPage, readPage, type Paged } from '../../lib/paging.js';
import { recordAudit } from '../audit/recorder.js';
import { deleteAudited } from '../shared/audited.js';
import {
  accessibleOrgIds,
  canAccessOrg,
  canAccessSite,
  inLiveOrgs,
  reachCache,
  requireOrg,
  requireOrgRow,
  requireSite,
  requireSiteOfPartner,
  type Organization,
  type OrgRef,
  type Site,
} from './access.js';

type Partner = typeof partners.$inferSelect;
type PageQuery = z.infer<typeof PageQuerySchema>;

function requireChanges(body: Record<string, unknown>): void {
  if (Object.values(body).every((v) => v === undefined)) throw badRequest('No updates provided', 'NO_UPDATES');
}

function definedOnly<T extends Record<string, unknown>>(body: T): Partial<T> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Contract dates are stored as UTC ISO strings (they sort and compare as text); the end may not precede
 * the start, taking the stored value for whichever one a PATCH leaves out. */
function contractDates(
  changes: { contractStart?: string | null; contractEnd?: string | null },
  current: { contractStart: string | null; contractEnd: string | null } = { contractStart: null, contractEnd: null },
): { contractStart?: string | null; contractEnd?: string | null } {
  const iso = (v: string | null) => (v === null ? null : new Date(v).toISOString());
  const out: { contractStart?: string | null; contractEnd?: string | null } = {};
  if (changes.contractStart !== undefined) out.contractStart = iso(changes.contractStart);
  if (changes.contractEnd !== undefined) out.contractEnd = iso(changes.contractEnd);
  const start = out.contractStart !== undefined ? out.contractStart : current.contractStart;
  const end = out.contractEnd !== undefined ? out.contractEnd : current.contractEnd;
  if (start && end && end < start) throw fieldError('contractEnd', 'must not be before contractStart');
  return out;
}

/** The live organizations, by name, as prepared statements (db/prepared.ts) per shape: `i` only those whose ids
 * are in the JSON array orgIds, `p` only the partner's (partnerId); every one (page, count) and all at once. */
const organizationListOf = preparedShapes((db, shape) => {
  const where = and(
    isNull(organizations.deletedAt),
    ...shapeConditions(shape, {
      p: () => eq(organizations.partnerId, sql.placeholder('partnerId')),
      i: () => inJson(organizations.id, 'orgIds'),
    }),
  );
  const order = [asc(organizations.name), asc(organizations.id)];
  return {
    ...preparedPage(db, organizations, where, order),
    all: db
      .select()
      .from(organizations)
      .where(where)
      .orderBy(...order)
      .prepare(),
  };
});

/**
 * The site list as prepared statements (rows and count), one pair per way of naming the organizations: one
 * organization, the live ones among listed ids (a JSON array), or every live one (system callers). A caller
 * restricted to some sites passes them as a JSON array in siteIds; null means all.
 */
function prepareSiteLists(db: Db) {
  const ofSites = sql`(${sql.placeholder('siteIds')} IS NULL OR ${sites.id} IN (SELECT value FROM json_each(${sql.placeholder('siteIds')})))`;
  const pair = (orgCondition: SQL) => {
    const where = and(orgCondition, ofSites);
    return preparedPage(db, sites, where, [asc(sites.name), asc(sites.id)]);
  };
  return {
    ofOrg: pair(eq(sites.orgId, sql.placeholder('orgId'))),
    ofListedOrgs: pair(inLiveOrgs(sites.orgId, inJson(organizations.id, 'orgIds'))),
    ofLiveOrgs: pair(inLiveOrgs(sites.orgId)),
  };
}
type SiteLists = ReturnType<typeof prepareSiteLists>;

/** The live partner by id, behind every `getPartner` (routes, enrolment, MFA policy, users, roles): prepared once per database. */
const partnerQueries = preparedQueries((db) => ({
  livePartner: db
    .select()
    .from(partners)
    .where(and(eq(partners.id, sql.placeholder('id')), isNull(partners.deletedAt)))
    .prepare(),
  livePage: preparedPage(db, partners, isNull(partners.deletedAt), [asc(partners.name), asc(partners.id)]),
}));

/** The statements of the writes (their checks and changes), prepared once per database: a partner slug taken
 * (by another partner than exceptId), the number of a partner's live organizations, an organization slug taken
 * among them (by another than exceptId), the soft deletion of a partner's live organizations, and a partner user's selected organizations (a
 * JSON array, bound as text). */
const writeQueries = preparedQueries((db) => {
  const liveOfPartner = and(eq(organizations.partnerId, sql.placeholder('partnerId')), isNull(organizations.deletedAt));
  const orgSlug = and(liveOfPartner, eq(organizations.slug, sql.placeholder('slug')));
  return {
    partnerSlug: db.select({ id: partners.id }).from(partners).where(eq(partners.slug, sql.placeholder('slug'))).prepare(),
    partnerSlugOfOther: db
      .select({ id: partners.id })
      .from(partners)
      .where(and(eq(partners.slug, sql.placeholder('slug')), ne(partners.id, sql.placeholder('exceptId'))))
      .prepare(),
    liveOrgsOfPartner: db.select({ n: count() }).from(organizations).where(liveOfPartner).prepare(),
    orgSlug: db.select({ id: organizations.id }).from(organizations).where(orgSlug).prepare(),
    orgSlugOfOther: db
      .select({ id: organizations.id })
      .from(organizations)
      .where(and(orgSlug, ne(organizations.id, sql.placeholder('exceptId'))))
      .prepare(),
    deleteOrgsOfPartner: db
      .update(organizations)
      .set({ deletedAt: sql`${sql.placeholder('now')}`, updatedAt: sql`${sql.placeholder('now')}` })
      .where(liveOfPartner)
      .prepare(),
    setSelectedOrgs: db
      .update(partnerUsers)
      .set({ orgIds: sql`${sql.placeholder('orgIds')}` })
      .where(and(eq(partnerUsers.partnerId, sql.placeholder('partnerId')), eq(partnerUsers.userId, sql.placeholder('userId'))))
      .prepare(),
  };
});

/** Partners, organizations and sites (01 §2.3-2.5, §4.3), every query limited to the caller's reach. */
export class TenancyService {
  private readonly siteQueries: SiteLists;

  constructor(private readonly db: Db) {
    this.siteQueries = prepareSiteLists(db);
    // Made now, outside any transaction (see reachCache).
    reachCache(db);
  }

  // ---- Partners ----

  listPartners(query: PageQuery): Paged<Partner> {
    const { rows, total } = readPage(partnerQueries(this.db).livePage, {}, query);
    return paged(rows, query, total);
  }

  getPartner(id: string): Partner {
    const partner = partnerQueries(this.db).livePartner.get({ id });
    if (!partner) throw notFound('Partner not found');
    return partner;
  }

  private assertSlugFree(slug: string, exceptId?: string): void {
    const queries = writeQueries(this.db);
    const clash = exceptId ? queries.partnerSlugOfOther.get({ slug, exceptId }) : queries.partnerSlug.get({ slug });
    if (clash) throw conflict('A partner with this slug already exists', 'SLUG_TAKEN');
  }

  createPartner(ctx: RequestContext, body: z.infer<typeof PartnerCreateSchema>): Partner {
    return this.db.$client.transaction(() => {
      this.assertSlugFree(body.slug);
      const partner = insertRow(this.db, partners, {
        ...definedOnly(body),
        name: body.name,
        slug: body.slug,
        settings: body.settings ?? {},
        status: body.status ?? 'active',
      });
      recordAudit(this.db, ctx, {
        action: 'partner.create',
        resourceType: 'partner',
        resourceId: partner.id,
        resourceName: partner.name,
        partnerId: partner.id,
        details: { slug: partner.slug, plan: partner.plan, type: partner.type },
      });
      return partner;
    })();
  }

  updatePartner(
    ctx: RequestContext,
    id: string,
    body: z.infer<typeof PartnerUpdateSchema> | z.infer<typeof PartnerSelfUpdateSchema>,
  ): Partner {
    requireChanges(body);
    return this.db.$client.transaction(() => {
      const current = this.getPartner(id);
      const changes = definedOnly(body);
      if ('slug' in changes && changes.slug) this.assertSlugFree(changes.slug, id);
      const settings = changes.settings ? deepMerge(current.settings, changes.settings) : current.settings;
      const updated = updateRow(this.db, partners, current, { ...changes, settings, updatedAt: new Date().toISOString() });
      if (!updated) throw notFound('Partner not found');
      recordAudit(this.db, ctx, {
        action: 'partner.update',
        resourceType: 'partner',
        resourceId: id,
        resourceName: updated.name,
        partnerId: id,
        details: { changes: Object.keys(changes) },
      });
      return updated;
    })();
  }

  deletePartner(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const partner = this.getPartner(id);
      const now = new Date().toISOString();
      updateRow(this.db, partners, partner, { deletedAt: now, updatedAt: now });
      // Its organizations go with it (01 §1: deleted rows are excluded from all queries), so no list shows an
      // organization whose partner is gone.
      const orgs = writeQueries(this.db).deleteOrgsOfPartner.run({ partnerId: id, now }).changes;
      recordAudit(this.db, ctx, {
        action: 'partner.delete',
        resourceType: 'partner',
        resourceId: id,
        resourceName: partner.name,
        partnerId: id,
        details: { organizationsDeleted: orgs },
      });
      return { success: true as const };
    })();
  }

  myPartner(ctx: RequestContext): Partner {
    if (!ctx.caller.partnerId) throw notFound('Partner not found');
    return this.getPartner(ctx.caller.partnerId);
  }

  // ---- Organizations ----

  listAccessibleOrganizations(ctx: RequestContext): Organization[] {
    const ids = accessibleOrgIds(this.db, ctx.caller);
    if (ids !== null && ids.length === 0) return [];
    return organizationListOf(this.db, shapeOf({ i: ids !== null })).all.all({ orgIds: JSON.stringify(ids) });
  }

  listOrganizations(ctx: RequestContext, query: z.infer<typeof OrganizationListQuerySchema>): Paged<Organization> {
    const { caller } = ctx;
    if (query.partnerId && caller.scope === 'partner' && query.partnerId !== caller.partnerId) throw forbidden();
    const ids = accessibleOrgIds(this.db, caller);
    if (ids !== null && ids.length === 0) return paged([], query, 0);
    const statements = organizationListOf(this.db, shapeOf({ i: ids !== null, p: query.partnerId }));
    const values = { orgIds: JSON.stringify(ids), partnerId: query.partnerId };
    const { rows, total } = readPage(statements, values, query);
    return paged(rows, query, total);
  }

  getOrganization(ctx: RequestContext, id: string): Organization {
    return requireOrgRow(this.db, ctx.caller, id);
  }

  createOrganization(ctx: RequestContext, body: z.infer<typeof OrganizationCreateSchema>): Organization {
    const { caller } = ctx;
    let partnerId: string;
    if (caller.scope === 'partner') {
      if (body.partnerId && body.partnerId !== caller.partnerId)
        throw forbidden('partnerId must be your own partner', 'PARTNER_MISMATCH');
      partnerId = caller.partnerId ?? '';
    } else {
      if (!body.partnerId) throw fieldError('partnerId', 'Required for system callers');
      partnerId = body.partnerId;
    }
    return this.db.$client.transaction(() => {
      const partner = this.getPartner(partnerId);
      const queries = writeQueries(this.db);
      if (partner.maxOrganizations !== null && (queries.liveOrgsOfPartner.get({ partnerId })?.n ?? 0) >= partner.maxOrganizations) {
        throw forbidden(`Organization limit reached (${partner.maxOrganizations})`, 'ORGANIZATION_LIMIT_REACHED');
      }
      if (queries.orgSlug.get({ partnerId, slug: body.slug })) {
        throw conflict('An organization with this slug already exists for the partner', 'SLUG_TAKEN');
      }
      const org = insertRow(this.db, organizations, {
        ...definedOnly(body),
        ...contractDates(body),
        partnerId,
        name: body.name,
        slug: body.slug,
        settings: body.settings ?? {},
      });
      // A partner user limited to selected organizations keeps reach over the ones they create.
      if (caller.scope === 'partner' && caller.orgAccess === 'selected' && caller.userId) {
        queries.setSelectedOrgs.run({
          partnerId,
          userId: caller.userId,
          orgIds: JSON.stringify([...(caller.orgIds ?? []), org.id]),
        });
      }
      recordAudit(this.db, ctx, {
        action: 'organization.create',
        resourceType: 'organization',
        resourceId: org.id,
        resourceName: org.name,
        orgId: org.id,
        partnerId,
        details: { slug: org.slug },
      });
      return org;
    })();
  }

  updateOrganization(ctx: RequestContext, id: string, body: z.infer<typeof OrganizationUpdateSchema>): Organization {
    requireChanges(body);
    return this.db.$client.transaction(() => {
      const current = requireOrgRow(this.db, ctx.caller, id);
      const { partnerId, ...rest } = definedOnly(body);
      const changes = { ...rest, ...contractDates(rest, current) };
      if (partnerId !== undefined && partnerId !== current.partnerId)
        throw badRequest('partnerId cannot be changed', 'IMMUTABLE_FIELD');
      if (changes.slug && changes.slug !== current.slug) {
        const clash = writeQueries(this.db).orgSlugOfOther.get({ partnerId: current.partnerId, slug: changes.slug, exceptId: id });
        if (clash) throw conflict('An organization with this slug already exists for the partner', 'SLUG_TAKEN');
      }
      const updated = updateRow(this.db, organizations, current, { ...changes, updatedAt: new Date().toISOString() });
      if (!updated) throw notFound('Organization not found');
      recordAudit(this.db, ctx, {
        action: 'organization.update',
        resourceType: 'organization',
        resourceId: id,
        resourceName: updated.name,
        orgId: id,
        partnerId: updated.partnerId,
        details: { changes: Object.keys(changes) },
      });
      return updated;
    })();
  }

  deleteOrganization(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const org = requireOrgRow(this.db, ctx.caller, id);
      const now = new Date().toISOString();
      updateRow(this.db, organizations, org, { deletedAt: now, updatedAt: now });
      recordAudit(this.db, ctx, {
        action: 'organization.delete',
        resourceType: 'organization',
        resourceId: id,
        resourceName: org.name,
        orgId: id,
        partnerId: org.partnerId,
      });
      return { success: true as const };
    })();
  }

  // ---- Sites ----

  listSites(ctx: RequestContext, query: z.infer<typeof SiteListQuerySchema>): Paged<Site> {
    const { caller } = ctx;
    const orgId = query.orgId ?? query.organizationId;
    let shape: keyof SiteLists;
    let orgs: string;
    if (orgId) {
      requireOrg(this.db, caller, orgId);
      shape = 'ofOrg';
      orgs = orgId;
    } else {
      const ids = accessibleOrgIds(this.db, caller);
      if (ids !== null && ids.length === 0) return paged([], query, 0);
      shape = ids === null ? 'ofLiveOrgs' : 'ofListedOrgs';
      orgs = ids === null ? '' : JSON.stringify(ids);
    }
    if (caller.siteIds !== null && caller.siteIds.length === 0) return paged([], query, 0);
    const siteIds = caller.siteIds === null ? null : JSON.stringify(caller.siteIds);
    const params = shape === 'ofOrg' ? { orgId: orgs, siteIds } : { orgIds: orgs, siteIds };
    const { rows, total } = readPage(this.siteQueries[shape], params, query);
    return paged(rows, query, total);
  }

  getSite(ctx: RequestContext, id: string): Site {
    return requireSite(this.db, ctx.caller, id);
  }

  createSite(ctx: RequestContext, body: z.infer<typeof SiteCreateSchema>): Site {
    return this.db.$client.transaction(() => {
      const org = requireOrg(this.db, ctx.caller, body.orgId);
      // A user restricted to some sites cannot widen their own reach by creating one.
      if (ctx.caller.siteIds !== null) throw siteAccessDenied();
      const site = insertRow(this.db, sites, {
        ...definedOnly(body),
        orgId: org.id,
        name: body.name,
        settings: body.settings ?? {},
      });
      recordAudit(this.db, ctx, {
        action: 'site.create',
        resourceType: 'site',
        resourceId: site.id,
        resourceName: site.name,
        orgId: org.id,
        partnerId: org.partnerId,
      });
      return site;
    })();
  }

  updateSite(ctx: RequestContext, id: string, body: z.infer<typeof SiteUpdateSchema>): Site {
    requireChanges(body);
    return this.db.$client.transaction(() => {
      const { site: current, partnerId } = requireSiteOfPartner(this.db, ctx.caller, id);
      const { orgId, ...changes } = definedOnly(body);
      if (orgId !== undefined && orgId !== current.orgId)
        throw badRequest('orgId cannot be changed', 'IMMUTABLE_FIELD');
      const updated = updateRow(this.db, sites, current, { ...changes, updatedAt: new Date().toISOString() });
      if (!updated) throw notFound('Site not found');
      recordAudit(this.db, ctx, {
        action: 'site.update',
        resourceType: 'site',
        resourceId: id,
        resourceName: updated.name,
        orgId: updated.orgId,
        partnerId,
        details: { changes: Object.keys(changes) },
      });
      return updated;
    })();
  }

  deleteSite(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const { site, partnerId } = requireSiteOfPartner(this.db, ctx.caller, id);
      deleteAudited(this.db, ctx, sites, site, { action: 'site.delete', resourceType: 'site', partnerId });
      return { success: true as const };
    })();
  }

  /** Used by other modules: the organizations a caller reaches, and the site check. */
  accessibleOrgIds(ctx: RequestContext): readonly string[] | null {
    return accessibleOrgIds(this.db, ctx.caller);
  }

  /** Whether the caller reaches this one organization (a row's): one lookup, not the list of all. */
  canAccessOrg(ctx: RequestContext, orgId: string): boolean {
    return canAccessOrg(this.db, ctx.caller, orgId);
  }

  requireOrg(ctx: RequestContext, orgId: string): OrgRef {
    return requireOrg(this.db, ctx.caller, orgId);
  }

  requireOrgRow(ctx: RequestContext, orgId: string): Organization {
    return requireOrgRow(this.db, ctx.caller, orgId);
  }

  requireSite(ctx: RequestContext, siteId: string): Site {
    return requireSite(this.db, ctx.caller, siteId);
  }

  canAccessSite(ctx: RequestContext, siteId: string): boolean {
    return canAccessSite(ctx.caller, siteId);
  }

  countOrganizations(): number {
    return countRows(this.db, organizations);
  }
}
