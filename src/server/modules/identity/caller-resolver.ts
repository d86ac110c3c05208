import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { inJson, preparedQueries } from '../../db/prepared.js';
import { organizationUsers, organizations, partnerUsers, partners, roles, users } from '../../db/schema/index.js';
import type { Caller } from '../../context.js';

/** How many roles an inheritance chain may hold (the role and its ancestors); longer chains are refused. */
export const MAX_INHERITANCE_DEPTH = 16;

/** The queries of every session request, prepared once per database (db/prepared.ts). */
const queriesOf = preparedQueries((db) => {
  const byUser = eq(users.id, sql.placeholder('userId'));
  return {
    user: db.select().from(users).where(byUser).prepare(),
    partnerLink: db
      .select({ link: partnerUsers, partner: partners })
      .from(partnerUsers)
      .innerJoin(partners, eq(partners.id, partnerUsers.partnerId))
      .where(eq(partnerUsers.userId, sql.placeholder('userId')))
      .prepare(),
    orgLink: db
      .select({ link: organizationUsers, org: organizations, partner: partners })
      .from(organizationUsers)
      .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
      .innerJoin(partners, eq(partners.id, organizations.partnerId))
      .where(eq(organizationUsers.userId, sql.placeholder('userId')))
      .prepare(),
    // The role and its ancestors, at most MAX_INHERITANCE_DEPTH of them (a cycle ends there too), in one
    // statement rather than two queries per role of the chain.
    permissions: db.$client.prepare<[string, number], { grant: string }>(
      `WITH RECURSIVE chain(id, depth) AS (
         SELECT ?, 1
         UNION
         SELECT r.parent_role_id, c.depth + 1 FROM roles r JOIN chain c ON r.id = c.id
          WHERE r.parent_role_id IS NOT NULL AND c.depth < ?
       )
       SELECT DISTINCT p.resource || ':' || p.action AS "grant"
         FROM role_permissions p JOIN chain c ON p.role_id = c.id`,
    ),
  };
});

/** A role's permissions with those it inherits through its parents (01 §2.8), as `resource:action`. */
export function effectivePermissions(db: Db, roleId: string): string[] {
  return queriesOf(db)
    .permissions.all(roleId, MAX_INHERITANCE_DEPTH)
    .map((r) => r.grant)
    .sort();
}

export type UserCallerResult =
  | { ok: true; caller: Caller }
  | { ok: false; reason: 'not_found' | 'disabled' };

/** Builds the caller of a signed-in user from the database on every request, so a disabled account, a
 * changed role or a revoked link takes effect at once. */
export function resolveUserCaller(db: Db, userId: string, session: { sessionId: string | null; mfa: boolean }): UserCallerResult {
  const queries = queriesOf(db);
  const user = queries.user.get({ userId });
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
    deviceId: null,
  };
  if (user.isSystemAdmin) {
    return {
      ok: true,
      caller: { ...base, scope: 'system', partnerId: null, orgId: null, orgAccess: null, orgIds: null, siteIds: null, deviceGroupIds: null, roleId: null, permissions: ['*:*'], partnerStatus: null },
    };
  }
  const partnerLink = queries.partnerLink.get({ userId });
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
  const orgLink = queries.orgLink.get({ userId });
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
  return new Map(roleNamesOf(db).byIds.all({ ids: JSON.stringify(ids) }).map((r) => [r.id, r.name]));
}

/** The names of roles by a JSON array of ids, prepared once (a user list asks on every request). */
const roleNamesOf = preparedQueries((db) => ({
  byIds: db.select({ id: roles.id, name: roles.name }).from(roles).where(inJson(roles.id, 'ids')).prepare(),
}));
