import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { devices, scriptExecutions } from '../../src/server/db/schema/index.js';
import { mintToken, seedOrgRole, seedUser, type World } from '../helpers/seed.js';
import type { TestApp } from '../helpers/server.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';
import { useWorld } from '../helpers/world.js';

let t: TestApp;
let w: World;
const as = useWorld({ mfa: true }, (app, world) => {
  t = app;
  w = world;
});

const NIC = { name: 'eth0', ipAddress: '10.1.2.33', macAddress: 'AA-BB-CC-00-11-22', subnetMask: '255.255.255.0' };

async function online(agent: SimulatedAgent, body: Record<string, unknown> = {}) {
  const res = await t.call('POST', `/api/v1/agents/${agent.agentId}/heartbeat`, { token: agent.token, body });
  expect(res.status, res.text).toBe(200);
}

function setStatus(deviceId: string, status: 'offline' | 'decommissioned') {
  t.db.update(devices).set({ status }).where(eq(devices.id, deviceId)).run();
}

async function script(orgId: string, body: Record<string, unknown> = {}) {
  const res = await as('system', 'POST', '/scripts', { orgId, name: `s-${randomUUID().slice(0, 8)}`, osTypes: ['linux'], language: 'bash', content: 'uptime', timeoutSeconds: 120, runAs: 'elevated', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const act = (deviceId: string, body: Record<string, unknown>) => as('orgUser', 'POST', `/mobile/devices/${deviceId}/actions`, body);

describe('mobile device actions (02 §4.6)', () => {
  it('02§4.6 reboot of an online device queues a reboot command for its agent (201 {action, commandId})', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    await online(agent);
    const res = await act(agent.deviceId, { action: 'reboot' });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ action: 'reboot', commandId: expect.any(String) });
    const [command] = await agent.fetch();
    expect(command).toMatchObject({ id: res.body.commandId, type: 'reboot' });
  });

  it('02§4.6 reboot needs the device online (409 DEVICE_OFFLINE); decommissioned is 400, absent 404 `Device not found`', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    setStatus(agent.deviceId, 'offline');
    const offline = await act(agent.deviceId, { action: 'reboot' });
    expect(offline.status).toBe(409);
    expect(offline.body.code).toBe('DEVICE_OFFLINE');
    setStatus(agent.deviceId, 'decommissioned');
    const gone = await act(agent.deviceId, { action: 'reboot' });
    expect(gone.status).toBe(400);
    expect(gone.body.error).toBe('Device is decommissioned');
    const absent = await act(randomUUID(), { action: 'reboot' });
    expect(absent.status).toBe(404);
    expect(absent.body.error).toBe('Device not found');
    expect((await act(agent.deviceId, { action: 'shutdown' })).status).toBe(400);
  });

  it('02§4.6 run_script creates a manual execution record; the command carries content, language, timeout and run-as', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    await online(agent);
    const scriptId = await script(w.orgA1.id);
    const res = await act(agent.deviceId, { action: 'run_script', scriptId });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ action: 'run_script', executionId: expect.any(String), commandId: expect.any(String) });
    const execution = t.db.select().from(scriptExecutions).where(eq(scriptExecutions.id, res.body.executionId)).get();
    expect(execution).toMatchObject({ scriptId, deviceId: agent.deviceId, triggerType: 'manual', runAs: 'elevated', commandId: res.body.commandId });
    const [command] = await agent.fetch();
    expect(command?.payload).toMatchObject({ executionId: res.body.executionId, language: 'bash', content: 'uptime', timeoutSeconds: 120, runAs: 'elevated' });
  });

  it('02§4.6 run_script checks: scriptId required, device online, script in reach, OS supported', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    await online(agent);
    const missing = await act(agent.deviceId, { action: 'run_script' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('scriptId is required for run_script');
    const foreign = await act(agent.deviceId, { action: 'run_script', scriptId: await script(w.orgB1.id) });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('Script not found');
    const sibling = await as('aAdmin', 'POST', `/mobile/devices/${agent.deviceId}/actions`, { action: 'run_script', scriptId: await script(w.orgA2.id) });
    expect(sibling.status).toBe(400);
    expect(sibling.body.code).toBe('SCRIPT_OUT_OF_REACH');
    const windows = await act(agent.deviceId, { action: 'run_script', scriptId: await script(w.orgA1.id, { osTypes: ['windows'], language: 'powershell' }) });
    expect(windows.status).toBe(400);
    expect(windows.body.error).toBe("Script does not support the device's OS (linux)");
    setStatus(agent.deviceId, 'offline');
    const offline = await act(agent.deviceId, { action: 'run_script', scriptId: await script(w.orgA1.id) });
    expect(offline.status).toBe(409);
    expect(t.db.select().from(scriptExecutions).all()).toHaveLength(0);
  });

  it('02§4.6 run_script needs scripts:execute beside devices:execute: without it 403, no execution record, reboot still allowed', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    await online(agent);
    const scriptId = await script(w.orgA1.id);
    const roleId = seedOrgRole(t, w.orgA1.id, ['devices:read', 'devices:execute', 'scripts:read']);
    const operator = await seedUser(t, { email: 'operator@a1.test', org: { orgId: w.orgA1.id, roleId }, login: 'mint', mfa: true });
    const path = `/api/v1/mobile/devices/${agent.deviceId}/actions`;
    const refused = await t.call('POST', path, { token: operator.token, body: { action: 'run_script', scriptId } });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('INSUFFICIENT_PERMISSIONS');
    expect(t.db.select().from(scriptExecutions).all()).toHaveLength(0);
    const reboot = await t.call('POST', path, { token: operator.token, body: { action: 'reboot' } });
    expect(reboot.status, reboot.text).toBe(201);
  });

  it('02§4.6 run_script on a device of an organization out of the caller\'s reach is 404 `Device not found` (no execution record)', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA2.id);
    await online(agent);
    const scriptId = await script(w.orgA2.id);
    for (const caller of ['orgUser', 'aTech', 'bAdmin'] as const) {
      const res = await as(caller, 'POST', `/mobile/devices/${agent.deviceId}/actions`, { action: 'run_script', scriptId });
      expect(res.status, caller).toBe(404);
      expect(res.body.error).toBe('Device not found');
    }
    expect(t.db.select().from(scriptExecutions).all()).toHaveLength(0);
    const reached = await as('aAdmin', 'POST', `/mobile/devices/${agent.deviceId}/actions`, { action: 'run_script', scriptId });
    expect(reached.status, reached.text).toBe(201);
  });

  it('05§4.6 wake works for an offline device: an online device of the same site relays the magic packet (202)', async () => {
    const target = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'pc-01', siteId: w.siteA1a.id });
    const relay = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'relay-01', siteId: w.siteA1a.id });
    const elsewhere = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'other-site', siteId: w.siteA1b.id });
    await online(target, { networkInfo: [NIC] });
    setStatus(target.deviceId, 'offline');
    await online(relay);
    await online(elsewhere);
    const res = await act(target.deviceId, { action: 'wake' });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({
      action: 'wake',
      relay: { deviceId: relay.deviceId, hostname: 'relay-01' },
      network: '10.1.2.0/24',
      broadcast: '10.1.2.255',
      macs: ['aa:bb:cc:00:11:22'],
    });
    const [command] = await relay.fetch();
    expect(command).toMatchObject({ id: res.body.commandId, type: 'wake', payload: { targetDeviceId: target.deviceId, macs: ['aa:bb:cc:00:11:22'], wakeAttemptId: res.body.wakeAttemptId } });
    expect(await target.fetch()).toHaveLength(0);
  });

  it('05§4.6 wake without a known MAC or without an online relay in the site is 412 with a code', async () => {
    const bare = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { siteId: w.siteA1a.id });
    const noMac = await act(bare.deviceId, { action: 'wake' });
    expect(noMac.status).toBe(412);
    expect(noMac.body.code).toBe('WAKE_NO_MAC');
    await online(bare, { networkInfo: [NIC] });
    const noRelay = await act(bare.deviceId, { action: 'wake' });
    expect(noRelay.status).toBe(412);
    expect(noRelay.body.code).toBe('WAKE_NO_RELAY');
  });

  it('05§4.6 actions need MFA (403 MFA_REQUIRED without it)', async () => {
    const agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id);
    await online(agent);
    const token = await mintToken(t, w.users.orgUser.id, { mfa: false });
    const res = await t.call('POST', `/api/v1/mobile/devices/${agent.deviceId}/actions`, { token, body: { action: 'reboot' } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('MFA_REQUIRED');
  });
});
