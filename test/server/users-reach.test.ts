import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { deviceGroups, organizationUsers, partnerUsers, userTokens, users } from '../../src/server/db/schema/index.js';
import type { TestApp } from '../helpers/server.js';
import { useWorld, type Method } from '../helpers/world.js';
import { ROLES, seedRole, seedUser, type SeedUserOptions, type World } from '../helpers/seed.js';

const API = '/api/v1';

/**
 * 01 §1 "Every query is limited to the caller's position" and §2.6 (partner links orgAccess/orgIds, organization
 * links siteIds/deviceGroupIds): an invitation grants no reach the inviter lacks, and an administrator does not
 * reset, disable, remove, re-role or re-invite a user whose link reaches further than its own.
 */
describe('users: reach of invitations and of actions on other users (01 §1, §2.6)', () => {
  let t: TestApp, w: World;
  const as = useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  /** A device group of an organization, written straight into the database. */
  const group = (orgId: string, name: string) => t.db.insert(deviceGroups).values({ orgId, name, type: 'static' }).returning().get().id;
  /** A user that is acted on (no session needed). */
  const target = async (email: string, link: Pick<SeedUserOptions, 'partner' | 'org' | 'status'>) => (await seedUser(t, { email, ...link, login: false })).id;
  /** A caller of our own with a minted MFA session. */
  const caller = async (email: string, link: Pick<SeedUserOptions, 'partner' | 'org'>) => {
    const { token } = await seedUser(t, { email, ...link, login: 'mint', mfa: true });
    return (method: Method, url: string, body?: unknown) => t.call(method, `${API}${url}`, { token, ...(body !== undefined ? { body } : {}) });
  };
  const linkOf = (userId: string) => t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, userId)).get();
  const statusOf = (userId: string) => t.db.select().from(users).where(eq(users.id, userId)).get()?.status;
  const resetTokens = (userId: string) => t.db.select().from(userTokens).where(eq(userTokens.userId, userId)).all();

  it('01§2.6 an invite cannot grant device groups of another organization (400, like siteIds)', async () => {
    const own = group(w.orgA1.id, 'A1 servers');
    const foreign = group(w.orgA2.id, 'A2 servers');
    const res = await as('orgUser', 'POST', '/users/invite', { email: 'g1@a1.test', name: 'G1', roleId: ROLES.orgViewer, deviceGroupIds: [own, foreign] });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ error: `deviceGroupIds: unknown device group ${foreign}`, code: 'VALIDATION_ERROR' });
    expect(res.body.details.fieldErrors.deviceGroupIds).toEqual([`unknown device group ${foreign}`]);
    const unknown = await as('orgUser', 'POST', '/users/invite', { email: 'g1@a1.test', name: 'G1', roleId: ROLES.orgViewer, deviceGroupIds: [randomUUID()] });
    expect(unknown.status).toBe(400);
    // A partner user inviting into A1 is held to A1's groups too.
    const viaPartner = await as('aAdmin', 'POST', '/users/invite', { email: 'g2@a1.test', name: 'G2', roleId: ROLES.orgViewer, orgId: w.orgA1.id, deviceGroupIds: [foreign] });
    expect(viaPartner.status).toBe(400);
    expect(t.db.select().from(users).where(eq(users.email, 'g1@a1.test')).get()).toBeUndefined();
    expect(t.db.select().from(users).where(eq(users.email, 'g2@a1.test')).get()).toBeUndefined();

    const ok = await as('orgUser', 'POST', '/users/invite', { email: 'g3@a1.test', name: 'G3', roleId: ROLES.orgViewer, deviceGroupIds: [own] });
    expect(ok.status, ok.text).toBe(201);
    expect(linkOf(ok.body.id)?.deviceGroupIds).toEqual([own]);
  });

  it('01§2.6 an invite cannot grant device groups the inviter does not have', async () => {
    const mine = group(w.orgA1.id, 'Mine');
    const other = group(w.orgA1.id, 'Other');
    const inviter = await caller('grouped@a1.test', { org: { orgId: w.orgA1.id, deviceGroupIds: [mine] } });
    const outside = await inviter('POST', '/users/invite', { email: 'h1@a1.test', name: 'H1', roleId: ROLES.orgViewer, deviceGroupIds: [mine, other] });
    expect(outside.status, outside.text).toBe(403);
    expect(outside.body).toMatchObject({ error: 'Access to this device group denied', code: 'DEVICE_GROUP_ACCESS_DENIED' });
    expect(t.db.select().from(users).where(eq(users.email, 'h1@a1.test')).get()).toBeUndefined();

    const within = await inviter('POST', '/users/invite', { email: 'h2@a1.test', name: 'H2', roleId: ROLES.orgViewer, deviceGroupIds: [mine] });
    expect(within.status, within.text).toBe(201);
    expect(linkOf(within.body.id)?.deviceGroupIds).toEqual([mine]);
    const inherits = await inviter('POST', '/users/invite', { email: 'h3@a1.test', name: 'H3', roleId: ROLES.orgViewer });
    expect(inherits.status).toBe(201);
    expect(linkOf(inherits.body.id)?.deviceGroupIds).toEqual([mine]);
    // An unrestricted inviter grants any group of the organization.
    expect((await as('orgUser', 'POST', '/users/invite', { email: 'h4@a1.test', name: 'H4', roleId: ROLES.orgViewer, deviceGroupIds: [other] })).status).toBe(201);
  });

  it('01§1 a partner admin with selected organizations cannot reset the password of one with all', async () => {
    const res = await as('aSelAdmin', 'POST', `/users/${w.users.aAdmin.id}/reset-password`);
    expect(res.status, res.text).toBe(403);
    expect(res.body).toMatchObject({ error: 'Cannot manage a user whose access reaches beyond your own', code: 'REACH_NOT_HELD', wider: ['orgAccess'] });
    expect(res.text).not.toContain('reset-password?token=');
    expect(resetTokens(w.users.aAdmin.id)).toEqual([]);
    // Nor of one selecting an organization it does not reach, nor can one with none reset one with selected.
    const wider = await target('wider@a.test', { partner: { partnerId: w.partnerA.id, orgAccess: 'selected', orgIds: [w.orgA1.id, w.orgA2.id] } });
    const orgIds = await as('aSelAdmin', 'POST', `/users/${wider}/reset-password`);
    expect(orgIds.status).toBe(403);
    expect(orgIds.body).toMatchObject({ code: 'REACH_NOT_HELD', wider: ['orgIds'] });
    expect((await as('aNone', 'POST', `/users/${w.users.aSelAdmin.id}/reset-password`)).status).toBe(403);

    // Same or narrower reach: the link is issued (and returned, no mail service here).
    const same = await target('same@a.test', { partner: { partnerId: w.partnerA.id, orgAccess: 'selected', orgIds: [w.orgA1.id] } });
    const none = await target('none@a.test', { partner: { partnerId: w.partnerA.id, orgAccess: 'none' } });
    for (const id of [same, none, w.users.aTech.id, w.users.orgUser.id]) {
      const ok = await as('aSelAdmin', 'POST', `/users/${id}/reset-password`);
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body.resetUrl).toContain('/reset-password?token=');
    }
    expect((await as('aAdmin', 'POST', `/users/${wider}/reset-password`)).status).toBe(200);
    expect((await as('system', 'POST', `/users/${w.users.aAdmin.id}/reset-password`)).status).toBe(200);
  });

  it('01§1 a partner admin with selected organizations cannot disable, remove or re-role one with all', async () => {
    const disable = await as('aSelAdmin', 'PATCH', `/users/${w.users.aAdmin.id}`, { status: 'disabled' });
    expect(disable.status, disable.text).toBe(403);
    expect(disable.body.code).toBe('REACH_NOT_HELD');
    const role = await as('aSelAdmin', 'POST', `/users/${w.users.aAdmin.id}/role`, { roleId: ROLES.partnerViewer });
    expect(role.status).toBe(403);
    expect(role.body.code).toBe('REACH_NOT_HELD');
    const remove = await as('aSelAdmin', 'DELETE', `/users/${w.users.aAdmin.id}`);
    expect(remove.status).toBe(403);
    expect(remove.body.code).toBe('REACH_NOT_HELD');
    expect(statusOf(w.users.aAdmin.id)).toBe('active');
    expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, w.users.aAdmin.id)).get()?.roleId).toBe(ROLES.partnerAdmin);
    expect((await as('aAdmin', 'GET', '/users/me')).status).toBe(200);

    // Same reach: all three still work.
    const same = await target('same@a.test', { partner: { partnerId: w.partnerA.id, orgAccess: 'selected', orgIds: [w.orgA1.id] } });
    expect((await as('aSelAdmin', 'POST', `/users/${same}/role`, { roleId: ROLES.partnerViewer })).status).toBe(200);
    expect((await as('aSelAdmin', 'PATCH', `/users/${same}`, { status: 'disabled' })).status).toBe(200);
    expect((await as('aSelAdmin', 'DELETE', `/users/${same}`)).status).toBe(200);
    // A partner user reaching an organization reaches all of it: its users, however restricted, are narrower.
    expect((await as('aSelAdmin', 'PATCH', `/users/${w.users.orgUser.id}`, { status: 'disabled' })).status).toBe(200);
  });

  it('01§1 a site-restricted org admin cannot reset, disable, remove or re-role an unrestricted one', async () => {
    const victim = w.users.orgUser.id;
    const answers = [
      await as('siteUser', 'POST', `/users/${victim}/reset-password`),
      await as('siteUser', 'PATCH', `/users/${victim}`, { status: 'disabled' }),
      await as('siteUser', 'POST', `/users/${victim}/role`, { roleId: ROLES.orgViewer }),
      await as('siteUser', 'DELETE', `/users/${victim}`),
    ];
    for (const res of answers) {
      expect(res.status, res.text).toBe(403);
      expect(res.body).toMatchObject({ code: 'REACH_NOT_HELD', wider: ['siteIds'] });
    }
    expect(resetTokens(victim)).toEqual([]);
    expect(statusOf(victim)).toBe('active');
    expect(linkOf(victim)).toMatchObject({ roleId: ROLES.orgAdmin, siteIds: null });
    // Another site is wider too.
    const otherSite = await target('other-site@a1.test', { org: { orgId: w.orgA1.id, siteIds: [w.siteA1b.id] } });
    expect((await as('siteUser', 'POST', `/users/${otherSite}/reset-password`)).status).toBe(403);

    // The same sites (a site that no longer exists reaches nothing) or fewer: allowed.
    const same = await target('same-site@a1.test', { org: { orgId: w.orgA1.id, siteIds: [w.siteA1a.id, randomUUID()] } });
    const noSites = await target('no-site@a1.test', { org: { orgId: w.orgA1.id, siteIds: [] } });
    expect((await as('siteUser', 'POST', `/users/${same}/reset-password`)).status).toBe(200);
    expect((await as('siteUser', 'POST', `/users/${same}/role`, { roleId: ROLES.orgViewer })).status).toBe(200);
    expect((await as('siteUser', 'PATCH', `/users/${noSites}`, { status: 'disabled' })).status).toBe(200);
    expect((await as('siteUser', 'DELETE', `/users/${same}`)).status).toBe(200);
    expect((await as('orgUser', 'POST', `/users/${w.users.siteUser.id}/reset-password`)).status).toBe(200);
  });

  it('01§2.6 an org admin restricted to device groups cannot manage one with all groups or other groups', async () => {
    const mine = group(w.orgA1.id, 'Mine');
    const other = group(w.orgA1.id, 'Other');
    const grouped = await caller('grouped@a1.test', { org: { orgId: w.orgA1.id, deviceGroupIds: [mine] } });
    const more = await target('more@a1.test', { org: { orgId: w.orgA1.id, deviceGroupIds: [mine, other] } });
    for (const id of [w.users.orgUser.id, more]) {
      const res = await grouped('POST', `/users/${id}/reset-password`);
      expect(res.status, res.text).toBe(403);
      expect(res.body).toMatchObject({ code: 'REACH_NOT_HELD', wider: ['deviceGroupIds'] });
      expect((await grouped('DELETE', `/users/${id}`)).status).toBe(403);
    }
    const same = await target('same@a1.test', { org: { orgId: w.orgA1.id, deviceGroupIds: [mine] } });
    expect((await grouped('POST', `/users/${same}/reset-password`)).status).toBe(200);
    expect((await grouped('PATCH', `/users/${same}`, { status: 'disabled' })).status).toBe(200);
  });

  it('01§1 resend-invite cannot hand a narrower caller the invitation link of a user with wider reach or role', async () => {
    const broad = await as('aAdmin', 'POST', '/users/invite', { email: 'broad@a.test', name: 'Broad', roleId: ROLES.partnerAdmin });
    expect(broad.status).toBe(201);
    const resend = await as('aSelAdmin', 'POST', '/users/resend-invite', { userId: broad.body.id });
    expect(resend.status, resend.text).toBe(403);
    expect(resend.body.code).toBe('REACH_NOT_HELD');
    expect(resend.text).not.toContain('accept-invite');
    // Nor a caller with all organizations who may invite but holds fewer permissions than the invited role.
    const inviterRole = seedRole(t, { scope: 'partner', partnerId: w.partnerA.id, permissions: ['users:invite', 'users:read'] });
    const inviter = await caller('inviter@a.test', { partner: { partnerId: w.partnerA.id, roleId: inviterRole, orgAccess: 'all' } });
    const weaker = await inviter('POST', '/users/resend-invite', { userId: broad.body.id });
    expect(weaker.status, weaker.text).toBe(403);
    expect(weaker.body.code).toBe('PERMISSION_NOT_HELD');

    const narrow = await as('aAdmin', 'POST', '/users/invite', {
      email: 'narrow@a.test',
      name: 'Narrow',
      roleId: ROLES.partnerViewer,
      orgAccess: 'selected',
      orgIds: [w.orgA1.id],
    });
    const ok = await as('aSelAdmin', 'POST', '/users/resend-invite', { userId: narrow.body.id });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.inviteUrl).toContain('/accept-invite?token=');
  });
});
