import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { seedRestrictedWorld } from '../helpers/restricted.js';
import { seedUser, type World } from '../helpers/seed.js';
import type { SimulatedAgent } from '../helpers/simulated-agent.js';

const API = '/api/v1';
const SCRIPT = { name: 'Hello', osTypes: ['linux', 'windows'], language: 'bash', content: 'echo hi' };

/**
 * 01 §2.6: an organization user may be restricted to sites and to device groups (omitted means all). The
 * restriction holds wherever devices are read: lists, detail, metrics, search, filter previews, tags, group
 * members, script runs on devices, and the script executions of those devices.
 */
describe('a caller restricted to device groups or sites (01 §2.6)', () => {
  let t: TestApp;
  let w: World;
  let inGroup: SimulatedAgent;
  let outside: SimulatedAgent;
  let otherSite: SimulatedAgent;
  let groupId: string;
  let groupUser: string;

  const as = (token: string, method: 'GET' | 'POST', url: string, body?: unknown) => t.call(method, `${API}${url}`, { token, ...(body !== undefined ? { body } : {}) });

  beforeEach(async () => {
    t = await createTestApp();
    ({ w, inGroup, outside, otherSite, groupId, groupUser } = await seedRestrictedWorld(t));
  });
  afterEach(async () => t.close());

  it('01§2.6 a device-group restriction limits GET /devices, the detail, metrics and tags to the groups\' members (others 404)', async () => {
    const list = await as(groupUser, 'GET', '/devices');
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual([inGroup.deviceId]);
    expect((await as(w.tokens.orgUser, 'GET', '/devices')).body.data).toHaveLength(3);
    expect((await as(groupUser, 'GET', `/devices/${inGroup.deviceId}`)).status).toBe(200);
    for (const url of [`/devices/${outside.deviceId}`, `/devices/${outside.deviceId}/metrics`, `/devices/${otherSite.deviceId}`]) {
      const res = await as(groupUser, 'GET', url);
      expect(res.status, url).toBe(404);
      expect(res.body.error).toBe('Device not found');
    }
    const members = await as(groupUser, 'GET', `/groups/${groupId}/devices`);
    expect(members.body.data.map((d: { deviceId: string }) => d.deviceId)).toEqual([inGroup.deviceId]);
  });

  it('01§2.6 a device-group restriction limits GET /search and POST /filters/preview to the groups\' members', async () => {
    const search = await as(groupUser, 'GET', '/search?q=web');
    expect(search.status, search.text).toBe(200);
    expect(search.body.results.filter((r: { type: string }) => r.type === 'devices').map((r: { id: string }) => r.id)).toEqual([inGroup.deviceId]);
    const tree = { operator: 'AND', conditions: [{ field: 'hostname', operator: 'startsWith', value: 'web' }] };
    const preview = await as(groupUser, 'POST', '/filters/preview', { conditions: tree });
    expect(preview.status, preview.text).toBe(200);
    expect(preview.body.data.totalCount).toBe(1);
    expect(preview.body.data.devices.map((d: { id: string }) => d.id)).toEqual([inGroup.deviceId]);
    expect((await as(w.tokens.orgUser, 'POST', '/filters/preview', { conditions: tree })).body.data.totalCount).toBe(3);
  });

  it('01§2.6 an empty device-group restriction sees no device', async () => {
    const none = (await seedUser(t, { email: 'none@a1.test', org: { orgId: w.orgA1.id, deviceGroupIds: [] }, login: 'mint', mfa: true })).token;
    expect((await as(none, 'GET', '/devices')).body.data).toEqual([]);
    expect((await as(none, 'GET', `/devices/${inGroup.deviceId}`)).status).toBe(404);
  });

  it('01§2.6 script execution on devices: a device outside the caller\'s groups is refused as Device not found', async () => {
    const script = await as(w.tokens.orgUser, 'POST', '/scripts', SCRIPT);
    expect(script.status, script.text).toBe(201);
    const run = await as(groupUser, 'POST', `/scripts/${script.body.id}/execute`, { deviceIds: [inGroup.deviceId, outside.deviceId] });
    expect(run.status, run.text).toBe(201);
    expect(run.body.executions.map((e: { deviceId: string }) => e.deviceId)).toEqual([inGroup.deviceId]);
    expect(run.body.failures).toEqual([{ deviceId: outside.deviceId, error: 'Device not found' }]);
  });

  it('01§2.6 script execution lists: a site-restricted (or group-restricted) caller sees the executions of its devices only', async () => {
    const script = await as(w.tokens.orgUser, 'POST', '/scripts', SCRIPT);
    const run = await as(w.tokens.orgUser, 'POST', `/scripts/${script.body.id}/execute`, { deviceIds: [inGroup.deviceId, outside.deviceId, otherSite.deviceId] });
    expect(run.status, run.text).toBe(201);
    const byDevice = new Map<string, string>(run.body.executions.map((e: { deviceId: string; executionId: string }) => [e.deviceId, e.executionId]));
    const listed = async (token: string) =>
      ((await as(token, 'GET', `/scripts/${script.body.id}/executions`)).body.data as { deviceId: string }[]).map((e) => e.deviceId).sort();

    expect(await listed(w.tokens.orgUser)).toEqual([inGroup.deviceId, outside.deviceId, otherSite.deviceId].sort());
    // siteUser is restricted to site A1a: the run on site A1b's device is not listed and not readable.
    expect(await listed(w.tokens.siteUser)).toEqual([inGroup.deviceId, outside.deviceId].sort());
    const total = await as(w.tokens.siteUser, 'GET', `/scripts/${script.body.id}/executions`);
    expect(total.body.pagination?.total ?? total.body.total).toBe(2);
    expect((await as(w.tokens.siteUser, 'GET', `/scripts/executions/${byDevice.get(otherSite.deviceId)}`)).status).toBe(404);
    expect((await as(w.tokens.siteUser, 'GET', `/scripts/executions/${byDevice.get(inGroup.deviceId)}`)).status).toBe(200);
    // The device-group restriction applies the same way.
    expect(await listed(groupUser)).toEqual([inGroup.deviceId]);
    const cancel = await as(groupUser, 'POST', `/scripts/executions/${byDevice.get(outside.deviceId)}/cancel`);
    expect(cancel.status).toBe(404);
  });
});
