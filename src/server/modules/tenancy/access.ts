import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { organizations, sites } from '../../db/schema/index.js';
import type { Caller } from '../../http/caller.js';
import { notFound, orgAccessDenied, siteAccessDenied } from '../../http/errors.js';

export type Organization = typeof organizations.$inferSelect;
export type Site = typeof sites.$inferSelect;

/**
 * The organizations a caller reaches (01 §1): null for system callers (no filter); partner callers by their
 * link's orgAccess; organization callers their own. Soft-deleted organizations are never included.
 */
export function accessibleOrgIds(db: Db, caller: Caller): string[] | null {
  if (caller.scope === 'system') return null;
  if (caller.scope === 'organization') return caller.orgId ? [caller.orgId] : [];
  if (!caller.partnerId || caller.orgAccess === 'none') return [];
  const conditions = [eq(organizations.partnerId, caller.partnerId), isNull(organizations.deletedAt)];
  if (caller.orgAccess === 'selected') {
    const selected = caller.orgIds ?? [];
    if (selected.length === 0) return [];
    conditions.push(inArray(organizations.id, selected));
  }
  return db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(...conditions))
    .all()
    .map((r) => r.id);
}

export function canAccessOrg(db: Db, caller: Caller, orgId: string): boolean {
  const ids = accessibleOrgIds(db, caller);
  return ids === null || ids.includes(orgId);
}

/** The live organization, if the caller may reach it: 404 when absent or deleted, 403 when out of scope. */
export function requireOrg(db: Db, caller: Caller, orgId: string): Organization {
  const org = db
    .select()
    .from(organizations)
    .where(and(eq(organizations.id, orgId), isNull(organizations.deletedAt)))
    .get();
  if (!org) throw notFound('Organization not found');
  if (!canAccessOrg(db, caller, org.id)) throw orgAccessDenied();
  return org;
}

/** Organization users restricted to some sites see only those (01 §2.6). */
export function canAccessSite(caller: Caller, siteId: string): boolean {
  return caller.siteIds === null || caller.siteIds.includes(siteId);
}

/** The site, if the caller may reach it and its organization (01 §4.3 "Site access"). */
export function requireSite(db: Db, caller: Caller, siteId: string): Site {
  const site = db.select().from(sites).where(eq(sites.id, siteId)).get();
  if (!site) throw notFound('Site not found');
  const org = db
    .select({ id: organizations.id })
    .from(organizations)
    .where(and(eq(organizations.id, site.orgId), isNull(organizations.deletedAt)))
    .get();
  if (!org) throw notFound('Site not found');
  if (!canAccessOrg(db, caller, site.orgId) || !canAccessSite(caller, site.id)) throw siteAccessDenied();
  return site;
}
