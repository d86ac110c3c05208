import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alerts, devices } from '../../src/server/db/schema/index.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { seedRestrictedWorld } from '../helpers/restricted.js';
import { seedUser, type World } from '../helpers/seed.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';

const API = '/api/v1';
const WEB = { operator: 'AND', conditions: [{ field: 'hostname', operator: 'startsWith', value: 'web' }] };

/**
 * 01 §2.6 on device groups, saved filters and mobile (02 §2.9, §4.5, §4.6): a caller restricted to sites or device
 * groups sees, counts and changes only devices it may see, through every group endpoint, and cannot widen its own
 * reach; the filter compiler refuses keys and dates it cannot compare.
 * Devices: web-in (site A1a, group Mine), web-out (site A1a, group Other), web-b (site A1b, group Other).
 * groupUser is an Org Admin of A1 restricted to Mine; siteUser is restricted to site A1a.
 */
describe('device groups for a caller restricted to sites or device groups (01 §2.6)', () => {
  let t: TestApp;
  let w: World;
  let inGroup: SimulatedAgent;
  let outside: SimulatedAgent;
  let otherSite: SimulatedAgent;
  let groupId: string;
  let otherGroupId: string;
  let groupUser: string;

  const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.call(method, `${API}${url}`, { token, ...(body !== undefined ? { body } : {}) });

  /** A group created by the unrestricted Org Admin; answers its id. */
  const createGroup = async (body: Record<string, unknown>): Promise<string> => {
    const res = await as(w.tokens.orgUser, 'POST', '/groups', body);
    expect(res.status, res.text).toBe(201);
    return res.body.data.id as string;
  };

  /** An alert of a device, written directly (no rule needed). */
  const alertOf = (deviceId: string | null, title: string) =>
    t.db
      .insert(alerts)
      .values({ orgId: w.orgA1.id, siteId: w.siteA1a.id, deviceId, severity: 'high', title, message: title, triggeredAt: new Date().toISOString() })
      .returning()
      .get();

  beforeEach(async () => {
    t = await createTestApp();
    ({ w, inGroup, outside, otherSite, groupId, groupUser } = await seedRestrictedWorld(t));
    otherGroupId = await createGroup({ name: 'Other', deviceIds: [outside.deviceId, otherSite.deviceId] });
  });
  afterEach(async () => t.close());

  it('01§2.6 group membership log: a device-group-restricted user does not see devices outside its groups', async () => {
    const log = await as(groupUser, 'GET', `/groups/${otherGroupId}/membership-log`);
    expect(log.status, log.text).toBe(200);
    expect(log.body.data).toEqual([]);
    expect(log.body.total).toBe(0);
    // The unrestricted Org Admin still sees both entries.
    expect((await as(w.tokens.orgUser, 'GET', `/groups/${otherGroupId}/membership-log`)).body.total).toBe(2);
  });

  it('01§2.6 group membership log: a site-restricted user does not see devices of other sites', async () => {
    const log = await as(w.tokens.siteUser, 'GET', `/groups/${otherGroupId}/membership-log`);
    expect(log.status, log.text).toBe(200);
    expect(log.body.data.map((e: { hostname: string | null }) => e.hostname)).toEqual(['web-out']);
    expect(log.body.total).toBe(1);
  });

  it('01§2.6 dynamic group preview: a site-restricted user sees only devices of its sites', async () => {
    const dynId = await createGroup({ name: 'All web', filterConditions: WEB });
    // The filter preview of the same tree is limited to the caller's site (2 devices), and so is the group's.
    expect((await as(w.tokens.siteUser, 'POST', '/filters/preview', { conditions: WEB })).body.data.totalCount).toBe(2);
    const preview = await as(w.tokens.siteUser, 'POST', `/groups/${dynId}/preview`, {});
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.devices.map((d: { hostname: string }) => d.hostname)).toEqual(['web-in', 'web-out']);
    expect(preview.body.data.totalCount).toBe(2);
    expect((await as(w.tokens.orgUser, 'POST', `/groups/${dynId}/preview`, {})).body.data.totalCount).toBe(3);
  });

  it("01§2.6 dynamic group preview: a device-group-restricted user sees only its groups' members", async () => {
    const dynId = await createGroup({ name: 'All web', filterConditions: WEB });
    const preview = await as(groupUser, 'POST', `/groups/${dynId}/preview`, {});
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.devices.map((d: { id: string }) => d.id)).toEqual([inGroup.deviceId]);
    expect(preview.body.data.totalCount).toBe(1);
  });

  it('01§2.6 removing a group member: a device-group-restricted user cannot change the membership of a device it cannot see', async () => {
    const res = await as(groupUser, 'DELETE', `/groups/${otherGroupId}/devices/${outside.deviceId}`);
    expect(res.status, res.text).toBe(404);
    expect(res.body.error).toBe('Device not found');
    const members = await as(w.tokens.orgUser, 'GET', `/groups/${otherGroupId}/devices`);
    expect(members.body.data.map((d: { deviceId: string }) => d.deviceId)).toContain(outside.deviceId);
    expect((await as(w.tokens.orgUser, 'GET', `/groups/${otherGroupId}/membership-log`)).body.total).toBe(2);
  });

  it('01§2.6 unpinning: a device-group-restricted user cannot unpin a device it cannot see', async () => {
    const dynId = await createGroup({ name: 'Only web-in', filterConditions: { operator: 'AND', conditions: [{ field: 'hostname', operator: 'equals', value: 'web-in' }] } });
    const pinned = await as(w.tokens.orgUser, 'POST', `/groups/${dynId}/devices/${outside.deviceId}/pin`, {});
    expect(pinned.status, pinned.text).toBeLessThan(300);
    const res = await as(groupUser, 'DELETE', `/groups/${dynId}/devices/${outside.deviceId}/pin`);
    expect(res.status, res.text).toBe(404);
    expect(res.body.error).toBe('Device not found');
    const members = await as(w.tokens.orgUser, 'GET', `/groups/${dynId}/devices`);
    expect(members.body.data.find((d: { deviceId: string }) => d.deviceId === outside.deviceId)?.isPinned).toBe(true);
  });

  it("01§2.6 a device-group-restricted user cannot widen its own reach by rewriting its dynamic group's conditions", async () => {
    const narrow = { operator: 'AND', conditions: [{ field: 'hostname', operator: 'equals', value: 'web-in' }] };
    const dynId = await createGroup({ name: 'Only web-in', filterConditions: narrow });
    const user = (await seedUser(t, { email: 'dyn@a1.test', org: { orgId: w.orgA1.id, deviceGroupIds: [dynId] }, login: 'mint', mfa: true })).token;
    const visible = async () => (await as(user, 'GET', '/devices?page=1')).body.data.map((d: { id: string }) => d.id);
    expect(await visible()).toEqual([inGroup.deviceId]);
    for (const body of [{ filterConditions: WEB }, { siteId: w.siteA1a.id }]) {
      const res = await as(user, 'PATCH', `/groups/${dynId}`, body);
      expect(res.status, res.text).toBe(403);
      expect(res.body.code).toBe('DEVICE_GROUP_ACCESS_DENIED');
    }
    expect(await visible()).toEqual([inGroup.deviceId]);
    // Its name, the same conditions again, and groups outside its restriction stay its to change.
    expect((await as(user, 'PATCH', `/groups/${dynId}`, { name: 'Renamed', filterConditions: narrow })).status).toBe(200);
    const elsewhere = await createGroup({ name: 'Elsewhere', filterConditions: narrow });
    expect((await as(user, 'PATCH', `/groups/${elsewhere}`, { filterConditions: WEB })).status).toBe(200);
    // The unrestricted Org Admin may widen it.
    expect((await as(w.tokens.orgUser, 'PATCH', `/groups/${dynId}`, { filterConditions: WEB })).status).toBe(200);
  });

  it('01§2.6 group deviceCount: a device-group-restricted user is not told how many invisible members a group has', async () => {
    const res = await as(groupUser, 'GET', `/groups/${otherGroupId}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.deviceCount).toBe(0);
    const list = await as(w.tokens.siteUser, 'GET', '/groups');
    const counts = Object.fromEntries(list.body.data.map((g: { name: string; deviceCount: number }) => [g.name, g.deviceCount]));
    expect(counts).toEqual({ Mine: 1, Other: 1 });
    expect((await as(w.tokens.orgUser, 'GET', `/groups/${otherGroupId}`)).body.data.deviceCount).toBe(2);
  });

  it('01§2.6 alerts: a device-group-restricted user lists, reads and counts only alerts of devices in its groups', async () => {
    const mine = alertOf(inGroup.deviceId, 'CPU high on mine');
    const theirs = alertOf(outside.deviceId, 'CPU high elsewhere');
    alertOf(null, 'Organization-wide');
    const list = await as(groupUser, 'GET', '/alerts');
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([mine.id]);
    expect((await as(groupUser, 'GET', `/alerts/${theirs.id}`)).status).toBe(404);
    expect((await as(groupUser, 'GET', `/alerts/${mine.id}`)).status).toBe(200);
    expect((await as(groupUser, 'GET', '/alerts/summary')).body.total).toBe(1);
    // Acting on one out of reach is refused like reading it.
    expect((await as(groupUser, 'POST', `/alerts/${theirs.id}/acknowledge`, {})).status).toBe(404);
    // The unrestricted Org Admin sees all three.
    expect((await as(w.tokens.orgUser, 'GET', '/alerts')).body.data).toHaveLength(3);
  });

  it('01§2.6 alerts bulk: a device-group-restricted user changes only alerts of devices in its groups', async () => {
    const mine = alertOf(inGroup.deviceId, 'Memory high on mine');
    const theirs = alertOf(outside.deviceId, 'Memory high elsewhere');
    const res = await as(groupUser, 'POST', '/alerts/bulk', { action: 'acknowledge', alertIds: [mine.id, theirs.id] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ updated: 1, skipped: 0, failed: 0 });
    const statusOf = (id: string) => t.db.select({ status: alerts.status }).from(alerts).where(eq(alerts.id, id)).get()?.status;
    expect(statusOf(mine.id)).toBe('acknowledged');
    expect(statusOf(theirs.id)).toBe('active');
    // Only alerts out of its groups: as if none existed.
    expect((await as(groupUser, 'POST', '/alerts/bulk', { action: 'resolve', alertIds: [theirs.id] })).status).toBe(404);
    expect(statusOf(theirs.id)).toBe('active');
  });

  it('02§4.6 mobile inbox: a device-group-restricted user is shown only alerts of devices in its groups', async () => {
    const mine = alertOf(inGroup.deviceId, 'Disk low on mine');
    alertOf(outside.deviceId, 'Disk low elsewhere');
    const inbox = await as(groupUser, 'GET', '/mobile/alerts/inbox');
    expect(inbox.status, inbox.text).toBe(200);
    expect(inbox.body.data.map((a: { id: string }) => a.id)).toEqual([mine.id]);
    expect(JSON.stringify(inbox.body)).not.toContain('web-out');
  });

  it("01§2.6 search: alerts of devices outside a device-group-restricted user's groups are not found", async () => {
    alertOf(outside.deviceId, 'Disk zeta full');
    alertOf(inGroup.deviceId, 'Disk zeta low');
    const res = await as(groupUser, 'GET', '/search?q=zeta');
    expect(res.status, res.text).toBe(200);
    const found = res.body.results.filter((r: { type: string }) => r.type === 'alerts');
    expect(found.map((r: { title: string }) => r.title)).toEqual(['Disk zeta low']);
  });

  it('02§4.1 correlation: a device-group-restricted user is shown no link involving an alert out of its groups', async () => {
    const mine = [alertOf(inGroup.deviceId, 'one').id, alertOf(inGroup.deviceId, 'two').id];
    const theirs = [alertOf(outside.deviceId, 'three').id, alertOf(outside.deviceId, 'four').id];
    const analyzed = await as(w.tokens.orgUser, 'POST', '/alert-templates/correlations/analyze', { orgId: w.orgA1.id, windowMinutes: 60 });
    expect(analyzed.status, analyzed.text).toBe(200);
    const linked = (body: { data: { alertId: string; relatedAlertId: string }[] } | { data: { links: { alertId: string; relatedAlertId: string }[] } }) =>
      ('links' in body.data ? body.data.links : body.data).flatMap((l) => [l.alertId, l.relatedAlertId]);
    // Same-device links exist on both devices for the unrestricted admin.
    expect(linked(analyzed.body)).toEqual(expect.arrayContaining([...mine, ...theirs]));
    const links = await as(groupUser, 'GET', '/alert-templates/correlations');
    expect(links.status, links.text).toBe(200);
    expect(linked(links.body).sort()).toEqual([...mine].sort());
    const own = await as(groupUser, 'POST', '/alert-templates/correlations/analyze', { windowMinutes: 60 });
    expect(own.status, own.text).toBe(200);
    expect(linked(own.body).sort()).toEqual([...mine].sort());
  });

  it('02§4.5/§7 an unknown field key named like an Object.prototype member (constructor, toString) is 400 Invalid filter, not 500', async () => {
    for (const field of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const conditions = { operator: 'AND', conditions: [{ field, operator: 'equals', value: 'x' }] };
      const preview = await as(w.tokens.orgUser, 'POST', '/filters/preview', { conditions });
      expect(preview.status, `${field}: ${preview.text}`).toBe(400);
      expect(preview.body).toMatchObject({ error: 'Invalid filter', details: [`Unknown field: ${field}`] });
      const saved = await as(w.tokens.orgUser, 'POST', '/filters', { name: 'bad', conditions });
      expect(saved.status, `${field}: ${saved.text}`).toBe(400);
      const group = await as(w.tokens.orgUser, 'POST', '/groups', { name: 'bad', filterConditions: conditions });
      expect(group.status, `${field}: ${group.text}`).toBe(400);
    }
    // An operator named like one is refused the same way.
    const conditions = { operator: 'AND', conditions: [{ field: 'hostname', operator: 'constructor', value: 'x' }] };
    const res = await as(w.tokens.orgUser, 'POST', '/filters/preview', { conditions });
    expect(res.status, res.text).toBe(400);
    expect(res.body.details).toEqual(['Operator constructor not valid for field hostname']);
  });

  it('02§4.5 datetime after/before: a date outside years 0000–9999 is refused as an invalid date value', async () => {
    const on = (operator: string, value: unknown) => ({ operator: 'AND', conditions: [{ field: 'lastSeenAt', operator, value }] });
    // Year 9999 (four digits) is a date, and matches nothing seen today ...
    expect((await as(w.tokens.orgUser, 'POST', '/filters/preview', { conditions: on('after', '9999-12-31T00:00:00Z') })).body.data.totalCount).toBe(0);
    // ... an expanded year (stored timestamps compare as text) is refused like any invalid date.
    for (const [operator, value] of [
      ['after', '+010000-01-01T00:00:00Z'],
      ['before', '-000001-01-01T00:00:00Z'],
      ['between', { from: '2020-01-01', to: '+010000-01-01T00:00:00Z' }],
    ] as const) {
      const res = await as(w.tokens.orgUser, 'POST', '/filters/preview', { conditions: on(operator, value) });
      expect(res.status, `${operator}: ${res.text}`).toBe(400);
      expect(res.body.error).toBe('Invalid filter');
    }
  });

  it("02§4.6 wake: a device-group-restricted user's wake is relayed by an online device within its reach, not refused because the most recent relay is outside it", async () => {
    const relayIn = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'relay-in', osType: 'linux', siteId: w.siteA1a.id });
    const added = await as(w.tokens.orgUser, 'POST', `/groups/${groupId}/devices`, { deviceIds: [relayIn.deviceId] });
    expect(added.status, added.text).toBe(201);
    const heartbeat = async (agent: SimulatedAgent, body: Record<string, unknown> = {}) => {
      const res = await t.call('POST', `${API}/agents/${agent.agentId}/heartbeat`, { token: agent.token, body });
      expect(res.status, res.text).toBe(200);
    };
    await heartbeat(inGroup, { networkInfo: [{ name: 'eth0', ipAddress: '10.1.2.33', macAddress: 'AA-BB-CC-00-11-22', subnetMask: '255.255.255.0' }] });
    t.db.update(devices).set({ status: 'offline' }).where(eq(devices.id, inGroup.deviceId)).run();
    await heartbeat(relayIn);
    await new Promise((r) => setTimeout(r, 5));
    await heartbeat(outside); // seen last: the first relay candidate, but outside the caller's groups
    const res = await as(groupUser, 'POST', `/mobile/devices/${inGroup.deviceId}/actions`, { action: 'wake' });
    expect(res.status, res.text).toBe(202);
    expect(res.body.relay).toEqual({ deviceId: relayIn.deviceId, hostname: 'relay-in' });
    // Without a relay in reach, none is borrowed from outside it.
    t.db.update(devices).set({ status: 'offline' }).where(eq(devices.id, relayIn.deviceId)).run();
    const none = await as(groupUser, 'POST', `/mobile/devices/${inGroup.deviceId}/actions`, { action: 'wake' });
    expect(none.status, none.text).toBe(412);
    expect(none.body.code).toBe('WAKE_NO_RELAY');
  });
});
