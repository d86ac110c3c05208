import { sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { rolePermissions, roles } from '../../db/schema/index.js';

export interface BuiltinRole {
  id: string;
  name: string;
  scope: 'partner' | 'organization';
  description: string;
  permissions: string[];
}

const READ_ONLY = ['*:read', '*:view'];
const TECHNICIAN = [
  'devices:read', 'devices:write', 'devices:execute',
  'scripts:read', 'scripts:write', 'scripts:execute',
  'alerts:read', 'alerts:write', 'alerts:acknowledge',
  'automations:read', 'automations:write',
  'remote:access',
  'organizations:read', 'sites:read', 'users:read', 'reports:read',
];

/** The built-in roles of 04 wire notes: system roles shared by every tenant, with fixed ids. */
export const BUILTIN_ROLES: readonly BuiltinRole[] = [
  { id: '00000000-0000-4000-8000-000000000001', name: 'Partner Admin', scope: 'partner', description: 'Everything in the partner', permissions: ['*:*'] },
  { id: '00000000-0000-4000-8000-000000000002', name: 'Partner Technician', scope: 'partner', description: 'Works on devices, scripts and alerts of the partner organizations', permissions: [...TECHNICIAN, 'pam:approve'] },
  { id: '00000000-0000-4000-8000-000000000003', name: 'Partner Viewer', scope: 'partner', description: 'Read only', permissions: READ_ONLY },
  {
    id: '00000000-0000-4000-8000-000000000004',
    name: 'Org Admin',
    scope: 'organization',
    description: 'Everything in the organization except organization management and audit export',
    permissions: [
      'devices:*', 'scripts:*', 'alerts:*', 'automations:*', 'reports:*', 'users:*', 'settings:*', 'sites:*',
      'remote:*', 'audit:read', 'pam:approve', 'pam:manage_policy', 'sso:admin', 'organizations:read',
    ],
  },
  { id: '00000000-0000-4000-8000-000000000005', name: 'Org Technician', scope: 'organization', description: 'Works on devices, scripts and alerts of the organization', permissions: TECHNICIAN },
  { id: '00000000-0000-4000-8000-000000000006', name: 'Org Viewer', scope: 'organization', description: 'Read only', permissions: READ_ONLY },
];

export const PARTNER_ADMIN_ROLE_ID = '00000000-0000-4000-8000-000000000001';
export const ORG_ADMIN_ROLE_ID = '00000000-0000-4000-8000-000000000004';

/** Creates or refreshes the built-in roles; run at every start so a new release can adjust them. */
export function ensureBuiltinRoles(db: Db): void {
  db.$client.transaction(() => {
    for (const role of BUILTIN_ROLES) {
      db.insert(roles)
        .values({ id: role.id, name: role.name, scope: role.scope, description: role.description, isSystem: true })
        .onConflictDoUpdate({ target: roles.id, set: { name: role.name, description: role.description, updatedAt: sql`${roles.updatedAt}` } })
        .run();
      db.delete(rolePermissions).where(sql`${rolePermissions.roleId} = ${role.id}`).run();
      for (const permission of role.permissions) {
        const [resource = '*', action = '*'] = permission.split(':');
        db.insert(rolePermissions).values({ roleId: role.id, resource, action }).run();
      }
    }
  })();
}
