import { systemContext, type RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { badRequest } from '../../errors.js';
import { auditRow, type AuditedRow, type RowAuditEntry } from '../shared/audited.js';
import type { TenancyService } from '../tenancy/service.js';

/** 05-wire-notes "Org resolution (common)" for writes: an organization caller's own organization (another
 * orgId 403), a partner's given orgId (access-checked) or its only organization, and system callers must give
 * one. */
export function resolveWriteOrg(tenancy: TenancyService, ctx: RequestContext, orgId: string | undefined): { id: string; name: string } {
  const { caller } = ctx;
  if (orgId !== undefined) return tenancy.requireOrgRow(ctx, orgId);
  if (caller.scope === 'organization') {
    if (!caller.orgId) throw badRequest('Organization context required', 'ORG_CONTEXT_REQUIRED');
    return tenancy.requireOrgRow(ctx, caller.orgId);
  }
  if (caller.scope === 'partner') {
    const orgs = tenancy.listAccessibleOrganizations(ctx);
    const only = orgs.length === 1 ? orgs[0] : undefined;
    if (only) return only;
    throw badRequest('orgId is required when partner has multiple organizations', 'ORG_ID_REQUIRED');
  }
  throw badRequest('orgId is required', 'ORG_ID_REQUIRED');
}

/** The organizations of a list, for a prepared statement (db/prepared.ts): the given orgId (access-checked), else
 * every organization the caller reaches, as shape 'o' with the organizations as the JSON array
 * `orgIds` (for `inJson`), or '' for every organization (system callers); null when the caller reaches none. */
export function listOrgReach(tenancy: TenancyService, ctx: RequestContext, orgId: string | undefined): { shape: '' | 'o'; orgIds: string | null } | null {
  if (orgId !== undefined) return { shape: 'o', orgIds: JSON.stringify([tenancy.requireOrg(ctx, orgId).id]) };
  const ids = tenancy.accessibleOrgIds(ctx);
  if (ids === null) return { shape: '', orgIds: null };
  if (ids.length === 0) return null;
  return { shape: 'o', orgIds: JSON.stringify(ids) };
}

/** Records the audit entry of a change to a row of one organization (a channel, a policy), naming that
 * organization's partner. */
export function auditOrgRow(
  db: Db,
  tenancy: TenancyService,
  ctx: RequestContext,
  row: AuditedRow & { orgId: string },
  entry: Omit<RowAuditEntry, 'partnerId'>,
): void {
  auditRow(db, ctx, row, { ...entry, partnerId: tenancy.requireOrg(systemContext(), row.orgId).partnerId });
}
