import { gzipSync } from 'node:zlib';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditLogs, deviceDiagnosticLogs, deviceEventLogs } from '../../src/server/db/schema/index.js';
import { DeviceLogsService } from '../../src/server/modules/device-logs/service.js';
import { seedRestrictedWorld, type RestrictedWorld } from '../helpers/restricted.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import type { SimulatedAgent } from '../helpers/simulated-agent.js';

// Agent diagnostic logs and device event logs (03 §2.7, §2.8, §4.4, §7, §8; 05 wire notes "4.4 Logs").
const API = '/api/v1';
const MB = 1024 * 1024;

const entry = (over: Record<string, unknown> = {}) => ({ timestamp: '2026-01-01T00:00:00Z', level: 'info', component: 'heartbeat', message: 'ok', ...over });
const event = (over: Record<string, unknown> = {}) => ({ timestamp: '2026-01-01T00:00:00Z', level: 'error', category: 'system', source: 'disk', message: 'bad block', ...over });
/** `n` entries, one second apart from 2026-01-01T00:00:00Z, messages m0…m(n-1). */
const entries = (n: number, over: (i: number) => Record<string, unknown> = () => ({})) =>
  Array.from({ length: n }, (_, i) => entry({ timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), message: `m${i}`, ...over(i) }));

describe('agent diagnostic logs and device event logs (03 §2.7, §2.8, §4.4)', () => {
  let t: TestApp, r: RestrictedWorld, agent: SimulatedAgent;
  beforeEach(async () => {
    t = await createTestApp();
    r = await seedRestrictedWorld(t);
    agent = r.inGroup;
  });
  afterEach(async () => {
    await t.close();
  });

  const get = (token: string, url: string) => t.call('GET', `${API}${url}`, { token });
  const admin = () => r.w.tokens.orgUser;
  const diagnostics = (query = '', device = agent.deviceId) => get(admin(), `/devices/${device}/diagnostic-logs${query}`);
  const events = (query = '', device = agent.deviceId) => get(admin(), `/devices/${device}/eventlogs${query}`);
  /** The messages a device read lists (200), in its order. */
  const messagesOf = async (path: 'diagnostic-logs' | 'eventlogs', query: string): Promise<string[]> => {
    const res = await get(admin(), `/devices/${agent.deviceId}/${path}${query}`);
    expect(res.status, res.text).toBe(200);
    return ((res.body.logs ?? res.body.data) as { message: string }[]).map((row) => row.message);
  };
  /** A trigger that makes the insert of any row with this message fail (an honest database failure). */
  const poison = (table: 'device_diagnostic_logs' | 'device_event_logs', message = 'poison') =>
    t.db.$client.exec(`CREATE TRIGGER poison_${table} BEFORE INSERT ON ${table} WHEN NEW.message = '${message}' BEGIN SELECT RAISE(ABORT, 'poisoned'); END`);

  // ---- POST /agents/:id/logs ----

  it('03§4.4 POST /agents/:id/logs stores a batch (201 {received}) with the device, its organization and createdAt', async () => {
    const res = await agent.sendLogs([entry({ message: 'first' }), entry({ timestamp: '2026-01-01T01:00:01+01:00', level: 'error', component: 'patching', message: 'second', fields: { code: 5 }, agentVersion: '1.0.0' })]);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ received: 2 });
    const rows = t.db.select().from(deviceDiagnosticLogs).all();
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ deviceId: agent.deviceId, orgId: r.w.orgA1.id, createdAt: expect.stringMatching(/^\d{4}-/) });
    // Agent times are kept as UTC so that they sort.
    expect(rows.find((row) => row.message === 'second')).toMatchObject({ timestamp: '2026-01-01T00:00:01.000Z', fields: { code: 5 }, agentVersion: '1.0.0', level: 'error', component: 'patching' });
  });

  it('03§4.4 GET /devices/:id/diagnostic-logs answers {logs, total, limit, offset}, newest first, default limit 1000', async () => {
    expect((await agent.sendLogs([entry({ message: 'first' }), entry({ timestamp: '2026-01-01T00:00:01Z', message: 'second', fields: { a: 1 }, agentVersion: '1.0.0' })])).status).toBe(201);
    const list = await diagnostics();
    expect(list.status, list.text).toBe(200);
    expect(list.body).toMatchObject({ total: 2, limit: 1000, offset: 0 });
    expect(list.body.logs.map((l: { message: string }) => l.message)).toEqual(['second', 'first']);
    expect(Object.keys(list.body.logs[0]).sort()).toEqual(['agentVersion', 'component', 'createdAt', 'deviceId', 'fields', 'id', 'level', 'message', 'orgId', 'timestamp']);
    expect(list.body.logs[1]).toMatchObject({ fields: null, agentVersion: null, deviceId: agent.deviceId, orgId: r.w.orgA1.id });
  });

  it('03§4.4 a gzipped body (Content-Encoding: gzip) is inflated and stored', async () => {
    const res = await agent.sendLogs(entries(3), { gzip: true });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({ received: 3 });
    expect((await diagnostics()).body.logs.map((l: { message: string }) => l.message)).toEqual(['m2', 'm1', 'm0']);
  });

  it('03§4.4 a body that does not inflate, or inflates past 10 MB, is 400 `Failed to decode request body` with a detail', async () => {
    const send = (body: Buffer, encoding = 'gzip') =>
      t.call('POST', `${API}/agents/${agent.agentId}/logs`, { token: agent.token, headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body });
    const garbage = await send(Buffer.from('not gzip at all'));
    expect(garbage.status).toBe(400);
    expect(garbage.body).toMatchObject({ error: 'Failed to decode request body', code: 'BODY_DECODE_FAILED', detail: expect.any(String) });
    // 11 MB of spaces inside a valid JSON document compress to a few KB: refused by the 10 MB inflated cap.
    const bomb = gzipSync(Buffer.from(`{"logs":[]${' '.repeat(11 * MB)}}`));
    expect(bomb.length).toBeLessThan(MB);
    const refused = await send(bomb);
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'Failed to decode request body', detail: expect.stringContaining('exceeds') });
    // Just under the cap inflates.
    expect((await send(gzipSync(Buffer.from(`{"logs":[]${' '.repeat(9 * MB)}}`)))).status).toBe(200);
    expect((await send(Buffer.from('{"logs":[]}'), 'br')).body).toMatchObject({ error: 'Failed to decode request body', detail: 'Unsupported Content-Encoding: br' });
    expect(t.db.select().from(deviceDiagnosticLogs).all()).toEqual([]);
  });

  it('03§4.4 an empty batch is 200 {received:0}; a body without logs is 400', async () => {
    const empty = await agent.sendLogs([]);
    expect(empty.status, empty.text).toBe(200);
    expect(empty.body).toEqual({ received: 0 });
    const missing = await t.call('POST', `${API}/agents/${agent.agentId}/logs`, { token: agent.token, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: 'VALIDATION_ERROR', error: expect.stringMatching(/^logs: /) });
  });

  it('03§8 entries beyond the limits (500 entries, component 100, message 10000, fields 32 KB, agentVersion 50, level, offset) are 400, never 500', async () => {
    const refused = async (logs: Record<string, unknown>[], error: RegExp) => {
      const res = await agent.sendLogs(logs);
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('VALIDATION_ERROR');
      expect(res.body.error).toMatch(error);
    };
    await refused(entries(501), /^logs: /);
    await refused([entry({ component: 'c'.repeat(101) })], /^logs\.0\.component: /);
    await refused([entry({ component: '' })], /^logs\.0\.component: /);
    await refused([entry(), entry({ message: 'm'.repeat(10_001) })], /^logs\.1\.message: /);
    await refused([entry({ fields: { blob: 'x'.repeat(32 * 1024) } })], /^logs\.0\.fields: fields object too large \(max 32KB\)$/);
    await refused([entry({ fields: ['not', 'an', 'object'] })], /^logs\.0\.fields: /);
    await refused([entry({ agentVersion: 'v'.repeat(51) })], /^logs\.0\.agentVersion: /);
    await refused([entry({ level: 'fatal' })], /^logs\.0\.level: /);
    await refused([entry({ timestamp: '2026-01-01T00:00:00' })], /^logs\.0\.timestamp: /);
    await refused([entry({ timestamp: 'yesterday' })], /^logs\.0\.timestamp: /);
    // At the limits, accepted.
    const full = await agent.sendLogs([
      ...entries(499),
      entry({ component: 'c'.repeat(100), message: 'm'.repeat(10_000), agentVersion: 'v'.repeat(50), fields: { blob: 'x'.repeat(32 * 1024 - 20) } }),
    ]);
    expect(full.status, full.text).toBe(201);
    expect(full.body).toEqual({ received: 500 });
  });

  it('03§8 a plain body over 10 MB is refused (413, the server-wide answer to an oversize body), not 500', async () => {
    const res = await t.call('POST', `${API}/agents/${agent.agentId}/logs`, {
      token: agent.token,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(`{"logs":[]${' '.repeat(10 * MB)}}`),
    });
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it("03§4.4 an agent's token opens only its own device's ingest: another agent's id is refused and nothing is stored", async () => {
    const other = r.outside;
    const logs = await t.call('POST', `${API}/agents/${other.agentId}/logs`, { token: agent.token, body: { logs: [entry()] } });
    expect(logs.status).toBe(403);
    expect(logs.body.code).toBe('AGENT_MISMATCH');
    const evts = await t.call('PUT', `${API}/agents/${other.agentId}/eventlogs`, { token: agent.token, body: { events: [event()] } });
    expect(evts.status).toBe(403);
    expect((await t.call('POST', `${API}/agents/${agent.agentId}/logs`, { body: { logs: [entry()] } })).status).toBe(401);
    // A user's token is not an agent's.
    expect((await t.call('POST', `${API}/agents/${agent.agentId}/logs`, { token: admin(), body: { logs: [entry()] } })).status).toBe(401);
    expect(t.db.select().from(deviceDiagnosticLogs).all()).toEqual([]);
    expect(t.db.select().from(deviceEventLogs).all()).toEqual([]);
  });

  it('03§4.4 an agent whose device is not found (looked up by the agent id in the path) is 404 `Device not found`', () => {
    // Through HTTP the agent's token no longer authenticates once its device is gone or decommissioned (401), so
    // the service's own check is exercised directly with an agent caller whose device does not exist.
    const service = new DeviceLogsService(t.db, t.services.devices, () => undefined);
    const ctx = { caller: { agentId: 'no-such-agent' }, ip: null, userAgent: null, requestId: 'x' } as unknown as Parameters<DeviceLogsService['ingest']>[0];
    expect(() => service.ingest(ctx, 'no-such-agent', { logs: [entry() as never] })).toThrow('Device not found');
    expect(() => service.submitEvents(ctx, 'no-such-agent', { events: [] })).toThrow('Device not found');
  });

  it('03§4.4 entries are inserted in groups of 100: a failing group loses only its own entries (207 {received, total, partial})', async () => {
    poison('device_diagnostic_logs');
    // 250 entries: groups 0-99, 100-199 (holds the poisoned entry 150), 200-249.
    const res = await agent.sendLogs(entries(250, (i) => (i === 150 ? { message: 'poison' } : {})));
    expect(res.status, res.text).toBe(207);
    expect(res.body).toEqual({ received: 150, total: 250, partial: true });
    const stored = t.db.select({ message: deviceDiagnosticLogs.message }).from(deviceDiagnosticLogs).all().map((row) => Number(row.message.slice(1)));
    expect(stored).toHaveLength(150);
    expect(stored.every((i) => i < 100 || i >= 200)).toBe(true);
  });

  it('03§4.4 when every group fails the answer is 500 {error: "Failed to insert logs", received: 0}', async () => {
    poison('device_diagnostic_logs');
    const res = await agent.sendLogs([entry({ message: 'poison' })]);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ error: 'Failed to insert logs', received: 0 });
  });

  it('03§4.4 diagnostic-logs filters: level (comma-separated, unknown dropped), component (exact), since/until, search over message and fields', async () => {
    const sent = await agent.sendLogs([
      entry({ timestamp: '2026-01-01T00:00:00Z', level: 'debug', component: 'heartbeat', message: 'tick' }),
      entry({ timestamp: '2026-01-01T00:01:00Z', level: 'info', component: 'patching', message: 'Patch KB123 installed' }),
      entry({ timestamp: '2026-01-01T00:02:00Z', level: 'warn', component: 'patching-extra', message: 'slow', fields: { host: 'Mirror.Example' } }),
      entry({ timestamp: '2026-01-01T00:03:00Z', level: 'error', component: 'updater', message: '100% failed_now' }),
    ]);
    expect(sent.status, sent.text).toBe(201);
    const messages = (query: string) => messagesOf('diagnostic-logs', query);
    expect(await messages('?level=warn,error,fatal')).toEqual(['100% failed_now', 'slow']);
    expect(await messages('?level=fatal')).toHaveLength(4);
    expect(await messages('?component=patching')).toEqual(['Patch KB123 installed']);
    expect(await messages('?since=2026-01-01T00:01:00Z&until=2026-01-01T01:02:00%2B01:00')).toEqual(['slow', 'Patch KB123 installed']);
    expect(await messages('?search=kb123')).toEqual(['Patch KB123 installed']);
    expect(await messages('?search=mirror.example')).toEqual(['slow']);
    // LIKE wildcards in the search are matched literally.
    expect(await messages('?search=0%25 f')).toEqual(['100% failed_now']);
    expect(await messages('?search=_')).toEqual(['100% failed_now']);
  });

  it('03§4.4 diagnostic-logs: page and limit (max 1000) give the offset; bad since/until are 400 `Invalid since date` / `Invalid until date`', async () => {
    expect((await agent.sendLogs(entries(5))).status).toBe(201);
    const page = await diagnostics('?page=2&limit=2');
    expect(page.body).toMatchObject({ total: 5, limit: 2, offset: 2 });
    expect(page.body.logs.map((l: { message: string }) => l.message)).toEqual(['m2', 'm1']);
    expect((await diagnostics('?limit=5000')).body.limit).toBe(1000);
    const since = await diagnostics('?since=not-a-date');
    expect(since.status).toBe(400);
    expect(since.body.error).toBe('since: Invalid since date');
    const until = await diagnostics('?until=2026-13-45');
    expect(until.status).toBe(400);
    expect(until.body.error).toBe('until: Invalid until date');
  });

  it('03§5 the reads refuse what GET /devices/:id refuses: another partner, a site-restricted and a group-restricted user (01 §2.6)', async () => {
    expect((await agent.sendLogs([entry()])).status).toBe(201);
    for (const a of [r.inGroup, r.outside, r.otherSite]) expect((await a.sendEvents([event()])).status).toBe(200);
    const cases: [string, SimulatedAgent][] = [
      [r.w.tokens.bAdmin, r.inGroup],
      [r.w.tokens.siteUser, r.otherSite],
      [r.groupUser, r.outside],
    ];
    for (const [token, target] of cases) {
      const device = await get(token, `/devices/${target.deviceId}`);
      expect(device.status).toBeGreaterThanOrEqual(400);
      for (const path of ['diagnostic-logs', 'eventlogs']) {
        const res = await get(token, `/devices/${target.deviceId}/${path}`);
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: device.status, body: device.body });
      }
    }
    // What they may see, they read.
    expect((await get(r.groupUser, `/devices/${r.inGroup.deviceId}/diagnostic-logs`)).body.total).toBe(1);
    expect((await get(r.w.tokens.siteUser, `/devices/${r.outside.deviceId}/eventlogs`)).body.pagination.total).toBe(1);
  });

  // ---- PUT /agents/:id/eventlogs ----

  it('03§4.4 PUT /agents/:id/eventlogs stores events ({success, count, filtered: 0}) and GET /devices/:id/eventlogs lists them newest first', async () => {
    const res = await agent.sendEvents([
      event({ eventId: '7', message: 'bad block' }),
      event({ timestamp: '2026-01-01T00:00:05Z', level: 'critical', category: 'hardware', source: 'psu', message: 'power', details: { watts: 0 } }),
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, count: 2, filtered: 0 });
    const list = await events();
    expect(list.status, list.text).toBe(200);
    expect(list.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    expect(list.body.data.map((e: { message: string }) => e.message)).toEqual(['power', 'bad block']);
    expect(list.body.data[0]).toMatchObject({ deviceId: agent.deviceId, orgId: r.w.orgA1.id, eventId: null, details: { watts: 0 }, level: 'critical', category: 'hardware', source: 'psu' });
    expect(Object.keys(list.body.data[1]).sort()).toEqual(['category', 'createdAt', 'details', 'deviceId', 'eventId', 'id', 'level', 'message', 'orgId', 'source', 'timestamp']);
  });

  it('03§2.8 a repeated (device, source, eventId) is silently ignored and not counted; events without an eventId never collide', async () => {
    expect((await agent.sendEvents([event({ eventId: '7' })])).body.count).toBe(1);
    const again = await agent.sendEvents([
      event({ eventId: '7', message: 'same event again' }),
      event({ eventId: '8' }),
      event({ eventId: '8' }),
      event({ eventId: '7', source: 'other' }),
      event(),
      event(),
    ]);
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ success: true, count: 4, filtered: 0 });
    expect(t.db.select().from(deviceEventLogs).all()).toHaveLength(5);
    // Another device may report the same pair.
    expect((await r.outside.sendEvents([event({ eventId: '7' })])).body.count).toBe(1);
  });

  it('03§6 an event log submission is audited as agent.eventlogs.submit with its counts', async () => {
    await agent.sendEvents([event({ eventId: '1' })]);
    await agent.sendEvents([event({ eventId: '1' }), event({ eventId: '2' })]);
    const rows = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'agent.eventlogs.submit')).all();
    expect(rows).toHaveLength(2);
    expect(rows.map((row) => row.details)).toEqual([
      expect.objectContaining({ received: 1, inserted: 1, duplicates: 0 }),
      expect.objectContaining({ received: 2, inserted: 1, duplicates: 1 }),
    ]);
    expect(rows[1]).toMatchObject({ actorType: 'agent', resourceType: 'device', resourceId: agent.deviceId, orgId: r.w.orgA1.id });
  });

  it('03§4.4 (wire) a timestamp more than 10 minutes ahead becomes the receive time, with details.originalTimestamp and timestampClamped', async () => {
    const ahead = new Date(Date.now() + 60 * 60_000).toISOString();
    const near = new Date(Date.now() + 5 * 60_000).toISOString();
    const before = Date.now();
    const res = await agent.sendEvents([event({ eventId: 'a', timestamp: ahead, details: { k: 1 } }), event({ eventId: 'b', timestamp: near })]);
    expect(res.body.count).toBe(2);
    const rows = t.db.select().from(deviceEventLogs).all();
    const clamped = rows.find((row) => row.eventId === 'a');
    expect(Date.parse(clamped?.timestamp ?? '')).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(clamped?.timestamp ?? '')).toBeLessThanOrEqual(Date.now());
    expect(clamped?.details).toEqual({ k: 1, originalTimestamp: ahead, timestampClamped: true });
    expect(rows.find((row) => row.eventId === 'b')).toMatchObject({ timestamp: near, details: null });
  });

  it('03§8 event batches beyond the limits (5000 events, message 1-2000, source 255, eventId 100, details 64 KB, level, category) are 400', async () => {
    const refused = async (evts: Record<string, unknown>[], error: RegExp) => {
      const res = await agent.sendEvents(evts);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatch(error);
    };
    await refused(Array.from({ length: 5001 }, () => event()), /^events: /);
    await refused([event({ message: '' })], /^events\.0\.message: /);
    await refused([event({ message: 'm'.repeat(2001) })], /^events\.0\.message: /);
    await refused([event({ source: 's'.repeat(256) })], /^events\.0\.source: /);
    await refused([event({ eventId: 'e'.repeat(101) })], /^events\.0\.eventId: /);
    await refused([event({ details: { blob: 'x'.repeat(64 * 1024) } })], /^events\.0\.details: details object too large \(max 64KB\)$/);
    await refused([event({ level: 'warn' })], /^events\.0\.level: /);
    await refused([event({ category: 'network' })], /^events\.0\.category: /);
    await refused([event({ timestamp: '2026-01-01 00:00' })], /^events\.0\.timestamp: /);
    expect((await t.call('PUT', `${API}/agents/${agent.agentId}/eventlogs`, { token: agent.token, body: {} })).status).toBe(400);
    expect(t.db.select().from(deviceEventLogs).all()).toEqual([]);
  });

  it('03§4.4 event batches are inserted in groups of 100: a failing group fails the submission with the counts stored (500)', async () => {
    poison('device_event_logs');
    const batch = Array.from({ length: 150 }, (_, i) => event({ eventId: String(i), message: i === 120 ? 'poison' : `e${i}` }));
    const res = await agent.sendEvents(batch);
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ success: false, error: 'Partial insert failure', count: 100, filtered: 0, expectedCount: 150 });
    expect(t.db.select().from(deviceEventLogs).all()).toHaveLength(100);
  });

  it('03§4.4 eventlogs filters: category, level, source (exact), startDate/endDate; page and limit (max 500)', async () => {
    const sent = await agent.sendEvents([
      event({ timestamp: '2026-01-01T00:00:00Z', level: 'info', category: 'security', source: 'auth', message: 'login' }),
      event({ timestamp: '2026-01-01T00:01:00Z', level: 'error', category: 'system', source: 'disk', message: 'bad block' }),
      event({ timestamp: '2026-01-01T00:02:00Z', level: 'error', category: 'application', source: 'disk-helper', message: 'crash' }),
      event({ timestamp: '2026-01-01T00:03:00Z', level: 'warning', category: 'system', source: 'disk', message: 'slow' }),
    ]);
    expect(sent.status, sent.text).toBe(200);
    const messages = (query: string) => messagesOf('eventlogs', query);
    expect(await messages('?category=system')).toEqual(['slow', 'bad block']);
    expect(await messages('?level=error')).toEqual(['crash', 'bad block']);
    expect(await messages('?source=disk')).toEqual(['slow', 'bad block']);
    expect(await messages('?startDate=2026-01-01T00:01:00Z&endDate=2026-01-01T00:02:00Z')).toEqual(['crash', 'bad block']);
    const page = await events('?page=2&limit=3');
    expect(page.body.pagination).toEqual({ page: 2, limit: 3, total: 4 });
    expect(page.body.data.map((e: { message: string }) => e.message)).toEqual(['login']);
    expect((await events('?limit=5000')).body.pagination.limit).toBe(500);
    expect((await events('?startDate=soon')).body.error).toBe('startDate: Invalid startDate date');
    expect((await events('?category=network')).status).toBe(400);
  });

  it("03§4.4 a decommissioned device's logs stay (kept like its other per-device rows) and remain readable; its agent can no longer send", async () => {
    expect((await agent.sendLogs([entry()])).status).toBe(201);
    expect((await agent.sendEvents([event()])).status).toBe(200);
    const gone = await t.call('DELETE', `${API}/devices/${agent.deviceId}`, { token: r.w.tokens.system });
    expect(gone.status, gone.text).toBe(200);
    expect((await diagnostics()).body.total).toBe(1);
    expect((await events()).body.pagination.total).toBe(1);
    expect((await agent.sendLogs([entry()])).status).toBe(401);
  });
});
