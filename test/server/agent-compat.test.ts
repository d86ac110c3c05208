import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { auditLogs, devices, enrollmentKeys } from '../../src/server/db/schema/index.js';
import { type TestApp } from '../helpers/server.js';
import { type World } from '../helpers/seed.js';

const API = '/api/v1';
const ENROLL = { hostname: 'ws-01', osType: 'windows', osVersion: '11 23H2', architecture: 'x86_64', agentVersion: '2.4.1' };
const REENROLL = 'x-agent-reenrollment-token';

/** Issue 15 item 10 (the spec is silent on both): the deployed service's own agent against the bundled server. */
describe("the deployed service's agent: health words and re-enrolment in place (issue 15 item 10)", () => {
  let t: TestApp, w: World;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  const newKey = async (orgId: string, body: Record<string, unknown> = {}) => {
    const res = await t.call('POST', `${API}/enrollment-keys`, { token: w.tokens.system, body: { orgId, name: 'fleet', maxUsage: 10, ...body } });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string };
  };
  const enroll = (enrollmentKey: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    t.call('POST', `${API}/agents/enroll`, { body: { ...ENROLL, enrollmentKey, ...extra }, headers });
  const heartbeat = (agentId: string, token: string, body: unknown) => t.call('POST', `${API}/agents/${agentId}/heartbeat`, { token, body });
  const device = (id: string) => t.db.select().from(devices).where(eq(devices.id, id)).get();
  const usage = (id: string) => t.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, id)).get()?.usageCount;

  it('issue 15 item 10: heartbeat status ok, warning and error mean alive; the device status stays the derived one', async () => {
    const key = await newKey(w.orgA1.id);
    const a = (await enroll(key.key)).body;
    for (const status of ['ok', 'warning', 'error']) {
      t.db.update(devices).set({ status: 'offline', lastSeenAt: '2000-01-01T00:00:00.000Z' }).where(eq(devices.id, a.deviceId)).run();
      const res = await heartbeat(a.agentId, a.authToken, { status, metrics: { cpu: 90 } });
      expect(res.status, status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(device(a.deviceId)?.status, status).toBe('online');
      expect((device(a.deviceId)?.lastSeenAt ?? '') > '2000-01-01T00:00:00.000Z').toBe(true);
    }
    // The server's own vocabulary still works, an administrator's quarantine is still never lifted.
    expect((await heartbeat(a.agentId, a.authToken, { status: 'maintenance' })).status).toBe(200);
    expect(device(a.deviceId)?.status).toBe('maintenance');
    t.db.update(devices).set({ status: 'quarantined' }).where(eq(devices.id, a.deviceId)).run();
    expect((await heartbeat(a.agentId, a.authToken, { status: 'error' })).status).toBe(200);
    expect(device(a.deviceId)?.status).toBe('quarantined');
    // Words outside both vocabularies are still refused.
    expect((await heartbeat(a.agentId, a.authToken, { status: 'healthy' })).status).toBe(400);
  });

  it('issue 15 item 10: the re-enrolment header re-enrols the device in place with a new token, no duplicate', async () => {
    const key = await newKey(w.orgA1.id);
    const first = (await enroll(key.key)).body;
    const pinned = await newKey(w.orgA1.id, { siteId: w.siteA1b.id });
    const again = await enroll(pinned.key, { hostname: 'ws-01-renamed', agentVersion: '3.0.0' }, { [REENROLL]: first.authToken });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ agentId: first.agentId, deviceId: first.deviceId, orgId: w.orgA1.id, siteId: w.siteA1b.id });
    expect(again.body.authToken).toMatch(/^svc_[0-9a-f]{64}$/);
    expect(again.body.authToken).not.toBe(first.authToken);

    expect(t.db.select().from(devices).where(eq(devices.orgId, w.orgA1.id)).all()).toHaveLength(1);
    expect(device(first.deviceId)).toMatchObject({ hostname: 'ws-01-renamed', agentVersion: '3.0.0', siteId: w.siteA1b.id, status: 'online', enrollmentKeyId: pinned.id });
    expect(usage(pinned.id)).toBe(1);
    // The old token stops working at once; the new one works.
    expect((await heartbeat(first.agentId, first.authToken, {})).status).toBe(401);
    expect((await heartbeat(first.agentId, again.body.authToken, { status: 'ok' })).status).toBe(200);
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'device.reenroll')).all();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ resourceId: first.deviceId, actorType: 'agent' });
    // An empty header is no header: a plain enrolment creates a second device.
    const plain = await enroll(key.key, { hostname: 'ws-02' }, { [REENROLL]: '' });
    expect(plain.status).toBe(201);
    expect(plain.body.deviceId).not.toBe(first.deviceId);
  });

  it("issue 15 item 10: one device's credentials cannot take over another device or move it to another organization", async () => {
    const keyA = await newKey(w.orgA1.id);
    const a = (await enroll(keyA.key, { hostname: 'a' })).body;
    const b = (await enroll(keyA.key, { hostname: 'b' })).body;

    // A key of another organization, with a live device's token: refused, nothing moves, the key is not used.
    const keyOther = await newKey(w.orgB1.id);
    const moved = await enroll(keyOther.key, { hostname: 'a' }, { [REENROLL]: a.authToken });
    expect(moved.status).toBe(403);
    expect(moved.body.code).toBe('REENROLLMENT_ORG_MISMATCH');
    expect(device(a.deviceId)?.orgId).toBe(w.orgA1.id);
    expect(usage(keyOther.id)).toBe(0);

    // Only a token proves which device: an agent id, another credential or garbage is refused, nothing changes.
    const before = usage(keyA.id);
    for (const token of [b.agentId, a.agentId, w.tokens.system, `svc_${'0'.repeat(64)}`, 'x']) {
      const res = await enroll(keyA.key, { hostname: 'evil' }, { [REENROLL]: token });
      expect(res.status, token).toBe(401);
      expect(res.body.code).toBe('INVALID_REENROLLMENT_TOKEN');
    }
    expect(usage(keyA.id)).toBe(before);
    expect(device(b.deviceId)?.hostname).toBe('b');
    expect(t.db.select().from(devices).where(eq(devices.orgId, w.orgA1.id)).all()).toHaveLength(2);

    // Re-enrolling with a's token touches a only; b's token keeps working.
    const re = await enroll(keyA.key, { hostname: 'a2' }, { [REENROLL]: a.authToken });
    expect(re.status).toBe(201);
    expect(re.body.deviceId).toBe(a.deviceId);
    expect(device(b.deviceId)?.hostname).toBe('b');
    expect((await heartbeat(b.agentId, b.authToken, { status: 'ok' })).status).toBe(200);

    // A decommissioned device is not brought back by its old token; an invalid key is refused before anything.
    expect((await t.call('DELETE', `${API}/devices/${b.deviceId}`, { token: w.tokens.system })).status).toBe(200);
    const revived = await enroll(keyA.key, { hostname: 'b' }, { [REENROLL]: b.authToken });
    expect(revived.status).toBe(401);
    expect(revived.body.code).toBe('DEVICE_DECOMMISSIONED');
    const badKey = await enroll('0'.repeat(64), {}, { [REENROLL]: re.body.authToken });
    expect(badKey.status).toBe(401);
    expect(badKey.body.reason).toBe('enrollment_key_not_found');
  });
});
