import { eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { preparedQueries } from '../../db/prepared.js';
import type { WatchedTable } from '../../db/write-counter.js';
import { organizationUsers, organizations, partnerUsers, partners, users } from '../../db/schema/index.js';
import type { Caller } from '../../context.js';

/** How many roles an inheritance chain may hold (the role and its ancestors); longer chains are refused. */
export const MAX_INHERITANCE_DEPTH = 16;

/** The writes that can change a caller resolveUserCaller makes, with the session it is resolved for (db/write-counter.ts):
 * the columns read below, and the session's own. A kept caller (identity/auth-service.ts) survives every other write. */
export const CALLER_WRITES: readonly WatchedTable[] = [
  { table: 'sessions', columns: ['id', 'user_id', 'revoked_at', 'expires_at'] },
  { table: 'users', columns: ['id', 'email', 'name', 'status', 'is_system_admin'] },
  { table: 'partner_users' },
  { table: 'organization_users' },
  { table: 'partners', columns: ['id', 'status', 'deleted_at'] },
  { table: 'organizations', columns: ['id', 'partner_id', 'deleted_at'] },
  { table: 'roles', columns: ['id', 'parent_role_id'] },
  { table: 'role_permissions' },
];

/** The queries of every session request, prepared once per database (db/prepared.ts). Each reads only the columns
 * a caller is made of: the user row's other columns and the tenant rows' (settings and SSO configuration, parsed
 * as JSON on every read) are no part of it. */
const queriesOf = preparedQueries((db) => {
  const byUser = eq(users.id, sql.placeholder('userId'));
  return {
    user: db
      .select({ id: users.id, email: users.email, name: users.name, status: users.status, isSystemAdmin: users.isSystemAdmin })
      .from(users)
      .where(byUser)
      .prepare(),
    partnerLink: db
      .select({
        roleId: partnerUsers.roleId,
        orgAccess: partnerUsers.orgAccess,
        orgIds: partnerUsers.orgIds,
        partnerId: partners.id,
        partnerStatus: partners.status,
        partnerDeletedAt: partners.deletedAt,
      })
      .from(partnerUsers)
      .innerJoin(partners, eq(partners.id, partnerUsers.partnerId))
      .where(eq(partnerUsers.userId, sql.placeholder('userId')))
      .prepare(),
    orgLink: db
      .select({
        roleId: organizationUsers.roleId,
        siteIds: organizationUsers.siteIds,
        deviceGroupIds: organizationUsers.deviceGroupIds,
        orgId: organizations.id,
        orgDeletedAt: organizations.deletedAt,
        partnerId: partners.id,
        partnerStatus: partners.status,
        partnerDeletedAt: partners.deletedAt,
      })
      .from(organizationUsers)
      .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
      .innerJoin(partners, eq(partners.id, organizations.partnerId))
      .where(eq(organizationUsers.userId, sql.placeholder('userId')))
      .prepare(),
    // The role and its ancestors, at most MAX_INHERITANCE_DEPTH of them (a cycle ends there too), in one
    // statement rather than two queries per role of the chain. UNION ALL: each step adds at most one row (a role
    // has one parent) one deeper than the last, so no row repeats and UNION would only pay for a table to check.
    permissions: db.$client.prepare<[string, number], string>(
      `WITH RECURSIVE chain(id, depth) AS (
         SELECT ?, 1
         UNION ALL
         SELECT r.parent_role_id, c.depth + 1 FROM roles r JOIN chain c ON r.id = c.id
          WHERE r.parent_role_id IS NOT NULL AND c.depth < ?
       )
       SELECT DISTINCT p.resource || ':' || p.action AS "grant"
         FROM role_permissions p JOIN chain c ON p.role_id = c.id`,
    ),
  };
});

/** A role's permissions with those it inherits through its parents (01 §2.8), as `resource:action`, sorted. Read
 * plucked (one string per row, no row object to make and map); the statement is shared by its SQL text on the
 * connection (db/connection.ts), so the mode is set at each use. */
export function effectivePermissions(db: Db, roleId: string): string[] {
  return queriesOf(db).permissions.pluck(true).all(roleId, MAX_INHERITANCE_DEPTH).sort();
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
    const link = partnerLink;
    return {
      ok: true,
      caller: {
        ...base,
        scope: 'partner',
        partnerId: link.partnerId,
        orgId: null,
        orgAccess: link.orgAccess,
        orgIds: link.orgIds ?? [],
        siteIds: null,
        deviceGroupIds: null,
        roleId: link.roleId,
        permissions: effectivePermissions(db, link.roleId),
        partnerStatus: link.partnerDeletedAt ? 'deleted' : link.partnerStatus,
      },
    };
  }
  const orgLink = queries.orgLink.get({ userId });
  if (orgLink) {
    const link = orgLink;
    return {
      ok: true,
      caller: {
        ...base,
        scope: 'organization',
        partnerId: link.partnerId,
        orgId: link.orgId,
        orgAccess: null,
        orgIds: null,
        siteIds: link.siteIds ?? null,
        deviceGroupIds: link.deviceGroupIds ?? null,
        roleId: link.roleId,
        permissions: effectivePermissions(db, link.roleId),
        partnerStatus: link.partnerDeletedAt || link.orgDeletedAt ? 'deleted' : link.partnerStatus,
      },
    };
  }
  // A standalone user (01 §4.6 /auth/register) belongs to no tenant yet: it reaches only its own account.
  return {
    ok: true,
    caller: { ...base, scope: 'organization', partnerId: null, orgId: null, orgAccess: null, orgIds: null, siteIds: null, deviceGroupIds: null, roleId: null, permissions: [], partnerStatus: null },
  };
}

/** Role id → name of the roles among IDS that exist. One id (a user's view, /auth/me) is looked up by its key
 * alone; several go in as one JSON array. */
export function roleNames(db: Db, ids: string[]): Map<string, string> {
  const [first] = ids;
  if (first === undefined) return new Map<string, string>();
  const queries = roleNamesOf(db);
  if (ids.length === 1) {
    const name = queries.nameOf.pluck(true).get(first);
    return new Map<string, string>(name === undefined ? [] : [[first, name]]);
  }
  return new Map<string, string>(queries.byIds.raw(true).all(JSON.stringify(ids)));
}

/** The names of roles, prepared once (a user list and every user's view ask on each request). Read plucked or as
 * arrays, the mode set at each use (the statements are shared by SQL text, db/connection.ts). */
const roleNamesOf = preparedQueries((db) => ({
  nameOf: db.$client.prepare<[string], string>('SELECT name FROM roles WHERE id = ?'),
  byIds: db.$client.prepare<[string], [string, string]>('SELECT id, name FROM roles WHERE id IN (SELECT value FROM json_each(?))'),
}));
