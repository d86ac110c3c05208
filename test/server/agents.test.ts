import { createHash, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { auditLogs, devices, enrollmentKeys, organizations, outboxEvents, partners } from '../../src/server/db/schema/index.js';
import { recordedCalls, type TestApp } from '../helpers/server.js';
import { type World } from '../helpers/seed.js';

const API = '/api/v1';
const ENROLL = { hostname: 'ws-01', osType: 'windows', osVersion: '11 23H2', architecture: 'x86_64', agentVersion: '2.4.1' };
const CONFIG = { heartbeatIntervalSeconds: 60, metricsCollectionIntervalSeconds: 30 };

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('agent enrollment and agent authentication (04 notes "Enrollment keys and agents", 01 §5.13)', () => {
  let t: TestApp;
  let w: World;
  const { call, expectNoLeak } = recordedCalls(() => t);
  const newKey = async (body: Record<string, unknown> = {}) => {
    const res = await call('POST', `${API}/enrollment-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'fleet', ...body } });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string };
  };
  const enroll = (enrollmentKey: string, extra: Record<string, unknown> = {}) => call('POST', `${API}/agents/enroll`, { body: { ...ENROLL, enrollmentKey, ...extra } });
  const usage = (id: string) => t.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, id)).get()?.usageCount;
  const heartbeat = (agentId: string, token: string | undefined, body: unknown = {}) => call('POST', `${API}/agents/${agentId}/heartbeat`, { ...(token ? { token } : {}), body });

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  afterEach(async () => {
    const hashes = t.db.select({ h: devices.agentTokenHash }).from(devices).all().map((r) => r.h);
    expectNoLeak('agentTokenHash', hashes);
  });

  it("01§4.2 enrolls without user auth: the device is created in the key's organization and site, the key's use counted", async () => {
    const key = await newKey({ siteId: w.siteA1b.id, maxUsage: 2 });
    const res = await enroll(key.key, { hardwareInfo: { cpu: 'x', ramGb: 16 }, networkInfo: [{ name: 'eth0', ip: '10.0.0.5' }], lastUser: 'alice' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      agentId: expect.any(String),
      deviceId: expect.any(String),
      authToken: expect.stringMatching(/^svc_[0-9a-f]{64}$/),
      orgId: w.orgA1.id,
      siteId: w.siteA1b.id,
      config: CONFIG,
    });
    const device = t.db.select().from(devices).where(eq(devices.id, res.body.deviceId)).get();
    expect(device).toMatchObject({
      orgId: w.orgA1.id,
      siteId: w.siteA1b.id,
      agentId: res.body.agentId,
      hostname: 'ws-01',
      displayName: 'ws-01',
      osType: 'windows',
      status: 'online',
      lastUser: 'alice',
      enrollmentKeyId: key.id,
      agentTokenHash: sha256(res.body.authToken),
    });
    expect(JSON.stringify(t.db.select().from(devices).all())).not.toContain(res.body.authToken);
    expect(usage(key.id)).toBe(1);

    // The outbox carries device.enrolled from the same transaction; the audit log device.create by the agent.
    const events = t.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'device.enrolled')).all();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ orgId: w.orgA1.id, payload: { deviceId: res.body.deviceId, agentId: res.body.agentId, enrollmentKeyId: key.id, siteId: w.siteA1b.id } });
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'device.create')).get();
    expect(audit).toMatchObject({ actorType: 'agent', actorId: res.body.agentId, resourceId: res.body.deviceId, resourceName: 'ws-01', orgId: w.orgA1.id });
    expect(audit?.details).toMatchObject({ enrollmentKeyId: key.id });

    // An organization-wide key enrolls without a site.
    const wide = await newKey({ maxUsage: 1 });
    expect((await enroll(wide.key, { hostname: 'ws-02' })).body.siteId).toBeNull();
  });

  it('01§4.2 enrollment answers 401 with reason not_found, expired or exhausted', async () => {
    const unknown = await enroll('f'.repeat(64));
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({ reason: 'enrollment_key_not_found', error: expect.any(String) });

    const expired = await newKey();
    t.db.update(enrollmentKeys).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }).where(eq(enrollmentKeys.id, expired.id)).run();
    const late = await enroll(expired.key);
    expect(late.status).toBe(401);
    expect(late.body.reason).toBe('enrollment_key_expired');

    const single = await newKey({ maxUsage: 1 });
    expect((await enroll(single.key)).status).toBe(201);
    const again = await enroll(single.key, { hostname: 'ws-02' });
    expect(again.status).toBe(401);
    expect(again.body.reason).toBe('enrollment_key_exhausted');
    expect(usage(single.id)).toBe(1);

    // A key of a deleted organization is unknown.
    const orphan = await newKey({ orgId: w.orgA2.id });
    t.db.update(organizations).set({ deletedAt: new Date().toISOString() }).where(eq(organizations.id, w.orgA2.id)).run();
    expect((await enroll(orphan.key)).body.reason).toBe('enrollment_key_not_found');
    expect(t.db.select().from(devices).all()).toHaveLength(1);
  });

  it('01§3 a failed enrollment does not consume the key', async () => {
    const key = await newKey({ maxUsage: 1 });
    // Invalid body: refused before the key is looked at.
    const invalid = await enroll(key.key, { osType: 'beos' });
    expect(invalid.status).toBe(400);
    expect((await enroll(key.key, { hostname: '' })).status).toBe(400);
    expect(usage(key.id)).toBe(0);

    // Refused after the key was claimed: the claim rolls back with the rest.
    t.db.update(partners).set({ status: 'suspended' }).where(eq(partners.id, w.partnerA.id)).run();
    const inactive = await enroll(key.key);
    expect(inactive.status).toBe(403);
    expect(inactive.body.code).toBe('PARTNER_INACTIVE');
    expect(usage(key.id)).toBe(0);
    t.db.update(partners).set({ status: 'active' }).where(eq(partners.id, w.partnerA.id)).run();

    t.db.update(organizations).set({ maxDevices: 0 }).where(eq(organizations.id, w.orgA1.id)).run();
    const capped = await enroll(key.key);
    expect(capped.status).toBe(403);
    expect(capped.body.code).toBe('DEVICE_LIMIT_REACHED');
    expect(usage(key.id)).toBe(0);
    expect(t.db.select().from(devices).all()).toHaveLength(0);
    expect(t.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'device.enrolled')).all()).toHaveLength(0);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'device.create')).all()).toHaveLength(0);

    t.db.update(organizations).set({ maxDevices: null }).where(eq(organizations.id, w.orgA1.id)).run();
    expect((await enroll(key.key)).status).toBe(201);
    expect(usage(key.id)).toBe(1);
  });

  it('01§3 20 concurrent enrollments against maxUsage 5: exactly 5 devices, 15 refused as exhausted', async () => {
    const key = await newKey({ maxUsage: 5 });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => enroll(key.key, { hostname: `host-${i}` })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(5);
    const refused = results.filter((r) => r.status === 401);
    expect(refused).toHaveLength(15);
    for (const r of refused) expect(r.body.reason).toBe('enrollment_key_exhausted');
    expect(t.db.select().from(devices).all()).toHaveLength(5);
    expect(usage(key.id)).toBe(5);
  });

  it('01§2.3 §2.4 partner and organization device caps count live devices', async () => {
    t.db.update(partners).set({ maxDevices: 2 }).where(eq(partners.id, w.partnerA.id)).run();
    const a1 = await newKey({ maxUsage: 10 });
    const a2 = await newKey({ orgId: w.orgA2.id, maxUsage: 10 });
    const first = await enroll(a1.key, { hostname: 'one' });
    expect((await enroll(a2.key, { hostname: 'two' })).status).toBe(201);
    const third = await enroll(a1.key, { hostname: 'three' });
    expect(third.status).toBe(403);
    expect(third.body.code).toBe('DEVICE_LIMIT_REACHED');
    // A decommissioned device frees its place.
    expect((await call('DELETE', `${API}/devices/${first.body.deviceId}`, { token: w.tokens.system })).status).toBe(200);
    expect((await enroll(a1.key, { hostname: 'three' })).status).toBe(201);
  });

  it('01§5.13 heartbeats sent together are stored in one group commit, those that leave the status as it was included', async () => {
    const key = await newKey({ maxUsage: 3 });
    const agents: { agentId: string; deviceId: string; authToken: string }[] = [];
    for (const hostname of ['h1', 'h2', 'h3']) agents.push((await enroll(key.key, { hostname })).body);
    const stamped = '2000-01-01T00:00:00.000Z';
    t.db.update(devices).set({ lastSeenAt: stamped }).run();
    const before = t.commits.committed;
    // Enrolled online, they report nothing new: only lastSeenAt moves.
    const sent = await Promise.all(agents.map((a) => heartbeat(a.agentId, a.authToken)));
    expect(sent.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(t.commits.committed - before).toBe(1);
    for (const a of agents) {
      const device = t.db.select().from(devices).where(eq(devices.id, a.deviceId)).get();
      expect(device?.status).toBe('online');
      expect(device?.lastSeenAt && device.lastSeenAt > stamped).toBe(true);
    }
  });

  it('01§5.13 heartbeats use the agent bearer token of that very agent', async () => {
    const key = await newKey({ maxUsage: 2 });
    const a = (await enroll(key.key, { hostname: 'a' })).body;
    const b = (await enroll(key.key, { hostname: 'b' })).body;
    t.db.update(devices).set({ lastSeenAt: '2000-01-01T00:00:00.000Z', status: 'offline' }).where(eq(devices.id, a.deviceId)).run();

    const ok = await heartbeat(a.agentId, a.authToken, { status: 'maintenance', agentVersion: '2.5.0', metrics: { cpu: 12 } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, config: CONFIG });
    const device = t.db.select().from(devices).where(eq(devices.id, a.deviceId)).get();
    expect(device?.status).toBe('maintenance');
    expect(device?.agentVersion).toBe('2.5.0');
    expect(device?.lastSeenAt && device.lastSeenAt > '2000-01-01T00:00:00.000Z').toBe(true);
    expect((await heartbeat(a.agentId, a.authToken)).status).toBe(200);
    expect(t.db.select().from(devices).where(eq(devices.id, a.deviceId)).get()?.status).toBe('online');

    const missing = await heartbeat(a.agentId, undefined);
    expect(missing.status).toBe(401);
    const wrong = await heartbeat(a.agentId, `svc_${'0'.repeat(64)}`);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('Invalid agent token');
    expect((await heartbeat(a.agentId, 'not-a-token')).status).toBe(401);
    // Another agent's token does not open this agent's routes.
    const crossed = await heartbeat(a.agentId, b.authToken);
    expect(crossed.status).toBe(403);
    // An agent may not set administrative states.
    expect((await heartbeat(a.agentId, a.authToken, { status: 'decommissioned' })).status).toBe(400);

    // Agent tokens are not user credentials, and user credentials do not open agent routes.
    expect((await call('GET', `${API}/devices`, { token: a.authToken })).status).toBe(401);
    expect((await heartbeat(a.agentId, w.tokens.system)).status).toBe(401);
  });

  it('01§5.13 the agent id in the path is validated like every other parameter, then must be the token\'s agent', async () => {
    const key = await newKey();
    const agent = (await enroll(key.key)).body;
    const malformed = await heartbeat('not-a-uuid', agent.authToken);
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('VALIDATION_ERROR');
    expect(malformed.body.error).toMatch(/^id: /);
    const other = await heartbeat(randomUUID(), agent.authToken);
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('AGENT_MISMATCH');
    // Without a valid token the answer is 401 whatever the path says.
    expect((await heartbeat('not-a-uuid', undefined)).status).toBe(401);
  });

  it("01§5.13 a decommissioned device's agent token stops working at once", async () => {
    const key = await newKey();
    const agent = (await enroll(key.key)).body;
    expect((await heartbeat(agent.agentId, agent.authToken)).status).toBe(200);
    expect((await call('DELETE', `${API}/devices/${agent.deviceId}`, { token: w.tokens.system })).status).toBe(200);
    const res = await heartbeat(agent.agentId, agent.authToken);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('DEVICE_DECOMMISSIONED');
  });

  it("01§3 agents of an inactive partner's organization are refused with PARTNER_INACTIVE", async () => {
    const key = await newKey();
    const agent = (await enroll(key.key)).body;
    t.db.update(partners).set({ status: 'churned' }).where(eq(partners.id, w.partnerA.id)).run();
    const res = await heartbeat(agent.agentId, agent.authToken);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'PARTNER_INACTIVE', status: 'churned' });
  });

  it('01§1 devices that stop sending heartbeats are marked offline', async () => {
    const key = await newKey({ maxUsage: 2 });
    const stale = (await enroll(key.key, { hostname: 'stale' })).body;
    const fresh = (await enroll(key.key, { hostname: 'fresh' })).body;
    t.db.update(devices).set({ lastSeenAt: new Date(Date.now() - 10 * 60_000).toISOString() }).where(eq(devices.id, stale.deviceId)).run();
    expect(t.services.devices.markOffline()).toBe(1);
    expect(t.db.select().from(devices).where(eq(devices.id, stale.deviceId)).get()?.status).toBe('offline');
    expect(t.db.select().from(devices).where(eq(devices.id, fresh.deviceId)).get()?.status).toBe('online');
  });
});
