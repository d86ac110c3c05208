import type { Db } from '../../db/connection.js';
import type { Caller } from '../../context.js';
import { groupsOfOrg } from '../groups/service.js';
import type { Membership } from '../identity/directory.js';
import { accessibleOrgIds, canAccessOrg, isLiveOrgOfPartner, isSiteOfOrg } from '../tenancy/access.js';

/** The part of a link that reaches further than the caller: partner links by orgAccess and orgIds, organization
 * links by their organization, siteIds and deviceGroupIds. */
export type ReachField = 'orgAccess' | 'orgIds' | 'orgId' | 'siteIds' | 'deviceGroupIds';

/** Whether a restriction list (null: everything) reaches an id the caller's list does not. Ids that no longer
 * name anything (a deleted site or group) reach nothing and are left out by `exists`. */
function listWider(mine: readonly string[] | null, theirs: readonly string[] | null, exists: (ids: string[]) => Set<string>): boolean {
  if (mine === null) return false;
  if (theirs === null) return true;
  const outside = theirs.filter((id) => !mine.includes(id));
  return outside.length > 0 && exists(outside).size > 0;
}

/**
 * The parts of a member's link that reach further than the caller's own position (01 §1 "Every query is limited
 * to the caller's position", §2.6), [] when the caller reaches at least as far. Partner links: orgAccess all is
 * wider than selected, selected orgIds are wider unless within the organizations the caller reaches, none is
 * the narrowest. Organization links: a partner caller reaching the organization reaches all of it; an
 * organization caller compares siteIds and deviceGroupIds, where null (all) is wider than any list and a list is
 * wider unless a subset of the caller's. System callers reach everything.
 */
export function reachBeyond(db: Db, caller: Caller, membership: Membership): ReachField[] {
  if (caller.scope === 'system') return [];
  if (membership.kind === 'partner') {
    if (caller.scope !== 'partner' || caller.partnerId !== membership.partnerId) return ['orgAccess'];
    if (caller.orgAccess === 'all' || membership.orgAccess === 'none') return [];
    if (membership.orgAccess === 'all') return ['orgAccess'];
    const reach = accessibleOrgIds(db, caller) ?? [];
    const outside = membership.orgIds.filter((id) => !reach.includes(id) && isLiveOrgOfPartner(db, id, membership.partnerId));
    return outside.length > 0 ? ['orgIds'] : [];
  }
  if (caller.scope === 'partner') return canAccessOrg(db, caller, membership.orgId) ? [] : ['orgId'];
  if (caller.orgId !== membership.orgId) return ['orgId'];
  const wider: ReachField[] = [];
  const sitesOfOrg = (ids: string[]) => new Set(ids.filter((id) => isSiteOfOrg(db, id, membership.orgId)));
  if (listWider(caller.siteIds, membership.siteIds, sitesOfOrg)) wider.push('siteIds');
  const groupsOfTheOrg = (ids: string[]) => groupsOfOrg(db, membership.orgId, ids);
  if (listWider(caller.deviceGroupIds, membership.deviceGroupIds, groupsOfTheOrg)) wider.push('deviceGroupIds');
  return wider;
}
