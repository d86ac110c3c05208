import { and, asc, desc, eq, isNull, ne, or, sql, type SQL } from 'drizzle-orm';
import type { z } from 'zod';
import {
  MATRIX_ACTIONS,
  MATRIX_RESOURCES,
  NAMED_PERMISSIONS,
  type Permission,
  type RoleCloneSchema,
  type RoleCreateSchema,
  type RoleUpdateSchema,
} from '../../../contract/roles.js';
import type { Db } from '../../db/connection.js';
import { inJson, insertRow, preparedQueries, preparedShapes, rowById, shapeConditions, shapeOf, updateRow } from '../../db/prepared.js';
import { rolePermissions, roles } from '../../db/schema/index.js';
import type { Caller, RequestContext } from '../../context.js';
import { badRequest, conflict, forbidden, notFound, orgAccessDenied } from '../../errors.js';
import { recordAudit } from '../audit/recorder.js';
import { deleteAudited } from '../shared/audited.js';
import { MAX_INHERITANCE_DEPTH, effectivePermissions } from '../identity/caller-resolver.js';
import type { Directory } from '../identity/directory.js';
import { isSsoDefaultRole } from '../sso/service.js';
import { accessibleOrgIds, canAccessOrg } from '../tenancy/access.js';
import type { TenancyService } from '../tenancy/service.js';
import { uncovered } from './permissions.js';

export type RoleRow = typeof roles.$inferSelect;
type RoleScope = RoleRow['scope'];

/** Who owns a custom role: a partner (partner-owned roles may have either scope) or an organization. */
interface RoleOwner {
  partnerId: string | null;
  orgId: string | null;
}

/** The membership a role is being given for: the role must fit it (01 §4.4 invite, role assignment). */
export interface RoleTarget {
  kind: RoleScope;
  partnerId: string;
  orgId: string | null;
}

const CYCLE = 'Cannot set parent role: would create circular inheritance';

function formatPermission(p: Permission): string {
  return `${p.resource}:${p.action}`;
}

function isBuiltin(role: RoleRow): boolean {
  return role.partnerId === null && role.orgId === null;
}

function uniquePermissions(list: readonly Permission[]): Permission[] {
  const seen = new Map<string, Permission>();
  for (const p of list) seen.set(formatPermission(p), { resource: p.resource, action: p.action });
  return [...seen.values()];
}

/** A caller's visibility() as a shape (db/prepared.ts) and the values of its placeholders. Letters: `a` all
 * (system); the built-in roles and, for partner callers, `P` the partner's own and `R` those of the
 * organizations it reaches; for organization callers `O` the organization's own and `Q` its partner's
 * organization-scope roles. */
function visibilityShape(db: Db, caller: Caller): { shape: string; values: Record<string, unknown> } {
  if (caller.scope === 'system') return { shape: 'a', values: {} };
  if (caller.scope === 'partner') {
    const orgIds = accessibleOrgIds(db, caller) ?? [];
    return {
      shape: shapeOf({ P: caller.partnerId, R: orgIds.length > 0 }),
      values: { partnerId: caller.partnerId, orgIds: JSON.stringify(orgIds) },
    };
  }
  return { shape: shapeOf({ O: caller.orgId, Q: caller.partnerId }), values: { orgId: caller.orgId, partnerId: caller.partnerId } };
}

function visibleIn(shape: string): SQL | undefined {
  if (shape === 'a') return undefined;
  return or(
    and(isNull(roles.partnerId), isNull(roles.orgId)),
    ...shapeConditions(shape, {
      P: () => eq(roles.partnerId, sql.placeholder('partnerId')),
      R: () => inJson(roles.orgId, 'orgIds'),
      O: () => eq(roles.orgId, sql.placeholder('orgId')),
      Q: () => and(eq(roles.partnerId, sql.placeholder('partnerId')), eq(roles.scope, 'organization')),
    }),
  );
}

const visibleRolesOf = preparedShapes((db, shape) => ({
  all: db
    .select()
    .from(roles)
    .where(visibleIn(shape))
    .orderBy(desc(roles.isSystem), asc(roles.scope), asc(roles.name), asc(roles.id))
    .prepare(),
  byId: db
    .select()
    .from(roles)
    .where(and(eq(roles.id, sql.placeholder('id')), visibleIn(shape)))
    .prepare(),
}));
const permissionsOfRole = preparedQueries((db) =>
  db
    .select({ resource: rolePermissions.resource, action: rolePermissions.action })
    .from(rolePermissions)
    .where(eq(rolePermissions.roleId, sql.placeholder('roleId')))
    .orderBy(asc(rolePermissions.resource), asc(rolePermissions.action))
    .prepare(),
);

/** The statements of the inheritance checks and of the writes, prepared once per database (db/prepared.ts). */
const roleQueries = preparedQueries((db) => ({
  parentOf: db
    .select({ parentRoleId: roles.parentRoleId })
    .from(roles)
    .where(eq(roles.id, sql.placeholder('id')))
    .prepare(),
  /** The roles whose parent is one of a JSON array of ids. */
  childrenOf: db.select({ id: roles.id }).from(roles).where(inJson(roles.parentRoleId, 'parentIds')).prepare(),
  anyChildOf: db
    .select({ id: roles.id })
    .from(roles)
    .where(eq(roles.parentRoleId, sql.placeholder('parentId')))
    .prepare(),
  deletePermissions: db
    .delete(rolePermissions)
    .where(eq(rolePermissions.roleId, sql.placeholder('roleId')))
    .prepare(),
}));

/** A custom role of the owner with this name, but the one being renamed: per shape (db/prepared.ts), `p` an owning
 * partner (`partnerId`; else none), `o` an owning organization (`orgId`; else none), `x` a role left out (`exceptId`). */
const namedRoleOf = preparedShapes((db, shape) =>
  db
    .select({ id: roles.id })
    .from(roles)
    .where(
      and(
        shape.includes('p') ? eq(roles.partnerId, sql.placeholder('partnerId')) : isNull(roles.partnerId),
        shape.includes('o') ? eq(roles.orgId, sql.placeholder('orgId')) : isNull(roles.orgId),
        eq(roles.name, sql.placeholder('name')),
        ...shapeConditions(shape, { x: () => ne(roles.id, sql.placeholder('exceptId')) }),
      ),
    )
    .prepare(),
);

/**
 * Roles and permissions (01 §2.8, §4.4): the built-in system roles, immutable, and the custom roles of
 * partners and organizations with single-parent inheritance. A caller never hands out more than it holds:
 * a custom role cannot carry `*:*`, and neither its own nor its inherited permissions may exceed the
 * caller's (docs/api-notes.md).
 */
export class RolesService {
  constructor(
    private readonly db: Db,
    private readonly directory: Directory,
    private readonly tenancy: TenancyService,
  ) {}

  // ---- visibility and ownership ----

  /** The roles a caller can see: system callers all; others the built-in roles and their tenant's own, and
   * organization callers the organization roles their partner made for its organizations (visible and
   * assignable there). Prepared per shape of the caller (visibilityShape). */
  findVisible(caller: Caller, id: string): RoleRow | undefined {
    const { shape, values } = visibilityShape(this.db, caller);
    return visibleRolesOf(this.db, shape).byId.get({ ...values, id });
  }

  private requireVisible(caller: Caller, id: string): RoleRow {
    const role = this.findVisible(caller, id);
    if (!role) throw notFound('Role not found');
    return role;
  }

  /** System roles are immutable (403); a custom role is changed only by its owner's users. */
  private requireWritable(caller: Caller, id: string, verb: 'modify' | 'delete'): RoleRow {
    const role = this.requireVisible(caller, id);
    if (role.isSystem) throw forbidden(verb === 'delete' ? 'Cannot delete system roles' : 'Cannot modify system roles', 'SYSTEM_ROLE');
    if (!this.owns(caller, role)) throw forbidden("Only users of the role's owner can change it", 'ROLE_NOT_OWNED');
    return role;
  }

  private owns(caller: Caller, role: RoleRow): boolean {
    if (caller.scope === 'system') return true;
    if (caller.scope === 'partner') {
      if (role.partnerId !== null) return role.partnerId === caller.partnerId;
      return role.orgId !== null && canAccessOrg(this.db, caller, role.orgId);
    }
    return role.orgId !== null && role.orgId === caller.orgId;
  }

  /** The owner of a new custom role: the caller's partner or organization; system callers name one. */
  private ownerFor(ctx: RequestContext, body: { partnerId?: string | undefined; orgId?: string | undefined }): RoleOwner {
    const { caller } = ctx;
    if (caller.scope === 'system') {
      if ((body.partnerId === undefined) === (body.orgId === undefined)) {
        throw badRequest('System callers name the owner of a custom role: partnerId or orgId', 'OWNER_REQUIRED');
      }
      if (body.partnerId !== undefined) return { partnerId: this.tenancy.getPartner(body.partnerId).id, orgId: null };
      return { partnerId: null, orgId: this.tenancy.requireOrg(ctx, body.orgId ?? '').id };
    }
    if (caller.scope === 'partner') {
      if (body.partnerId !== undefined && body.partnerId !== caller.partnerId) {
        throw forbidden('partnerId must be your own partner', 'PARTNER_MISMATCH');
      }
      if (body.orgId !== undefined) return { partnerId: null, orgId: this.tenancy.requireOrg(ctx, body.orgId).id };
      if (!caller.partnerId) throw forbidden('Custom roles belong to a partner or an organization', 'NO_TENANT');
      return { partnerId: caller.partnerId, orgId: null };
    }
    if (body.partnerId !== undefined) throw forbidden('partnerId is only for partner and system callers', 'PARTNER_MISMATCH');
    if (body.orgId !== undefined && body.orgId !== caller.orgId) throw orgAccessDenied();
    if (!caller.orgId) throw forbidden('Custom roles belong to a partner or an organization', 'NO_TENANT');
    return { partnerId: null, orgId: caller.orgId };
  }

  private scopeFor(owner: RoleOwner, requested: RoleScope | undefined): RoleScope {
    if (owner.orgId !== null) {
      if (requested === 'partner') throw badRequest('A role owned by an organization must have organization scope', 'ROLE_SCOPE_INVALID');
      return 'organization';
    }
    return requested ?? 'partner';
  }

  // ---- rules ----

  /** No `*:*` (400), and nothing the caller does not hold, directly or through the parent (403). */
  private checkGrants(caller: Caller, direct: readonly Permission[], parentId: string | null): void {
    if (direct.some((p) => p.resource === '*' && p.action === '*')) {
      throw badRequest('Custom roles cannot be granted *:*', 'WILDCARD_NOT_ALLOWED');
    }
    const missing = uncovered(caller.permissions, [
      ...direct.map(formatPermission),
      ...(parentId ? effectivePermissions(this.db, parentId) : []),
    ]);
    if (missing.length > 0) {
      throw forbidden(`Cannot grant permissions you do not hold: ${missing.join(', ')}`, 'PERMISSION_NOT_HELD', { missing });
    }
  }

  private parentOf(id: string): string | null {
    return roleQueries(this.db).parentOf.get({ id })?.parentRoleId ?? null;
  }

  /** Whether making `parentId` the parent of `roleId` closes a loop, at any depth. */
  private wouldCycle(roleId: string, parentId: string): boolean {
    const seen = new Set<string>();
    for (let current: string | null = parentId; current !== null && !seen.has(current); current = this.parentOf(current)) {
      if (current === roleId) return true;
      seen.add(current);
    }
    return false;
  }

  /** Roles in the chain from `id` upwards, itself included. */
  private chainLength(id: string): number {
    const seen = new Set<string>();
    for (let current: string | null = id; current !== null && !seen.has(current); current = this.parentOf(current)) seen.add(current);
    return seen.size;
  }

  /** Generations of roles below `id` (0 when nothing inherits from it). */
  private descendantDepth(id: string): number {
    let frontier = [id];
    let depth = 0;
    while (frontier.length > 0 && depth <= MAX_INHERITANCE_DEPTH) {
      frontier = roleQueries(this.db)
        .childrenOf.all({ parentIds: JSON.stringify(frontier) })
        .map((r) => r.id);
      if (frontier.length > 0) depth++;
    }
    return depth;
  }

  private checkParent(caller: Caller, parentId: string, scope: RoleScope, roleId: string | null): void {
    if (roleId !== null && (parentId === roleId || this.wouldCycle(roleId, parentId))) throw badRequest(CYCLE, 'CIRCULAR_INHERITANCE');
    const parent = this.findVisible(caller, parentId);
    if (!parent) throw badRequest('Parent role not found', 'PARENT_ROLE_NOT_FOUND');
    if (parent.scope !== scope) throw badRequest('Parent role must have the same scope', 'PARENT_SCOPE_MISMATCH');
    const depth = this.chainLength(parentId) + 1 + (roleId ? this.descendantDepth(roleId) : 0);
    if (depth > MAX_INHERITANCE_DEPTH) {
      throw badRequest(`Inheritance chains hold at most ${MAX_INHERITANCE_DEPTH} roles`, 'INHERITANCE_TOO_DEEP');
    }
  }

  private assertNameFree(owner: RoleOwner, name: string, exceptId?: string): void {
    const shape = shapeOf({ p: owner.partnerId !== null, o: owner.orgId !== null, x: exceptId });
    if (namedRoleOf(this.db, shape).get({ partnerId: owner.partnerId, orgId: owner.orgId, name, exceptId })) {
      throw conflict('A role with this name already exists', 'ROLE_NAME_TAKEN');
    }
  }

  // ---- reads ----

  private permissionsOf(roleId: string): Permission[] {
    return permissionsOfRole(this.db).all({ roleId });
  }

  /** How many users in the caller's reach hold each role. */
  private userCounts(caller: Caller, roleIds?: string[]): Map<string, number> {
    const counts = new Map<string, number>();
    for (const member of this.directory.members(this.directory.reach(caller), roleIds ? { roleIds } : {})) {
      const roleId = member.membership?.roleId;
      if (roleId) counts.set(roleId, (counts.get(roleId) ?? 0) + 1);
    }
    return counts;
  }

  private summary(role: RoleRow, userCount: number) {
    return {
      id: role.id,
      name: role.name,
      description: role.description,
      scope: role.scope,
      isSystem: role.isSystem,
      parentRoleId: role.parentRoleId,
      userCount,
    };
  }

  private detail(caller: Caller, role: RoleRow) {
    return {
      ...this.summary(role, this.userCounts(caller, [role.id]).get(role.id) ?? 0),
      partnerId: role.partnerId,
      orgId: role.orgId,
      permissions: this.permissionsOf(role.id),
      createdAt: role.createdAt,
      updatedAt: role.updatedAt,
    };
  }

  visibleRoles(caller: Caller): RoleRow[] {
    const { shape, values } = visibilityShape(this.db, caller);
    return visibleRolesOf(this.db, shape).all.all(values);
  }

  list(ctx: RequestContext) {
    const counts = this.userCounts(ctx.caller);
    return { data: this.visibleRoles(ctx.caller).map((role) => this.summary(role, counts.get(role.id) ?? 0)) };
  }

  get(ctx: RequestContext, id: string) {
    return this.detail(ctx.caller, this.requireVisible(ctx.caller, id));
  }

  users(ctx: RequestContext, id: string) {
    const role = this.requireVisible(ctx.caller, id);
    const members = this.directory.members(this.directory.reach(ctx.caller), { roleIds: [role.id] });
    return {
      data: members
        .map(({ user, membership }) => ({
          id: user.id,
          email: user.email,
          name: user.name,
          status: user.status,
          lastLoginAt: user.lastLoginAt,
          partnerId: membership?.partnerId ?? null,
          orgId: membership?.kind === 'organization' ? membership.orgId : null,
        }))
        .sort((a, b) => a.email.localeCompare(b.email)),
    };
  }

  effectivePermissions(ctx: RequestContext, id: string) {
    const role = this.requireVisible(ctx.caller, id);
    const chain: RoleRow[] = [];
    const seen = new Set<string>();
    for (let current: RoleRow | undefined = role; current && !seen.has(current.id) && chain.length < MAX_INHERITANCE_DEPTH; ) {
      seen.add(current.id);
      chain.push(current);
      const parentId: string | null = current.parentRoleId;
      current = parentId ? rowById(this.db, roles, parentId) : undefined;
    }
    const permissions = new Map<string, { resource: string; action: string; inherited: boolean; sourceRoleId: string; sourceRoleName: string }>();
    chain.forEach((source, index) => {
      for (const p of this.permissionsOf(source.id)) {
        const key = formatPermission(p);
        if (!permissions.has(key)) {
          permissions.set(key, { ...p, inherited: index > 0, sourceRoleId: source.id, sourceRoleName: source.name });
        }
      }
    });
    return {
      roleId: role.id,
      roleName: role.name,
      inheritanceChain: chain.map((r) => ({ id: r.id, name: r.name })),
      permissions: [...permissions.values()].sort((a, b) => formatPermission(a).localeCompare(formatPermission(b))),
    };
  }

  availablePermissions() {
    return {
      resources: [...MATRIX_RESOURCES],
      actions: [...MATRIX_ACTIONS],
      matrix: MATRIX_RESOURCES.map((resource) => ({ resource, actions: [...MATRIX_ACTIONS] })),
      permissions: NAMED_PERMISSIONS.map((permission) => {
        const [resource = '', action = ''] = permission.split(':');
        return { resource, action, permission };
      }),
    };
  }

  // ---- writes ----

  private writePermissions(tx: Db, roleId: string, permissions: readonly Permission[]): void {
    roleQueries(tx).deletePermissions.run({ roleId });
    for (const p of permissions) insertRow(tx, rolePermissions, { roleId, resource: p.resource, action: p.action });
  }

  private insertRole(
    ctx: RequestContext,
    owner: RoleOwner,
    values: { name: string; description: string | null; scope: RoleScope; parentRoleId: string | null; permissions: Permission[] },
    audit: Record<string, unknown>,
  ) {
    return this.db.$client.transaction(() => {
      this.assertNameFree(owner, values.name);
      const role = insertRow(this.db, roles, {
        partnerId: owner.partnerId,
        orgId: owner.orgId,
        name: values.name,
        description: values.description,
        scope: values.scope,
        isSystem: false,
        parentRoleId: values.parentRoleId,
      });
      this.writePermissions(this.db, role.id, values.permissions);
      recordAudit(this.db, ctx, {
        action: 'role.create',
        resourceType: 'role',
        resourceId: role.id,
        resourceName: role.name,
        orgId: role.orgId,
        partnerId: role.partnerId ?? ctx.caller.partnerId,
        details: { scope: role.scope, parentRoleId: role.parentRoleId, permissions: values.permissions.map(formatPermission), ...audit },
      });
      return role;
    })();
  }

  create(ctx: RequestContext, body: z.infer<typeof RoleCreateSchema>) {
    const owner = this.ownerFor(ctx, body);
    const scope = this.scopeFor(owner, body.scope);
    const permissions = uniquePermissions(body.permissions ?? []);
    const parentRoleId = body.parentRoleId ?? null;
    if (parentRoleId) this.checkParent(ctx.caller, parentRoleId, scope, null);
    this.checkGrants(ctx.caller, permissions, parentRoleId);
    const role = this.insertRole(ctx, owner, { name: body.name, description: body.description ?? null, scope, parentRoleId, permissions }, {});
    return this.detail(ctx.caller, role);
  }

  update(ctx: RequestContext, id: string, body: z.infer<typeof RoleUpdateSchema>) {
    if (Object.values(body).every((v) => v === undefined)) throw badRequest('No updates provided', 'NO_UPDATES');
    const { caller } = ctx;
    const updated = this.db.$client.transaction(() => {
      const role = this.requireWritable(caller, id, 'modify');
      const parentRoleId = body.parentRoleId !== undefined ? body.parentRoleId : role.parentRoleId;
      if (body.parentRoleId) this.checkParent(caller, body.parentRoleId, role.scope, role.id);
      const permissions = body.permissions !== undefined ? uniquePermissions(body.permissions) : undefined;
      if (permissions !== undefined || body.parentRoleId !== undefined) {
        this.checkGrants(caller, permissions ?? this.permissionsOf(role.id), parentRoleId);
      }
      if (body.name !== undefined && body.name !== role.name) this.assertNameFree(role, body.name, role.id);
      const changes: Partial<typeof roles.$inferInsert> = { updatedAt: new Date().toISOString() };
      if (body.name !== undefined) changes.name = body.name;
      if (body.description !== undefined) changes.description = body.description;
      if (body.parentRoleId !== undefined) changes.parentRoleId = body.parentRoleId;
      const row = updateRow(this.db, roles, role, changes);
      // The row was read in this transaction (requireWritable): it is there.
      if (!row) throw notFound('Role not found');
      if (permissions !== undefined) this.writePermissions(this.db, id, permissions);
      recordAudit(this.db, ctx, {
        action: 'role.update',
        resourceType: 'role',
        resourceId: id,
        resourceName: row.name,
        orgId: row.orgId,
        partnerId: row.partnerId ?? caller.partnerId,
        details: {
          changes: Object.keys(body).filter((k) => body[k as keyof typeof body] !== undefined),
          ...(permissions !== undefined ? { permissions: permissions.map(formatPermission) } : {}),
          ...(body.parentRoleId !== undefined ? { parentRoleId: body.parentRoleId } : {}),
        },
      });
      return row;
    })();
    return this.detail(caller, updated);
  }

  delete(ctx: RequestContext, id: string): { success: true } {
    return this.db.$client.transaction(() => {
      const role = this.requireWritable(ctx.caller, id, 'delete');
      if (this.directory.roleInUse(role.id)) throw badRequest('Cannot delete role with assigned users', 'ROLE_IN_USE');
      if (roleQueries(this.db).anyChildOf.get({ parentId: role.id })) {
        throw badRequest('Cannot delete role with child roles', 'ROLE_HAS_CHILDREN');
      }
      // An SSO provider's default role stays while a provider names it (its row references the role).
      if (isSsoDefaultRole(this.db, role.id)) {
        throw conflict('Cannot delete role that is the default role of an SSO provider', 'ROLE_IN_USE_BY_SSO');
      }
      deleteAudited(this.db, ctx, roles, role, {
        action: 'role.delete',
        resourceType: 'role',
        partnerId: role.partnerId ?? ctx.caller.partnerId,
      });
      return { success: true as const };
    })();
  }

  clone(ctx: RequestContext, id: string, body: z.infer<typeof RoleCloneSchema>) {
    const source = this.requireVisible(ctx.caller, id);
    const owner = this.ownerFor(ctx, body);
    const scope = this.scopeFor(owner, source.scope);
    const permissions = this.permissionsOf(source.id);
    // The copy inherits from the same parent when the caller can see it.
    const parentRoleId = source.parentRoleId && this.findVisible(ctx.caller, source.parentRoleId) ? source.parentRoleId : null;
    this.checkGrants(ctx.caller, permissions, parentRoleId);
    const role = this.insertRole(
      ctx,
      owner,
      { name: body.name, description: `Cloned from ${source.name}`, scope, parentRoleId, permissions },
      { clonedFrom: source.id },
    );
    return this.detail(ctx.caller, role);
  }

  // ---- for the users module ----

  /**
   * The role a member of `target` may be given by the caller: visible (else 400), of the membership's scope
   * (400), usable in that tenant (400), and with no permission the caller lacks (403).
   */
  requireAssignable(caller: Caller, roleId: string, target: RoleTarget): RoleRow {
    const role = this.findVisible(caller, roleId);
    if (!role) throw badRequest('Role not found', 'ROLE_NOT_FOUND');
    if (role.scope !== target.kind) {
      throw badRequest(`Role scope does not match: ${target.kind} users need a role of ${target.kind} scope`, 'ROLE_SCOPE_MISMATCH');
    }
    const usable = isBuiltin(role) || (role.partnerId !== null ? role.partnerId === target.partnerId : role.orgId === target.orgId);
    if (!usable) throw badRequest('Role belongs to another partner or organization', 'ROLE_NOT_AVAILABLE');
    const missing = uncovered(caller.permissions, effectivePermissions(this.db, role.id));
    if (missing.length > 0) {
      throw forbidden('Cannot assign a role with permissions you do not hold', 'PERMISSION_NOT_HELD', { missing });
    }
    return role;
  }

  /** The permissions of a role that the caller does not hold: a caller does not manage a user whose role
   * is beyond its own (docs/api-notes.md). */
  permissionsBeyond(caller: Caller, roleId: string): string[] {
    return uncovered(caller.permissions, effectivePermissions(this.db, roleId));
  }

  listForAssignment(ctx: RequestContext) {
    return {
      data: this.visibleRoles(ctx.caller).map((r) => ({ id: r.id, name: r.name, description: r.description, scope: r.scope, isSystem: r.isSystem })),
    };
  }
}
