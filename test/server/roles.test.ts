import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLogs, roles, ssoProviders } from '../../src/server/db/schema/index.js';
import type { TestApp } from '../helpers/server.js';
import { useWorld } from '../helpers/world.js';
import { ROLES, mintToken, seedUser, type World, type WorldCaller } from '../helpers/seed.js';

const API = '/api/v1';
const CYCLE = 'Cannot set parent role: would create circular inheritance';

describe('roles and permissions (01 §2.8, §4.4)', () => {
  let t: TestApp, w: World;
  const as = useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  /** Creates a custom role through the API as the given caller and returns its id. */
  async function createRole(who: WorldCaller, body: Record<string, unknown>): Promise<string> {
    const res = await as(who, 'POST', '/roles', body);
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  }

  it("01§4.4 list: the six built-in roles and the caller's own custom roles, with userCount in the caller's reach", async () => {
    const mine = await createRole('aAdmin', { name: 'Helpdesk', permissions: [{ resource: 'devices', action: 'read' }] });
    const theirs = await createRole('bAdmin', { name: 'Other', permissions: [] });

    const res = await as('aAdmin', 'GET', '/roles');
    expect(res.status).toBe(200);
    const byId = new Map((res.body.data as { id: string }[]).map((r) => [r.id, r]));
    for (const id of Object.values(ROLES)) expect(byId.get(id)).toMatchObject({ isSystem: true, parentRoleId: null });
    expect(byId.get(mine)).toEqual({
      id: mine,
      name: 'Helpdesk',
      description: null,
      scope: 'partner',
      isSystem: false,
      parentRoleId: null,
      userCount: 0,
    });
    expect(byId.has(theirs)).toBe(false);
    // Partner A: aAdmin, aSelAdmin, aNone are Partner Admins; the two A1 users are Org Admins.
    expect(byId.get(ROLES.partnerAdmin)).toMatchObject({ userCount: 3 });
    expect(byId.get(ROLES.partnerTechnician)).toMatchObject({ userCount: 1 });
    expect(byId.get(ROLES.orgAdmin)).toMatchObject({ userCount: 2 });

    const b = await as('bAdmin', 'GET', '/roles');
    const bById = new Map((b.body.data as { id: string; userCount: number }[]).map((r) => [r.id, r]));
    expect(bById.get(ROLES.partnerAdmin)?.userCount).toBe(1);
    expect(bById.has(mine)).toBe(false);
  });

  it('01§4.4 create: 201 with the role and its permissions; get returns them; name 1-100; audit role.create', async () => {
    const res = await as('aAdmin', 'POST', '/roles', {
      name: 'Scripting',
      description: 'Runs scripts',
      permissions: [
        { resource: 'scripts', action: 'execute' },
        { resource: 'scripts', action: 'read' },
        { resource: 'scripts', action: 'read' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Scripting',
      description: 'Runs scripts',
      scope: 'partner',
      isSystem: false,
      parentRoleId: null,
      partnerId: w.partnerA.id,
      orgId: null,
      userCount: 0,
      permissions: [
        { resource: 'scripts', action: 'execute' },
        { resource: 'scripts', action: 'read' },
      ],
    });
    const got = await as('aAdmin', 'GET', `/roles/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);

    expect((await as('aAdmin', 'POST', '/roles', { name: '' })).status).toBe(400);
    expect((await as('aAdmin', 'POST', '/roles', { name: 'x'.repeat(101) })).status).toBe(400);
    expect((await as('aAdmin', 'POST', '/roles', { name: 'x'.repeat(100) })).status).toBe(201);
    const unknown = await as('aAdmin', 'POST', '/roles', { name: 'Bad', permissions: [{ resource: 'rockets', action: 'read' }] });
    expect(unknown.status).toBe(400);
    const dup = await as('aAdmin', 'POST', '/roles', { name: 'Scripting' });
    expect(dup.status).toBe(409);

    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'role.create')).all();
    expect(audit.find((a) => a.resourceId === res.body.id)).toMatchObject({
      resourceType: 'role',
      resourceName: 'Scripting',
      partnerId: w.partnerA.id,
    });
  });

  it('04 Users and roles: custom roles cannot be given *:* (400) nor a permission the caller does not hold (403)', async () => {
    const wildcard = await as('aAdmin', 'POST', '/roles', { name: 'God', permissions: [{ resource: '*', action: '*' }] });
    expect(wildcard.status).toBe(400);
    expect(wildcard.body).toMatchObject({ error: 'Custom roles cannot be granted *:*', code: 'WILDCARD_NOT_ALLOWED' });

    // The Org Admin holds everything in the organization except organizations:write and audit:export.
    const notHeld = await as('orgUser', 'POST', '/roles', {
      name: 'Exporter',
      permissions: [
        { resource: 'audit', action: 'export' },
        { resource: 'devices', action: 'read' },
      ],
    });
    expect(notHeld.status).toBe(403);
    expect(notHeld.body).toMatchObject({ error: 'Cannot grant permissions you do not hold: audit:export', code: 'PERMISSION_NOT_HELD' });

    // Inheriting is granting: a parent with more than the caller holds is refused the same way.
    const viaParent = await as('orgUser', 'POST', '/roles', { name: 'Sneaky', scope: 'organization', parentRoleId: ROLES.orgAdmin });
    expect(viaParent.status).toBe(201);
    const partnerParent = await as('aTech', 'POST', '/roles', { name: 'Up', parentRoleId: ROLES.partnerAdmin });
    expect(partnerParent.status).toBe(403); // the technician lacks users:write in the first place
    const techRole = await createRole('aAdmin', {
      name: 'Role maker',
      permissions: [
        { resource: 'users', action: 'write' },
        { resource: 'users', action: 'read' },
      ],
    });
    const maker = await seedUser(t, {
      email: 'maker@a.test',
      partner: { partnerId: w.partnerA.id, roleId: techRole, orgAccess: 'all' },
      login: 'mint',
      mfa: true,
    });
    const escalate = await t.call('POST', `${API}/roles`, { token: maker.token, body: { name: 'Admin copy', parentRoleId: ROLES.partnerAdmin } });
    expect(escalate.status).toBe(403);
    expect(escalate.body.code).toBe('PERMISSION_NOT_HELD');
    // Handing out a wildcard is fine when every named permission it stands for is held.
    const reads = await as('orgUser', 'POST', '/roles', { name: 'Reader', permissions: [{ resource: '*', action: 'read' }] });
    expect(reads.status).toBe(201);
  });

  it('01§2.8 system roles are immutable: PATCH 403 `Cannot modify system roles`, DELETE 403 `Cannot delete system roles`', async () => {
    for (const id of Object.values(ROLES)) {
      const patch = await as('system', 'PATCH', `/roles/${id}`, { name: 'Renamed' });
      expect(patch.status).toBe(403);
      expect(patch.body.error).toBe('Cannot modify system roles');
      const del = await as('aAdmin', 'DELETE', `/roles/${id}`);
      expect(del.status).toBe(403);
      expect(del.body.error).toBe('Cannot delete system roles');
    }
    const row = t.db.select().from(roles).where(eq(roles.id, ROLES.partnerAdmin)).get();
    expect(row?.name).toBe('Partner Admin');
  });

  it('01§2.8 inheritance cycles are rejected at depth 1, 2 and 3', async () => {
    const a = await createRole('aAdmin', { name: 'A' });
    // depth 1: a role cannot be its own parent
    const self = await as('aAdmin', 'PATCH', `/roles/${a}`, { parentRoleId: a });
    expect(self.status).toBe(400);
    expect(self.body.error).toBe(CYCLE);

    // depth 2: B → A, then A → B
    const b = await createRole('aAdmin', { name: 'B', parentRoleId: a });
    const two = await as('aAdmin', 'PATCH', `/roles/${a}`, { parentRoleId: b });
    expect(two.status).toBe(400);
    expect(two.body.error).toBe(CYCLE);

    // depth 3: C → B → A, then A → C
    const c = await createRole('aAdmin', { name: 'C', parentRoleId: b });
    const three = await as('aAdmin', 'PATCH', `/roles/${a}`, { parentRoleId: c });
    expect(three.status).toBe(400);
    expect(three.body.error).toBe(CYCLE);
    expect(three.body.code).toBe('CIRCULAR_INHERITANCE');

    // Nothing changed, and a legal re-parenting still works.
    expect(t.db.select().from(roles).where(eq(roles.id, a)).get()?.parentRoleId).toBeNull();
    const d = await createRole('aAdmin', { name: 'D' });
    const ok = await as('aAdmin', 'PATCH', `/roles/${a}`, { parentRoleId: d });
    expect(ok.status).toBe(200);
    expect(ok.body.parentRoleId).toBe(d);
  });

  it('01§2.8 a parent must be visible to the caller and of the same scope', async () => {
    const bRole = await createRole('bAdmin', { name: 'B only' });
    const hidden = await as('aAdmin', 'POST', '/roles', { name: 'X', parentRoleId: bRole });
    expect(hidden.status).toBe(400);
    expect(hidden.body.code).toBe('PARENT_ROLE_NOT_FOUND');
    const scope = await as('aAdmin', 'POST', '/roles', { name: 'Y', scope: 'partner', parentRoleId: ROLES.orgViewer });
    expect(scope.status).toBe(400);
    expect(scope.body.code).toBe('PARENT_SCOPE_MISMATCH');
  });

  it('01§4.4 effective permissions through a three-level chain name the source of each permission', async () => {
    const grand = await createRole('aAdmin', {
      name: 'Grand',
      permissions: [
        { resource: 'users', action: 'read' },
        { resource: 'devices', action: 'read' },
      ],
    });
    const parent = await createRole('aAdmin', { name: 'Parent', parentRoleId: grand, permissions: [{ resource: 'scripts', action: 'read' }] });
    const child = await createRole('aAdmin', {
      name: 'Child',
      parentRoleId: parent,
      permissions: [
        { resource: 'alerts', action: 'read' },
        { resource: 'devices', action: 'read' },
      ],
    });
    const res = await as('aAdmin', 'GET', `/roles/${child}/effective-permissions`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      roleId: child,
      roleName: 'Child',
      inheritanceChain: [
        { id: child, name: 'Child' },
        { id: parent, name: 'Parent' },
        { id: grand, name: 'Grand' },
      ],
      permissions: [
        { resource: 'alerts', action: 'read', inherited: false, sourceRoleId: child, sourceRoleName: 'Child' },
        { resource: 'devices', action: 'read', inherited: false, sourceRoleId: child, sourceRoleName: 'Child' },
        { resource: 'scripts', action: 'read', inherited: true, sourceRoleId: parent, sourceRoleName: 'Parent' },
        { resource: 'users', action: 'read', inherited: true, sourceRoleId: grand, sourceRoleName: 'Grand' },
      ],
    });

    // The inherited grant takes effect: a holder of Child passes the users:read check through Grand.
    const holder = await seedUser(t, {
      email: 'child@a.test',
      partner: { partnerId: w.partnerA.id, roleId: child, orgAccess: 'all' },
      login: 'mint',
    });
    expect((await t.call('GET', `${API}/users`, { token: holder.token })).status).toBe(200);
    expect((await t.call('GET', `${API}/audit-logs/logs`, { token: holder.token })).status).toBe(403);
  });

  it('04 Users and roles: delete refuses roles with users (400) and with child roles (400), else removes the role', async () => {
    const used = await createRole('aAdmin', { name: 'Used' });
    await seedUser(t, { email: 'used@a.test', partner: { partnerId: w.partnerA.id, roleId: used, orgAccess: 'all' }, login: false });
    const withUsers = await as('aAdmin', 'DELETE', `/roles/${used}`);
    expect(withUsers.status).toBe(400);
    expect(withUsers.body.error).toBe('Cannot delete role with assigned users');

    const parent = await createRole('aAdmin', { name: 'Parent' });
    await createRole('aAdmin', { name: 'Kid', parentRoleId: parent });
    const withChildren = await as('aAdmin', 'DELETE', `/roles/${parent}`);
    expect(withChildren.status).toBe(400);
    expect(withChildren.body.code).toBe('ROLE_HAS_CHILDREN');

    const lone = await createRole('aAdmin', { name: 'Lone', permissions: [{ resource: 'devices', action: 'read' }] });
    const del = await as('aAdmin', 'DELETE', `/roles/${lone}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ success: true });
    expect((await as('aAdmin', 'GET', `/roles/${lone}`)).status).toBe(404);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'role.delete')).all()).toHaveLength(1);
  });

  it("docs/api-notes Roles and permissions: delete refuses an SSO provider's default role (409 ROLE_IN_USE_BY_SSO), not a 500", async () => {
    const roleId = await createRole('aAdmin', { name: 'Provisioned', scope: 'organization', orgId: w.orgA1.id, permissions: [] });
    const provider = await as('aAdmin', 'POST', '/sso/providers', { orgId: w.orgA1.id, name: 'Corp IdP', type: 'oidc', defaultRoleId: roleId });
    expect(provider.status, provider.text).toBe(201);

    const res = await as('aAdmin', 'DELETE', `/roles/${roleId}`);
    expect(res.status, res.text).toBe(409);
    expect(res.body).toMatchObject({ error: 'Cannot delete role that is the default role of an SSO provider', code: 'ROLE_IN_USE_BY_SSO' });
    expect((await as('aAdmin', 'GET', `/roles/${roleId}`)).status).toBe(200);
    expect(t.db.select().from(ssoProviders).where(eq(ssoProviders.id, provider.body.data.id)).get()?.defaultRoleId).toBe(roleId);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'role.delete')).all()).toHaveLength(0);

    // Once no provider names it, the role goes.
    expect((await as('aAdmin', 'DELETE', `/sso/providers/${provider.body.data.id}`)).status).toBe(200);
    expect((await as('aAdmin', 'DELETE', `/roles/${roleId}`)).status).toBe(200);
  });

  it('01§4.4 update replaces the permissions; only the owner changes a custom role; other tenants get 404', async () => {
    const id = await createRole('aAdmin', { name: 'Ops', permissions: [{ resource: 'devices', action: 'read' }] });
    const res = await as('aAdmin', 'PATCH', `/roles/${id}`, {
      description: 'Operations',
      permissions: [{ resource: 'alerts', action: 'acknowledge' }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ description: 'Operations', permissions: [{ resource: 'alerts', action: 'acknowledge' }] });
    expect((await as('aAdmin', 'PATCH', `/roles/${id}`, {})).status).toBe(400);

    expect((await as('bAdmin', 'GET', `/roles/${id}`)).status).toBe(404);
    expect((await as('bAdmin', 'PATCH', `/roles/${id}`, { name: 'Mine' })).status).toBe(404);
    expect((await as('bAdmin', 'DELETE', `/roles/${id}`)).status).toBe(404);

    // An organization role made by the partner is visible in its organizations but not theirs to change.
    const orgRole = await createRole('aAdmin', { name: 'Org ops', scope: 'organization' });
    expect((await as('orgUser', 'GET', `/roles/${orgRole}`)).status).toBe(200);
    const foreign = await as('orgUser', 'PATCH', `/roles/${orgRole}`, { name: 'Taken over' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('ROLE_NOT_OWNED');
    // The organization's own roles are its users' to change, and its partner's (which reaches it).
    const own = await createRole('orgUser', { name: 'Local' });
    expect((await as('orgUser', 'GET', `/roles/${own}`)).body).toMatchObject({ scope: 'organization', orgId: w.orgA1.id, partnerId: null });
    expect((await as('aAdmin', 'PATCH', `/roles/${own}`, { description: 'seen by the partner' })).status).toBe(200);
    expect((await as('bAdmin', 'GET', `/roles/${own}`)).status).toBe(404);
    // Organization callers cannot create partner-scope roles.
    expect((await as('orgUser', 'POST', '/roles', { name: 'P', scope: 'partner' })).status).toBe(400);
  });

  it("01§4.4 clone copies a role into a non-system role owned by the caller's tenant, described `Cloned from <name>`", async () => {
    const res = await as('orgUser', 'POST', `/roles/${ROLES.orgTechnician}/clone`, { name: 'My technicians' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'My technicians',
      description: 'Cloned from Org Technician',
      isSystem: false,
      scope: 'organization',
      orgId: w.orgA1.id,
      partnerId: null,
    });
    const source = await as('orgUser', 'GET', `/roles/${ROLES.orgTechnician}`);
    expect(res.body.permissions).toEqual(source.body.permissions);
    // The copy is an ordinary custom role: it can be changed.
    expect((await as('orgUser', 'PATCH', `/roles/${res.body.id}`, { name: 'Techs' })).status).toBe(200);

    const admin = await as('aAdmin', 'POST', `/roles/${ROLES.partnerAdmin}/clone`, { name: 'Admin copy' });
    expect(admin.status).toBe(400);
    expect(admin.body.code).toBe('WILDCARD_NOT_ALLOWED');
    expect((await as('aAdmin', 'POST', `/roles/${ROLES.partnerTechnician}/clone`, {})).status).toBe(400);
  });

  it("01§4.4 /roles/:id/users lists the role's holders in the caller's reach", async () => {
    const res = await as('aAdmin', 'GET', `/roles/${ROLES.orgAdmin}/users`);
    expect(res.status).toBe(200);
    expect((res.body.data as { email: string }[]).map((u) => u.email)).toEqual(['org-admin@a1.test', 'site-admin@a1.test']);
    expect(res.body.data[0]).toMatchObject({ status: 'active', orgId: w.orgA1.id, partnerId: w.partnerA.id });
    const b = await as('bAdmin', 'GET', `/roles/${ROLES.orgAdmin}/users`);
    expect(b.body.data).toEqual([]);
  });

  it('04 Users and roles: /roles/permissions/available returns the §2.8 matrix and the assignable named permissions', async () => {
    const res = await as('orgUser', 'GET', '/roles/permissions/available');
    expect(res.status).toBe(200);
    expect(res.body.resources).toEqual(['devices', 'scripts', 'alerts', 'automations', 'reports', 'users', 'settings', 'organizations', 'sites', 'remote']);
    expect(res.body.actions).toEqual(['view', 'create', 'update', 'delete', 'execute']);
    expect(res.body.matrix).toHaveLength(10);
    const named = (res.body.permissions as { permission: string }[]).map((p) => p.permission);
    for (const p of ['devices:execute', 'alerts:acknowledge', 'users:invite', 'remote:access', 'audit:export', 'pam:approve', 'pam:manage_policy', 'sso:admin']) {
      expect(named).toContain(p);
    }
    expect(res.body.permissions).toContainEqual({ resource: 'pam', action: 'manage_policy', permission: 'pam:manage_policy' });
  });

  it('04 Users and roles: GET /users/roles lists {id,name,description,scope,isSystem}', async () => {
    const id = await createRole('aAdmin', { name: 'Listed' });
    const res = await as('aAdmin', 'GET', '/users/roles');
    expect(res.status).toBe(200);
    for (const r of res.body.data as Record<string, unknown>[]) expect(Object.keys(r).sort()).toEqual(['description', 'id', 'isSystem', 'name', 'scope']);
    expect(res.body.data).toContainEqual({ id, name: 'Listed', description: null, scope: 'partner', isSystem: false });
  });

  it('docs/api-notes: role reads need users:read; role writes need users:write, a user session and MFA', async () => {
    const plain = await mintToken(t, w.users.aAdmin.id, { mfa: false });
    expect((await t.call('GET', `${API}/roles`, { token: plain })).status).toBe(200);
    const write = await t.call('POST', `${API}/roles`, { token: plain, body: { name: 'No MFA' } });
    expect(write.status).toBe(403);
    expect(write.body).toMatchObject({ error: 'MFA required', code: 'MFA_REQUIRED' });
    // The Partner Technician has users:read but not users:write.
    expect((await as('aTech', 'GET', '/roles')).status).toBe(200);
    const tech = await as('aTech', 'POST', '/roles', { name: 'Nope' });
    expect(tech.status).toBe(403);
    expect(tech.body.error).toBe('Permission denied');
  });

  it('docs/api-notes: system callers name the owner of a custom role', async () => {
    const missing = await as('system', 'POST', '/roles', { name: 'Ownerless' });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('OWNER_REQUIRED');
    const res = await as('system', 'POST', '/roles', { name: 'For B', partnerId: w.partnerB.id });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ partnerId: w.partnerB.id, scope: 'partner' });
    expect((await as('bAdmin', 'GET', `/roles/${res.body.id}`)).status).toBe(200);
  });
});
