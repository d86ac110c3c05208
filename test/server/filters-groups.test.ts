import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { systemContext } from '../../src/server/context.js';
import { alerts, auditLogs, deviceGroupMembers, devices, jobs } from '../../src/server/db/schema/index.js';
import { type TestApp } from '../helpers/server.js';
import { type World, type WorldCaller } from '../helpers/seed.js';

const API = '/api/v1';
const cond = (field: string, operator: string, value?: unknown) => ({ operator: 'AND', conditions: [{ field, operator, ...(value === undefined ? {} : { value }) }] });

describe('saved filters, device lists, groups, tags and search (02 §4.5, 05 wire notes "4.5", "4.7")', () => {
  let t: TestApp;
  let w: World;
  let hosts: Record<string, { deviceId: string; agentId: string; authToken: string }>;

  const as = (who: WorldCaller, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.call(method, `${API}${url}`, { token: w.tokens[who], ...(body !== undefined ? { body } : {}) });
  const heartbeat = (host: string, body: unknown) => t.call('POST', `${API}/agents/${hosts[host]?.agentId}/heartbeat`, { token: hosts[host]?.authToken, body });
  function enroll(orgId: string, siteId: string | null, hostname: string, osType: 'windows' | 'macos' | 'linux') {
    const key = t.services.enrollmentKeys.create(systemContext(), { orgId, siteId, name: hostname, maxUsage: 1 });
    hosts[hostname] = t.services.devices.enroll(systemContext(), { enrollmentKey: key.key, hostname, osType, osVersion: '1', architecture: 'x64', agentVersion: '1.0.0' });
  }
  /** Runs the due jobs (the dynamic-group re-evaluation is one), as the server's worker would. */
  const runJobs = async () => {
    await t.worker.tick(new Date(Date.now() + 5000));
  };

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  beforeEach(async () => {
    hosts = {};
    enroll(w.orgA1.id, w.siteA1a.id, 'web-01', 'windows');
    enroll(w.orgA1.id, w.siteA1b.id, 'web-02', 'linux');
    enroll(w.orgA1.id, w.siteA1a.id, 'desk-01', 'windows');
    enroll(w.orgA2.id, w.siteA2a.id, 'a2-web', 'windows');
    enroll(w.orgB1.id, w.siteB1a.id, 'b1-web', 'windows');
  });

  it('02§4.5 filter CRUD: 201 {data}, list {data,total} newest first with search, PATCH description null, DELETE answers the deleted filter; audited', async () => {
    const created = await as('orgUser', 'POST', '/filters', { name: 'Windows', description: 'All windows', conditions: cond('osType', 'equals', 'windows') });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ orgId: w.orgA1.id, name: 'Windows', description: 'All windows', createdBy: expect.any(String) });
    const id = created.body.data.id;
    await as('orgUser', 'POST', '/filters', { name: 'Linux', conditions: cond('osType', 'equals', 'linux') });
    const list = await as('orgUser', 'GET', '/filters');
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((f: any) => f.name)).toEqual(['Linux', 'Windows']);
    expect((await as('orgUser', 'GET', '/filters?search=ALL%20WIN')).body.data.map((f: any) => f.name)).toEqual(['Windows']);
    const patched = await as('orgUser', 'PATCH', `/filters/${id}`, { description: null });
    expect(patched.body.data.description).toBeNull();
    expect((await as('bAdmin', 'GET', `/filters/${id}`)).body.error).toBe('Saved filter not found');
    const deleted = await as('orgUser', 'DELETE', `/filters/${id}`);
    expect(deleted.body.data.id).toBe(id);
    expect((await as('orgUser', 'GET', `/filters/${id}`)).status).toBe(404);
    const actions = t.db.select({ a: auditLogs.action, d: auditLogs.details }).from(auditLogs).all().filter((r) => r.a.startsWith('filter.'));
    expect(actions.map((r) => r.a)).toEqual(['filter.create', 'filter.create', 'filter.update', 'filter.delete']);
    expect(actions[2]?.d).toMatchObject({ changedFields: ['description'] });
  });

  it('02§4.5 partner and system callers must give orgId on create; invalid trees are 400 Invalid filter with the wire details', async () => {
    const noOrg = await as('aAdmin', 'POST', '/filters', { name: 'x', conditions: cond('osType', 'equals', 'windows') });
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.error).toBe('orgId is required');
    const bad = await as('aAdmin', 'POST', '/filters', { orgId: w.orgA1.id, name: 'x', conditions: { operator: 'AND', conditions: [{ field: 'nope', operator: 'equals', value: 1 }, { field: 'status', operator: 'contains', value: 'x' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'Invalid filter', details: ['Unknown field: nope', 'Operator contains not valid for field status'] });
    const preview = await as('aAdmin', 'POST', '/filters/preview', { conditions: cond('hostname', 'matches', 'a'.repeat(251)) });
    expect(preview.body.details).toEqual(['Regex pattern too long for field hostname (max 250 characters)']);
  });

  it('02§4.5 preview counts across every accessible organization, honours orgId (foreign → 403 Forbidden), idsOnly uncapped, limit; audited', async () => {
    const all = await as('aAdmin', 'POST', '/filters/preview', { conditions: cond('osType', 'equals', 'windows'), limit: 1 });
    expect(all.status).toBe(200);
    expect(all.body.data.totalCount).toBe(3);
    expect(all.body.data.devices).toHaveLength(1);
    expect(all.body.data.devices[0]).toEqual({ id: expect.any(String), hostname: 'a2-web', displayName: 'a2-web', osType: 'windows', status: 'online', lastSeenAt: expect.any(String) });
    expect((await as('system', 'POST', '/filters/preview', { conditions: cond('osType', 'equals', 'windows') })).body.data.totalCount).toBe(4);
    expect((await as('siteUser', 'POST', '/filters/preview', { conditions: cond('osType', 'equals', 'windows') })).body.data.totalCount).toBe(2);
    const scoped = await as('aAdmin', 'POST', `/filters/preview?orgId=${w.orgA1.id}`, { conditions: cond('osType', 'equals', 'windows'), idsOnly: true });
    expect(scoped.body.data).toEqual({ totalCount: 2, deviceIds: expect.arrayContaining([hosts['web-01']?.deviceId, hosts['desk-01']?.deviceId]), evaluatedAt: expect.any(String) });
    const foreign = await as('aAdmin', 'POST', `/filters/preview?orgId=${w.orgB1.id}`, { conditions: cond('osType', 'equals', 'windows') });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toBe('Forbidden');
    const saved = await as('orgUser', 'POST', '/filters', { name: 'Linux', conditions: cond('osType', 'equals', 'linux') });
    const savedPreview = await as('orgUser', 'POST', `/filters/${saved.body.data.id}/preview?limit=5`);
    expect(savedPreview.body.data.devices.map((d: any) => d.hostname)).toEqual(['web-02']);
    const actions = t.db.select({ a: auditLogs.action }).from(auditLogs).all().map((r) => r.a);
    expect(actions.filter((a) => a === 'filter.preview')).toHaveLength(4);
    expect(actions).toContain('filter.saved.preview');
  });

  it('05-4.7 GET /devices: page mode counts, cursor mode pages by nextCursor, filterId and inline filter, groupIds, tag, role; decommissioned left out by default', async () => {
    const paged = await as('orgUser', 'GET', '/devices?page=1&limit=2');
    expect(paged.body.pagination).toEqual({ page: 1, limit: 2, total: 3 });
    const first = await as('orgUser', 'GET', '/devices?limit=2');
    expect(first.body.sort).toEqual({ by: 'hostname', dir: 'asc' });
    expect(first.body.data.map((d: any) => d.hostname)).toEqual(['desk-01', 'web-01']);
    const second = await as('orgUser', 'GET', `/devices?limit=2&cursor=${first.body.pagination.nextCursor}`);
    expect(second.body.data.map((d: any) => d.hostname)).toEqual(['web-02']);
    expect(second.body.pagination.nextCursor).toBeNull();
    expect((await as('orgUser', 'GET', '/devices?sort=hostname&sortDir=desc')).body.data.map((d: any) => d.hostname)).toEqual(['web-02', 'web-01', 'desk-01']);
    expect((await as('orgUser', 'GET', '/devices?cursor=bogus')).status).toBe(400);

    const saved = await as('orgUser', 'POST', '/filters', { name: 'Linux', conditions: cond('osType', 'equals', 'linux') });
    expect((await as('orgUser', 'GET', `/devices?filterId=${saved.body.data.id}`)).body.data.map((d: any) => d.hostname)).toEqual(['web-02']);
    const inline = encodeURIComponent(JSON.stringify(cond('hostname', 'startsWith', 'web')));
    expect((await as('orgUser', 'GET', `/devices?filter=${inline}`)).body.data.map((d: any) => d.hostname)).toEqual(['web-01', 'web-02']);
    const badInline = await as('orgUser', 'GET', `/devices?filter=${encodeURIComponent('{"operator":"AND","conditions":[{"field":"x","operator":"equals","value":1}]}')}`);
    expect(badInline.body).toMatchObject({ error: 'Invalid filter', details: ['Unknown field: x'] });

    const group = await as('orgUser', 'POST', '/groups', { name: 'G', deviceIds: [hosts['web-02']?.deviceId] });
    expect((await as('orgUser', 'GET', `/devices?groupIds=${group.body.data.id}`)).body.data.map((d: any) => d.hostname)).toEqual(['web-02']);
    await as('orgUser', 'PATCH', `/devices/${hosts['web-01']?.deviceId}`, { tags: ['Prod'], deviceRole: 'server' });
    expect((await as('orgUser', 'GET', '/devices?tag=prod')).body.data.map((d: any) => d.hostname)).toEqual(['web-01']);
    expect((await as('orgUser', 'GET', '/devices?role=server')).body.data.map((d: any) => d.hostname)).toEqual(['web-01']);

    await as('orgUser', 'DELETE', `/devices/${hosts['desk-01']?.deviceId}`);
    expect((await as('orgUser', 'GET', '/devices')).body.data.map((d: any) => d.hostname)).toEqual(['web-01', 'web-02']);
    expect((await as('orgUser', 'GET', '/devices?includeDecommissioned=true')).body.data).toHaveLength(3);
    expect((await as('orgUser', 'GET', '/devices?status=decommissioned')).body.data.map((d: any) => d.hostname)).toEqual(['desk-01']);
  });

  it('05-4.7 GET /devices/:id: hardware, interfaces, recent metrics, groups, site and organization names; /metrics', async () => {
    await heartbeat('web-01', { hardwareInfo: { cpuModel: 'Xeon', cpuCores: 8 }, networkInfo: [{ name: 'eth0', ipAddress: '10.0.0.1' }], metrics: { cpuPercent: 12 } });
    await t.call('POST', `${API}/agents/${hosts['web-01']?.agentId}/metrics`, { token: hosts['web-01']?.authToken, body: { samples: [{ metric: 'cpu.usage', value: 12 }] } });
    const group = await as('orgUser', 'POST', '/groups', { name: 'Static', deviceIds: [hosts['web-01']?.deviceId] });
    const res = await as('orgUser', 'GET', `/devices/${hosts['web-01']?.deviceId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      hostname: 'web-01',
      hardware: { cpuModel: 'Xeon', cpuCores: 8 },
      networkInterfaces: [{ name: 'eth0', ipAddress: '10.0.0.1' }],
      metrics: { cpuPercent: 12 },
      cpuPercent: 12,
      groups: [{ groupId: group.body.data.id, groupName: 'Static', groupType: 'static' }],
      siteName: 'A1 HQ',
      siteTimezone: 'UTC',
      orgName: 'Alpha One',
    });
    expect(res.body.recentMetrics[0]).toMatchObject({ metric: 'cpu.usage', value: 12 });
    const metrics = await as('orgUser', 'GET', `/devices/${hosts['web-01']?.deviceId}/metrics?metric=cpu.usage`);
    expect(metrics.body.data).toHaveLength(1);
    expect((await as('bAdmin', 'GET', `/devices/${hosts['web-01']?.deviceId}`)).body.error).toBe('Device not found');
  });

  it('05-4.7 a dynamic group stores its membership and follows device changes through a durable per-organization job; pins; membership log', async () => {
    const created = await as('orgUser', 'POST', '/groups', { name: 'Windows', filterConditions: cond('osType', 'equals', 'windows') });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ type: 'dynamic', filterFieldsUsed: ['osType'], deviceCount: 2 });
    const id = created.body.data.id;
    const members = async () => (await as('orgUser', 'GET', `/groups/${id}/devices`)).body.data.map((m: any) => m.hostname);
    expect(await members()).toEqual(['desk-01', 'web-01']);

    // A tag change moves a device: one job for the organization, not a re-evaluation per request.
    await as('orgUser', 'PATCH', `/groups/${id}`, { filterConditions: cond('tags', 'contains', 'backup') });
    expect(await members()).toEqual([]);
    await as('orgUser', 'PATCH', `/devices/${hosts['web-02']?.deviceId}`, { tags: ['backup'] });
    await as('orgUser', 'PATCH', `/devices/${hosts['web-01']?.deviceId}`, { tags: ['backup'] });
    expect(t.db.select().from(jobs).where(eq(jobs.type, 'groups.reevaluate-org')).all()).toHaveLength(1);
    expect(await members()).toEqual([]);
    await runJobs();
    expect(await members()).toEqual(['web-01', 'web-02']);

    // An inventory change reported by the heartbeat moves it too.
    await as('orgUser', 'PATCH', `/groups/${id}`, { filterConditions: cond('hardware.cpuCores', 'greaterThanOrEquals', 8) });
    await heartbeat('desk-01', { hardwareInfo: { cpuCores: 16 } });
    await runJobs();
    expect(await members()).toEqual(['desk-01']);

    // A pin keeps a device in whatever the conditions say; unpinned, it leaves.
    const pin = await as('orgUser', 'POST', `/groups/${id}/devices/${hosts['web-02']?.deviceId}/pin`);
    expect(pin.status).toBe(201);
    expect(pin.body.data).toMatchObject({ isPinned: true, pinnedAt: expect.any(String) });
    await heartbeat('desk-01', { hardwareInfo: { cpuCores: 2 } });
    await runJobs();
    expect(await members()).toEqual(['web-02']);
    const unpin = await as('orgUser', 'DELETE', `/groups/${id}/devices/${hosts['web-02']?.deviceId}/pin`);
    expect(unpin.body.data).toMatchObject({ isPinned: false, unpinnedAt: expect.any(String) });
    expect(await members()).toEqual([]);

    const log = await as('orgUser', 'GET', `/groups/${id}/membership-log?deviceId=${hosts['desk-01']?.deviceId}&limit=10`);
    expect(log.body).toMatchObject({ limit: 10, offset: 0 });
    expect(log.body.data.map((e: any) => e.action)).toEqual(['removed', 'added', 'removed', 'added']);
    expect(log.body.data[0]).toMatchObject({ hostname: 'desk-01', reason: expect.stringContaining('No longer matches') });

    const preview = await as('orgUser', 'POST', `/groups/${id}/preview`, {});
    expect(preview.body.data.totalCount).toBe(0);
    expect((await as('orgUser', 'POST', `/groups/${id}/devices`, { deviceIds: [hosts['web-01']?.deviceId] })).body.error).toBe('Cannot manually add devices to a dynamic group');
    // The alias answers the same.
    expect((await as('orgUser', 'GET', `/device-groups/${id}`)).body.data.id).toBe(id);
  });

  it('05-4.7 static groups: add (added/skipped/total), remove, preview refused, parent guard, messages', async () => {
    const parent = await as('orgUser', 'POST', '/groups', { name: 'Parent' });
    const group = await as('orgUser', 'POST', '/groups', { name: 'Child', parentId: parent.body.data.id });
    const id = group.body.data.id;
    const added = await as('orgUser', 'POST', `/groups/${id}/devices`, { deviceIds: [hosts['web-01']?.deviceId, hosts['web-01']?.deviceId, hosts['b1-web']?.deviceId] });
    expect(added.status).toBe(201);
    expect(added.body.data).toEqual({ added: 1, skipped: 1, total: 1 });
    expect((await as('orgUser', 'POST', `/groups/${id}/preview`, {})).body.error).toBe('Preview is only available for dynamic groups');
    const removed = await as('orgUser', 'DELETE', `/groups/${id}/devices/${hosts['web-01']?.deviceId}`);
    expect(removed.body.data).toEqual({ deviceId: hosts['web-01']?.deviceId, groupId: id, removed: true });
    expect((await as('orgUser', 'DELETE', `/groups/${parent.body.data.id}`)).body.error).toBe('Cannot delete group with child groups');
    expect((await as('orgUser', 'GET', '/groups/00000000-0000-4000-8000-000000000000')).body.error).toBe('Group not found');
    const invalid = await as('orgUser', 'POST', '/groups', { name: 'Bad', filterConditions: cond('nope', 'equals', 1) });
    expect(invalid.body).toMatchObject({ error: 'Invalid filter conditions', details: ['Unknown field: nope'] });
    const list = await as('orgUser', 'GET', '/groups?type=static');
    expect(list.body.total).toBe(2);
    expect(t.db.select().from(deviceGroupMembers).all()).toHaveLength(0);
  });

  it('05-4.7 tags: counts desc then tag, search; devices of a tag', async () => {
    await as('orgUser', 'PATCH', `/devices/${hosts['web-01']?.deviceId}`, { tags: ['prod', 'web'] });
    await as('orgUser', 'PATCH', `/devices/${hosts['web-02']?.deviceId}`, { tags: ['prod'] });
    const list = await as('orgUser', 'GET', '/tags');
    expect(list.body).toEqual({ data: [{ id: 'prod', name: 'prod', tag: 'prod', deviceCount: 2 }, { id: 'web', name: 'web', tag: 'web', deviceCount: 1 }], total: 2 });
    expect((await as('orgUser', 'GET', '/tags?search=we')).body.total).toBe(1);
    expect((await as('bAdmin', 'GET', '/tags')).body.total).toBe(0);
    const tagged = await as('orgUser', 'GET', '/tags/devices?tag=web');
    expect(tagged.body.data.map((d: any) => d.hostname)).toEqual(['web-01']);
    expect((await as('orgUser', 'GET', '/tags/devices')).status).toBe(400);
  });

  it('02§4.5 search: bearer only, permission-aware categories in order, per-category cap ceil(limit/4) in 1-8, settings entries', async () => {
    t.db.insert(alerts).values({ orgId: w.orgA1.id, deviceId: hosts['web-01']?.deviceId, severity: 'critical', status: 'active', title: 'web-01 CPU high', message: 'cpu', triggeredAt: new Date().toISOString() }).run();
    const res = await as('orgUser', 'GET', '/search?q=WEB');
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: any) => [r.type, r.title])).toEqual([
      ['devices', 'web-01'],
      ['devices', 'web-02'],
      ['alerts', 'web-01 CPU high'],
    ]);
    expect(res.body.results[2].description).toBe('critical');
    expect((await as('orgUser', 'GET', '/search?q=web&limit=4')).body.results.map((r: any) => r.type)).toEqual(['devices', 'alerts']);
    expect((await as('bAdmin', 'GET', '/search?q=web-0')).body.results).toEqual([]);
    const settings = await as('orgUser', 'GET', '/search?q=settings');
    expect(settings.body.results).toEqual([
      { id: 'settings-profile', type: 'settings', title: 'Profile settings', description: 'Manage your profile', href: '/settings/profile' },
      { id: 'settings-security', type: 'settings', title: 'Security settings', description: 'Manage MFA and account security', href: '/settings/security' },
    ]);
    expect((await as('orgUser', 'GET', '/search?q=users')).body.results.map((r: any) => r.id)).toEqual(['settings-users']);
    expect((await as('orgUser', 'GET', '/search?q=')).status).toBe(400);
    expect((await as('orgUser', 'GET', `/search?q=${'x'.repeat(101)}`)).status).toBe(400);
    expect(t.db.select().from(devices).all()).toHaveLength(5);
  });
});
