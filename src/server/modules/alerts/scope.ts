import type { Db } from '../../db/connection.js';
import { systemContext, type Caller } from '../../context.js';
import { DomainError, badRequest, forbidden } from '../../errors.js';
import { accessibleOrgIds, requireOrg, requireOrgRow, type OrgRef, type Organization } from '../tenancy/access.js';

/**
 * The organization a write applies to (05 wire notes "Org resolution"): an organization caller its own (another
 * orgId → 403), a partner caller the given one (access-checked) or its only one, a system caller the given one.
 */
export function resolveWriteOrg(db: Db, caller: Caller, orgId: string | undefined): OrgRef {
  if (caller.scope === 'organization') {
    if (!caller.orgId) throw forbidden('Organization context required', 'ORG_CONTEXT_REQUIRED');
    if (orgId !== undefined && orgId !== caller.orgId) throw forbidden('Access to this organization denied', 'ORG_ACCESS_DENIED');
    return requireOrg(db, caller, caller.orgId);
  }
  if (orgId !== undefined) return requireOrg(db, caller, orgId);
  if (caller.scope === 'system') throw badRequest('orgId is required', 'ORG_ID_REQUIRED');
  const reachable = accessibleOrgIds(db, caller) ?? [];
  const [only] = reachable;
  if (reachable.length === 1 && only !== undefined) return requireOrg(db, caller, only);
  if (reachable.length === 0) throw forbidden('Organization context required', 'ORG_CONTEXT_REQUIRED');
  throw badRequest('orgId is required when partner has multiple organizations', 'ORG_ID_REQUIRED');
}

/** Whether the caller reaches the organization; out-of-reach rows answer 404 like absent ones. */
export function reaches(db: Db, caller: Caller, orgId: string): boolean {
  try {
    requireOrg(db, caller, orgId);
    return true;
  } catch (err) {
    if (err instanceof DomainError) return false;
    throw err;
  }
}

const SYSTEM = systemContext().caller;

/** The live organization whatever the caller (names and partners for events and audit entries). */
export function orgById(db: Db, orgId: string): Organization | undefined {
  try {
    return requireOrgRow(db, SYSTEM, orgId);
  } catch (err) {
    if (err instanceof DomainError) return undefined;
    throw err;
  }
}
