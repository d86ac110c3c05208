import type { SQL, SQLWrapper } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { systemContext, type Caller, type RequestContext } from '../../context.js';
import { fieldError, forbidden, orgAccessDenied } from '../../errors.js';
import type { DevicesService } from '../devices/service.js';
import { requireOrg, requireSite, type OrgRef } from '../tenancy/access.js';

/** Who the server is when it acts on its own (the expiry enforcer, lookups outside a caller's reach). */
export const SYSTEM_CALLER: Caller = systemContext().caller;

/**
 * The organization a PAM write (or a read that needs exactly one organization) is about: an organization
 * caller's own (a different orgId in the body is 403); partner and system callers must name one they reach.
 */
export function targetOrg(db: Db, caller: Caller, orgId: string | undefined): OrgRef {
  if (caller.scope === 'organization') {
    if (!caller.orgId || (orgId !== undefined && orgId !== caller.orgId)) throw orgAccessDenied();
    return requireOrg(db, caller, caller.orgId);
  }
  if (orgId === undefined) throw fieldError('orgId', 'required for partner and system callers');
  return requireOrg(db, caller, orgId);
}

/**
 * A write that targets a site or the whole organization (01 §4.9 "Site-restricted technicians see only their
 * sites; writes outside them give 403"): a site must be of the organization (400) and within the caller's
 * sites (403); organization-wide objects (rules without a site, signer groups, defaults) are refused to
 * site-restricted callers (403).
 */
export function assertWritableScope(db: Db, caller: Caller, orgId: string, siteId: string | null): void {
  if (siteId === null) {
    if (caller.siteIds !== null) {
      throw forbidden('Site-restricted users cannot change organization-wide elevation settings', 'SITE_ACCESS_DENIED');
    }
    return;
  }
  const site = requireSite(db, caller, siteId);
  if (site.orgId !== orgId) throw fieldError('siteId', 'not a site of the organization');
}

/** Site-restricted callers read objects of their sites and organization-wide ones. */
export function siteVisible(caller: Caller, siteId: string | null, orgWideVisible: boolean): boolean {
  if (caller.siteIds === null) return true;
  if (siteId === null) return orgWideVisible;
  return caller.siteIds.includes(siteId);
}

/**
 * 01 §2.6: an organization user restricted to device groups reaches only the requests (and their trail) of devices
 * in those groups, wherever PAM applies the site restriction. The condition on a PAM row's device column, from the
 * devices module (restrictedDeviceWhere, as script executions use it); undefined for callers without a
 * device-group restriction (the site restriction PAM applies itself, on the request's site).
 */
export function deviceGroupWhere(
  devices: Pick<DevicesService, 'restrictedDeviceWhere'>,
  ctx: RequestContext,
  deviceIdColumn: SQLWrapper,
): SQL | undefined {
  return ctx.caller.deviceGroupIds === null ? undefined : devices.restrictedDeviceWhere(ctx, deviceIdColumn);
}
