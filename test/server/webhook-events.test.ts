import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { useReceiverWorld } from '../helpers/world.js';
import { enrollDevice } from '../helpers/pam.js';
import { webhookDeliveries } from '../../src/server/db/schema/index.js';
import type { Receiver } from '../helpers/https-receiver.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1';
const ENV = { SVC_OUTBOUND_ALLOW: '127.0.0.1/32', SVC_WEBHOOK_TIME_SCALE: '0.01', SVC_JOB_POLL_MS: '10' };

/** 02 §6: the device and user events this server publishes reach the webhooks of the organization subscribed to
 * them, with what the event says of its device or user. */
describe('webhook events of devices and users (02 §6, §2.7)', () => {
  let t: TestApp;
  let w: World;
  let receiver: Receiver;
  const world = useReceiverWorld(ENV);

  /** A webhook of organization A1 subscribed to `events`; returns a reader of its deliveries (event, data). */
  const subscribe = async (events: string[]) => {
    ({ t, w, receiver } = await world.setup());
    const res = await t.call('POST', `${API}/webhooks`, {
      token: w.tokens.aAdmin,
      body: { name: 'events', orgId: w.orgA1.id, url: `${receiver.url}/h`, secret: 's3cret', events },
    });
    expect(res.status, res.text).toBe(201);
    const id = res.body.id as string;
    return () =>
      t.db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.webhookId, id))
        .all()
        .map((d) => ({ event: d.event, data: d.payload.data as Record<string, unknown> }));
  };

  /** Runs the job worker until `count` deliveries exist, then a moment more (nothing further may come). */
  const delivered = async (read: () => { event: string; data: Record<string, unknown> }[], count = 1) => {
    t.worker.start();
    await vi.waitFor(() => expect(read().length).toBeGreaterThanOrEqual(count), { timeout: 5_000, interval: 20 });
    await new Promise((r) => setTimeout(r, 100));
    return read();
  };

  it('02§6 decommissioning a device delivers device.decommissioned with the device and its previous status', async () => {
    const read = await subscribe(['device.decommissioned']);
    const dev = await enrollDevice(t, w.tokens.aAdmin, w.orgA1.id, w.siteA1a.id, 'web-01');
    const res = await t.call('DELETE', `${API}/devices/${dev.deviceId}`, { token: w.tokens.aAdmin });
    expect(res.status, res.text).toBe(200);
    const [one, ...more] = await delivered(read);
    expect(more).toEqual([]);
    expect(one).toMatchObject({
      event: 'device.decommissioned',
      data: { deviceId: dev.deviceId, agentId: dev.agentId, orgId: w.orgA1.id, siteId: w.siteA1a.id, hostname: 'web-01', previousStatus: 'online' },
    });
  });

  it('02§6 a device that misses its heartbeats delivers device.offline; its next heartbeat delivers device.online', async () => {
    const read = await subscribe(['device.offline', 'device.online']);
    const dev = await enrollDevice(t, w.tokens.aAdmin, w.orgA1.id, null, 'web-02');
    expect(t.services.devices.markOffline(Date.now() + 24 * 3600_000)).toBe(1);
    const offline = await delivered(read);
    expect(offline).toMatchObject([{ event: 'device.offline', data: { deviceId: dev.deviceId, hostname: 'web-02', previousStatus: 'online', status: 'offline' } }]);

    const beat = await t.call('POST', `${API}/agents/${dev.agentId}/heartbeat`, { token: dev.token, body: {} });
    expect(beat.status, beat.text).toBe(200);
    const both = await delivered(read, 2);
    expect(both[1]).toMatchObject({ event: 'device.online', data: { deviceId: dev.deviceId, previousStatus: 'offline', status: 'online' } });
    // A heartbeat that changes no status publishes nothing.
    await t.call('POST', `${API}/agents/${dev.agentId}/heartbeat`, { token: dev.token, body: {} });
    expect(await delivered(read, 2)).toHaveLength(2);
  });

  it('02§6 an administrator\'s change to a device delivers device.updated naming the fields changed', async () => {
    const read = await subscribe(['device.updated']);
    const dev = await enrollDevice(t, w.tokens.aAdmin, w.orgA1.id, null, 'web-03');
    const res = await t.call('PATCH', `${API}/devices/${dev.deviceId}`, { token: w.tokens.aAdmin, body: { displayName: 'Front desk', tags: ['lobby'] } });
    expect(res.status, res.text).toBe(200);
    expect(await delivered(read)).toMatchObject([{ event: 'device.updated', data: { deviceId: dev.deviceId, changedFields: ['displayName', 'tags'] } }]);
  });

  it('02§6 a sign-in and a sign-out of an organization user deliver user.login and user.logout; no secret travels', async () => {
    const read = await subscribe(['user.login', 'user.logout']);
    const { email, password } = w.users.orgUser;
    const login = await t.call('POST', `${API}/auth/login`, { body: { email, password } });
    expect(login.status, login.text).toBe(200);
    const logout = await t.call('POST', `${API}/auth/logout`, { token: login.body.accessToken ?? login.body.tokens?.accessToken });
    expect(logout.status, logout.text).toBeLessThan(300);
    const events = await delivered(read, 2);
    expect(events.map((e) => e.event)).toEqual(['user.login', 'user.logout']);
    expect(events[0]?.data).toMatchObject({ userId: w.users.orgUser.id, email, orgId: w.orgA1.id, mfa: false });
    expect(JSON.stringify(events)).not.toContain(password);
  });

  it('02§6 a partner user\'s sign-in belongs to no organization: no organization webhook hears of it', async () => {
    const read = await subscribe(['user.login']);
    const { email, password } = w.users.aAdmin;
    const login = await t.call('POST', `${API}/auth/login`, { body: { email, password } });
    expect(login.status, login.text).toBe(200);
    t.worker.start();
    await new Promise((r) => setTimeout(r, 300));
    expect(read()).toEqual([]);
  });

  it('02§2.7 a custom header value a request cannot carry (beyond Latin-1) is refused at creation', async () => {
    ({ t, w, receiver } = await world.setup());
    const res = await t.call('POST', `${API}/webhooks`, {
      token: w.tokens.aAdmin,
      body: { name: 'h', orgId: w.orgA1.id, url: `${receiver.url}/h`, secret: 's3cret', events: ['*'], headers: [{ key: 'X-Team', value: 'Zürich €' }] },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.text).toContain('Header \\"X-Team\\" can hold only Latin-1 characters');
    // Latin-1 itself is fine: Node's client sends it.
    const ok = await t.call('POST', `${API}/webhooks`, {
      token: w.tokens.aAdmin,
      body: { name: 'h', orgId: w.orgA1.id, url: `${receiver.url}/h`, secret: 's3cret', events: ['*'], headers: [{ key: 'X-Team', value: 'Zürich' }] },
    });
    expect(ok.status, ok.text).toBe(201);
  });
});
