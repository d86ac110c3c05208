import type { Db } from '../../db/connection.js';
import { systemContext, type Caller } from '../../context.js';
import { DomainError } from '../../errors.js';
import { requireOrg, requireOrgRow, type Organization } from '../tenancy/access.js';

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
