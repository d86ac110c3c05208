import { and, eq, isNull, sql, type SQL } from 'drizzle-orm';
import type { SQLiteColumn } from 'drizzle-orm/sqlite-core';
import type { Db } from '../../db/connection.js';
import { preparedQueries, rowQuery, shapeOf, valueQuery } from '../../db/prepared.js';
import { countWrites } from '../../db/write-counter.js';
import { organizations, partners, sites } from '../../db/schema/index.js';
import type { Caller } from '../../context.js';
import { badRequest, forbidden, notFound, orgAccessDenied, siteAccessDenied } from '../../errors.js';
import { namesById } from '../../lib/names.js';
import { freezeDeep, ReadCache } from '../../lib/read-cache.js';

export type Organization = typeof organizations.$inferSelect;
export type Site = typeof sites.$inferSelect;

/** The scoping queries of every request, prepared once per database (db/prepared.ts). Lists of ids travel as
 * one JSON array. */
const queriesOf = preparedQueries((db) => {
  const live = isNull(organizations.deletedAt);
  const byPartner = eq(organizations.partnerId, sql.placeholder('partnerId'));
  return {
    orgsOfPartner: db.select({ id: organizations.id }).from(organizations).where(and(byPartner, live)).prepare(),
    selectedOrgsOfPartner: db
      .select({ id: organizations.id })
      .from(organizations)
      .where(
        and(byPartner, live, sql`${organizations.id} IN (SELECT value FROM json_each(${sql.placeholder('orgIds')}))`),
      )
      .prepare(),
    // The partner of a live organization: one access check (canAccessOrg), by primary key.
    partnerIdOfLiveOrg: valueQuery<string>(
      db,
      db.select({ partnerId: organizations.partnerId }).from(organizations).where(and(eq(organizations.id, sql.placeholder('id')), live)),
    ),
    // The partner of an organization, deleted or not (an audit entry may follow its deletion in one transaction).
    partnerIdOfOrg: valueQuery<string>(db, db.select({ partnerId: organizations.partnerId }).from(organizations).where(eq(organizations.id, sql.placeholder('id')))),
    liveOrg: rowQuery(db, organizations, and(eq(organizations.id, sql.placeholder('id')), live)),
    // The status of the live organization's live partner: one statement (an agent's authentication).
    partnerOfLiveOrg: db
      .select({ status: partners.status })
      .from(organizations)
      .innerJoin(partners, and(eq(partners.id, organizations.partnerId), isNull(partners.deletedAt)))
      .where(and(eq(organizations.id, sql.placeholder('id')), live))
      .prepare(),
    // The site with its organization's partner, only while that organization is live: one statement.
    siteOfLiveOrg: db
      .select({ site: sites, partnerId: organizations.partnerId })
      .from(sites)
      .innerJoin(organizations, and(eq(organizations.id, sites.orgId), live))
      .where(eq(sites.id, sql.placeholder('id')))
      .prepare(),
    // Whether an organization is a live one of the partner, a site one of the organization (users' links).
    liveOrgOfPartner: db
      .select({ id: organizations.id })
      .from(organizations)
      .where(and(eq(organizations.id, sql.placeholder('id')), byPartner, live))
      .prepare(),
    siteOfOrg: db
      .select({ id: sites.id })
      .from(sites)
      .where(and(eq(sites.id, sql.placeholder('id')), eq(sites.orgId, sql.placeholder('orgId'))))
      .prepare(),
  };
});

/** How many partner reaches (a partner, its callers' orgAccess and selection) are kept per database. */
const KEPT_REACHES = 256;

/**
 * The organizations of partner callers' reaches, kept until an organization is created, deleted or moves partner
 * (a TEMP-trigger counter, db/write-counter.ts) or another process commits (lib/read-cache.ts): every list request
 * of a partner caller needs them, and a partner of 1,000 organizations took ~0.6 ms to read them each time.
 */
const reaches = new WeakMap<Db, ReadCache<readonly string[]>>();

/**
 * The database's reach cache, made on first use outside a transaction (TenancyService makes it when the server
 * starts): its counter's TEMP table and triggers, created inside a transaction, would go with a rollback of it.
 * Undefined until then: the reach is read without it.
 */
export function reachCache(db: Db): ReadCache<readonly string[]> | undefined {
  let cache = reaches.get(db);
  if (cache === undefined && !db.$client.inTransaction) {
    const counter = countWrites(db.$client, 'org_reach', [{ table: 'organizations', columns: ['partner_id', 'deleted_at'] }]);
    reaches.set(db, (cache = new ReadCache<readonly string[]>(db.$client, KEPT_REACHES, Infinity, counter)));
  }
  return cache;
}

/**
 * The organizations a caller reaches (01 §1): null for system callers (no filter); partner callers by their
 * link's orgAccess; organization callers their own. Soft-deleted organizations are never included. Frozen: the
 * list of a partner caller is shared by every request of its reach.
 */
export function accessibleOrgIds(db: Db, caller: Caller): readonly string[] | null {
  if (caller.scope === 'system') return null;
  if (caller.scope === 'organization') return caller.orgId ? [caller.orgId] : [];
  if (!caller.partnerId || caller.orgAccess === 'none') return [];
  const selected = caller.orgAccess === 'selected' ? (caller.orgIds ?? []) : null;
  if (selected?.length === 0) return [];
  const cache = reachCache(db);
  const key = `${caller.partnerId} ${selected === null ? '*' : selected.join(',')}`;
  const kept = cache?.lookup(key);
  if (kept) return kept;
  const queries = queriesOf(db);
  const rows =
    selected === null
      ? queries.orgsOfPartner.all({ partnerId: caller.partnerId })
      : queries.selectedOrgsOfPartner.all({ partnerId: caller.partnerId, orgIds: JSON.stringify(selected) });
  const ids = rows.map((r) => r.id);
  return cache ? cache.store(key, ids) : freezeDeep(ids);
}

/**
 * `column IN (the ids of the live organizations)`, those among them matching `among` when given: what a system
 * caller reaches (accessibleOrgIds null: every live organization, as listAccessibleOrganizations lists them) as a
 * condition of a statement prepared once (db/prepared.ts), so that a list read for such a caller reads no
 * organization into the process, however many there are. In SQL:
 *
 *   column IN (SELECT id FROM organizations WHERE deleted_at IS NULL [AND among])
 */
export function inLiveOrgs(column: SQLiteColumn | SQL, among?: SQL): SQL {
  return sql`${column} IN (SELECT ${organizations.id} FROM ${organizations} WHERE ${and(isNull(organizations.deletedAt), among)})`;
}

/**
 * Whether the caller reaches the live organization orgId of partner partnerId: the rule of accessibleOrgIds for
 * one organization, decided from the caller alone (no query), so that a check costs the same whatever the number
 * of the partner's organizations.
 */
function reachesLiveOrg(caller: Caller, orgId: string, partnerId: string): boolean {
  if (caller.scope === 'system') return true;
  if (caller.scope === 'organization') return caller.orgId === orgId;
  if (!caller.partnerId || caller.partnerId !== partnerId || caller.orgAccess === 'none') return false;
  return caller.orgAccess !== 'selected' || (caller.orgIds ?? []).includes(orgId);
}

/** The organizations a read covers: the one named (404 when absent or deleted, 403 out of reach), else every one
 * the caller reaches (accessibleOrgIds; null: all, for system callers). */
export function readOrgIds(db: Db, caller: Caller, orgId: string | undefined): readonly string[] | null {
  if (orgId !== undefined) return [requireOrg(db, caller, orgId).id];
  return accessibleOrgIds(db, caller);
}

/**
 * What a read covers (01 §1, §2.6), for statements prepared once per shape (db/prepared.ts): the letters of the
 * limits that apply and the JSON arrays of their placeholders. `o` the organizations of `orgIds` (none for a system
 * caller), `s` the sites of `siteIds` (a user restricted to sites), `g` the device groups of `groupIds` (a user
 * restricted to device groups). What each limit means for its rows (the row's own site, or its device's) is the
 * condition builder's of each table; an absent list is null.
 */
export interface CallerReach {
  shape: string;
  values: { orgIds: string | null; siteIds: string | null; groupIds: string | null };
}

/**
 * The organization a write goes to (05 wire notes "Org resolution (common)"): an organization caller's own (another
 * orgId 403 ORG_ACCESS_DENIED); a given orgId, access-checked (404, 403); a partner's only organization (403
 * ORG_CONTEXT_REQUIRED when it reaches none); else 400 ORG_ID_REQUIRED. Options: `requireGiven` (02 §4.5 saved
 * filters: "partner and system callers must give orgId on create") takes no partner's only organization;
 * `missing` is the one 400 message of routes that say it their own way (the software routes: `orgId is required
 * for this scope`, a partner that reaches none included).
 */
export function resolveWriteOrg(
  db: Db,
  caller: Caller,
  orgId: string | undefined,
  options: { requireGiven?: boolean; missing?: string } = {},
): OrgRef {
  if (caller.scope === 'organization') {
    if (!caller.orgId) throw forbidden('Organization context required', 'ORG_CONTEXT_REQUIRED');
    if (orgId !== undefined && orgId !== caller.orgId) throw orgAccessDenied();
    return requireOrg(db, caller, caller.orgId);
  }
  if (orgId !== undefined) return requireOrg(db, caller, orgId);
  const missing = (message: string) => badRequest(options.missing ?? message, 'ORG_ID_REQUIRED');
  if (caller.scope === 'system' || options.requireGiven) throw missing('orgId is required');
  const reachable = accessibleOrgIds(db, caller) ?? [];
  const [only] = reachable;
  if (reachable.length === 1 && only !== undefined) return requireOrg(db, caller, only);
  if (reachable.length === 0 && options.missing === undefined) throw forbidden('Organization context required', 'ORG_CONTEXT_REQUIRED');
  throw missing('orgId is required when partner has multiple organizations');
}

/** The caller's reach, narrowed to the organizations named (each as requireOrg: 404 absent, 403 out of reach);
 * null when it covers nothing (no organization, or an empty site or device-group restriction). */
export function callerReach(db: Db, caller: Caller, orgIds?: string | readonly string[]): CallerReach | null {
  const reached =
    orgIds === undefined
      ? accessibleOrgIds(db, caller)
      : (typeof orgIds === 'string' ? [orgIds] : orgIds).map((id) => requireOrg(db, caller, id).id);
  const { siteIds, deviceGroupIds } = caller;
  if (reached?.length === 0 || siteIds?.length === 0 || deviceGroupIds?.length === 0) return null;
  const json = (list: readonly string[] | null) => (list === null ? null : JSON.stringify(list));
  return {
    shape: shapeOf({ o: reached !== null, s: siteIds !== null, g: deviceGroupIds !== null }),
    values: { orgIds: json(reached), siteIds: json(siteIds), groupIds: json(deviceGroupIds) },
  };
}

/** Whether orgId is among accessibleOrgIds(caller), by one lookup of that organization rather than the list. */
export function canAccessOrg(db: Db, caller: Caller, orgId: string): boolean {
  if (caller.scope === 'system') return true;
  if (caller.scope === 'organization') return caller.orgId === orgId;
  const partnerId = queriesOf(db).partnerIdOfLiveOrg.get({ id: orgId });
  return partnerId !== undefined && reachesLiveOrg(caller, orgId, partnerId);
}

/** The status of an organization's partner; `deleted` when the organization or its partner is absent or deleted
 * (refused like any inactive partner, 01 §3). */
/** The partner of organization ORGID, deleted or not; undefined when there is none (the audit recorder). */
export function partnerIdOfOrg(db: Db, orgId: string): string | undefined {
  return queriesOf(db).partnerIdOfOrg.get({ id: orgId });
}

export function partnerStatusOfOrg(db: Db, orgId: string): string {
  return queriesOf(db).partnerOfLiveOrg.get({ id: orgId })?.status ?? 'deleted';
}

/** What most checks need of an organization: which it is, and whose. */
export type OrgRef = Pick<Organization, 'id' | 'partnerId'>;

/** The live organization's id and partner, if the caller may reach it: 404 when absent or deleted, 403 when out of
 * scope. Two columns, read as an array: the whole row (its settings parsed) cost a write ~3 µs more under load. */
export function requireOrg(db: Db, caller: Caller, orgId: string): OrgRef {
  const partnerId = queriesOf(db).partnerIdOfLiveOrg.get({ id: orgId });
  if (partnerId === undefined) throw notFound('Organization not found');
  if (!reachesLiveOrg(caller, orgId, partnerId)) throw orgAccessDenied();
  return { id: orgId, partnerId };
}

/** requireOrg's organization as its whole row, for who shows or changes it. */
export function requireOrgRow(db: Db, caller: Caller, orgId: string): Organization {
  const org = queriesOf(db).liveOrg.get({ id: orgId });
  if (!org) throw notFound('Organization not found');
  if (!reachesLiveOrg(caller, org.id, org.partnerId)) throw orgAccessDenied();
  return org;
}

/** Organization-wide definitions (scripts, custom fields, alert templates): a user restricted to some sites (01
 * §2.6) may read and use them but not create, change or delete them (403, as for sites and API keys). */
export function assertOrgWideWriter(caller: Caller): void {
  if (caller.siteIds !== null) throw siteAccessDenied();
}

/** What an organization-wide definition may reach (an alert rule's targets): a site-restricted user may write only
 * one whose every target is a site of theirs (01 §2.6); otherwise 403, as for any organization-wide write. */
export function assertTargetsWithinSites(caller: Caller, targets: { scope?: unknown; siteIds?: unknown }): void {
  if (caller.siteIds === null) return;
  const siteIds = Array.isArray(targets.siteIds) ? targets.siteIds : [];
  const within = targets.scope === 'site' && siteIds.length > 0 && siteIds.every((id) => typeof id === 'string' && canAccessSite(caller, id));
  if (!within) throw siteAccessDenied();
}

/** Organization users restricted to some sites see only those (01 §2.6). */
export function canAccessSite(caller: Caller, siteId: string): boolean {
  return caller.siteIds === null || caller.siteIds.includes(siteId);
}

/** The site and its organization's partner, if the caller may reach the site and its organization (01 §4.3
 * "Site access"); a site of a deleted organization is not found. */
export function requireSiteOfPartner(db: Db, caller: Caller, siteId: string): { site: Site; partnerId: string } {
  const found = queriesOf(db).siteOfLiveOrg.get({ id: siteId });
  if (!found) throw notFound('Site not found');
  if (!reachesLiveOrg(caller, found.site.orgId, found.partnerId) || !canAccessSite(caller, found.site.id)) throw siteAccessDenied();
  return found;
}

/** The site, if the caller may reach it and its organization (01 §4.3 "Site access"). */
export function requireSite(db: Db, caller: Caller, siteId: string): Site {
  return requireSiteOfPartner(db, caller, siteId).site;
}

/** Site id → name (other modules show site names without reading the sites table). */
export function siteNamesOf(db: Db, ids: Iterable<string | null>): Map<string, string> {
  return namesById(db, sites, { id: sites.id, name: sites.name }, ids);
}

/** Whether the organization is live and the partner's (users invite into it). */
export function isLiveOrgOfPartner(db: Db, orgId: string, partnerId: string): boolean {
  return queriesOf(db).liveOrgOfPartner.get({ id: orgId, partnerId }) !== undefined;
}

/** Whether the site belongs to the organization. */
export function isSiteOfOrg(db: Db, siteId: string, orgId: string): boolean {
  return queriesOf(db).siteOfOrg.get({ id: siteId, orgId }) !== undefined;
}
