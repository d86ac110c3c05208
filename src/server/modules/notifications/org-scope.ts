import { systemContext, type RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { auditRow, type AuditedRow, type RowAuditEntry } from '../shared/audited.js';
import type { TenancyService } from '../tenancy/service.js';

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
