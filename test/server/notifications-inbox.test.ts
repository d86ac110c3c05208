import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedOrg, seedPartner, seedUser, type SeededUser } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

let t: TestApp;
let alice: SeededUser;
let bob: SeededUser;
let orgId: string;

function give(userId: string, n: number, extra: { type?: 'alert' | 'system'; at?: (i: number) => string } = {}): void {
  t.services.inbox.deliver(
    t.db,
    Array.from({ length: n }, (_, i) => ({
      userId,
      orgId,
      type: extra.type ?? 'alert',
      priority: 'normal' as const,
      title: `title ${i}`,
      message: `message ${i}`,
      link: null,
      metadata: { i },
      ...(extra.at ? { createdAt: extra.at(i) } : {}),
    })),
  );
}

beforeEach(async () => {
  t = await createTestApp();
  const partner = seedPartner(t, { name: 'P', slug: 'p' });
  orgId = seedOrg(t, partner.id, { name: 'O', slug: 'o' }).id;
  alice = await seedUser(t, { email: 'alice@o.test', org: { orgId }, login: 'mint' });
  bob = await seedUser(t, { email: 'bob@o.test', org: { orgId }, login: 'mint' });
});
afterEach(async () => {
  await t.close();
});

describe('in-app notifications (02 §2.5, §4.2)', () => {
  it('02§4.2 list is newest first with total, unreadCount, limit (default 50) and offset (default 0)', async () => {
    give(alice.id, 3, { at: (i) => new Date(Date.UTC(2026, 0, 1 + i)).toISOString() });
    give(bob.id, 2);
    const res = await t.call('GET', '/api/v1/notifications', { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.unreadCount).toBe(3);
    expect(res.body.limit).toBe(50);
    expect(res.body.offset).toBe(0);
    expect(res.body.notifications.map((n: { title: string }) => n.title)).toEqual(['title 2', 'title 1', 'title 0']);
    const first = res.body.notifications[0];
    expect(Object.keys(first).sort()).toEqual(
      ['createdAt', 'id', 'link', 'message', 'metadata', 'orgId', 'priority', 'read', 'readAt', 'title', 'type', 'userId'].sort(),
    );
    expect(first).toMatchObject({ userId: alice.id, read: false, readAt: null, metadata: { i: 2 } });
    const paged = await t.call('GET', '/api/v1/notifications?limit=1&offset=1', { token: alice.token });
    expect(paged.body.notifications.map((n: { title: string }) => n.title)).toEqual(['title 1']);
    expect(paged.body.total).toBe(3);
  });

  it('02§4.2 unreadOnly and type filter the list', async () => {
    give(alice.id, 2, { type: 'alert' });
    give(alice.id, 1, { type: 'system' });
    const system = await t.call('GET', '/api/v1/notifications?type=system', { token: alice.token });
    expect(system.body.total).toBe(1);
    const someId = system.body.notifications[0].id as string;
    await t.call('PATCH', '/api/v1/notifications/read', { token: alice.token, body: { ids: [someId] } });
    const unread = await t.call('GET', '/api/v1/notifications?unreadOnly=true', { token: alice.token });
    expect(unread.body.total).toBe(2);
    expect(unread.body.notifications.every((n: { type: string }) => n.type === 'alert')).toBe(true);
    expect((await t.call('GET', '/api/v1/notifications?type=bogus', { token: alice.token })).status).toBe(400);
  });

  it('02§4.2 unread-count, mark read (default) and unread by ids or all', async () => {
    give(alice.id, 3);
    const count = async () => (await t.call('GET', '/api/v1/notifications/unread-count', { token: alice.token })).body.count;
    expect(await count()).toBe(3);
    const list = await t.call('GET', '/api/v1/notifications', { token: alice.token });
    const ids = list.body.notifications.map((n: { id: string }) => n.id) as string[];
    const marked = await t.call('PATCH', '/api/v1/notifications/read', { token: alice.token, body: { ids: ids.slice(0, 2) } });
    expect(marked.status).toBe(200);
    expect(marked.body).toEqual({ success: true });
    expect(await count()).toBe(1);
    const read = (await t.call('GET', '/api/v1/notifications', { token: alice.token })).body.notifications.find((n: { id: string }) => n.id === ids[0]);
    expect(read.read).toBe(true);
    expect(typeof read.readAt).toBe('string');
    await t.call('PATCH', '/api/v1/notifications/read', { token: alice.token, body: { all: true, read: false } });
    expect(await count()).toBe(3);
    await t.call('PATCH', '/api/v1/notifications/read', { token: alice.token, body: { all: true } });
    expect(await count()).toBe(0);
  });

  it('02§4.2 marking needs ids (UUIDs) or all', async () => {
    for (const body of [{}, { ids: [] }, { ids: ['not-a-uuid'] }, { read: false }]) {
      const res = await t.call('PATCH', '/api/v1/notifications/read', { token: alice.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("02§4.2 owner-only: another user's notifications are neither listed, counted, marked nor deleted", async () => {
    give(bob.id, 1);
    const bobs = (await t.call('GET', '/api/v1/notifications', { token: bob.token })).body.notifications[0].id as string;
    expect((await t.call('GET', '/api/v1/notifications', { token: alice.token })).body.total).toBe(0);
    await t.call('PATCH', '/api/v1/notifications/read', { token: alice.token, body: { ids: [bobs] } });
    await t.call('PATCH', '/api/v1/notifications/read', { token: alice.token, body: { all: true } });
    expect((await t.call('GET', '/api/v1/notifications/unread-count', { token: bob.token })).body.count).toBe(1);
    const del = await t.call('DELETE', `/api/v1/notifications/${bobs}`, { token: alice.token });
    expect(del.status).toBe(404);
    expect(del.body.error).toBe('Notification not found');
    await t.call('DELETE', '/api/v1/notifications', { token: alice.token });
    expect((await t.call('GET', '/api/v1/notifications', { token: bob.token })).body.total).toBe(1);
  });

  it('02§4.2 delete one (404 when absent) and delete all of the caller', async () => {
    give(alice.id, 3);
    const ids = (await t.call('GET', '/api/v1/notifications', { token: alice.token })).body.notifications.map((n: { id: string }) => n.id) as string[];
    const one = await t.call('DELETE', `/api/v1/notifications/${ids[0]}`, { token: alice.token });
    expect(one.body).toEqual({ success: true });
    expect((await t.call('DELETE', `/api/v1/notifications/${ids[0]}`, { token: alice.token })).status).toBe(404);
    expect((await t.call('GET', '/api/v1/notifications', { token: alice.token })).body.total).toBe(2);
    const all = await t.call('DELETE', '/api/v1/notifications', { token: alice.token });
    expect(all.body).toEqual({ success: true });
    expect((await t.call('GET', '/api/v1/notifications', { token: alice.token })).body.total).toBe(0);
  });

  it('05-wire 4.2 bearer only: API keys and anonymous callers are refused', async () => {
    expect((await t.call('GET', '/api/v1/notifications')).status).toBe(401);
  });
});
