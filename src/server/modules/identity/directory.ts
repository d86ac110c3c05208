import { and, eq, isNull, notInArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { inJson, insertRow, preparedQueries, preparedShapes, rowQuery, shapeConditions, shapeOf } from '../../db/prepared.js';
import { organizationUsers, organizations, partnerUsers, users } from '../../db/schema/index.js';
import type { Caller } from '../../context.js';
import { namesById } from '../../lib/names.js';
import { accessibleOrgIds } from '../tenancy/access.js';

export type UserRow = typeof users.$inferSelect;

/** The one link that makes a user a member of a tenant (01 §2.6). This implementation keeps at most one
 * link per user (docs/api-notes.md). */
export type Membership =
  | {
      kind: 'partner';
      partnerId: string;
      roleId: string;
      orgAccess: 'all' | 'selected' | 'none';
      orgIds: string[];
    }
  | {
      kind: 'organization';
      partnerId: string;
      orgId: string;
      roleId: string;
      siteIds: string[] | null;
      deviceGroupIds: string[] | null;
    };

/** Names one link: a user's partner link or organization link. */
export type LinkRef = { kind: 'partner'; partnerId: string } | { kind: 'organization'; orgId: string };

export interface Member {
  user: UserRow;
  membership: Membership | null;
}

/** A subquery of the ids of users whose name contains the LIKE pattern PATTERN (case-insensitive, ASCII, `\\` the
 * escape), for other modules' statements that match actors by name (the audit log's `user` filter). */
export function userIdsNamedLike(pattern: SQL): SQL {
  return sql`(SELECT ${users.id} FROM ${users} WHERE lower(${users.name}) LIKE lower(${pattern}) ESCAPE '\\')`;
}

type PartnerLink = typeof partnerUsers.$inferSelect;
type OrgLink = typeof organizationUsers.$inferSelect;

function partnerMembership(link: PartnerLink): Membership {
  return { kind: 'partner', partnerId: link.partnerId, roleId: link.roleId, orgAccess: link.orgAccess, orgIds: link.orgIds ?? [] };
}

function orgMembership(link: OrgLink, partnerId: string): Membership {
  return {
    kind: 'organization',
    partnerId,
    orgId: link.orgId,
    roleId: link.roleId,
    siteIds: link.siteIds ?? null,
    deviceGroupIds: link.deviceGroupIds ?? null,
  };
}

/** Which links a query covers: partner links of some partners, organization links of some organizations. */
export interface LinkFilter {
  /** null: every partner; []: none. */
  partnerIds: string[] | null;
  /** null: every organization; []: none. */
  orgIds: readonly string[] | null;
}

/** The members queries, one statement per shape (db/prepared.ts): a shape says which of the partner ids
 * (`p`), organization ids (`o`) and role ids (`r`) filter it; the ids go in as JSON arrays. */
const partnerMembers = preparedShapes((db, shape) =>
  db
    .select({ user: users, link: partnerUsers })
    .from(partnerUsers)
    .innerJoin(users, eq(users.id, partnerUsers.userId))
    .where(
      and(
        ...shapeConditions(shape, {
          p: () => inJson(partnerUsers.partnerId, 'partnerIds'),
          r: () => inJson(partnerUsers.roleId, 'roleIds'),
        }),
      ),
    )
    .prepare(),
);
const orgMembers = preparedShapes((db, shape) =>
  db
    .select({ user: users, link: organizationUsers, partnerId: organizations.partnerId })
    .from(organizationUsers)
    .innerJoin(users, eq(users.id, organizationUsers.userId))
    .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
    .where(
      and(
        isNull(organizations.deletedAt),
        ...shapeConditions(shape, {
          o: () => inJson(organizationUsers.orgId, 'orgIds'),
          r: () => inJson(organizationUsers.roleId, 'roleIds'),
        }),
      ),
    )
    .prepare(),
);
const linksOf = preparedQueries((db) => ({
  partnerLink: db
    .select()
    .from(partnerUsers)
    .where(eq(partnerUsers.userId, sql.placeholder('userId')))
    .prepare(),
  orgLink: db
    .select({ link: organizationUsers, partnerId: organizations.partnerId })
    .from(organizationUsers)
    .innerJoin(organizations, eq(organizations.id, organizationUsers.orgId))
    .where(eq(organizationUsers.userId, sql.placeholder('userId')))
    .prepare(),
}));

/** The statements of the directory's other reads and of its writes, prepared once per database (db/prepared.ts).
 * A link is named by its tenant and its user (the table's key). */
const directoryQueries = preparedQueries((db) => ({
  userByEmail: rowQuery(db, users, eq(users.email, sql.placeholder('email'))),
  unlinkedUsers: rowQuery(
    db,
    users,
    and(
      notInArray(users.id, db.select({ id: partnerUsers.userId }).from(partnerUsers)),
      notInArray(users.id, db.select({ id: organizationUsers.userId }).from(organizationUsers)),
    ),
  ),
  partnerLinkOfRole: db
    .select({ id: partnerUsers.userId })
    .from(partnerUsers)
    .where(eq(partnerUsers.roleId, sql.placeholder('roleId')))
    .prepare(),
  orgLinkOfRole: db
    .select({ id: organizationUsers.userId })
    .from(organizationUsers)
    .where(eq(organizationUsers.roleId, sql.placeholder('roleId')))
    .prepare(),
  deletePartnerLink: db
    .delete(partnerUsers)
    .where(and(eq(partnerUsers.partnerId, sql.placeholder('partnerId')), eq(partnerUsers.userId, sql.placeholder('userId'))))
    .prepare(),
  deleteOrgLink: db
    .delete(organizationUsers)
    .where(and(eq(organizationUsers.orgId, sql.placeholder('orgId')), eq(organizationUsers.userId, sql.placeholder('userId'))))
    .prepare(),
  // The role goes in as a bare placeholder (db/prepared.ts driverValue): a plain text value, bound as given.
  setPartnerRole: db
    .update(partnerUsers)
    .set({ roleId: sql`${sql.placeholder('roleId')}` })
    .where(and(eq(partnerUsers.partnerId, sql.placeholder('partnerId')), eq(partnerUsers.userId, sql.placeholder('userId'))))
    .prepare(),
  setOrgRole: db
    .update(organizationUsers)
    .set({ roleId: sql`${sql.placeholder('roleId')}` })
    .where(and(eq(organizationUsers.orgId, sql.placeholder('orgId')), eq(organizationUsers.userId, sql.placeholder('userId'))))
    .prepare(),
}));

/** The user with this e-mail address, as given (the column is stored lower-cased: callers normalize first). */
export function userByEmail(db: Db, email: string): UserRow | undefined {
  return directoryQueries(db).userByEmail.get({ email });
}

/**
 * Who is a member of what: the partner-user and organization-user links (01 §2.6), read for the users,
 * roles and access-review modules. Every query is bounded by a LinkFilter derived from the caller.
 */
export class Directory {
  constructor(private readonly db: Db) {}

  /** The links a caller can manage: system all; partner its partner's links and the organization links of
   * the organizations it reaches; organization its organization's links. */
  reach(caller: Caller): LinkFilter {
    if (caller.scope === 'system') return { partnerIds: null, orgIds: null };
    if (caller.scope === 'partner') {
      return { partnerIds: caller.partnerId ? [caller.partnerId] : [], orgIds: accessibleOrgIds(this.db, caller) ?? [] };
    }
    return { partnerIds: [], orgIds: caller.orgId ? [caller.orgId] : [] };
  }

  /** User id → name (other modules show who decided without reading the users table). */
  namesOf(ids: Iterable<string | null>): Map<string, string> {
    return namesById(this.db, users, { id: users.id, name: users.name }, ids);
  }

  membershipOf(userId: string): Membership | null {
    const links = linksOf(this.db);
    const partnerLink = links.partnerLink.get({ userId });
    if (partnerLink) return partnerMembership(partnerLink);
    const orgLink = links.orgLink.get({ userId });
    return orgLink ? orgMembership(orgLink.link, orgLink.partnerId) : null;
  }

  /** Every member under the filter, each with their link; optionally only holders of some roles. */
  members(filter: LinkFilter, options: { roleIds?: string[] } = {}): Member[] {
    const out: Member[] = [];
    const roleIds = options.roleIds ? JSON.stringify(options.roleIds) : undefined;
    if (filter.partnerIds === null || filter.partnerIds.length > 0) {
      const shape = shapeOf({ p: filter.partnerIds !== null, r: roleIds !== undefined });
      const rows = partnerMembers(this.db, shape).all({ partnerIds: JSON.stringify(filter.partnerIds), roleIds });
      for (const row of rows) out.push({ user: row.user, membership: partnerMembership(row.link) });
    }
    if (filter.orgIds === null || filter.orgIds.length > 0) {
      const shape = shapeOf({ o: filter.orgIds !== null, r: roleIds !== undefined });
      const rows = orgMembers(this.db, shape).all({ orgIds: JSON.stringify(filter.orgIds), roleIds });
      for (const row of rows) out.push({ user: row.user, membership: orgMembership(row.link, row.partnerId) });
    }
    return out;
  }

  /** Users with no link at all (the system administrator, standalone users): only system callers see them. */
  unlinkedUsers(): UserRow[] {
    return directoryQueries(this.db).unlinkedUsers.all({});
  }

  /** Whether a link is inside the filter. */
  covers(filter: LinkFilter, membership: Membership): boolean {
    if (membership.kind === 'partner') return filter.partnerIds === null || filter.partnerIds.includes(membership.partnerId);
    return filter.orgIds === null || filter.orgIds.includes(membership.orgId);
  }

  /** Whether any link (in any tenant) names the role. */
  roleInUse(roleId: string): boolean {
    const queries = directoryQueries(this.db);
    return queries.partnerLinkOfRole.get({ roleId }) !== undefined || queries.orgLinkOfRole.get({ roleId }) !== undefined;
  }

  /** Removes a user's link (the account stays). Returns whether there was one. */
  removeLink(tx: Db, userId: string, membership: LinkRef): boolean {
    const queries = directoryQueries(tx);
    const removed =
      membership.kind === 'partner'
        ? queries.deletePartnerLink.run({ partnerId: membership.partnerId, userId })
        : queries.deleteOrgLink.run({ orgId: membership.orgId, userId });
    return removed.changes > 0;
  }

  /** A passwordless, active user linked to one organization with a role (01 §5.10 SSO auto-provisioning). */
  provisionOrganizationUser(tx: Db, values: { email: string; name: string; orgId: string; roleId: string }): UserRow {
    const user = insertRow(tx, users, { email: values.email.trim().toLowerCase(), name: values.name, status: 'active' });
    insertRow(tx, organizationUsers, { orgId: values.orgId, userId: user.id, roleId: values.roleId });
    return user;
  }

  setRole(tx: Db, userId: string, membership: LinkRef, roleId: string): void {
    const queries = directoryQueries(tx);
    if (membership.kind === 'partner') queries.setPartnerRole.run({ roleId, partnerId: membership.partnerId, userId });
    else queries.setOrgRole.run({ roleId, orgId: membership.orgId, userId });
  }
}
