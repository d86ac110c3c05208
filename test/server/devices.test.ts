import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { auditLogs, devices, enrollmentKeys, sites } from '../../src/server/db/schema/index.js';
import { systemContext } from '../../src/server/context.js';
import { type Answer, recordedCalls, type TestApp } from '../helpers/server.js';
import { ROLES, seedUser, type World, type WorldCaller } from '../helpers/seed.js';

const API = '/api/v1';

describe('devices (01 §1, 04 notes "Enrollment keys and agents")', () => {
  let t: TestApp;
  let w: World;
  const { call, expectNoLeak } = recordedCalls(() => t);
  let hosts: Record<string, { deviceId: string; agentId: string; authToken: string }>;
  /** `who` is a caller of the seeded world or a raw access token. */
  const as = async (who: string, method: 'GET' | 'DELETE', url: string): Promise<Answer> => {
    const token = who in w.tokens ? w.tokens[who as WorldCaller] : who;
    return call(method, `${API}${url}`, { token });
  };
  const hostnames = async (who: string, query = '') => {
    const res = await as(who, 'GET', `/devices${query}`);
    expect(res.status).toBe(200);
    return res.body.data.map((d: any) => d.hostname) as string[];
  };

  function enroll(orgId: string, siteId: string | null, hostname: string, osType: 'windows' | 'macos' | 'linux' = 'linux') {
    const key = t.services.enrollmentKeys.create(systemContext(), { orgId, siteId, name: `for ${hostname}`, maxUsage: 1 });
    hosts[hostname] = t.services.devices.enroll(systemContext(), { enrollmentKey: key.key, hostname, osType, osVersion: '1', architecture: 'arm64', agentVersion: '1.0.0' });
  }

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  beforeEach(async () => {
    hosts = {};
    enroll(w.orgA1.id, w.siteA1a.id, 'a1a-web', 'linux');
    enroll(w.orgA1.id, w.siteA1a.id, 'a1a-desk', 'windows');
    enroll(w.orgA1.id, w.siteA1b.id, 'a1b-mac', 'macos');
    enroll(w.orgA1.id, null, 'a1-nosite', 'linux');
    enroll(w.orgA2.id, w.siteA2a.id, 'a2a-web', 'linux');
    enroll(w.orgB1.id, w.siteB1a.id, 'b1a-web', 'windows');
  });
  afterEach(async () => {
    const hashes = t.db.select({ h: devices.agentTokenHash }).from(devices).all().map((r) => r.h);
    expectNoLeak('agentTokenHash', hashes);
  });

  it('01§1 lists are limited to the caller: partner reach, own organization, own sites', async () => {
    expect(await hostnames('system')).toEqual(['a1-nosite', 'a1a-desk', 'a1a-web', 'a1b-mac', 'a2a-web', 'b1a-web']);
    expect(await hostnames('aAdmin')).toEqual(['a1-nosite', 'a1a-desk', 'a1a-web', 'a1b-mac', 'a2a-web']);
    expect(await hostnames('aSelAdmin')).toEqual(['a1-nosite', 'a1a-desk', 'a1a-web', 'a1b-mac']);
    expect(await hostnames('aTech')).toEqual(['a1-nosite', 'a1a-desk', 'a1a-web', 'a1b-mac']);
    expect(await hostnames('aNone')).toEqual([]);
    expect(await hostnames('bAdmin')).toEqual(['b1a-web']);
    expect(await hostnames('orgUser')).toEqual(['a1-nosite', 'a1a-desk', 'a1a-web', 'a1b-mac']);
    // 01 §2.6: a user restricted to site A1a sees only that site's devices.
    expect(await hostnames('siteUser')).toEqual(['a1a-desk', 'a1a-web']);
  });

  it('01§4 list filters (orgId, siteId, status, osType, search by hostname) and paging', async () => {
    expect(await hostnames('system', `?orgId=${w.orgA2.id}`)).toEqual(['a2a-web']);
    expect(await hostnames('system', `?siteId=${w.siteA1a.id}`)).toEqual(['a1a-desk', 'a1a-web']);
    expect(await hostnames('system', '?osType=windows')).toEqual(['a1a-desk', 'b1a-web']);
    expect(await hostnames('system', '?search=WEB')).toEqual(['a1a-web', 'a2a-web', 'b1a-web']);
    expect(await hostnames('system', '?search=%25')).toEqual([]);
    expect(await hostnames('orgUser', '?search=web&osType=linux')).toEqual(['a1a-web']);
    t.db.update(devices).set({ status: 'offline' }).where(eq(devices.id, hosts['a1b-mac']?.deviceId ?? '')).run();
    expect(await hostnames('system', '?status=offline')).toEqual(['a1b-mac']);

    const page = await as('system', 'GET', '/devices?limit=2&page=2');
    expect(page.body.data.map((d: any) => d.hostname)).toEqual(['a1a-web', 'a1b-mac']);
    expect(page.body.pagination).toEqual({ page: 2, limit: 2, total: 6 });
    expect((await as('system', 'GET', '/devices?page=1&limit=500')).body.pagination.limit).toBe(100);
    // 05 wire notes "4.7": without page, cursor mode (limit up to 1000).
    expect((await as('system', 'GET', '/devices?limit=5000')).body.pagination).toEqual({ nextCursor: null, limit: 1000 });
    expect((await as('system', 'GET', '/devices?osType=solaris')).status).toBe(400);

    // Naming an organization or site out of reach is 403.
    const org = await as('aSelAdmin', 'GET', `/devices?orgId=${w.orgA2.id}`);
    expect(org.status).toBe(403);
    expect(org.body.error).toBe('Access to this organization denied');
    const site = await as('siteUser', 'GET', `/devices?siteId=${w.siteA1b.id}`);
    expect(site.status).toBe(403);
    expect(site.body.error).toBe('Access to this site denied');
  });

  it('05§4.7 the prepared list (no condition tree) answers exactly as the condition-tree list, for every caller and filter', async () => {
    // A condition tree that every device matches sends the same query down the other path (DevicesService.list):
    // the two must never drift apart.
    const all = encodeURIComponent(JSON.stringify({ operator: 'AND', conditions: [{ field: 'hostname', operator: 'isNotNull' }] }));
    t.db.update(devices).set({ status: 'decommissioned' }).where(eq(devices.id, hosts['a1a-desk']?.deviceId ?? '')).run();
    const queries = [
      '',
      `?orgId=${w.orgA1.id}`,
      `?siteId=${w.siteA1a.id}`,
      '?status=decommissioned',
      '?includeDecommissioned=true&sort=enrolled&sortDir=desc',
      '?osType=linux&search=web',
      '?role=workstation&sort=lastSeen',
      '?page=1&limit=2&sortDir=desc',
      '?page=2&limit=2&includeDecommissioned=true',
      '?limit=2',
    ];
    let compared = 0;
    for (const who of ['system', 'aAdmin', 'aSelAdmin', 'orgUser', 'siteUser'] as const) {
      for (const query of queries) {
        const prepared = await as(who, 'GET', `/devices${query}`);
        const tree = await as(who, 'GET', `/devices${query}${query ? '&' : '?'}filter=${all}`);
        expect(tree.status, `${who} ${query}`).toBe(prepared.status);
        expect(tree.body, `${who} ${query}`).toEqual(prepared.body);
        if (prepared.status === 200) compared++;
      }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('05§4.7 cursor mode walks every visible device once, in either direction, with filters', async () => {
    const walk = async (query: string) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 10; i++) {
        const res = await as('system', 'GET', `/devices?limit=2${query}${cursor ? `&cursor=${cursor}` : ''}`);
        expect(res.status).toBe(200);
        seen.push(...res.body.data.map((d: any) => d.hostname));
        cursor = res.body.pagination.nextCursor;
        if (cursor === null) break;
      }
      return seen;
    };
    const all = ['a1-nosite', 'a1a-desk', 'a1a-web', 'a1b-mac', 'a2a-web', 'b1a-web'];
    expect(await walk('')).toEqual(all);
    expect(await walk('&sortDir=desc')).toEqual([...all].reverse());
    expect(await walk('&search=web&sortDir=desc')).toEqual(['b1a-web', 'a2a-web', 'a1a-web']);
    t.db.update(devices).set({ status: 'decommissioned' }).where(eq(devices.id, hosts['a1a-desk']?.deviceId ?? '')).run();
    expect(await walk('')).toEqual(all.filter((h) => h !== 'a1a-desk'));
    expect(await walk('&includeDecommissioned=true')).toEqual(all);
    expect(await walk('&status=decommissioned')).toEqual(['a1a-desk']);
  });

  it('01§7 05-4.7 GET /devices/:id returns the device fields and its detail; absent or out of scope is 404', async () => {
    const id = hosts['a1a-web']?.deviceId ?? '';
    const res = await as('orgUser', 'GET', `/devices/${id}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      ['id', 'orgId', 'siteId', 'agentId', 'hostname', 'displayName', 'osType', 'osVersion', 'architecture', 'agentVersion', 'status', 'tags', 'customFields', 'lastSeenAt', 'enrolledAt', 'lastUser', 'createdAt', 'updatedAt',
        // 05 wire notes "4.7": the list row's inventory fields and the detail of GET /devices/:id.
        'osBuild', 'uptimeSeconds', 'isHeadless', 'deviceRole', 'cpuPercent', 'ramPercent', 'hardware', 'metrics',
        'networkInterfaces', 'recentMetrics', 'groups', 'siteName', 'siteTimezone', 'orgName'].sort(),
    );
    expect(res.body).toMatchObject({ id, orgId: w.orgA1.id, siteId: w.siteA1a.id, agentId: hosts['a1a-web']?.agentId, hostname: 'a1a-web', status: 'online', tags: [], customFields: {} });

    expect((await as('bAdmin', 'GET', `/devices/${id}`)).status).toBe(404);
    expect((await as('aAdmin', 'GET', `/devices/${hosts['b1a-web']?.deviceId}`)).status).toBe(404);
    expect((await as('siteUser', 'GET', `/devices/${hosts['a1b-mac']?.deviceId}`)).status).toBe(404);
    expect((await as('siteUser', 'GET', `/devices/${hosts['a1-nosite']?.deviceId}`)).status).toBe(404);
    expect((await as('siteUser', 'GET', `/devices/${id}`)).status).toBe(200);
    expect((await as('system', 'GET', `/devices/${randomUUID()}`)).status).toBe(404);
    expect((await as('system', 'GET', '/devices/not-a-uuid')).status).toBe(400);
  });

  it('01§2.8 reading needs devices:read and decommissioning devices:delete', async () => {
    const viewer = await seedUser(t, { email: 'viewer@a1.test', org: { orgId: w.orgA1.id, roleId: ROLES.orgViewer }, login: 'mint' });
    const id = hosts['a1a-web']?.deviceId ?? '';
    expect((await as(viewer.token, 'GET', `/devices/${id}`)).status).toBe(200);
    const denied = await as(viewer.token, 'DELETE', `/devices/${id}`);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('Permission denied');
    // Partner Technicians read and write devices but do not delete them.
    expect((await as('aTech', 'DELETE', `/devices/${id}`)).status).toBe(403);
    expect(t.db.select().from(devices).where(eq(devices.id, id)).get()?.status).toBe('online');
  });

  it('01§6 DELETE decommissions: status decommissioned, the agent token dies at once, audited; a second DELETE is 400', async () => {
    const host = hosts['a1a-web'];
    if (!host) throw new Error('no device');
    const outOfReach = await as('bAdmin', 'DELETE', `/devices/${host.deviceId}`);
    expect(outOfReach.status).toBe(404);
    const res = await as('orgUser', 'DELETE', `/devices/${host.deviceId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, message: expect.any(String), device: { id: host.deviceId, status: 'decommissioned' } });
    expect(t.db.select().from(devices).where(eq(devices.id, host.deviceId)).get()?.decommissionedAt).not.toBeNull();

    const heartbeat = await t.call('POST', `${API}/agents/${host.agentId}/heartbeat`, { token: host.authToken, body: {} });
    expect(heartbeat.status).toBe(401);

    const again = await as('orgUser', 'DELETE', `/devices/${host.deviceId}`);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('Device is already decommissioned');
    // Still readable, and filterable by its state.
    expect(await hostnames('orgUser', '?status=decommissioned')).toEqual(['a1a-web']);

    const entry = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'device.decommission')).all();
    expect(entry).toHaveLength(1);
    expect(entry[0]).toMatchObject({ actorType: 'user', actorId: w.users.orgUser.id, resourceId: host.deviceId, resourceName: 'a1a-web', orgId: w.orgA1.id });
  });

  it('01§2.5 deleting a site keeps its devices in the organization, without a site, and drops keys pinned to it', async () => {
    const host = hosts['a1b-mac'];
    const pinned = t.services.enrollmentKeys.create(systemContext(), { orgId: w.orgA1.id, siteId: w.siteA1b.id, name: 'pinned' });
    const res = await as('system', 'DELETE', `/orgs/sites/${w.siteA1b.id}`);
    expect(res.status).toBe(200);
    expect(t.db.select().from(sites).where(eq(sites.id, w.siteA1b.id)).get()).toBeUndefined();
    expect(t.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, pinned.id)).get()).toBeUndefined();
    const device = t.db.select().from(devices).where(eq(devices.id, host?.deviceId ?? '')).get();
    expect(device).toMatchObject({ orgId: w.orgA1.id, siteId: null, status: 'online' });
  });
});
