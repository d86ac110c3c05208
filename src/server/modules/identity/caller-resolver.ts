import { eq, inArray } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { organizationUsers, organizations, partnerUsers, partners, rolePermissions, roles, users } from '../../db/schema/index.js';
import type { Caller } from '../../context.js';

/** How many roles an inheritance chain may hold (the role and its ancestors); longer chains are refused. */
export const MAX_INHERITANCE_DEPTH = 16;

/** A role's permissions with those it inherits through its parents (01 §2.8), as `resource:action`. */
export function effectivePermissions(db: Db, roleId: string): string[] {
  const seen = new Set<string>();
  const granted = new Set<string>();
  let current: string | null = roleId;
  for (let depth = 0; current && !seen.has(current) && depth < MAX_INHERITANCE_DEPTH; depth++) {
    seen.add(current);
    for (const p of db.select().from(rolePermissions).where(eq(rolePermissions.roleId, current)).all()) {
      granted.add(`${p.resource}:${p.action}`);
    }
    const role: { parentRoleId: string | null } | undefined = db
      .select({ parentRoleId: roles.parentRoleId })
      .from(roles)
      .where(eq(roles.id, current))
      .get();
    current = role?.parentRoleId ?? null;
  }
  return [...granted].sort();
}

export type UserCallerResult =
  | { ok: true; caller: Caller }
  | { ok: false; reason: 'not_found' | 'disabled' };

/** Builds the caller of a signed-in user from the database on every request, so a disabled account, a
 * changed role or a revoked link takes effect at once. */
export function resolveUserCaller(db: Db, userId: string, session: { sessionId: string | null; mfa: boolean }): UserCallerResult {
  const user = db.select().from(users).where(eq(users.id, userId)).get();
  if (!user) return { ok: false, reason: 'not_found' };
  if (user.status !== 'active') return { ok: false, reason: 'disabled' };
  const base = {
    kind: 'user' as const,
    userId: user.id,
    email: user.email,
    name: user.name,
    mfa: session.mfa,
    sessionId: session.sessionId,
    apiKeyId: null,
    agentId: null,
  };
  if (user.isSystemAdmin) {
    return {
      ok: true,
      caller: { ...base, scope: 'system', partnerId: null, orgId: null, orgAccess: null, orgIds: null, siteIds: null, deviceGroupIds: null, roleId: null, permissions: ['*:*'], partnerStatus: null },
    };
  }
  const partnerLink = db
    .select({ link: partnerUsers, partner: partners })
    .from(partnerUsers)
    .innerJoin(partners, eq(partners.id, partnerUsers.partnerId))
    .where(eq(partnerUsers.userId, userId))
    .get();
  if (partnerLink) {
    const { link, partner } = partnerLink;
    return {
      ok: true,
      caller: {
        ...base,
        scope: 'partner',
        partnerId: partner.id,
        orgId: null,
        orgAccess: link.orgAccess,
        orgIds: link.orgIds ?? [],
        siteIds: null,
        deviceGroupIds: null,
        roleId: link.roleId,
        permissions: effectivePermissions(db, link.roleId),
        partnerStatus: partner.deletedAt ? 'deleted' : partner.status,
      },
    };
  }
  const orgLink = db
    .select({ link: organizationUsers, org: organizations, partner: partners })
    .from(organizationUsers)
    .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
    .innerJoin(partners, eq(partners.id, organizations.partnerId))
    .where(eq(organizationUsers.userId, userId))
    .get();
  if (orgLink) {
    const { link, org, partner } = orgLink;
    return {
      ok: true,
      caller: {
        ...base,
        scope: 'organization',
        partnerId: partner.id,
        orgId: org.id,
        orgAccess: null,
        orgIds: null,
        siteIds: link.siteIds ?? null,
        deviceGroupIds: link.deviceGroupIds ?? null,
        roleId: link.roleId,
        permissions: effectivePermissions(db, link.roleId),
        partnerStatus: partner.deletedAt || org.deletedAt ? 'deleted' : partner.status,
      },
    };
  }
  // A standalone user (01 §4.6 /auth/register) belongs to no tenant yet: it reaches only its own account.
  return {
    ok: true,
    caller: { ...base, scope: 'organization', partnerId: null, orgId: null, orgAccess: null, orgIds: null, siteIds: null, deviceGroupIds: null, roleId: null, permissions: [], partnerStatus: null },
  };
}

export function roleNames(db: Db, ids: string[]): Map<string, string> {
  if (ids.length === 0) return new Map();
  return new Map(db.select({ id: roles.id, name: roles.name }).from(roles).where(inArray(roles.id, ids)).all().map((r) => [r.id, r.name]));
}
