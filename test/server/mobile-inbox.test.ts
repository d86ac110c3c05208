import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { alerts, devices } from '../../src/server/db/schema/index.js';
import { enrollAgent, type Agent } from '../helpers/alerts.js';
import type { World } from '../helpers/seed.js';
import type { TestApp } from '../helpers/server.js';
import { useWorld } from '../helpers/world.js';

let t: TestApp;
let w: World;
const as = useWorld({ mfa: true }, (app, world) => {
  t = app;
  w = world;
});

async function heartbeat(agent: Agent, body: Record<string, unknown> = {}) {
  const res = await t.call('POST', `/api/v1/agents/${agent.agentId}/heartbeat`, { token: agent.token, body });
  expect(res.status, res.text).toBe(200);
}

/** An alert row as the evaluator leaves it (the state machine is the alerts service's; only the start is seeded). */
function alert(orgId: string, values: Partial<typeof alerts.$inferInsert> = {}) {
  return t.db
    .insert(alerts)
    .values({ orgId, severity: 'high', title: 'CPU high', message: 'cpu 97', triggeredAt: new Date().toISOString(), ...values })
    .returning()
    .get();
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000).toISOString();

describe('mobile alert inbox (02 §4.6, 05 wire notes 4.6)', () => {
  it('02§4.6 the inbox is newest first, rows carry the device {id, hostname, osType, status}; suppressed excluded without a status filter', async () => {
    const agent = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'web-01', w.siteA1a.id);
    await heartbeat(agent);
    const older = alert(w.orgA1.id, { triggeredAt: minutesAgo(10), deviceId: agent.deviceId, siteId: w.siteA1a.id });
    const newer = alert(w.orgA1.id, { triggeredAt: minutesAgo(1), severity: 'critical' });
    alert(w.orgA1.id, { triggeredAt: minutesAgo(2), status: 'suppressed' });
    alert(w.orgB1.id, { triggeredAt: minutesAgo(1) });
    const res = await as('orgUser', 'GET', '/mobile/alerts/inbox');
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([newer.id, older.id]);
    expect(res.body.data[1].device).toEqual({ id: agent.deviceId, hostname: 'web-01', osType: 'linux', status: 'online' });
    expect(res.body.data[0].device).toBeNull();
    expect(res.body.pagination).toEqual({ page: 1, limit: 50, total: 2, nextCursor: null });
    const suppressed = await as('orgUser', 'GET', '/mobile/alerts/inbox?status=suppressed');
    expect(suppressed.body.data).toHaveLength(1);
  });

  it('02§4.6 inbox filters: status (repeated), severity, orgId (out of reach 403)', async () => {
    alert(w.orgA1.id, { severity: 'critical' });
    alert(w.orgA1.id, { severity: 'low', status: 'acknowledged' });
    alert(w.orgA2.id, { severity: 'critical', status: 'resolved' });
    const critical = await as('aAdmin', 'GET', '/mobile/alerts/inbox?severity=critical');
    expect(critical.body.data).toHaveLength(2);
    const open = await as('aAdmin', 'GET', '/mobile/alerts/inbox?status=active&status=acknowledged');
    expect(open.body.data.map((a: { status: string }) => a.status).sort()).toEqual(['acknowledged', 'active']);
    const org = await as('aAdmin', 'GET', `/mobile/alerts/inbox?orgId=${w.orgA2.id}`);
    expect(org.body.data).toHaveLength(1);
    expect((await as('aAdmin', 'GET', '/mobile/alerts/inbox?severity=info')).status).toBe(400);
    expect((await as('bAdmin', 'GET', `/mobile/alerts/inbox?orgId=${w.orgA1.id}`)).status).toBe(403);
  });

  it('05§4.6 paging: page+limit, and the keyset cursor (base64url {ts,id}) walks every row once, ties on the same instant included', async () => {
    const at = minutesAgo(5);
    const ids = Array.from({ length: 5 }, (_, i) => alert(w.orgA1.id, { triggeredAt: i < 3 ? at : minutesAgo(i) }).id);
    const page2 = await as('orgUser', 'GET', '/mobile/alerts/inbox?page=2&limit=2');
    expect(page2.body.data).toHaveLength(2);
    expect(page2.body.pagination).toMatchObject({ page: 2, limit: 2, total: 5 });
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 5; i++) {
      const res = await as('orgUser', 'GET', `/mobile/alerts/inbox?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status, res.text).toBe(200);
      seen.push(...res.body.data.map((a: { id: string }) => a.id));
      cursor = res.body.pagination.nextCursor;
      if (cursor === null) break;
      const position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
      expect(Object.keys(position).sort()).toEqual(['id', 'ts']);
    }
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await as('orgUser', 'GET', '/mobile/alerts/inbox?cursor=not-json')).status).toBe(400);
  });

  it('02§4.6 acknowledge and resolve (with a note) go through the alert state machine', async () => {
    const row = alert(w.orgA1.id);
    const ack = await as('orgUser', 'POST', `/mobile/alerts/${row.id}/acknowledge`);
    expect(ack.status, ack.text).toBe(200);
    expect(ack.body.status).toBe('acknowledged');
    expect((await as('orgUser', 'POST', `/mobile/alerts/${row.id}/acknowledge`)).status).toBe(400);
    const resolved = await as('orgUser', 'POST', `/mobile/alerts/${row.id}/resolve`, { note: 'rebooted' });
    expect(resolved.body).toMatchObject({ status: 'resolved', resolutionNote: 'rebooted' });
    expect((await as('bAdmin', 'POST', `/mobile/alerts/${alert(w.orgA1.id).id}/acknowledge`)).status).toBe(404);
  });

  it('02§4.6 summary: devices {total, online, offline, maintenance}; alerts with critical = active or acknowledged critical', async () => {
    const a = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'a');
    const b = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'b');
    const c = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'c');
    await heartbeat(a);
    await heartbeat(b, { status: 'maintenance' });
    t.db.update(devices).set({ status: 'offline' }).where(eq(devices.id, c.deviceId)).run();
    alert(w.orgA1.id, { severity: 'critical' });
    alert(w.orgA1.id, { severity: 'critical', status: 'acknowledged' });
    alert(w.orgA1.id, { severity: 'critical', status: 'resolved' });
    alert(w.orgA1.id, { severity: 'low' });
    alert(w.orgA2.id, { severity: 'critical' });
    const res = await as('orgUser', 'GET', '/mobile/summary');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      devices: { total: 3, online: 1, offline: 1, maintenance: 1 },
      alerts: { total: 4, active: 2, acknowledged: 1, resolved: 1, critical: 2 },
    });
  });

  it('02§4.6 §01§2.6 summary device counts are the device list totals for every reach (sites, orgId, other tenants)', async () => {
    const agents = [
      await enrollAgent(t, w.tokens.system, w.orgA1.id, 'a1a', w.siteA1a.id),
      await enrollAgent(t, w.tokens.system, w.orgA1.id, 'a1b', w.siteA1b.id),
      await enrollAgent(t, w.tokens.system, w.orgA1.id, 'a1c', w.siteA1a.id),
      await enrollAgent(t, w.tokens.system, w.orgA2.id, 'a2', w.siteA2a.id),
      await enrollAgent(t, w.tokens.system, w.orgB1.id, 'b1', w.siteB1a.id),
    ];
    const set = (i: number, status: (typeof devices.$inferSelect)['status']) =>
      t.db.update(devices).set({ status }).where(eq(devices.id, agents[i]?.deviceId ?? '')).run();
    set(0, 'online');
    set(1, 'maintenance');
    set(2, 'decommissioned');
    set(3, 'online');
    const totals = async (who: Parameters<typeof as>[0], query: string) => {
      const total = async (status?: string) => {
        const params = `page=1&limit=1${query}${status ? `&status=${status}` : ''}`;
        const res = await as(who, 'GET', `/devices?${params}`);
        expect(res.status, res.text).toBe(200);
        return res.body.pagination.total as number;
      };
      return { total: await total(), online: await total('online'), offline: await total('offline'), maintenance: await total('maintenance') };
    };
    let seen = 0;
    for (const who of ['system', 'aAdmin', 'bAdmin', 'orgUser', 'siteUser'] as const) {
      const summary = await as(who, 'GET', '/mobile/summary');
      if (summary.status === 403) continue;
      expect(summary.status, summary.text).toBe(200);
      expect(summary.body.devices, who).toEqual(await totals(who, ''));
      seen++;
    }
    expect(seen).toBeGreaterThanOrEqual(3);
    const one = await as('aAdmin', 'GET', `/mobile/summary?orgId=${w.orgA2.id}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body.devices).toEqual({ total: 1, online: 1, offline: 0, maintenance: 0 });
    expect((await as('bAdmin', 'GET', `/mobile/summary?orgId=${w.orgA1.id}`)).status).toBe(403);
  });

  it('02§4.6 devices: decommissioned excluded by default, hostname search, lastSeenAt newest first, cursor paging', async () => {
    const names = ['db-01', 'web-01', 'web-02', 'web-03'];
    const agents: Agent[] = [];
    for (const name of names) agents.push(await enrollAgent(t, w.tokens.system, w.orgA1.id, name));
    names.forEach((_, i) => t.db.update(devices).set({ status: 'online', lastSeenAt: minutesAgo(i) }).where(eq(devices.id, agents[i]?.deviceId ?? '')).run());
    t.db.update(devices).set({ status: 'decommissioned' }).where(eq(devices.id, agents[3]?.deviceId ?? '')).run();
    const res = await as('orgUser', 'GET', '/mobile/devices');
    expect(res.body.data.map((d: { hostname: string }) => d.hostname)).toEqual(['db-01', 'web-01', 'web-02']);
    expect(Object.keys(res.body.data[0]).sort()).toEqual(['displayName', 'hostname', 'id', 'lastSeenAt', 'orgId', 'osType', 'siteId', 'status']);
    const search = await as('orgUser', 'GET', '/mobile/devices?search=web');
    expect(search.body.data.map((d: { hostname: string }) => d.hostname)).toEqual(['web-01', 'web-02']);
    const gone = await as('orgUser', 'GET', '/mobile/devices?status=decommissioned');
    expect(gone.body.data.map((d: { hostname: string }) => d.hostname)).toEqual(['web-03']);
    const first = await as('orgUser', 'GET', '/mobile/devices?limit=2');
    expect(first.body.pagination).toMatchObject({ total: 3 });
    const next = await as('orgUser', 'GET', `/mobile/devices?limit=2&cursor=${first.body.pagination.nextCursor}`);
    expect(next.body.data.map((d: { hostname: string }) => d.hostname)).toEqual(['web-02']);
    expect(next.body.pagination.nextCursor).toBeNull();
  });

  it('02§4.6 device metrics: live CPU, memory and disk of a visible device; 404 otherwise', async () => {
    const agent = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'm-01');
    await heartbeat(agent, { metrics: { cpuPercent: 12.5, ramPercent: 48, diskPercent: 71 } });
    const res = await as('orgUser', 'GET', `/mobile/devices/${agent.deviceId}/metrics`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ deviceId: agent.deviceId, status: 'online', cpuPercent: 12.5, memoryPercent: 48, diskPercent: 71 });
    expect((await as('bAdmin', 'GET', `/mobile/devices/${agent.deviceId}/metrics`)).status).toBe(404);
    expect((await as('orgUser', 'GET', `/mobile/devices/${randomUUID()}/metrics`)).status).toBe(404);
  });
});
