import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { accessReviews, auditLogs, organizationUsers, partnerUsers, users } from '../../src/server/db/schema/index.js';
import type { TestApp } from '../helpers/server.js';
import { useWorld } from '../helpers/world.js';
import { ROLES, mintToken, seedRole, seedUser, type World, type WorldCaller } from '../helpers/seed.js';

const API = '/api/v1';

interface Item {
  id: string;
  userId: string;
  userEmail: string;
  decision: string;
}

describe('access reviews (01 §2.10, §3, §4.8)', () => {
  let t: TestApp, w: World;
  const as = useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  async function create(who: WorldCaller, name = 'Q1 review', extra: Record<string, unknown> = {}): Promise<string> {
    const res = await as(who, 'POST', '/access-reviews', { name, ...extra });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  }

  async function items(who: WorldCaller, reviewId: string): Promise<Item[]> {
    const res = await as(who, 'GET', `/access-reviews/${reviewId}`);
    expect(res.status).toBe(200);
    return res.body.items as Item[];
  }

  const decide = (who: WorldCaller, reviewId: string, itemId: string, decision: string, notes?: string) =>
    as(who, 'PATCH', `/access-reviews/${reviewId}/items/${itemId}`, { decision, ...(notes !== undefined ? { notes } : {}) });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('01§4.8 create snapshots one pending item per user-role mapping in scope: 201 {id,name,status,itemCount}; audit itemCount', async () => {
    const res = await as('aAdmin', 'POST', '/access-reviews', { name: 'Partner review', description: 'Quarterly', dueDate: '2030-01-31' });
    expect(res.status).toBe(201);
    // Partner A's partner-user links: aAdmin, aTech, aSelAdmin, aNone (organization users are not partner links).
    expect(res.body).toEqual({ id: expect.any(String), name: 'Partner review', status: 'pending', itemCount: 4 });
    const org = await as('orgUser', 'POST', '/access-reviews', { name: 'Org review' });
    expect(org.body.itemCount).toBe(2);

    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'access_review.create')).all();
    expect(audit.map((a) => a.details)).toEqual([{ itemCount: 4 }, { itemCount: 2 }]);
    expect(audit[1]).toMatchObject({ orgId: w.orgA1.id, resourceId: org.body.id });

    expect((await as('aAdmin', 'POST', '/access-reviews', { name: '' })).status).toBe(400);
    expect((await as('aAdmin', 'POST', '/access-reviews', { name: 'x'.repeat(256) })).status).toBe(400);
    expect((await as('aAdmin', 'POST', '/access-reviews', { name: 'x'.repeat(255) })).status).toBe(201);
  });

  it('01§4.8 get: the review with items {id,userId,userName,userEmail,lastActiveAt,roleId,roleName,decision,notes,reviewedAt,permissions[]}', async () => {
    t.db.update(users).set({ lastLoginAt: '2030-01-02T03:04:05.000Z' }).where(eq(users.id, w.users.aTech.id)).run();
    const id = await create('aAdmin', 'Detail', { reviewerId: w.users.aSelAdmin.id });
    const res = await as('aAdmin', 'GET', `/access-reviews/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id,
      name: 'Detail',
      description: null,
      status: 'pending',
      reviewerId: w.users.aSelAdmin.id,
      reviewerName: 'a-sel',
      dueDate: null,
      partnerId: w.partnerA.id,
      orgId: null,
      completedAt: null,
    });
    const tech = (res.body.items as Item[]).find((i) => i.userId === w.users.aTech.id);
    expect(tech).toEqual({
      id: expect.any(String),
      userId: w.users.aTech.id,
      userName: 'a-tech',
      userEmail: 'a-tech@a.test',
      lastActiveAt: '2030-01-02T03:04:05.000Z',
      roleId: ROLES.partnerTechnician,
      roleName: 'Partner Technician',
      decision: 'pending',
      notes: null,
      reviewedAt: null,
      reviewedBy: null,
      permissions: expect.arrayContaining(['devices:read', 'pam:approve', 'users:read']),
    });
    // A reviewer must belong to the same scope.
    const outsider = await as('aAdmin', 'POST', '/access-reviews', { name: 'Bad', reviewerId: w.users.bAdmin.id });
    expect(outsider.status).toBe(400);
    expect(outsider.body.code).toBe('REVIEWER_NOT_IN_SCOPE');
  });

  it('01§4.8 list: {data:[…]} ordered by createdAt ascending with reviewerName; each tenant sees its own', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const first = await create('aAdmin', 'First');
    vi.setSystemTime(Date.now() + 1000);
    const second = await create('aAdmin', 'Second');
    vi.setSystemTime(Date.now() + 1000);
    await create('bAdmin', 'Theirs');
    await create('orgUser', 'Org');
    const res = await as('aAdmin', 'GET', '/access-reviews');
    expect(res.status).toBe(200);
    expect((res.body.data as { id: string }[]).map((r) => r.id)).toEqual([first, second]);
    expect(res.body.data[0]).toMatchObject({ name: 'First', status: 'pending', reviewerId: w.users.aAdmin.id, reviewerName: 'a-admin' });
    expect((await as('orgUser', 'GET', '/access-reviews')).body.data.map((r: { name: string }) => r.name)).toEqual(['Org']);
    expect((await as('bAdmin', 'GET', `/access-reviews/${first}`)).status).toBe(404);
    expect((await as('orgUser', 'GET', `/access-reviews/${first}`)).status).toBe(404);
  });

  it('01§3 the first decision moves pending → in_progress; PATCH returns id, decision, notes, reviewedAt; audit reviewId and decision', async () => {
    const id = await create('aAdmin');
    const [first, second] = await items('aAdmin', id);
    if (!first || !second) throw new Error('expected items');

    const res = await decide('aAdmin', id, first.id, 'approved', 'Still needed');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: first.id, decision: 'approved', notes: 'Still needed', reviewedAt: expect.any(String) });
    expect((await as('aAdmin', 'GET', `/access-reviews/${id}`)).body.status).toBe('in_progress');

    // Back to pending: the review stays in progress; the decision's time is cleared.
    const undo = await decide('aAdmin', id, first.id, 'pending');
    expect(undo.body).toEqual({ id: first.id, decision: 'pending', notes: 'Still needed', reviewedAt: null });
    expect((await as('aAdmin', 'GET', `/access-reviews/${id}`)).body.status).toBe('in_progress');

    expect((await decide('aAdmin', id, second.id, 'maybe')).status).toBe(400);
    expect((await decide('aAdmin', id, randomUUID(), 'approved')).status).toBe(404);
    expect((await decide('aAdmin', randomUUID(), first.id, 'approved')).status).toBe(404);
    const other = await create('aAdmin', 'Other');
    const otherItem = (await items('aAdmin', other))[0];
    expect((await decide('aAdmin', id, otherItem?.id ?? '', 'approved')).status).toBe(404);

    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'access_review.item.update')).all();
    expect(audit[0]?.details).toMatchObject({ reviewId: id, decision: 'approved' });
  });

  it('01§4.8 complete refuses pending items with `Cannot complete review with pending items`', async () => {
    const id = await create('aAdmin');
    const all = await items('aAdmin', id);
    for (const item of all.slice(1)) await decide('aAdmin', id, item.id, 'approved');
    const res = await as('aAdmin', 'POST', `/access-reviews/${id}/complete`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'Cannot complete review with pending items', code: 'REVIEW_HAS_PENDING_ITEMS' });
    expect((await as('aAdmin', 'GET', `/access-reviews/${id}`)).body.status).toBe('in_progress');
  });

  it('01§3 complete removes revoked users from the scope and ends their sessions in one transaction; approved users stay', async () => {
    const id = await create('aAdmin');
    const all = await items('aAdmin', id);
    const revokedIds = [w.users.aTech.id, w.users.aNone.id];
    for (const item of all) await decide('aAdmin', id, item.id, revokedIds.includes(item.userId) ? 'revoked' : 'approved');
    expect((await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech })).status).toBe(200);

    const res = await as('aAdmin', 'POST', `/access-reviews/${id}/complete`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id, status: 'completed', completedAt: expect.any(String), revokedCount: 2 });

    for (const userId of revokedIds) {
      expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, userId)).get()).toBeUndefined();
      // The account itself stays.
      expect(t.db.select().from(users).where(eq(users.id, userId)).get()).toBeDefined();
    }
    expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, w.users.aSelAdmin.id)).get()).toBeDefined();
    expect((await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech })).status).toBe(401);
    expect((await t.call('GET', `${API}/users/me`, { token: w.tokens.aSelAdmin })).status).toBe(200);

    const got = await as('aAdmin', 'GET', `/access-reviews/${id}`);
    expect(got.body).toMatchObject({ status: 'completed', completedAt: res.body.completedAt });
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'access_review.complete')).get();
    expect(audit?.details).toMatchObject({ revokedCount: 2 });
  });

  it('01§3 completion is one transaction: a failure part-way removes nobody and leaves the review open', async () => {
    const id = await create('aAdmin');
    for (const item of await items('aAdmin', id)) {
      await decide('aAdmin', id, item.id, item.userId === w.users.aAdmin.id ? 'approved' : 'revoked');
    }
    const revoke = t.services.sessions.revokeAllForUser.bind(t.services.sessions);
    let calls = 0;
    const spy = vi.spyOn(t.services.sessions, 'revokeAllForUser').mockImplementation((tx, userId) => {
      if (++calls === 2) throw new Error('simulated failure');
      revoke(tx, userId);
    });
    const res = await as('aAdmin', 'POST', `/access-reviews/${id}/complete`);
    spy.mockRestore();
    expect(res.status).toBe(500);
    for (const who of ['aTech', 'aSelAdmin', 'aNone'] as const) {
      expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, w.users[who].id)).get()).toBeDefined();
      expect((await t.call('GET', `${API}/users/me`, { token: w.tokens[who] })).status).toBe(200);
    }
    expect((await as('aAdmin', 'GET', `/access-reviews/${id}`)).body.status).toBe('in_progress');
    expect((await as('aAdmin', 'POST', `/access-reviews/${id}/complete`)).body.revokedCount).toBe(3);
  });

  it('01§4.8 organization reviews remove organization-user links', async () => {
    const id = await create('orgUser');
    for (const item of await items('orgUser', id)) {
      await decide('orgUser', id, item.id, item.userId === w.users.siteUser.id ? 'revoked' : 'approved');
    }
    const res = await as('orgUser', 'POST', `/access-reviews/${id}/complete`);
    expect(res.body.revokedCount).toBe(1);
    expect(t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, w.users.siteUser.id)).get()).toBeUndefined();
    expect(t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, w.users.orgUser.id)).get()).toBeDefined();
  });

  it('01§3 a completed review is immutable: `Cannot modify completed review`, `Review is already completed`', async () => {
    const id = await create('aAdmin');
    const all = await items('aAdmin', id);
    for (const item of all) await decide('aAdmin', id, item.id, 'approved');
    expect((await as('aAdmin', 'POST', `/access-reviews/${id}/complete`)).status).toBe(200);

    const patch = await decide('aAdmin', id, all[0]?.id ?? '', 'revoked');
    expect(patch.status).toBe(400);
    expect(patch.body).toMatchObject({ error: 'Cannot modify completed review' });
    const again = await as('aAdmin', 'POST', `/access-reviews/${id}/complete`);
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'Review is already completed' });
    expect((await as('aAdmin', 'POST', `/access-reviews/${randomUUID()}/complete`)).status).toBe(404);
    expect((await items('aAdmin', id)).every((i) => i.decision === 'approved')).toBe(true);
  });

  it('01§4.8 a review with zero items can be completed at once', async () => {
    const review = t.db
      .insert(accessReviews)
      .values({ partnerId: w.partnerB.id, name: 'Empty', reviewerId: w.users.bAdmin.id })
      .returning()
      .get();
    const res = await as('bAdmin', 'POST', `/access-reviews/${review.id}/complete`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', revokedCount: 0 });
    // A pending review with items decided (none pending) completes too, straight from pending.
    const id = await create('bAdmin');
    const [only] = await items('bAdmin', id);
    await decide('bAdmin', id, only?.id ?? '', 'approved');
    expect((await as('bAdmin', 'POST', `/access-reviews/${id}/complete`)).status).toBe(200);
  });

  it('01§7 403 without partner or organization context and for partner users without access to all organizations', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const system = await as('system', method, '/access-reviews', method === 'POST' ? { name: 'Nope' } : undefined);
      expect(system.status).toBe(403);
      expect(system.body).toMatchObject({ error: 'Access reviews need a partner or organization context', code: 'TENANT_CONTEXT_REQUIRED' });
      for (const who of ['aSelAdmin', 'aNone'] as const) {
        const partial = await as(who, method, '/access-reviews', method === 'POST' ? { name: 'Nope' } : undefined);
        expect(partial.status).toBe(403);
        expect(partial.body).toMatchObject({ error: "Access reviews need access to all of the partner's organizations" });
      }
    }
    const id = await create('aAdmin');
    expect((await as('aSelAdmin', 'GET', `/access-reviews/${id}`)).status).toBe(403);
    expect((await as('aNone', 'POST', `/access-reviews/${id}/complete`)).status).toBe(403);
  });

  it('01§4.8 reads need users:read, writes users:write', async () => {
    const id = await create('aAdmin');
    const viewerOrg = await as('orgUser', 'POST', `/users/${w.users.siteUser.id}/role`, { roleId: ROLES.orgViewer });
    expect(viewerOrg.status).toBe(200);
    // The Org Viewer reads (users:read via *:read) but cannot write.
    expect((await as('siteUser', 'GET', '/access-reviews')).status).toBe(200);
    const write = await as('siteUser', 'POST', '/access-reviews', { name: 'Viewer review' });
    expect(write.status).toBe(403);
    expect(write.body.error).toBe('Permission denied');
    expect((await as('siteUser', 'POST', `/access-reviews/${id}/complete`)).status).toBe(403);
  });

  it('01§4.8 writes need users:write and no MFA: a session without MFA and an API key with users:write create, decide and complete', async () => {
    const noMfa = await mintToken(t, w.users.orgUser.id, { mfa: false });
    const created = await t.call('POST', `${API}/access-reviews`, { token: noMfa, body: { name: 'No MFA' } });
    expect(created.status, created.text).toBe(201);
    const review = await t.call('GET', `${API}/access-reviews/${created.body.id}`, { token: noMfa });
    const item = (review.body.items as Item[])[0];
    const decided = await t.call('PATCH', `${API}/access-reviews/${created.body.id}/items/${item?.id ?? ''}`, {
      token: noMfa,
      body: { decision: 'approved' },
    });
    expect(decided.status, decided.text).toBe(200);

    const keyRes = await t.call('POST', `${API}/api-keys`, {
      token: w.tokens.system,
      body: { orgId: w.orgA1.id, name: 'reviews', scopes: ['users:read', 'users:write'] },
    });
    expect(keyRes.status, keyRes.text).toBe(201);
    const apiKey = keyRes.body.key as string;
    const byKey = await t.call('POST', `${API}/access-reviews`, { apiKey, body: { name: 'By key' } });
    expect(byKey.status, byKey.text).toBe(201);
    expect(byKey.body.itemCount).toBe(created.body.itemCount);
    const keyReview = await t.call('GET', `${API}/access-reviews/${byKey.body.id}`, { apiKey });
    for (const it of keyReview.body.items as Item[]) {
      const res = await t.call('PATCH', `${API}/access-reviews/${byKey.body.id}/items/${it.id}`, {
        apiKey,
        body: { decision: 'approved' },
      });
      expect(res.status, res.text).toBe(200);
    }
    const done = await t.call('POST', `${API}/access-reviews/${byKey.body.id}/complete`, { apiKey });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', revokedCount: 0 });
  });
  /** A partner-A user with orgAccess all whose custom role holds exactly `permissions`, and its token (MFA). */
  async function partnerUserWith(email: string, permissions: string[]) {
    const roleId = seedRole(t, { scope: 'partner', partnerId: w.partnerA.id, permissions });
    return seedUser(t, { email, partner: { partnerId: w.partnerA.id, roleId, orgAccess: 'all' }, login: 'mint', mfa: true });
  }

  const itemOf = (all: Item[], userId: string): Item => {
    const item = all.find((i) => i.userId === userId);
    if (!item) throw new Error(`no item for ${userId}`);
    return item;
  };

  it('docs/api-notes Users and invitations: deciding revoked is 403 for the caller itself (SELF_REMOVE) and for a user whose role holds permissions the caller lacks (PERMISSION_NOT_HELD)', async () => {
    const reviewer = await partnerUserWith('reviewer@a.test', ['users:read', 'users:write']);
    const low = await partnerUserWith('low@a.test', ['users:read']);
    const created = await t.call('POST', `${API}/access-reviews`, { token: reviewer.token, body: { name: 'Limited' } });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    const all = await items('aAdmin', id);
    const patch = (item: Item, decision: string) =>
      t.call('PATCH', `${API}/access-reviews/${id}/items/${item.id}`, { token: reviewer.token, body: { decision } });

    const self = await patch(itemOf(all, reviewer.id), 'revoked');
    expect(self.status).toBe(403);
    expect(self.body).toMatchObject({ error: 'You cannot remove yourself', code: 'SELF_REMOVE' });
    // The Partner Technician's role holds permissions (devices:read …) the reviewer lacks.
    const beyond = await patch(itemOf(all, w.users.aTech.id), 'revoked');
    expect(beyond.status).toBe(403);
    expect(beyond.body).toMatchObject({ error: 'Cannot manage a user whose role has permissions you do not hold', code: 'PERMISSION_NOT_HELD' });
    expect(beyond.body.missing).toEqual(expect.arrayContaining(['devices:read']));
    expect((await patch(itemOf(all, w.users.aAdmin.id), 'revoked')).status).toBe(403);
    // Approving them, and revoking a user within the caller's own permissions, are fine.
    expect((await patch(itemOf(all, reviewer.id), 'approved')).status).toBe(200);
    expect((await patch(itemOf(all, w.users.aTech.id), 'approved')).status).toBe(200);
    expect((await patch(itemOf(all, low.id), 'revoked')).status).toBe(200);
    // A Partner Admin (*:*) cannot revoke itself either.
    const own = await decide('aAdmin', id, itemOf(all, w.users.aAdmin.id).id, 'revoked');
    expect(own.status).toBe(403);
    expect(own.body.code).toBe('SELF_REMOVE');

    const after = await items('aAdmin', id);
    expect(itemOf(after, w.users.aAdmin.id).decision).toBe('pending');
    expect(itemOf(after, reviewer.id).decision).toBe('approved');
    const audited = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'access_review.item.update')).all();
    expect(audited.map((a) => a.details.decision)).toEqual(['approved', 'approved', 'revoked']);
  });

  it('docs/api-notes Users and invitations: completing a review cannot remove a user whose role holds permissions the completing caller lacks: 403, nobody removed', async () => {
    const reviewer = await partnerUserWith('reviewer@a.test', ['users:read', 'users:write']);
    const low = await partnerUserWith('low@a.test', ['users:read']);
    const id = await create('aAdmin');
    // A Partner Admin decides; the limited reviewer completes.
    for (const item of await items('aAdmin', id)) {
      await decide('aAdmin', id, item.id, [w.users.aTech.id, low.id].includes(item.userId) ? 'revoked' : 'approved');
    }
    const res = await t.call('POST', `${API}/access-reviews/${id}/complete`, { token: reviewer.token });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'Cannot manage a user whose role has permissions you do not hold', code: 'PERMISSION_NOT_HELD' });
    for (const userId of [w.users.aTech.id, low.id]) {
      expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, userId)).get()).toBeDefined();
    }
    expect((await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech })).status).toBe(200);
    expect((await as('aAdmin', 'GET', `/access-reviews/${id}`)).body).toMatchObject({ status: 'in_progress', completedAt: null });
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'access_review.complete')).all()).toHaveLength(0);

    const done = await as('aAdmin', 'POST', `/access-reviews/${id}/complete`);
    expect(done.status, done.text).toBe(200);
    expect(done.body.revokedCount).toBe(2);
  });

  it('docs/api-notes Users and invitations: completing a review cannot remove the completing caller itself (403 SELF_REMOVE), whoever decided', async () => {
    const admin2 = await seedUser(t, { email: 'a-admin2@a.test', partner: { partnerId: w.partnerA.id, orgAccess: 'all' }, login: 'mint', mfa: true });
    const id = await create('aAdmin');
    // aAdmin revokes the second Partner Admin (allowed: not itself, nothing beyond *:*); that admin completes.
    for (const item of await items('aAdmin', id)) await decide('aAdmin', id, item.id, item.userId === admin2.id ? 'revoked' : 'approved');
    const self = await t.call('POST', `${API}/access-reviews/${id}/complete`, { token: admin2.token });
    expect(self.status).toBe(403);
    expect(self.body).toMatchObject({ error: 'You cannot remove yourself', code: 'SELF_REMOVE' });
    expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, admin2.id)).get()).toBeDefined();
    expect((await t.call('GET', `${API}/users/me`, { token: admin2.token })).status).toBe(200);
    expect((await as('aAdmin', 'GET', `/access-reviews/${id}`)).body.status).toBe('in_progress');

    const done = await as('aAdmin', 'POST', `/access-reviews/${id}/complete`);
    expect(done.status, done.text).toBe(200);
    expect(done.body.revokedCount).toBe(1);
    expect(t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, admin2.id)).get()).toBeUndefined();
  });

  it("docs/api-notes Users and invitations: an API key is not its creator for the self rule, and revokes only users its scopes cover", async () => {
    const roleId = seedRole(t, { scope: 'organization', orgId: w.orgA1.id, permissions: ['organizations:write', 'users:read', 'users:write'] });
    const creator = await seedUser(t, { email: 'keys@a1.test', org: { orgId: w.orgA1.id, roleId }, login: 'mint', mfa: true });
    const keyRes = await t.call('POST', `${API}/api-keys`, {
      token: creator.token,
      body: { orgId: w.orgA1.id, name: 'reviews', scopes: ['organizations:write', 'users:read', 'users:write'] },
    });
    expect(keyRes.status, keyRes.text).toBe(201);
    const apiKey = keyRes.body.key as string;
    const byKey = await t.call('POST', `${API}/access-reviews`, { apiKey, body: { name: 'By key' } });
    expect(byKey.status, byKey.text).toBe(201);
    const id = byKey.body.id as string;
    const all = (await t.call('GET', `${API}/access-reviews/${id}`, { apiKey })).body.items as Item[];
    const patch = (userId: string, decision: string) =>
      t.call('PATCH', `${API}/access-reviews/${id}/items/${itemOf(all, userId).id}`, { apiKey, body: { decision } });

    // The Org Admins' role holds far more than the key's scopes.
    const beyond = await patch(w.users.orgUser.id, 'revoked');
    expect(beyond.status).toBe(403);
    expect(beyond.body.code).toBe('PERMISSION_NOT_HELD');
    expect((await patch(w.users.orgUser.id, 'approved')).status).toBe(200);
    expect((await patch(w.users.siteUser.id, 'approved')).status).toBe(200);
    // The key's creator holds nothing beyond the key: the key may revoke it, and completing removes it.
    const creatorItem = await patch(creator.id, 'revoked');
    expect(creatorItem.status, creatorItem.text).toBe(200);
    const done = await t.call('POST', `${API}/access-reviews/${id}/complete`, { apiKey });
    expect(done.status, done.text).toBe(200);
    expect(done.body.revokedCount).toBe(1);
    expect(t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, creator.id)).get()).toBeUndefined();
  });

  it("docs/api-notes Roles and permissions: a key's review has no reviewer by default (it was the key's creator); its audit entries name the key", async () => {
    const keyRes = await t.call('POST', `${API}/api-keys`, {
      token: w.tokens.system,
      body: { orgId: w.orgA1.id, name: 'reviews', scopes: ['users:read', 'users:write'] },
    });
    expect(keyRes.status, keyRes.text).toBe(201);
    const apiKey = keyRes.body.key as string;
    const keyId = keyRes.body.id as string;
    const byKey = await t.call('POST', `${API}/access-reviews`, { apiKey, body: { name: 'By key' } });
    expect(byKey.status, byKey.text).toBe(201);
    const id = byKey.body.id as string;
    const got = await t.call('GET', `${API}/access-reviews/${id}`, { apiKey });
    expect(got.body).toMatchObject({ reviewerId: null, reviewerName: null });
    expect((await t.call('GET', `${API}/access-reviews`, { apiKey })).body.data[0]).toMatchObject({ reviewerId: null, reviewerName: null });
    // A reviewer named explicitly is kept.
    const named = await t.call('POST', `${API}/access-reviews`, { apiKey, body: { name: 'Named', reviewerId: w.users.orgUser.id } });
    expect((await t.call('GET', `${API}/access-reviews/${named.body.id}`, { apiKey })).body.reviewerId).toBe(w.users.orgUser.id);

    const item = (got.body.items as Item[])[0];
    const decided = await t.call('PATCH', `${API}/access-reviews/${id}/items/${item?.id ?? ''}`, { apiKey, body: { decision: 'approved' } });
    expect(decided.status, decided.text).toBe(200);
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'access_review.item.update')).get();
    expect(audit).toMatchObject({ actorType: 'api_key', actorId: keyId });

    // A session's decisions still name its user.
    const mine = await create('orgUser', 'Mine');
    const [first] = await items('orgUser', mine);
    await decide('orgUser', mine, first?.id ?? '', 'approved');
    const mineItems = (await as('orgUser', 'GET', `/access-reviews/${mine}`)).body;
    expect(mineItems).toMatchObject({ reviewerId: w.users.orgUser.id });
    expect(mineItems.items.find((i: Item) => i.id === first?.id)?.reviewedBy).toBe(w.users.orgUser.id);
    expect(t.db.select().from(accessReviews).where(eq(accessReviews.id, mine)).get()?.createdBy).toBe(w.users.orgUser.id);
  });
});
