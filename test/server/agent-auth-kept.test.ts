import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { devices, organizations, partners } from '../../src/server/db/schema/index.js';
import { type ReadCache } from '../../src/server/lib/read-cache.js';
import { sha256Hex } from '../../src/server/security/crypto.js';
import { writeAsAnotherProcess } from '../helpers/other-process.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';
import { useWorld } from '../helpers/world.js';

const API = '/api/v1';
const ENROLL = { hostname: 'ws-01', osType: 'windows', osVersion: '11 23H2', architecture: 'x86_64', agentVersion: '2.4.1' };

/** modules/devices/agent-authenticator.ts: an agent's token is kept with its caller across the writes that cannot
 * change it (its own heartbeats above all), and every write that can applies at the very next request. */
describe('agent tokens kept between requests (01 §5.13)', () => {
  let t: TestApp;
  let w: World;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  const enrolled = async () => {
    const key = await t.call('POST', `${API}/enrollment-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'fleet' } });
    const res = await t.call('POST', `${API}/agents/enroll`, { body: { ...ENROLL, enrollmentKey: key.body.key } });
    expect(res.status).toBe(201);
    return res.body as { agentId: string; deviceId: string; authToken: string };
  };
  const heartbeat = (agent: { agentId: string; authToken: string }, body: Record<string, unknown> = {}) =>
    t.call('POST', `${API}/agents/${agent.agentId}/heartbeat`, { token: agent.authToken, body });
  const kept = (token: string) =>
    (t.services.agentAuth as unknown as { agentsByHash: ReadCache<unknown> }).agentsByHash.lookup(sha256Hex(token)) !== undefined;
  const authenticate = (token: string) => t.services.agentAuth.authenticate(token);
  // The cache keeps nothing while a group transaction is open (db/group-commit.ts): commit what came before.
  const settled = () => t.commits.flush();

  it('01§5.13 the caller of an agent carries its device; heartbeats and unrelated writes keep the token', async () => {
    const agent = await enrolled();
    settled();
    const first = authenticate(agent.authToken);
    expect(first).toMatchObject({ kind: 'agent', agentId: agent.agentId, deviceId: agent.deviceId, orgId: w.orgA1.id, partnerStatus: 'active' });
    expect(kept(agent.authToken)).toBe(true);

    // Heartbeats write last-seen, inventory and the same status again: the token stays kept, the caller the same.
    for (const body of [{}, { status: 'ok', agentVersion: '2.5.0', metrics: { cpu: 12 } }]) {
      expect((await heartbeat(agent, body)).status).toBe(200);
      settled();
      expect(kept(agent.authToken)).toBe(true);
      expect(authenticate(agent.authToken)).toBe(first);
    }
    // Neither does a write elsewhere.
    expect((await t.call('POST', `${API}/orgs/sites`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'Annex' } })).status).toBe(201);
    settled();
    expect(authenticate(agent.authToken)).toBe(first);
  });

  it("01§5.13 §3 a change of the device's status, site, organization or partner applies at the next request", async () => {
    const agent = await enrolled();
    settled();
    authenticate(agent.authToken);

    // A status the agent reports (maintenance) is a change: the token is read again, and still works.
    expect((await heartbeat(agent, { status: 'maintenance' })).status).toBe(200);
    expect(kept(agent.authToken)).toBe(false);

    t.db.update(devices).set({ siteId: w.siteA1b.id }).where(eq(devices.id, agent.deviceId)).run();
    expect(authenticate(agent.authToken).siteIds).toEqual([w.siteA1b.id]);

    t.db.update(partners).set({ status: 'suspended' }).where(eq(partners.id, w.partnerA.id)).run();
    expect((await heartbeat(agent)).body).toMatchObject({ code: 'PARTNER_INACTIVE', status: 'suspended' });
    t.db.update(partners).set({ status: 'active' }).where(eq(partners.id, w.partnerA.id)).run();
    expect((await heartbeat(agent)).status).toBe(200);

    t.db.update(organizations).set({ deletedAt: new Date().toISOString() }).where(eq(organizations.id, w.orgA1.id)).run();
    expect(authenticate(agent.authToken).partnerStatus).toBe('deleted');
    expect((await heartbeat(agent)).status).toBe(403);
  });

  it('01§5.13 a decommissioning or a re-enrolment refuses the kept token at the next request', async () => {
    const agent = await enrolled();
    settled();
    expect((await heartbeat(agent)).status).toBe(200);
    expect(kept(agent.authToken)).toBe(true);
    expect((await t.call('DELETE', `${API}/devices/${agent.deviceId}`, { token: w.tokens.system })).status).toBe(200);
    expect((await heartbeat(agent)).body.code).toBe('DEVICE_DECOMMISSIONED');

    const other = await enrolled();
    settled();
    expect((await heartbeat(other)).status).toBe(200);
    const key = await t.call('POST', `${API}/enrollment-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'again' } });
    const again = await t.call('POST', `${API}/agents/enroll`, {
      body: { ...ENROLL, enrollmentKey: key.body.key },
      headers: { 'x-agent-reenrollment-token': other.authToken },
    });
    expect(again.status).toBe(201);
    expect((await heartbeat(other)).body.code).toBe('INVALID_AGENT_TOKEN');
    expect((await heartbeat({ agentId: other.agentId, authToken: again.body.authToken })).status).toBe(200);
  });

  it('01§5.13 a decommissioning written by another process refuses the kept token', async () => {
    const agent = await enrolled();
    settled();
    expect((await heartbeat(agent)).status).toBe(200);
    expect(kept(agent.authToken)).toBe(true);
    await writeAsAnotherProcess(t.db.$client.name, "UPDATE devices SET status = 'decommissioned' WHERE id = ?", agent.deviceId);
    expect((await heartbeat(agent)).body.code).toBe('DEVICE_DECOMMISSIONED');
  });
});
