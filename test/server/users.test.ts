import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLogs, organizationUsers, partnerUsers, users } from '../../src/server/db/schema/index.js';
import type { TestApp } from '../helpers/server.js';
import { useWorld, type Method } from '../helpers/world.js';
import { ROLES, mintToken, seedRole, seedUser, type World } from '../helpers/seed.js';

const API = '/api/v1';

/** A custom role written straight into the database. */
function customRole(t: TestApp, owner: { partnerId?: string; orgId?: string }, scope: 'partner' | 'organization', permissions: string[]): string {
  return seedRole(t, { scope, ...owner, permissions });
}

describe('users (01 §2.7, §4.4)', () => {
  let t: TestApp, w: World;
  const as = useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  it("01§4.4 list: the partner's users with orgAccess and orgIds, paged, by e-mail", async () => {
    const res = await as('aAdmin', 'GET', '/users');
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, limit: 50, total: 4 });
    expect((res.body.data as { email: string }[]).map((u) => u.email)).toEqual(['a-admin@a.test', 'a-none@a.test', 'a-sel@a.test', 'a-tech@a.test']);
    const tech = (res.body.data as { email: string }[]).find((u) => u.email === 'a-tech@a.test');
    expect(tech).toEqual({
      id: w.users.aTech.id,
      email: 'a-tech@a.test',
      name: 'a-tech',
      avatarUrl: null,
      status: 'active',
      lastLoginAt: null,
      mfaEnabled: false,
      mfaMethod: null,
      scope: 'partner',
      partnerId: w.partnerA.id,
      orgId: null,
      roleId: ROLES.partnerTechnician,
      roleName: 'Partner Technician',
      orgAccess: 'selected',
      orgIds: [w.orgA1.id],
      createdAt: expect.any(String),
    });
    const paged = await as('aAdmin', 'GET', '/users?limit=2&page=2');
    expect(paged.body.data).toHaveLength(2);
    expect(paged.body.pagination).toEqual({ page: 2, limit: 2, total: 4 });
    const search = await as('aAdmin', 'GET', '/users?search=TECH');
    expect((search.body.data as { id: string }[]).map((u) => u.id)).toEqual([w.users.aTech.id]);
  });

  it('01§4.4 list: organization users carry siteIds and deviceGroupIds; partners list an organization they reach with orgId', async () => {
    const org = await as('orgUser', 'GET', '/users');
    expect(org.status).toBe(200);
    expect(org.body.data).toHaveLength(2);
    const site = (org.body.data as { email: string }[]).find((u) => u.email === 'site-admin@a1.test');
    expect(site).toMatchObject({ scope: 'organization', orgId: w.orgA1.id, siteIds: [w.siteA1a.id], deviceGroupIds: null, roleName: 'Org Admin' });
    expect(site).not.toHaveProperty('orgAccess');

    const viaPartner = await as('aAdmin', 'GET', `/users?orgId=${w.orgA1.id}`);
    expect(viaPartner.body.data).toHaveLength(2);
    expect((await as('aSelAdmin', 'GET', `/users?orgId=${w.orgA2.id}`)).status).toBe(403);
    expect((await as('bAdmin', 'GET', `/users?orgId=${w.orgA1.id}`)).status).toBe(403);
    expect((await as('orgUser', 'GET', `/users?orgId=${w.orgA2.id}`)).status).toBe(403);

    const system = await as('system', 'GET', `/users?partnerId=${w.partnerB.id}`);
    expect((system.body.data as { email: string }[]).map((u) => u.email)).toEqual(['b-admin@b.test']);
    const everyone = await as('system', 'GET', '/users?limit=100');
    expect(everyone.body.pagination.total).toBe(8); // seven tenant users and the system administrator
    expect((await as('aAdmin', 'GET', `/users?partnerId=${w.partnerB.id}`)).status).toBe(403);
  });

  it('01§4.4 get: users in reach; others are 404', async () => {
    expect((await as('aAdmin', 'GET', `/users/${w.users.aTech.id}`)).body).toMatchObject({ email: 'a-tech@a.test' });
    expect((await as('aAdmin', 'GET', `/users/${w.users.orgUser.id}`)).status).toBe(200);
    expect((await as('bAdmin', 'GET', `/users/${w.users.aTech.id}`)).status).toBe(404);
    expect((await as('orgUser', 'GET', `/users/${w.users.aAdmin.id}`)).status).toBe(404);
    expect((await as('aAdmin', 'GET', `/users/${randomUUID()}`)).status).toBe(404);
  });

  it('01§4.4 invite into the partner: 201 invited, the link returned without a mail service; audit user.invite', async () => {
    const res = await as('aAdmin', 'POST', '/users/invite', {
      email: 'New.Person@A.test',
      name: 'New Person',
      roleId: ROLES.partnerViewer,
      orgAccess: 'selected',
      orgIds: [w.orgA2.id],
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      email: 'new.person@a.test',
      name: 'New Person',
      status: 'invited',
      roleId: ROLES.partnerViewer,
      inviteEmailSent: false,
      inviteUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:3000\/accept-invite\?token=[A-Za-z0-9_-]{43}$/),
    });
    const got = await as('aAdmin', 'GET', `/users/${res.body.id}`);
    expect(got.body).toMatchObject({ status: 'invited', orgAccess: 'selected', orgIds: [w.orgA2.id], roleName: 'Partner Viewer' });
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.invite')).get();
    expect(audit).toMatchObject({ resourceId: res.body.id, partnerId: w.partnerA.id });
    expect(JSON.stringify(audit)).not.toContain(new URL(res.body.inviteUrl as string).searchParams.get('token'));
  });

  it('01§4.4 invite: role of the wrong scope 400; already a member 409; a user of another tenant 409', async () => {
    const wrongScope = await as('aAdmin', 'POST', '/users/invite', { email: 'x@a.test', name: 'X', roleId: ROLES.orgViewer });
    expect(wrongScope.status).toBe(400);
    expect(wrongScope.body.code).toBe('ROLE_SCOPE_MISMATCH');
    const orgWrong = await as('orgUser', 'POST', '/users/invite', { email: 'y@a1.test', name: 'Y', roleId: ROLES.partnerViewer });
    expect(orgWrong.status).toBe(400);

    const member = await as('aAdmin', 'POST', '/users/invite', { email: 'a-tech@a.test', name: 'Again', roleId: ROLES.partnerViewer });
    expect(member.status).toBe(409);
    expect(member.body.code).toBe('ALREADY_MEMBER');
    const other = await as('aAdmin', 'POST', '/users/invite', { email: 'b-admin@b.test', name: 'Poach', roleId: ROLES.partnerViewer });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('USER_IN_OTHER_TENANT');

    const hiddenRole = customRole(t, { partnerId: w.partnerB.id }, 'partner', []);
    const hidden = await as('aAdmin', 'POST', '/users/invite', { email: 'z@a.test', name: 'Z', roleId: hiddenRole });
    expect(hidden.status).toBe(400);
    expect(hidden.body.code).toBe('ROLE_NOT_FOUND');
    expect(t.db.select().from(users).where(eq(users.email, 'z@a.test')).get()).toBeUndefined();
  });

  it('01§4.4 invite into an organization: siteIds within the org; a site-restricted inviter stays within its sites', async () => {
    const res = await as('orgUser', 'POST', '/users/invite', {
      email: 'tech@a1.test',
      name: 'Tech',
      roleId: ROLES.orgTechnician,
      siteIds: [w.siteA1b.id],
    });
    expect(res.status).toBe(201);
    expect(t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, res.body.id)).get()).toMatchObject({
      orgId: w.orgA1.id,
      siteIds: [w.siteA1b.id],
      roleId: ROLES.orgTechnician,
    });
    const foreignSite = await as('orgUser', 'POST', '/users/invite', { email: 'f@a1.test', name: 'F', roleId: ROLES.orgViewer, siteIds: [w.siteA2a.id] });
    expect(foreignSite.status).toBe(400);
    const partnerFields = await as('orgUser', 'POST', '/users/invite', { email: 'g@a1.test', name: 'G', roleId: ROLES.orgViewer, orgAccess: 'all' });
    expect(partnerFields.status).toBe(400);

    const outside = await as('siteUser', 'POST', '/users/invite', { email: 'h@a1.test', name: 'H', roleId: ROLES.orgViewer, siteIds: [w.siteA1b.id] });
    expect(outside.status).toBe(403);
    expect(outside.body.error).toBe('Access to this site denied');
    const inherits = await as('siteUser', 'POST', '/users/invite', { email: 'i@a1.test', name: 'I', roleId: ROLES.orgViewer });
    expect(inherits.status).toBe(201);
    expect(t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, inherits.body.id)).get()?.siteIds).toEqual([w.siteA1a.id]);

    // A partner user invites into an organization it reaches by naming orgId.
    const viaPartner = await as('aAdmin', 'POST', '/users/invite', { email: 'j@a2.test', name: 'J', roleId: ROLES.orgViewer, orgId: w.orgA2.id });
    expect(viaPartner.status).toBe(201);
    expect((await as('aSelAdmin', 'POST', '/users/invite', { email: 'k@a2.test', name: 'K', roleId: ROLES.orgViewer, orgId: w.orgA2.id })).status).toBe(403);
  });

  it('docs/api-notes: invite needs users:invite and MFA; a caller cannot hand out a role beyond its own permissions', async () => {
    const tech = await as('aTech', 'POST', '/users/invite', { email: 'l@a.test', name: 'L', roleId: ROLES.partnerViewer });
    expect(tech.status).toBe(403);
    expect(tech.body.error).toBe('Permission denied');
    const noMfa = await mintToken(t, w.users.aAdmin.id, { mfa: false });
    const mfa = await t.call('POST', `${API}/users/invite`, { token: noMfa, body: { email: 'l@a.test', name: 'L', roleId: ROLES.partnerViewer } });
    expect(mfa.body.code).toBe('MFA_REQUIRED');

    const inviterRole = customRole(t, { partnerId: w.partnerA.id }, 'partner', ['users:invite', 'users:read']);
    const inviter = await seedUser(t, { email: 'inviter@a.test', partner: { partnerId: w.partnerA.id, roleId: inviterRole, orgAccess: 'all' }, login: 'mint', mfa: true });
    const escalate = await t.call('POST', `${API}/users/invite`, {
      token: inviter.token,
      body: { email: 'boss@a.test', name: 'Boss', roleId: ROLES.partnerAdmin },
    });
    expect(escalate.status).toBe(403);
    expect(escalate.body.code).toBe('PERMISSION_NOT_HELD');

    const system = await as('system', 'POST', '/users/invite', { email: 'm@a.test', name: 'M', roleId: ROLES.partnerViewer });
    expect(system.status).toBe(400);
    expect(system.body.code).toBe('TARGET_REQUIRED');
    const systemOk = await as('system', 'POST', '/users/invite', { email: 'm@a.test', name: 'M', roleId: ROLES.partnerViewer, partnerId: w.partnerB.id });
    expect(systemOk.status).toBe(201);
  });

  it('01§4.4 resend-invite: only for invited users (else 400); by id or e-mail; a new link each time', async () => {
    const invited = await as('aAdmin', 'POST', '/users/invite', { email: 'n@a.test', name: 'N', roleId: ROLES.partnerViewer });
    const first = invited.body.inviteUrl as string;
    const again = await as('aAdmin', 'POST', '/users/resend-invite', { userId: invited.body.id });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: invited.body.id, email: 'n@a.test', inviteEmailSent: false });
    expect(again.body.inviteUrl).not.toBe(first);
    const byEmail = await as('aAdmin', 'POST', '/users/resend-invite', { email: 'N@a.test' });
    expect(byEmail.status).toBe(200);

    const active = await as('aAdmin', 'POST', '/users/resend-invite', { userId: w.users.aTech.id });
    expect(active.status).toBe(400);
    expect(active.body.code).toBe('NOT_INVITED');
    expect((await as('aAdmin', 'POST', '/users/resend-invite', {})).status).toBe(400);
    expect((await as('bAdmin', 'POST', '/users/resend-invite', { userId: invited.body.id })).status).toBe(404);
  });

  it('01§3 user: PATCH status disabled ends every session at once; re-enabling works; nobody disables themselves', async () => {
    const before = await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech });
    expect(before.status).toBe(200);
    const res = await as('aAdmin', 'PATCH', `/users/${w.users.aTech.id}`, { status: 'disabled', name: 'Former tech' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'disabled', name: 'Former tech' });
    const after = await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech });
    expect(after.status).toBe(401);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.disable')).all()).toHaveLength(1);

    const enabled = await as('aAdmin', 'PATCH', `/users/${w.users.aTech.id}`, { status: 'active' });
    expect(enabled.body.status).toBe('active');
    // The old sessions stay ended; a new sign-in works.
    expect((await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech })).status).toBe(401);
    expect((await t.call('GET', `${API}/users/me`, { token: await mintToken(t, w.users.aTech.id) })).status).toBe(200);

    const self = await as('aAdmin', 'PATCH', `/users/${w.users.aAdmin.id}`, { status: 'disabled' });
    expect(self.status).toBe(403);
    expect(self.body.code).toBe('SELF_DISABLE');
    expect((await as('aAdmin', 'PATCH', `/users/${w.users.aAdmin.id}`, { name: 'Still me' })).status).toBe(200);
    expect((await as('aAdmin', 'PATCH', `/users/${w.users.aTech.id}`, {})).status).toBe(400);
    const invited = await as('aAdmin', 'POST', '/users/invite', { email: 'o@a.test', name: 'O', roleId: ROLES.partnerViewer });
    expect((await as('aAdmin', 'PATCH', `/users/${invited.body.id}`, { status: 'active' })).body.code).toBe('USER_INVITED');
  });

  it('01§4.4 DELETE removes the scope link only, not the account; nobody removes themselves', async () => {
    const res = await as('aAdmin', 'DELETE', `/users/${w.users.aTech.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, w.users.aTech.id)).get()).toBeUndefined();
    expect(t.db.select().from(users).where(eq(users.id, w.users.aTech.id)).get()).toMatchObject({ status: 'active' });
    expect((await as('aAdmin', 'GET', `/users/${w.users.aTech.id}`)).status).toBe(404);
    expect((await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech })).status).toBe(401);
    // The account can join again later.
    const back = await as('aAdmin', 'POST', '/users/invite', { email: 'a-tech@a.test', name: 'Back', roleId: ROLES.partnerViewer });
    expect(back.status).toBe(201);
    expect(back.body).toMatchObject({ status: 'active', inviteUrl: null, inviteEmailSent: false });

    const self = await as('orgUser', 'DELETE', `/users/${w.users.orgUser.id}`);
    expect(self.status).toBe(403);
    expect(self.body.code).toBe('SELF_REMOVE');
    expect((await as('orgUser', 'DELETE', `/users/${w.users.siteUser.id}`)).status).toBe(200);
    expect((await as('bAdmin', 'DELETE', `/users/${w.users.aNone.id}`)).status).toBe(404);
  });

  it('04 Users and roles: POST /users/:id/role — self 403, wrong scope 400, audit user.permission.change', async () => {
    const self = await as('aAdmin', 'POST', `/users/${w.users.aAdmin.id}/role`, { roleId: ROLES.partnerViewer });
    expect(self.status).toBe(403);
    const wrong = await as('aAdmin', 'POST', `/users/${w.users.aTech.id}/role`, { roleId: ROLES.orgViewer });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('ROLE_SCOPE_MISMATCH');
    const res = await as('aAdmin', 'POST', `/users/${w.users.aTech.id}/role`, { roleId: ROLES.partnerViewer });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ roleId: ROLES.partnerViewer, roleName: 'Partner Viewer' });
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.permission.change')).get();
    expect(audit?.details).toMatchObject({ oldRoleId: ROLES.partnerTechnician, newRoleId: ROLES.partnerViewer });
    // The change takes effect on the user's next request.
    const me = await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech });
    expect(me.body.roleId).toBe(ROLES.partnerViewer);

    const orgRole = await as('orgUser', 'POST', `/users/${w.users.siteUser.id}/role`, { roleId: ROLES.orgViewer });
    expect(orgRole.status).toBe(200);
    expect(t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, w.users.siteUser.id)).get()?.roleId).toBe(ROLES.orgViewer);
  });

  it('docs/api-notes: a caller does not disable, remove or re-role a user whose role exceeds its own', async () => {
    const managerRole = customRole(t, { partnerId: w.partnerA.id }, 'partner', ['users:read', 'users:write', 'users:delete']);
    const manager = await seedUser(t, { email: 'manager@a.test', partner: { partnerId: w.partnerA.id, roleId: managerRole, orgAccess: 'all' }, login: 'mint', mfa: true });
    const call = (method: Method, url: string, body?: unknown) => t.call(method, `${API}${url}`, { token: manager.token, ...(body ? { body } : {}) });
    expect((await call('PATCH', `/users/${w.users.aAdmin.id}`, { status: 'disabled' })).status).toBe(403);
    expect((await call('DELETE', `/users/${w.users.aAdmin.id}`)).status).toBe(403);
    const viewer = await seedUser(t, { email: 'viewer@a.test', partner: { partnerId: w.partnerA.id, roleId: managerRole, orgAccess: 'all' }, login: false });
    expect((await call('PATCH', `/users/${viewer.id}`, { status: 'disabled' })).status).toBe(200);
  });
});
