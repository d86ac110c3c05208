import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { deviceCommands, devices, outboxEvents, scriptExecutions } from '../../src/server/db/schema/index.js';
import { type TestApp } from '../helpers/server.js';
import { mintToken, seedOrgRole, seedUser, type World } from '../helpers/seed.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';

const API = '/api/v1';

/** Rules of devices, device commands and scripts across modules (01 §2.6, §6; 02 §4.6, §6; 05 wire notes "4.7"). */
describe('devices, device commands and scripts: cross-module rules', () => {
  let t: TestApp;
  let w: World;
  const as = useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  const call = (token: string, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.call(method, `${API}${url}`, { token, ...(body !== undefined ? { body } : {}) });

  const script = async (body: Record<string, unknown>, who: 'orgUser' | 'system' = 'orgUser') => {
    const res = await as(who, 'POST', '/scripts', { name: 'Probe', osTypes: ['linux'], language: 'bash', content: 'echo hi', ...body });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string };
  };
  const events = (type: string) => t.db.select().from(outboxEvents).where(eq(outboxEvents.type, type)).all();

  it('05 4.7 DELETE /devices/:id (decommission) needs MFA: a session without MFA is refused with 403 MFA_REQUIRED', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { siteId: w.siteA1a.id });
    const noMfa = await mintToken(t, w.users.orgUser.id, { mfa: false });
    const res = await call(noMfa, 'DELETE', `/devices/${agent.deviceId}`);
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('MFA_REQUIRED');
    expect((await as('orgUser', 'GET', `/devices/${agent.deviceId}`)).body.status).toBe('online');
    // The same user with MFA may.
    expect((await as('orgUser', 'DELETE', `/devices/${agent.deviceId}`)).status).toBe(200);
  });

  describe('05 4.7 script parameters read only own values', () => {
    it('05 4.7 execute: a required parameter named like an Object.prototype member (toString) with no value fails the device (Missing required parameter)', async () => {
      const s = await script({ content: 'echo "{{var.toString}}"', parameters: [{ name: 'toString', type: 'string', required: true }] });
      const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
      const res = await as('orgUser', 'POST', `/scripts/${s.id}/execute`, { deviceIds: [agent.deviceId] });
      // The value is missing: nothing can be dispatched (422 with the per-device failure).
      expect(res.status, res.text).toBe(422);
      expect(res.body.failures).toEqual([{ deviceId: agent.deviceId, error: 'Missing required parameter: toString' }]);
      expect(await agent.fetch()).toEqual([]);
    });

    it('05 4.7 execute: a parameter reading a device custom field named like an Object.prototype member (constructor) falls back to its default', async () => {
      const s = await script({ content: 'echo "{{var.owner}}"', parameters: [{ name: 'owner', type: 'string', customField: 'constructor', defaultValue: 'nobody' }] });
      const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
      const res = await as('orgUser', 'POST', `/scripts/${s.id}/execute`, { deviceIds: [agent.deviceId] });
      expect(res.status, res.text).toBe(201);
      const [command] = await agent.fetch();
      // The device has no custom field "constructor": the default is used, not JavaScript's Object function.
      expect(command?.payload.content).toBe('echo "nobody"');
    });

    it('05 4.7 execute: a device custom field holding an object or a list is no value (the default is used); its own string value is used', async () => {
      const s = await script({ content: 'echo "{{var.owner}}"', parameters: [{ name: 'owner', type: 'string', customField: 'owner', defaultValue: 'nobody' }] });
      const listed = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'listed' });
      const named = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'named' });
      t.services.devices.mergeCustomFields(listed.deviceId, { owner: ['ops', 'dev'] });
      t.services.devices.mergeCustomFields(named.deviceId, { owner: 'ops-team' });
      const res = await as('orgUser', 'POST', `/scripts/${s.id}/execute`, { deviceIds: [listed.deviceId, named.deviceId] });
      expect(res.status, res.text).toBe(201);
      expect((await listed.fetch())[0]?.payload.content).toBe('echo "nobody"');
      expect((await named.fetch())[0]?.payload.content).toBe('echo "ops-team"');
    });
  });

  it('02§6 script.started carries the script event payload the notes give ({executionId, scriptId, scriptName, deviceId, batchId, status, exitCode, severity}), as script.completed does', async () => {
    const s = await script({ name: 'Disk check' });
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    const run = await as('orgUser', 'POST', `/scripts/${s.id}/execute`, { deviceIds: [agent.deviceId] });
    expect(run.status, run.text).toBe(201);
    await agent.work(() => ({ status: 'completed', exitCode: 0, stdout: 'ok' }));
    const shape = { executionId: run.body.executions[0].executionId, scriptId: s.id, scriptName: 'Disk check', deviceId: agent.deviceId, batchId: run.body.batchId };
    expect(events('script.started').map((e) => e.payload)).toEqual([{ ...shape, status: 'running', exitCode: null, severity: null }]);
    expect(events('script.completed').map((e) => e.payload)).toEqual([{ ...shape, status: 'completed', exitCode: 0, severity: null }]);
  });

  it("01§6 script.execute by a partner on devices of two organizations: one entry per organization, each naming only that organization's devices", async () => {
    const [system] = (await as('aAdmin', 'GET', '/scripts/system-library')).body.data as { id: string; osTypes: string[] }[];
    if (!system) throw new Error('no system script');
    const os = system.osTypes[0] as 'linux';
    const a1 = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { osType: os, hostname: 'a1-host' });
    const a2 = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA2.id, { osType: os, hostname: 'a2-host' });
    const run = await as('aAdmin', 'POST', `/scripts/${system.id}/execute`, { deviceIds: [a1.deviceId, a2.deviceId] });
    expect(run.status, run.text).toBe(201);
    expect(run.body.devicesTargeted).toBe(2);
    // A1's Org Admin reads its organization's audit log: A2's device does not appear there.
    const a1Log = await as('orgUser', 'GET', '/audit-logs?action=script.execute');
    expect(a1Log.status, a1Log.text).toBe(200);
    expect(a1Log.text).not.toContain(a2.deviceId);
    expect(a1Log.body.data.map((e: { details: { deviceIds: string[] } }) => e.details.deviceIds)).toEqual([[a1.deviceId]]);
    // A2's audit log records that the script ran on its device, and names only it.
    const a2Log = await as('aAdmin', 'GET', `/audit-logs?action=script.execute&orgId=${w.orgA2.id}`);
    expect(a2Log.status, a2Log.text).toBe(200);
    expect(a2Log.body.data).toMatchObject([{ orgId: w.orgA2.id, resourceId: system.id, details: { batchId: run.body.batchId, deviceIds: [a2.deviceId] } }]);
  });

  describe('02§6 missed heartbeats', () => {
    it('02§6 a device that reported "updating" (or "maintenance") and then stops its heartbeats is marked offline like an online one', async () => {
      const stuck = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'stuck' });
      const alive = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'alive' });
      const hb = await t.call('POST', `${API}/agents/${stuck.agentId}/heartbeat`, { token: stuck.token, body: { status: 'updating' } });
      expect(hb.status, hb.text).toBe(200);
      // Ten minutes later neither agent has sent another heartbeat (3 missed = 3 minutes).
      t.services.devices.markOffline(Date.now() + 10 * 60_000);
      const status = async (id: string) => (await as('orgUser', 'GET', `/devices/${id}`)).body.status;
      expect(await status(alive.deviceId)).toBe('offline');
      expect(await status(stuck.deviceId)).toBe('offline');
    });

    it('02§6 device.offline names the status the device had (maintenance, updating, online); quarantined and offline devices are left alone', async () => {
      const agents = await Promise.all(
        ['online', 'maintenance', 'updating', 'quarantined', 'offline'].map((hostname) => SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname })),
      );
      const statuses = ['online', 'maintenance', 'updating', 'quarantined', 'offline'] as const;
      agents.forEach((agent, i) => t.db.update(devices).set({ status: statuses[i] }).where(eq(devices.id, agent.deviceId)).run());
      expect(t.services.devices.markOffline(Date.now() + 10 * 60_000)).toBe(3);
      const offline = events('device.offline').map((e) => e.payload as { hostname: string; previousStatus: string; status: string });
      expect(offline.map((e) => [e.hostname, e.previousStatus, e.status]).sort()).toEqual([
        ['maintenance', 'maintenance', 'offline'],
        ['online', 'online', 'offline'],
        ['updating', 'updating', 'offline'],
      ]);
      const quarantined = t.db.select().from(devices).where(eq(devices.hostname, 'quarantined')).get();
      expect(quarantined?.status).toBe('quarantined');
    });
  });

  it('05 4.7 decommissioning a device ends its undelivered commands and script runs (they can never be fetched), so its script can be deleted', async () => {
    const s = await script({});
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    const run = await as('orgUser', 'POST', `/scripts/${s.id}/execute`, { deviceIds: [agent.deviceId] });
    expect(run.status, run.text).toBe(201);
    const reboot = await as('orgUser', 'POST', `/devices/${agent.deviceId}/commands`, { type: 'reboot' });
    expect(reboot.status, reboot.text).toBe(201);
    // A script still active elsewhere keeps blocking its deletion: only this device's runs end.
    const other = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'other' });
    const s2 = await script({ name: 'Elsewhere' });
    expect((await as('orgUser', 'POST', `/scripts/${s2.id}/execute`, { deviceIds: [agent.deviceId, other.deviceId] })).status).toBe(201);
    expect((await as('orgUser', 'DELETE', `/devices/${agent.deviceId}`)).status).toBe(200);
    // The agent's token is dead: nothing queued for it can ever be delivered.
    expect((await t.call('GET', `${API}/agents/${agent.agentId}/commands`, { token: agent.token })).status).toBe(401);
    const commands = t.db.select().from(deviceCommands).where(eq(deviceCommands.deviceId, agent.deviceId)).all();
    expect(commands.map((c) => c.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    const executions = t.db.select().from(scriptExecutions).where(eq(scriptExecutions.deviceId, agent.deviceId)).all();
    expect(executions.map((e) => [e.status, e.errorMessage])).toEqual([
      ['cancelled', 'Device decommissioned'],
      ['cancelled', 'Device decommissioned'],
    ]);
    const del = await as('orgUser', 'DELETE', `/scripts/${s.id}`);
    expect(del.status, del.text).toBe(200);
    expect((await as('orgUser', 'DELETE', `/scripts/${s2.id}`)).status).toBe(409);
    expect((await other.fetch()).map((c) => c.type)).toEqual(['script']);
  });

  it('05 4.7 a decommissioned device is history: PATCH is 400 DEVICE_DECOMMISSIONED and changes nothing', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'retiring' });
    expect((await as('orgUser', 'PATCH', `/devices/${agent.deviceId}`, { displayName: 'Before' })).status).toBe(200);
    expect((await as('orgUser', 'DELETE', `/devices/${agent.deviceId}`)).status).toBe(200);
    const late = await as('orgUser', 'PATCH', `/devices/${agent.deviceId}`, { displayName: 'After', tags: ['x'] });
    expect(late.status, late.text).toBe(400);
    expect(late.body.code).toBe('DEVICE_DECOMMISSIONED');
    const row = t.db.select().from(devices).where(eq(devices.id, agent.deviceId)).get();
    expect(row).toMatchObject({ displayName: 'Before', tags: [] });
  });

  it('05 4.7 a user with devices:read but not scripts:read cannot read script content through GET /devices/:id/commands ({executionId, scriptId} only)', async () => {
    const secretish = 'curl -u ops:Sup3rS3cret https://backup.internal/run';
    const s = await script({ content: secretish });
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    const run = await as('orgUser', 'POST', `/scripts/${s.id}/execute`, { deviceIds: [agent.deviceId] });
    expect(run.status).toBe(201);
    const reader = await seedUser(t, { email: 'dev-reader@a1.test', org: { orgId: w.orgA1.id, roleId: seedOrgRole(t, w.orgA1.id, ['devices:read']) }, login: 'mint', mfa: true });
    // The script itself is refused to this user (scripts:read) ...
    expect((await call(reader.token, 'GET', `/scripts/${s.id}`)).status).toBe(403);
    // ... and so is its text, wherever it is listed.
    const commands = await call(reader.token, 'GET', `/devices/${agent.deviceId}/commands`);
    expect(commands.status, commands.text).toBe(200);
    expect(commands.text).not.toContain('Sup3rS3cret');
    expect(commands.body.data).toMatchObject([{ type: 'script', payload: { executionId: run.body.executions[0].executionId, scriptId: s.id } }]);
    expect(Object.keys(commands.body.data[0].payload).sort()).toEqual(['executionId', 'scriptId']);
    // A caller who may read scripts sees the payload whole.
    const full = await as('orgUser', 'GET', `/devices/${agent.deviceId}/commands`);
    expect(full.body.data[0].payload).toMatchObject({ content: secretish, language: 'bash' });
  });

  it('01§2.6 a site-restricted organization user cannot create, import, change or delete organization-wide scripts or custom-field definitions (403 SITE_ACCESS_DENIED); it still reads and runs them', async () => {
    const s = await script({});
    const field = await as('orgUser', 'POST', '/custom-fields', { key: 'owner', name: 'Owner', allowScriptWrite: true });
    expect(field.status, field.text).toBe(201);
    const [system] = (await as('siteUser', 'GET', '/scripts/system-library')).body.data as { id: string }[];
    if (!system) throw new Error('no system script');
    const refused = [
      await as('siteUser', 'POST', '/scripts', { name: 'Mine', osTypes: ['linux'], language: 'bash', content: 'echo mine' }),
      await as('siteUser', 'POST', `/scripts/import/${system.id}`, {}),
      await as('siteUser', 'PUT', `/scripts/${s.id}`, { content: 'echo changed' }),
      await as('siteUser', 'DELETE', `/scripts/${s.id}`),
      await as('siteUser', 'POST', '/custom-fields', { key: 'site', name: 'Site', allowScriptWrite: false }),
      await as('siteUser', 'DELETE', `/custom-fields/${field.body.id}`),
    ];
    for (const res of refused) {
      expect(res.status, res.text).toBe(403);
      expect(res.body).toMatchObject({ code: 'SITE_ACCESS_DENIED', error: 'Access to this site denied' });
    }
    const scripts = (await as('orgUser', 'GET', '/scripts')).body.data as { id: string; content: string }[];
    expect(scripts).toEqual([expect.objectContaining({ id: s.id, content: 'echo hi' })]);
    expect((await as('orgUser', 'GET', '/custom-fields')).body.data).toHaveLength(1);
    // Reading and running on a device of its site stay allowed.
    expect((await as('siteUser', 'GET', `/scripts/${s.id}`)).status).toBe(200);
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { siteId: w.siteA1a.id });
    expect((await as('siteUser', 'POST', `/scripts/${s.id}/execute`, { deviceIds: [agent.deviceId] })).status).toBe(201);
  });

  it('02§4.6 mobile run_script without scripts:execute is 403 before the device state is looked at: an offline device does not answer 409 DEVICE_OFFLINE', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    t.db.update(devices).set({ status: 'offline' }).where(eq(devices.id, agent.deviceId)).run();
    const s = await script({});
    const roleId = seedOrgRole(t, w.orgA1.id, ['devices:read', 'devices:execute', 'scripts:read']);
    const operator = await seedUser(t, { email: 'operator@a1.test', org: { orgId: w.orgA1.id, roleId }, login: 'mint', mfa: true });
    const refused = await call(operator.token, 'POST', `/mobile/devices/${agent.deviceId}/actions`, { action: 'run_script', scriptId: s.id });
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    // A reboot (devices:execute alone) reaches the online check.
    const reboot = await call(operator.token, 'POST', `/mobile/devices/${agent.deviceId}/actions`, { action: 'reboot' });
    expect(reboot.status).toBe(409);
    expect(reboot.body.code).toBe('DEVICE_OFFLINE');
  });
});
