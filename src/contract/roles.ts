import { z } from 'zod';
import { createOne, deleteById, getById, updateById } from './builders.js';
import { SuccessSchema, TimestampSchema, UuidSchema, timestampFields } from './common.js';
import { endpoint } from './endpoint.js';

const IdParams = z.object({ id: UuidSchema.describe('Role id') });

// ---- The permission vocabulary (01 §2.8, 04 wire notes "Users and roles") ----

/** The resources of the view/create/update/delete/execute matrix of 01 §2.8. */
export const MATRIX_RESOURCES = [
  'devices',
  'scripts',
  'alerts',
  'automations',
  'reports',
  'users',
  'settings',
  'organizations',
  'sites',
  'remote',
] as const;
export const MATRIX_ACTIONS = ['view', 'create', 'update', 'delete', 'execute'] as const;

/** The named permissions that route checks use, each assignable to a role. */
export const NAMED_PERMISSIONS = [
  'devices:read',
  'devices:write',
  'devices:delete',
  'devices:execute',
  'scripts:read',
  'scripts:write',
  'scripts:delete',
  'scripts:execute',
  'alerts:read',
  'alerts:write',
  'alerts:acknowledge',
  'users:read',
  'users:write',
  'users:delete',
  'users:invite',
  'organizations:read',
  'organizations:write',
  'organizations:delete',
  'sites:read',
  'sites:write',
  'sites:delete',
  'automations:read',
  'automations:write',
  'automations:delete',
  'remote:access',
  'audit:read',
  'audit:export',
  'pam:approve',
  'pam:manage_policy',
  'sso:admin',
] as const;

const namedPart = (index: 0 | 1) => NAMED_PERMISSIONS.map((p) => p.split(':')[index] ?? '');

/** Every resource a grant may name: the matrix's and the named permissions' (audit, pam, sso). */
export const PERMISSION_RESOURCES = [...new Set<string>([...MATRIX_RESOURCES, ...namedPart(0)])];
/** Every action a grant may name: the matrix's and the named permissions'. */
export const PERMISSION_ACTIONS = [...new Set<string>([...MATRIX_ACTIONS, ...namedPart(1)])];

/** One grant as a role stores it. Either part may be `*`; `*:*` is only for the built-in admin roles. */
export const PermissionInputSchema = z.strictObject({
  resource: z
    .enum(['*', ...PERMISSION_RESOURCES] as [string, ...string[]])
    .describe('Resource, e.g. devices, users, audit; * for all'),
  action: z
    .enum(['*', ...PERMISSION_ACTIONS] as [string, ...string[]])
    .describe('Action, e.g. read, write, view, execute; * for all'),
});

export const PermissionSchema = z.object({ resource: z.string(), action: z.string() });
export type Permission = z.infer<typeof PermissionSchema>;

export const RoleScopeSchema = z.enum(['partner', 'organization']);

// ---- Roles (01 §2.8) ----

export const RoleSummarySchema = z.object({
  id: UuidSchema,
  name: z.string(),
  description: z.string().nullable(),
  scope: RoleScopeSchema,
  isSystem: z.boolean(),
  parentRoleId: UuidSchema.nullable(),
  /** Users in the caller's reach who hold the role. */
  userCount: z.number().int(),
});
export type RoleSummary = z.infer<typeof RoleSummarySchema>;

export const RoleSchema = RoleSummarySchema.extend({
  /** Owner of a custom role: a partner or an organization; both null for built-in roles. */
  partnerId: UuidSchema.nullable(),
  orgId: UuidSchema.nullable(),
  /** The role's own grants (inherited ones: GET /roles/:id/effective-permissions). */
  permissions: z.array(PermissionSchema),
  ...timestampFields,
});
export type Role = z.infer<typeof RoleSchema>;

const RoleName = z.string().trim().min(1).max(100);
const Description = z.string().trim().max(1000).nullable();
const Permissions = z.array(PermissionInputSchema).max(200);

/** System callers name the owner of a custom role; partner and organization callers own theirs. */
const OwnerFields = {
  partnerId: UuidSchema.optional().describe('System callers: the partner that owns the role'),
  orgId: UuidSchema.optional().describe('System callers: the organization that owns the role'),
};

export const RoleCreateSchema = z.strictObject({
  name: RoleName.describe('Role name (1-100 characters)'),
  description: Description.optional().describe('What the role is for'),
  scope: RoleScopeSchema.optional().describe(
    'partner or organization; default: the caller\'s own scope (organization callers can only create organization roles)',
  ),
  permissions: Permissions.optional().describe('Grants [{resource, action}]; not *:* and only permissions you hold'),
  parentRoleId: UuidSchema.nullable().optional().describe('Role to inherit permissions from (same scope)'),
  ...OwnerFields,
});

export const RoleUpdateSchema = z.strictObject({
  name: RoleName.optional().describe('New name (1-100 characters)'),
  description: Description.optional().describe('New description'),
  permissions: Permissions.optional().describe('Replaces every grant of the role'),
  parentRoleId: UuidSchema.nullable().optional().describe('New parent role; null removes inheritance'),
});

export const RoleCloneSchema = z.strictObject({
  name: RoleName.describe('Name of the copy (1-100 characters)'),
  ...OwnerFields,
});

export const RoleUserSchema = z.object({
  id: UuidSchema,
  email: z.string(),
  name: z.string(),
  status: z.enum(['active', 'invited', 'disabled']),
  lastLoginAt: TimestampSchema.nullable(),
  partnerId: UuidSchema.nullable(),
  orgId: UuidSchema.nullable(),
});

export const EffectivePermissionsSchema = z.object({
  roleId: UuidSchema,
  roleName: z.string(),
  /** The role itself, then its parent, grandparent … */
  inheritanceChain: z.array(z.object({ id: UuidSchema, name: z.string() })),
  permissions: z.array(
    z.object({
      resource: z.string(),
      action: z.string(),
      inherited: z.boolean(),
      sourceRoleId: UuidSchema,
      sourceRoleName: z.string(),
    }),
  ),
});

export const AvailablePermissionsSchema = z.object({
  /** The matrix of 01 §2.8. */
  resources: z.array(z.string()),
  actions: z.array(z.string()),
  matrix: z.array(z.object({ resource: z.string(), actions: z.array(z.string()) })),
  /** The named permissions that route checks use, all assignable. */
  permissions: z.array(z.object({ resource: z.string(), action: z.string(), permission: z.string() })),
});

const READ = { permission: 'users:read' } as const;
/** Role changes alter who may do what: a user session with MFA (docs/api-notes.md). */
const WRITE = { permission: 'users:write', mfa: true, sessionOnly: true } as const;

/** 01 §4.4 roles: built-in system roles (immutable) and the custom roles of partners and organizations. */
export const roles = {
  list: endpoint({
    method: 'GET',
    path: '/roles',
    responses: { 200: z.object({ data: z.array(RoleSummarySchema) }) },
    auth: READ,
    summary: "List the built-in roles and the caller's own custom roles, with how many users hold each",
  }),
  create: createOne('/roles', RoleCreateSchema, RoleSchema, WRITE,
    "Create a custom role owned by the caller's partner or organization"),
  availablePermissions: endpoint({
    method: 'GET',
    path: '/roles/permissions/available',
    responses: { 200: AvailablePermissionsSchema },
    auth: READ,
    summary: 'The permission vocabulary: resources, the view/create/update/delete/execute matrix and the named permissions',
  }),
  get: getById('/roles/:id', RoleSchema, READ, 'Get a role with its own permissions', IdParams),
  update: updateById('/roles/:id', RoleUpdateSchema, RoleSchema, WRITE,
    'Update a custom role (name, description, permissions replaced, parent); system roles are immutable', IdParams),
  delete: deleteById('/roles/:id', SuccessSchema, WRITE,
    'Delete a custom role that no user holds and no role inherits from', IdParams),
  clone: endpoint({
    method: 'POST',
    path: '/roles/:id/clone',
    params: IdParams,
    body: RoleCloneSchema,
    responses: { 201: RoleSchema },
    auth: WRITE,
    idempotent: true,
    summary: "Copy a role (built-in or custom) into a new custom role owned by the caller's partner or organization",
  }),
  users: endpoint({
    method: 'GET',
    path: '/roles/:id/users',
    params: IdParams,
    responses: { 200: z.object({ data: z.array(RoleUserSchema) }) },
    auth: READ,
    summary: "The users in the caller's reach who hold the role",
  }),
  effectivePermissions: endpoint({
    method: 'GET',
    path: '/roles/:id/effective-permissions',
    params: IdParams,
    responses: { 200: EffectivePermissionsSchema },
    auth: READ,
    summary: 'Direct and inherited permissions of a role, each with the role it comes from',
  }),
} as const;
