import type { RequestContext } from '../../context.js';
import { badRequest } from '../../errors.js';
import type { TenancyService } from '../tenancy/service.js';

/**
 * The organization a filter or group is written to (05 wire notes "Org resolution (common)"): a given orgId
 * (access-checked), an organization caller's own. `strict` (02 §4.5 saved filters: "partner and system callers
 * must give orgId on create") refuses a partner without orgId; otherwise a partner's only organization is taken.
 */
export function resolveWriteOrg(tenancy: TenancyService, ctx: RequestContext, orgId: string | undefined, strict: boolean): { id: string; partnerId: string } {
  const { caller } = ctx;
  if (orgId !== undefined) return tenancy.requireOrg(ctx, orgId);
  if (caller.scope === 'organization') {
    if (!caller.orgId) throw badRequest('Organization context required', 'ORG_CONTEXT_REQUIRED');
    return tenancy.requireOrg(ctx, caller.orgId);
  }
  if (caller.scope === 'partner' && !strict) {
    const orgs = tenancy.listAccessibleOrganizations(ctx);
    if (orgs.length === 1 && orgs[0]) return orgs[0];
    throw badRequest('orgId is required when partner has multiple organizations', 'ORG_ID_REQUIRED');
  }
  throw badRequest('orgId is required', 'ORG_ID_REQUIRED');
}
