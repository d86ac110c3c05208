import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { auditLogs, deviceCommands } from '../../src/server/db/schema/index.js';
import { type TestApp } from '../helpers/server.js';
import { mintToken, seedOrgRole, seedUser, type World } from '../helpers/seed.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';
import { writeAsAnotherProcess } from '../helpers/other-process.js';
import type { ReadCache } from '../../src/server/lib/read-cache.js';

const API = '/api/v1';

describe('device commands and the agent command channel (03 §4.7, 05 wire notes 4.7)', () => {
  let t: TestApp;
  let w: World;
  let agent: SimulatedAgent;
  const send = (token: string, deviceId: string, body: unknown) => t.call('POST', `${API}/devices/${deviceId}/commands`, { token, body });

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  beforeEach(async () => {
    agent = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { siteId: w.siteA1a.id });
  });

  it('03§4.7 POST /devices/:id/commands queues a command: 201 {id, deviceId, type, status pending, createdAt}, audited', async () => {
    const res = await send(w.tokens.orgUser, agent.deviceId, { type: 'reboot', payload: { delaySeconds: 5 } });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ id: expect.any(String), deviceId: agent.deviceId, type: 'reboot', status: 'pending', createdAt: expect.any(String) });
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'device.command')).get();
    expect(audit).toMatchObject({ resourceId: agent.deviceId, orgId: w.orgA1.id, details: { commandId: res.body.id, type: 'reboot' } });
  });

  it('03§4.7 every command type of the wire notes is accepted; script is refused with the wire message', async () => {
    for (const type of ['reboot', 'reboot_safe_mode', 'shutdown', 'update', 'collect_evidence', 'execute_containment', 'wake', 'refresh_inventory']) {
      expect((await send(w.tokens.system, agent.deviceId, { type })).status).toBe(201);
    }
    const script = await send(w.tokens.system, agent.deviceId, { type: 'script' });
    expect(script.status).toBe(400);
    expect(script.body.error).toBe('Script commands must be executed through the scripts endpoint');
    const unknown = await send(w.tokens.system, agent.deviceId, { type: 'format_disk' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('VALIDATION_ERROR');
  });

  it('03§4.7 a decommissioned device refuses commands; absent and out-of-reach devices are 404', async () => {
    expect((await t.call('DELETE', `${API}/devices/${agent.deviceId}`, { token: w.tokens.system })).status).toBe(200);
    const res = await send(w.tokens.system, agent.deviceId, { type: 'reboot' });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Cannot send commands to a decommissioned device');
    const other = await SimulatedAgent.enroll(t, w.tokens.system, w.orgB1.id);
    expect((await send(w.tokens.aAdmin, other.deviceId, { type: 'reboot' })).status).toBe(404);
    expect((await send(w.tokens.system, '00000000-0000-4000-8000-000000000000', { type: 'reboot' })).body.error).toBe('Device not found');
    // A site-restricted user does not reach a device of another site.
    const elsewhere = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { siteId: w.siteA1b.id, hostname: 'b' });
    expect((await send(w.tokens.siteUser, elsewhere.deviceId, { type: 'reboot' })).status).toBe(404);
  });

  it('05§4.7 commands need devices:execute and MFA', async () => {
    const plain = await mintToken(t, w.users.orgUser.id, { mfa: false });
    const res = await send(plain, agent.deviceId, { type: 'reboot' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('MFA_REQUIRED');
    const reader = await seedUser(t, { email: 'reader@a1.test', org: { orgId: w.orgA1.id, roleId: seedOrgRole(t, w.orgA1.id, ['devices:read']) }, login: 'mint', mfa: true });
    const refused = await send(reader.token, agent.deviceId, { type: 'reboot' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('Permission denied');
    expect((await t.call('GET', `${API}/devices/${agent.deviceId}/commands`, { token: reader.token })).status).toBe(200);
  });

  it('agent fetches its pending commands once, oldest first, and reports each result', async () => {
    const first = (await send(w.tokens.system, agent.deviceId, { type: 'refresh_inventory' })).body.id as string;
    const second = (await send(w.tokens.system, agent.deviceId, { type: 'reboot' })).body.id as string;
    const commands = await agent.fetch();
    expect(commands.map((c) => c.id)).toEqual([first, second]);
    expect(commands[0]).toMatchObject({ type: 'refresh_inventory', payload: {}, env: {} });
    expect(await agent.fetch()).toEqual([]);
    expect(t.db.select().from(deviceCommands).where(eq(deviceCommands.id, first)).get()).toMatchObject({ status: 'sent', sentAt: expect.any(String) });

    expect((await agent.report(first, { status: 'completed', exitCode: 0 })).status).toBe(200);
    expect((await agent.report(second, { status: 'failed', error: 'reboot blocked by policy' })).status).toBe(200);
    const again = await agent.report(first, { status: 'completed', exitCode: 0 });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('Command is already completed');

    const list = await t.call('GET', `${API}/devices/${agent.deviceId}/commands`, { token: w.tokens.orgUser });
    expect(list.status).toBe(200);
    expect(list.body.pagination.total).toBe(2);
    const byId = Object.fromEntries(list.body.data.map((c: { id: string }) => [c.id, c]));
    expect(byId[first]).toMatchObject({ status: 'completed', exitCode: 0, completedAt: expect.any(String) });
    expect(byId[second]).toMatchObject({ status: 'failed', errorMessage: 'reboot blocked by policy' });
    expect(list.body.data[0]).not.toHaveProperty('secretEnv');
  });

  it('01§5.13 the agent channel takes only the agent\'s own token, never a user token or another agent\'s', async () => {
    const other = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'other' });
    const id = (await send(w.tokens.system, agent.deviceId, { type: 'reboot' })).body.id as string;
    expect((await t.call('GET', `${API}/agents/${agent.agentId}/commands`, { token: other.token })).status).toBe(403);
    expect((await t.call('GET', `${API}/agents/${agent.agentId}/commands`, { token: w.tokens.system })).status).toBe(401);
    expect((await t.call('GET', `${API}/agents/${agent.agentId}/commands`)).status).toBe(401);
    // Another agent cannot report a result for this device's command, even through its own path.
    expect((await other.report(id, { status: 'completed', exitCode: 0 })).status).toBe(404);
    expect((await agent.fetch()).map((c) => c.id)).toEqual([id]);
  });

  it('the fetch long-polls: a command queued while the agent waits is handed out at once', async () => {
    const waiting = agent.fetch('?wait=5');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const id = (await send(w.tokens.system, agent.deviceId, { type: 'wake' })).body.id as string;
    const started = Date.now();
    expect((await waiting).map((c) => c.id)).toEqual([id]);
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await t.call('GET', `${API}/agents/${agent.agentId}/commands?wait=31`, { token: agent.token })).status).toBe(400);
  });

  it('03§4.7 a poll is never answered from kept GET answers: each one reaches the service (which hands out, or long-polls)', async () => {
    const fetches = vi.spyOn(t.services.deviceCommands, 'fetchForAgent');
    for (let i = 0; i < 3; i++) expect(await agent.fetch()).toEqual([]);
    expect(fetches).toHaveBeenCalledTimes(3);
  });

  describe('polls that find nothing are answered from a kept answer (modules/device-commands/service.ts)', () => {
    const keptAnswer = () =>
      (t.services.deviceCommands as unknown as { hasPending: ReadCache<boolean> }).hasPending.lookup(agent.deviceId);
    // The cache keeps nothing while a group transaction is open (db/group-commit.ts): commit what came before.
    const emptyPoll = async () => {
      t.commits.flush();
      expect(await agent.fetch()).toEqual([]);
      expect(keptAnswer()).toBe(false);
    };

    it('03§4.7 a command queued after an empty poll is handed out by the next poll', async () => {
      await emptyPoll();
      const id = (await send(w.tokens.system, agent.deviceId, { type: 'reboot' })).body.id as string;
      expect((await agent.fetch()).map((c) => c.id)).toEqual([id]);
      await emptyPoll();
    });

    it('03§4.7 a command queued for another device keeps the answer of this one right', async () => {
      const other = await SimulatedAgent.enroll(t, w.tokens.system, w.orgA1.id, { hostname: 'other' });
      await emptyPoll();
      const id = (await send(w.tokens.system, other.deviceId, { type: 'wake' })).body.id as string;
      expect(await agent.fetch()).toEqual([]);
      expect((await other.fetch()).map((c) => c.id)).toEqual([id]);
    });

    it('03§4.7 a command that becomes pending again, or one queued by another process, is handed out by the next poll', async () => {
      const id = (await send(w.tokens.system, agent.deviceId, { type: 'reboot' })).body.id as string;
      expect((await agent.fetch()).map((c) => c.id)).toEqual([id]);
      await emptyPoll();
      // A status change through the server's own connection (as a module would write it).
      t.db.update(deviceCommands).set({ status: 'pending' }).where(eq(deviceCommands.id, id)).run();
      expect((await agent.fetch()).map((c) => c.id)).toEqual([id]);

      await emptyPoll();
      const file = t.db.$client.name;
      await writeAsAnotherProcess(file, "UPDATE device_commands SET status = 'pending' WHERE id = ?", id);
      expect((await agent.fetch()).map((c) => c.id)).toEqual([id]);
    });
  });
});
