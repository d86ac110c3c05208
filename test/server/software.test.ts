import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditLogs, deviceCommands, deviceSoftware, softwareVersions } from '../../src/server/db/schema/index.js';
import { ROLES, mintToken, seedUser, seedWorld, type World } from '../helpers/seed.js';
import { seedRestrictedWorld, type RestrictedWorld } from '../helpers/restricted.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';

// Software catalog, versions, deployments and device software inventory (03 §2.5, §3, §4.3, §6, §7, §8; 05 wire
// notes "4.3 Software").
const API = '/api/v1';

/** The token of the world's caller named `who`, or `who` itself (a token). */
const tokenOf = (w: World, who: string): string => (w.tokens as Record<string, string>)[who] ?? who;

const catalogBody = (over: Record<string, unknown> = {}) => ({
  name: '7-Zip',
  vendor: 'Igor Pavlov',
  category: 'compression',
  description: 'File archiver',
  platforms: ['windows', 'linux'],
  homepage: 'https://7-zip.org',
  licenseType: 'open-source',
  tags: ['archive'],
  ...over,
});

const versionBody = (over: Record<string, unknown> = {}) => ({
  version: '23.01',
  releaseDate: '2024-01-10',
  notes: 'Fixes',
  downloadUrl: 'https://7-zip.org/a/7z2301.msi',
  sha256: 'a'.repeat(64),
  sizeMB: 1.5,
  supportedPlatforms: ['windows', 'linux'],
  silentInstallArg: '/quiet',
  ...over,
});

describe('software catalog (03 §4.3)', () => {
  let t: TestApp, w: World;
  beforeEach(async () => {
    t = await createTestApp();
    w = await seedWorld(t, { mfa: true });
  });
  afterEach(async () => {
    await t.close();
  });

  /** `who`: one of the world's callers, or a token. */
  const as = (who: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.call(method, `${API}${url}`, { token: tokenOf(w, who), ...(body !== undefined ? { body } : {}) });
  const create = async (who: string, over: Record<string, unknown> = {}) => {
    const res = await as(who, 'POST', '/software/catalog', catalogBody(over));
    expect(res.status, res.text).toBe(201);
    return res.body.data as { id: string; [k: string]: unknown };
  };
  const auditActions = () => t.db.select({ action: auditLogs.action, details: auditLogs.details }).from(auditLogs).all().filter((a) => a.action.startsWith('software.'));

  it('05 4.3 POST /software/catalog answers 201 {data:item}; GET /:id adds versionCount; audited software.catalog.create', async () => {
    const res = await as('system', 'POST', '/software/catalog', catalogBody());
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({
      id: expect.any(String),
      orgId: null,
      partnerId: null,
      name: '7-Zip',
      vendor: 'Igor Pavlov',
      category: 'compression',
      platforms: ['windows', 'linux'],
      latestVersion: null,
      deprecated: false,
      tags: ['archive'],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const one = await as('orgUser', 'GET', `/software/catalog/${res.body.data.id}`);
    expect(one.status, one.text).toBe(200);
    expect(one.body.data).toMatchObject({ id: res.body.data.id, versionCount: 0 });
    expect(auditActions().map((a) => a.action)).toEqual(['software.catalog.create']);
  });

  it('03§4.3 GET /software/catalog filters by search|q, category and platform, pages with {data, pagination} (default limit 50, max 100)', async () => {
    await create('system');
    await create('system', { name: 'Firefox', vendor: 'Mozilla', category: 'browser', platforms: ['macos'], description: 'Web browser' });
    await create('system', { name: 'VLC', vendor: 'VideoLAN', category: 'media', platforms: ['linux'], description: 'Player' });
    const names = async (query: string) => {
      const res = await as('orgUser', 'GET', `/software/catalog${query}`);
      expect(res.status, res.text).toBe(200);
      return (res.body.data as { name: string }[]).map((i) => i.name);
    };
    expect(await names('')).toEqual(['7-Zip', 'Firefox', 'VLC']);
    expect(await names('?search=mozil')).toEqual(['Firefox']);
    expect(await names('?q=PLAYER')).toEqual(['VLC']);
    expect(await names('?category=compression')).toEqual(['7-Zip']);
    expect(await names('?platform=linux')).toEqual(['7-Zip', 'VLC']);
    const paged = await as('orgUser', 'GET', '/software/catalog?limit=2&page=2');
    expect(paged.body.pagination).toEqual({ page: 2, limit: 2, total: 3 });
    expect((await as('orgUser', 'GET', '/software/catalog')).body.pagination).toEqual({ page: 1, limit: 50, total: 3 });
    expect((await as('orgUser', 'GET', '/software/catalog?limit=500')).body.pagination.limit).toBe(100);
    expect((await as('orgUser', 'GET', '/software/catalog?category=games')).status).toBe(400);
  });

  it('03§4.3 GET /software/catalog/search needs q (400 without) and answers {data, total}, also matching tags', async () => {
    await create('system');
    await create('system', { name: 'Zipper', tags: ['zip'], description: 'Other' });
    expect((await as('orgUser', 'GET', '/software/catalog/search')).status).toBe(400);
    expect((await as('orgUser', 'GET', '/software/catalog/search?q=')).status).toBe(400);
    const res = await as('orgUser', 'GET', '/software/catalog/search?q=archive');
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(1);
    expect(res.body.data.map((i: { name: string }) => i.name)).toEqual(['7-Zip']);
    expect((await as('orgUser', 'GET', '/software/catalog/search?q=zip&category=compression')).body.total).toBe(2);
  });

  it('03§4.3 PATCH is partial and sets updatedAt; audited with the changed fields; empty body is 400', async () => {
    const item = await create('system');
    const res = await as('system', 'PATCH', `/software/catalog/${item.id}`, { deprecated: true, tags: ['a', 'b'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ name: '7-Zip', deprecated: true, tags: ['a', 'b'] });
    expect(res.body.data.updatedAt >= (item.updatedAt as string)).toBe(true);
    expect((auditActions().find((a) => a.action === 'software.catalog.update')?.details as { changedFields: string[] }).changedFields.sort()).toEqual(['deprecated', 'tags']);
    expect((await as('system', 'PATCH', `/software/catalog/${item.id}`, {})).status).toBe(400);
  });

  it('03§4.3 DELETE removes the item and its versions, answers {success:true, id}; then 404 `Catalog item not found`', async () => {
    const item = await create('system');
    expect((await as('system', 'POST', `/software/catalog/${item.id}/versions`, versionBody())).status).toBe(201);
    const res = await as('system', 'DELETE', `/software/catalog/${item.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, id: item.id });
    expect(t.db.select().from(softwareVersions).where(eq(softwareVersions.catalogId, item.id)).all()).toEqual([]);
    const gone = await as('system', 'GET', `/software/catalog/${item.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('Catalog item not found');
    expect((await as('system', 'GET', `/software/catalog/${item.id}/versions`)).status).toBe(404);
    expect(auditActions().map((a) => a.action)).toContain('software.catalog.delete');
  });

  it('03§2.5 adding a version sets the parent latestVersion and isLatest on the new one only; versions list newest release first', async () => {
    const item = await create('system');
    const first = await as('system', 'POST', `/software/catalog/${item.id}/versions`, versionBody({ version: '23.01', releaseDate: '2024-01-10' }));
    expect(first.status, first.text).toBe(201);
    expect(first.body.data).toMatchObject({ softwareId: item.id, version: '23.01', releaseDate: '2024-01-10T00:00:00.000Z', notes: 'Fixes', sha256: 'a'.repeat(64), sizeMB: 1.5, supportedPlatforms: ['windows', 'linux'], isLatest: true });
    // An older release added later is still the latest added (03 §2.5 "updated automatically when a version is added").
    const second = await as('system', 'POST', `/software/catalog/${item.id}/versions`, versionBody({ version: '22.00', releaseDate: '2022-06-01T12:00:00Z' }));
    expect(second.status, second.text).toBe(201);
    expect((await as('system', 'GET', `/software/catalog/${item.id}`)).body.data).toMatchObject({ latestVersion: '22.00', versionCount: 2 });
    const list = await as('orgUser', 'GET', `/software/catalog/${item.id}/versions`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((v: { version: string; isLatest: boolean }) => [v.version, v.isLatest])).toEqual([
      ['23.01', false],
      ['22.00', true],
    ]);
    expect(auditActions().filter((a) => a.action === 'software.catalog.version.create')).toHaveLength(2);
    const again = await as('system', 'POST', `/software/catalog/${item.id}/versions`, versionBody({ version: '22.00' }));
    expect(again.status).toBe(409);
  });

  it('03§8 catalog bounds (name 200, vendor 1-200, description 1-1000, tag 50, platforms ≥1, homepage URL, version 100) are 400, never 500', async () => {
    const refused = async (over: Record<string, unknown>) => {
      const res = await as('system', 'POST', '/software/catalog', catalogBody(over));
      expect({ over: Object.keys(over), status: res.status }).toEqual({ over: Object.keys(over), status: 400 });
    };
    await refused({ name: 'n'.repeat(201) });
    await refused({ name: '' });
    await refused({ vendor: 'v'.repeat(201) });
    await refused({ vendor: '' });
    await refused({ description: 'd'.repeat(1001) });
    await refused({ description: '' });
    await refused({ tags: ['t'.repeat(51)] });
    await refused({ platforms: [] });
    await refused({ platforms: ['beos'] });
    await refused({ category: 'games' });
    await refused({ homepage: 'not a url' });
    await refused({ licenseType: 'gpl' });
    await refused({ latestVersion: 'v'.repeat(101) });
    // At the limits. 03§8 version 100 wins over the older build's 50.
    await create('system', { name: 'n'.repeat(200), vendor: 'v'.repeat(200), description: 'd'.repeat(1000), tags: ['t'.repeat(50)], latestVersion: 'v'.repeat(100) });
  });

  it('03§8 05 4.3 version bounds (version 1-100, releaseDate, downloadUrl, sha256 64 hex, sizeMB 0.1-2048, supportedPlatforms ≥1, notes 2000, architecture 20) are 400', async () => {
    const item = await create('system');
    const refused = async (over: Record<string, unknown>) => {
      const res = await as('system', 'POST', `/software/catalog/${item.id}/versions`, versionBody(over));
      expect({ over, status: res.status }).toEqual({ over, status: 400 });
    };
    await refused({ version: '' });
    await refused({ version: 'v'.repeat(101) });
    await refused({ releaseDate: 'yesterday' });
    await refused({ releaseDate: undefined });
    await refused({ downloadUrl: 'ftp://x' });
    await refused({ sha256: 'g'.repeat(64) });
    await refused({ sha256: 'a'.repeat(63) });
    await refused({ sizeMB: 0.05 });
    await refused({ sizeMB: 2049 });
    await refused({ supportedPlatforms: [] });
    await refused({ notes: 'x'.repeat(2001) });
    await refused({ architecture: 'a'.repeat(21) });
    const ok = await as('system', 'POST', `/software/catalog/${item.id}/versions`, versionBody({ version: 'v'.repeat(100), sizeMB: 2048 }));
    expect(ok.status, ok.text).toBe(201);
    // A malformed or unknown id is a 4xx too.
    expect((await as('system', 'POST', '/software/catalog/not-a-uuid/versions', versionBody())).status).toBe(400);
    expect((await as('system', 'POST', `/software/catalog/${randomUUID()}/versions`, versionBody())).status).toBe(404);
  });

  it('05 4.3 catalog writes need devices:write and MFA: a viewer is 403, a session without MFA is 403', async () => {
    const viewer = (await seedUser(t, { email: 'viewer@a1.test', org: { orgId: w.orgA1.id, roleId: ROLES.orgViewer }, login: 'mint', mfa: true })).token;
    const denied = await as(viewer, 'POST', '/software/catalog', catalogBody());
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('Permission denied');
    expect((await as(viewer, 'GET', '/software/catalog')).status).toBe(200);
    const noMfa = await mintToken(t, w.users.orgUser.id, { mfa: false });
    const refused = await as(noMfa, 'POST', '/software/catalog', catalogBody());
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('MFA required');
  });

  it('catalog tenancy: platform items are seen by all and changed only by system callers (403 for tenants)', async () => {
    const item = await create('system');
    for (const who of ['aAdmin', 'bAdmin', 'orgUser'] as const) {
      expect((await as(who, 'GET', `/software/catalog/${item.id}`)).status).toBe(200);
      const patch = await as(who, 'PATCH', `/software/catalog/${item.id}`, { deprecated: true });
      expect({ who, status: patch.status, code: patch.body.code }).toEqual({ who, status: 403, code: 'CATALOG_ITEM_READ_ONLY' });
      expect((await as(who, 'DELETE', `/software/catalog/${item.id}`)).status).toBe(403);
      expect((await as(who, 'POST', `/software/catalog/${item.id}/versions`, versionBody())).status).toBe(403);
    }
  });

  it("catalog tenancy: a partner's item is seen by the partner and its organizations, not by another partner (404)", async () => {
    const item = await create('aAdmin');
    expect(item).toMatchObject({ orgId: null, partnerId: w.partnerA.id });
    expect((await as('orgUser', 'GET', `/software/catalog/${item.id}`)).status).toBe(200);
    // An organization of the partner reads it but does not change it.
    expect((await as('orgUser', 'PATCH', `/software/catalog/${item.id}`, { deprecated: true })).status).toBe(403);
    for (const [method, body] of [['GET', undefined], ['PATCH', { deprecated: true }], ['DELETE', undefined]] as const) {
      const res = await as('bAdmin', method, `/software/catalog/${item.id}`, body);
      expect({ method, status: res.status, error: res.body.error }).toEqual({ method, status: 404, error: 'Catalog item not found' });
    }
    expect((await as('bAdmin', 'GET', '/software/catalog')).body.pagination.total).toBe(0);
    expect((await as('bAdmin', 'GET', '/software/catalog/search?q=zip')).body.total).toBe(0);
    expect((await as('aAdmin', 'PATCH', `/software/catalog/${item.id}`, { deprecated: true })).status).toBe(200);
  });

  it("catalog tenancy: an organization's item is its own; another organization's caller gets 404, an org caller naming another org 403", async () => {
    const item = await create('orgUser');
    expect(item).toMatchObject({ orgId: w.orgA1.id, partnerId: w.partnerA.id });
    expect((await as('aAdmin', 'GET', `/software/catalog/${item.id}`)).status).toBe(200);
    const a2 = (await seedUser(t, { email: 'a2@a2.test', org: { orgId: w.orgA2.id }, login: 'mint', mfa: true })).token;
    expect((await as(a2, 'GET', `/software/catalog/${item.id}`)).status).toBe(404);
    expect((await as(a2, 'DELETE', `/software/catalog/${item.id}`)).status).toBe(404);
    expect((await as('bAdmin', 'GET', `/software/catalog/${item.id}`)).status).toBe(404);
    const other = await as('orgUser', 'POST', '/software/catalog', catalogBody({ orgId: w.orgA2.id }));
    expect(other.status).toBe(403);
    expect(other.body.error).toBe('Access to this organization denied');
    const forA2 = await as('aAdmin', 'POST', '/software/catalog', catalogBody({ orgId: w.orgA2.id }));
    expect(forA2.status).toBe(201);
    expect(forA2.body.data.orgId).toBe(w.orgA2.id);
    expect((await as('orgUser', 'GET', `/software/catalog/${forA2.body.data.id}`)).status).toBe(404);
    expect((await as('bAdmin', 'POST', '/software/catalog', catalogBody({ orgId: w.orgA1.id }))).status).toBe(403);
  });
});

describe('software deployments and inventory (03 §3, §4.3)', () => {
  let t: TestApp, r: RestrictedWorld, one: SimulatedAgent, two: SimulatedAgent, softwareId: string;
  beforeEach(async () => {
    t = await createTestApp();
    r = await seedRestrictedWorld(t);
    [one, two] = [r.inGroup, r.outside];
    const item = await t.call('POST', `${API}/software/catalog`, { token: r.w.tokens.system, body: catalogBody() });
    expect(item.status, item.text).toBe(201);
    softwareId = item.body.data.id;
    const version = await t.call('POST', `${API}/software/catalog/${softwareId}/versions`, { token: r.w.tokens.system, body: versionBody() });
    expect(version.status, version.text).toBe(201);
  });
  afterEach(async () => {
    await t.close();
  });

  /** `who`: one of the world's callers, or a token. */
  const as = (who: string, method: 'GET' | 'POST', url: string, body?: unknown) =>
    t.call(method, `${API}${url}`, { token: tokenOf(r.w, who), ...(body !== undefined ? { body } : {}) });
  const deploy = (over: Record<string, unknown> = {}, who = 'orgUser') =>
    as(who, 'POST', '/software/deployments', { softwareId, action: 'install', deviceIds: [one.deviceId, two.deviceId], requestedBy: 'Jane', reason: 'Baseline', ...over });
  const created = async (over: Record<string, unknown> = {}) => {
    const res = await deploy(over);
    expect(res.status, res.text).toBe(201);
    return res.body.data as { id: string; status: string; [k: string]: unknown };
  };
  const deployment = async (id: string) => (await as('orgUser', 'GET', `/software/deployments/${id}`)).body.data;
  const results = async (id: string) => {
    const res = await as('orgUser', 'GET', `/software/deployments/${id}/results`);
    expect(res.status, res.text).toBe(200);
    return res.body.data as { deviceId: string; status: string; message: string; startedAt: string | null; completedAt: string | null; exitCode: number | null }[];
  };
  const resultOf = async (id: string, agent: SimulatedAgent) => (await results(id)).find((x) => x.deviceId === agent.deviceId);

  // ---- Create ----

  it('05 4.3 POST /software/deployments answers 201 {data} pending, one result per device `Queued for execution.`; audited with software id, action, device count', async () => {
    const res = await deploy();
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({
      softwareId,
      softwareName: '7-Zip',
      action: 'install',
      status: 'pending',
      version: '23.01',
      deviceIds: [one.deviceId, two.deviceId],
      requestedBy: 'Jane',
      requestReason: 'Baseline',
      requestedAt: expect.any(String),
      scheduledAt: null,
      completedAt: null,
      cancelReason: null,
      orgId: r.w.orgA1.id,
    });
    const list = await results(res.body.data.id);
    expect(list.map((x) => [x.deviceId, x.status, x.message])).toEqual([
      [one.deviceId, 'pending', 'Queued for execution.'],
      [two.deviceId, 'pending', 'Queued for execution.'],
    ]);
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'software.deployment.create')).all();
    expect(audit).toHaveLength(1);
    expect(audit[0]?.details).toMatchObject({ softwareId, action: 'install', deviceCount: 2 });
  });

  it('03§4.3 version defaults to the catalog latestVersion; an unknown version or software is a clear 4xx', async () => {
    expect((await created()).version).toBe('23.01');
    const unknownVersion = await deploy({ version: '99' });
    expect(unknownVersion.status).toBe(400);
    expect(unknownVersion.body.code).toBe('SOFTWARE_VERSION_NOT_FOUND');
    const unknownItem = await deploy({ softwareId: randomUUID() });
    expect(unknownItem.status).toBe(404);
    expect(unknownItem.body.error).toBe('Catalog item not found');
  });

  it('03§8 deployment bounds: deviceIds 1-500 uuids, requestedBy 1-200, reason 500, action enum, scheduleAt ISO: 400, never 500', async () => {
    const refused = async (over: Record<string, unknown>) => {
      const res = await deploy(over);
      expect({ over: Object.keys(over), status: res.status }).toEqual({ over: Object.keys(over), status: 400 });
    };
    await refused({ deviceIds: [] });
    await refused({ deviceIds: ['not-a-uuid'] });
    await refused({ deviceIds: Array.from({ length: 501 }, () => randomUUID()) });
    await refused({ requestedBy: '' });
    await refused({ requestedBy: 'x'.repeat(201) });
    await refused({ reason: 'x'.repeat(501) });
    await refused({ action: 'reinstall' });
    await refused({ scheduleAt: 'tomorrow' });
    await refused({ softwareId: 'sw-1' });
    await refused({ version: 'v'.repeat(101) });
    expect((await deploy({ requestedBy: 'x'.repeat(200), reason: 'x'.repeat(500) })).status).toBe(201);
  });

  it('03§4.3 every device must exist, be visible and belong to the organization: unknown 404, another org 400, another partner 404/403', async () => {
    const missing = await deploy({ deviceIds: [one.deviceId, randomUUID()] });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('DEVICE_NOT_FOUND');
    const a2 = await SimulatedAgent.enroll(t, r.w.tokens.system, r.w.orgA2.id, { hostname: 'a2-01' });
    const mixed = await deploy({ deviceIds: [one.deviceId, a2.deviceId], orgId: r.w.orgA1.id }, 'aAdmin');
    expect(mixed.status).toBe(400);
    expect(mixed.body.code).toBe('DEVICE_ORG_MISMATCH');
    // Another partner: its organization is out of reach (403), A1's devices are not seen (404).
    const b = await deploy({ orgId: r.w.orgA1.id }, 'bAdmin');
    expect(b.status).toBe(403);
    const bOwn = await deploy({ orgId: r.w.orgB1.id }, 'bAdmin');
    expect(bOwn.status).toBe(404);
    // Nothing was made.
    expect(t.db.select().from(deviceCommands).all()).toEqual([]);
  });

  it('05 4.3 org resolution: a system caller without orgId is 400 `orgId is required for this scope`; an org caller naming another org 403', async () => {
    const system = await deploy({}, 'system');
    expect(system.status).toBe(400);
    expect(system.body.error).toBe('orgId is required for this scope');
    expect((await deploy({ orgId: r.w.orgA1.id }, 'system')).status).toBe(201);
    const multi = await deploy({}, 'aAdmin');
    expect(multi.status).toBe(400);
    expect(multi.body.error).toBe('orgId is required for this scope');
    // A partner caller reaching one organization needs none.
    expect((await deploy({}, 'aSelAdmin')).status).toBe(201);
    const other = await deploy({ orgId: r.w.orgA2.id });
    expect(other.status).toBe(403);
    expect(other.body.error).toBe('Access to this organization denied');
  });

  it("05 4.3 deployments need devices:execute and MFA: a viewer is 403, a session without MFA is 403; reads need devices:read", async () => {
    const viewer = (await seedUser(t, { email: 'viewer@a1.test', org: { orgId: r.w.orgA1.id, roleId: ROLES.orgViewer }, login: 'mint', mfa: true })).token;
    const denied = await deploy({}, viewer);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('Permission denied');
    const noMfa = await mintToken(t, r.w.users.orgUser.id, { mfa: false });
    const refused = await deploy({}, noMfa);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('MFA required');
    const d = await created();
    expect((await as(viewer, 'GET', `/software/deployments/${d.id}`)).status).toBe(200);
    expect((await as(viewer, 'POST', `/software/deployments/${d.id}/cancel`, {})).status).toBe(403);
    expect((await as(noMfa, 'POST', `/software/deployments/${d.id}/cancel`, {})).status).toBe(403);
  });

  // ---- Lifecycle ----

  it('03§3 the lifecycle through the agents: pending → running (result running with startedAt) → completed with completedAt', async () => {
    const d = await created();
    const [command] = await one.fetch();
    expect(command).toMatchObject({
      type: 'install_software',
      payload: { deploymentId: d.id, name: '7-Zip', version: '23.01', downloadUrl: 'https://7-zip.org/a/7z2301.msi', sha256: 'a'.repeat(64), silentInstallArg: '/quiet', action: 'install' },
    });
    expect((await deployment(d.id)).status).toBe('running');
    expect(await resultOf(d.id, one)).toMatchObject({ status: 'running', startedAt: expect.any(String), completedAt: null });
    expect(await resultOf(d.id, two)).toMatchObject({ status: 'pending' });
    expect((await one.report(command?.id ?? '', { status: 'completed', exitCode: 0, stdout: 'ok' })).status).toBe(200);
    expect(await resultOf(d.id, one)).toMatchObject({ status: 'completed', exitCode: 0, completedAt: expect.any(String) });
    expect((await deployment(d.id)).status).toBe('running');
    await two.work(() => ({ status: 'completed', exitCode: 0 }));
    expect(await deployment(d.id)).toMatchObject({ status: 'completed', completedAt: expect.any(String) });
    // The installs are in the devices' inventory, managed and linked to the catalog item.
    const inv = await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`);
    expect(inv.status, inv.text).toBe(200);
    expect(inv.body.data.items).toEqual([expect.objectContaining({ name: '7-Zip', version: '23.01', catalogId: softwareId, source: 'managed' })]);
  });

  it('03§3 an install of software the device already reports updates that row (same id): managed, linked, the version deployed', async () => {
    await one.heartbeat({ software: [{ name: '7-ZIP', version: '22.00', vendor: 'Igor Pavlov' }, { name: 'curl', version: '8.0' }] });
    const before = t.db.select().from(deviceSoftware).where(eq(deviceSoftware.deviceId, one.deviceId)).all();
    const d = await created({ deviceIds: [one.deviceId] });
    await one.work(() => ({ status: 'completed', exitCode: 0 }));
    expect((await deployment(d.id)).status).toBe('completed');
    const after = t.db.select().from(deviceSoftware).where(eq(deviceSoftware.deviceId, one.deviceId)).all();
    expect(after).toHaveLength(2);
    const zip = after.find((s) => s.name === '7-ZIP');
    expect(zip).toMatchObject({ id: before.find((s) => s.name === '7-ZIP')?.id, version: '23.01', catalogId: softwareId, isManaged: true, vendor: 'Igor Pavlov' });
    expect(after.find((s) => s.name === 'curl')).toEqual(before.find((s) => s.name === 'curl'));
  });

  it('03§3 a deployment with any failed result ends failed (exit code and error kept on the result)', async () => {
    const d = await created();
    await one.work(() => ({ status: 'completed', exitCode: 0 }));
    await two.work(() => ({ status: 'completed', exitCode: 1603, stderr: 'Fatal error during installation' }));
    expect(await resultOf(d.id, two)).toMatchObject({ status: 'failed', exitCode: 1603, message: 'Fatal error during installation' });
    expect(await deployment(d.id)).toMatchObject({ status: 'failed', completedAt: expect.any(String) });
  });

  it('05 4.7 decommissioning a target device fails its open result (the software never reached it), and the deployment settles', async () => {
    const d = await created();
    await one.work(() => ({ status: 'completed', exitCode: 0 }));
    const gone = await t.call('DELETE', `${API}/devices/${two.deviceId}`, { token: r.w.tokens.orgUser });
    expect(gone.status, gone.text).toBe(200);
    expect(await resultOf(d.id, two)).toMatchObject({ status: 'failed', message: 'Device decommissioned.', completedAt: expect.any(String) });
    expect(await deployment(d.id)).toMatchObject({ status: 'failed', completedAt: expect.any(String) });
  });

  // ---- Cancel ----

  it('03§3 cancel from pending: cancelled with cancelReason and completedAt, open results cancelled with the reason, agent commands withdrawn; audited', async () => {
    const d = await created();
    const res = await as('orgUser', 'POST', `/software/deployments/${d.id}/cancel`, { reason: 'Change freeze' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'cancelled', cancelReason: 'Change freeze', completedAt: expect.any(String) });
    expect((await results(d.id)).map((x) => [x.status, x.message])).toEqual([
      ['cancelled', 'Change freeze'],
      ['cancelled', 'Change freeze'],
    ]);
    expect(await one.fetch()).toEqual([]);
    expect(t.db.select({ status: deviceCommands.status }).from(deviceCommands).all().map((c) => c.status)).toEqual(['cancelled', 'cancelled']);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'software.deployment.cancel')).all()).toHaveLength(1);
  });

  it('05 4.3 cancel without a reason gives results the message `Cancelled by operator.`', async () => {
    const d = await created();
    const res = await as('orgUser', 'POST', `/software/deployments/${d.id}/cancel`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.cancelReason).toBeNull();
    expect((await results(d.id)).map((x) => x.message)).toEqual(['Cancelled by operator.', 'Cancelled by operator.']);
  });

  it('03§4.3 cancel from running is 409 `Deployment cannot be cancelled`; an unknown id is 404 `Deployment not found`', async () => {
    const d = await created();
    await one.fetch();
    const running = await as('orgUser', 'POST', `/software/deployments/${d.id}/cancel`, { reason: 'late' });
    expect(running.status).toBe(409);
    expect(running.body.error).toBe('Deployment cannot be cancelled');
    const missing = await as('orgUser', 'POST', `/software/deployments/${randomUUID()}/cancel`, {});
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('Deployment not found');
    expect((await as('orgUser', 'GET', '/software/deployments/not-a-uuid')).status).toBe(400);
  });

  // ---- Scheduled ----

  it('03§3 05 4.3 scheduleAt in the future: queued, results `Scheduled deployment.`, nothing sent until the dispatch job runs when due', async () => {
    const at = new Date(Date.now() + 3600_000);
    const d = await created({ scheduleAt: at.toISOString() });
    expect(d).toMatchObject({ status: 'queued', scheduleType: 'scheduled', scheduledAt: at.toISOString() });
    expect((await results(d.id)).map((x) => x.message)).toEqual(['Scheduled deployment.', 'Scheduled deployment.']);
    await t.worker.tick(new Date(at.getTime() - 60_000));
    expect(await one.fetch()).toEqual([]);
    expect((await deployment(d.id)).status).toBe('queued');
    await t.worker.tick(new Date(at.getTime() + 1000));
    expect((await deployment(d.id)).status).toBe('pending');
    expect((await results(d.id)).map((x) => x.message)).toEqual(['Queued for execution.', 'Queued for execution.']);
    const [command] = await one.fetch();
    expect(command).toMatchObject({ type: 'install_software', payload: { deploymentId: d.id } });
    expect((await deployment(d.id)).status).toBe('running');
  });

  it('03§3 a scheduled deployment cancelled while queued is never dispatched', async () => {
    const at = new Date(Date.now() + 3600_000);
    const d = await created({ scheduleAt: at.toISOString() });
    expect((await as('orgUser', 'POST', `/software/deployments/${d.id}/cancel`, { reason: 'no' })).status).toBe(200);
    await t.worker.tick(new Date(at.getTime() + 1000));
    expect(await one.fetch()).toEqual([]);
    expect((await deployment(d.id)).status).toBe('cancelled');
  });

  // ---- Lists and tenancy ----

  it('03§4.3 GET /software/deployments filters by status, action, softwareId, deviceId, requestedBy and pages', async () => {
    const a = await created();
    const b = await created({ deviceIds: [one.deviceId], requestedBy: 'Bob', action: 'uninstall' });
    const ids = async (query: string) => {
      const res = await as('orgUser', 'GET', `/software/deployments${query}`);
      expect(res.status, res.text).toBe(200);
      return (res.body.data as { id: string }[]).map((x) => x.id);
    };
    expect(await ids('')).toEqual([b.id, a.id]);
    expect(await ids('?action=uninstall')).toEqual([b.id]);
    expect(await ids('?requestedBy=Jane')).toEqual([a.id]);
    expect(await ids(`?deviceId=${two.deviceId}`)).toEqual([a.id]);
    expect(await ids(`?softwareId=${softwareId}&status=pending`)).toEqual([b.id, a.id]);
    expect(await ids('?status=completed')).toEqual([]);
    expect((await as('orgUser', 'GET', '/software/deployments?limit=1')).body.pagination).toEqual({ page: 1, limit: 1, total: 2 });
  });

  it("tenancy: another partner's caller does not see the organization's deployments or inventory (404 / empty)", async () => {
    const d = await created();
    await one.heartbeat({ software: [{ name: 'Notepad++', version: '8.6' }] });
    expect((await as('bAdmin', 'GET', `/software/deployments/${d.id}`)).status).toBe(404);
    expect((await as('bAdmin', 'GET', `/software/deployments/${d.id}/results`)).status).toBe(404);
    expect((await as('bAdmin', 'POST', `/software/deployments/${d.id}/cancel`, {})).status).toBe(404);
    expect((await as('bAdmin', 'GET', '/software/deployments')).body.pagination.total).toBe(0);
    expect((await as('bAdmin', 'GET', '/software/inventory')).body).toEqual({ data: [], total: 0 });
    expect((await as('bAdmin', 'GET', `/software/inventory/${one.deviceId}`)).status).toBe(404);
    const inv = (await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`)).body.data;
    const uninstall = await as('bAdmin', 'POST', `/software/inventory/${one.deviceId}/${inv.items[0].softwareId}/uninstall`, { requestedBy: 'Mallory' });
    expect(uninstall.status).toBe(404);
    // A user restricted to a device group sees deployments only through the devices it sees.
    const other = await created({ deviceIds: [two.deviceId] });
    expect((await as(r.groupUser, 'GET', `/software/deployments/${other.id}`)).status).toBe(404);
    expect((await as(r.groupUser, 'GET', `/software/deployments/${d.id}/results`)).body.data.map((x: { deviceId: string }) => x.deviceId)).toEqual([one.deviceId]);
  });

  // ---- Inventory ----

  it('05 4.3 the heartbeat software list is the device inventory: GET /software/inventory answers {data:[{deviceId, deviceName, os, lastScannedAt, items}], total}', async () => {
    const hb = await one.heartbeat({
      software: [
        { name: '7-zip', version: '23.01', vendor: 'Igor Pavlov', installDate: '2024-01-11', installLocation: 'C:\\7z', uninstallString: 'msiexec /x {7Z}' },
        { name: 'Notepad++', version: '8.6' },
      ],
    });
    expect(hb.status, hb.text).toBe(200);
    await two.heartbeat({ software: [{ name: 'curl', version: '8.0' }] });
    const res = await as('orgUser', 'GET', '/software/inventory');
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(2);
    const entry = res.body.data.find((e: { deviceId: string }) => e.deviceId === one.deviceId);
    expect(entry).toMatchObject({ deviceName: 'web-in', os: 'linux', lastScannedAt: expect.any(String) });
    // Linked case-insensitively to the catalog item of the same name.
    expect(entry.items).toEqual([
      expect.objectContaining({ name: '7-zip', version: '23.01', vendor: 'Igor Pavlov', installedAt: '2024-01-11', catalogId: softwareId, source: 'discovered' }),
      expect.objectContaining({ name: 'Notepad++', version: '8.6', catalogId: null }),
    ]);
    const filtered = await as('orgUser', 'GET', `/software/inventory?softwareId=${softwareId}`);
    expect(filtered.body.total).toBe(1);
    expect(filtered.body.data[0].items.map((i: { name: string }) => i.name)).toEqual(['7-zip']);
    expect((await as('orgUser', 'GET', '/software/inventory?search=CURL')).body.data.map((e: { deviceId: string }) => e.deviceId)).toEqual([two.deviceId]);
    expect((await as('orgUser', 'GET', `/software/inventory?deviceId=${two.deviceId}`)).body.total).toBe(1);
    // A device-group restricted user sees only its devices.
    expect((await as(r.groupUser, 'GET', '/software/inventory')).body.data.map((e: { deviceId: string }) => e.deviceId)).toEqual([one.deviceId]);
  });

  it("01§4.3 a deleted organization's devices leave a system caller's inventory and device list (200, not a 404 for the whole page)", async () => {
    const gone = await SimulatedAgent.enroll(t, r.w.tokens.system, r.w.orgA2.id, { hostname: 'gone-01' });
    expect((await gone.heartbeat({ software: [{ name: 'curl', version: '8.0' }] })).status).toBe(200);
    expect((await one.heartbeat({ software: [{ name: 'curl', version: '8.1' }] })).status).toBe(200);
    const deviceIds = async (url: string) => {
      const res = await as('system', 'GET', url);
      expect(res.status, res.text).toBe(200);
      return (res.body.data as { deviceId?: string; id?: string }[]).map((e) => e.deviceId ?? e.id);
    };
    expect(await deviceIds('/software/inventory')).toContain(gone.deviceId);
    expect((await t.call('DELETE', `${API}/orgs/organizations/${r.w.orgA2.id}`, { token: r.w.tokens.aAdmin })).status).toBe(200);
    expect(await deviceIds('/software/inventory')).toEqual([one.deviceId]);
    expect(await deviceIds('/devices?limit=100')).not.toContain(gone.deviceId);
    expect((await as('system', 'GET', `/devices/${gone.deviceId}`)).status).toBe(404);
  });

  it('03§2.5 a later full report replaces the rows, keeping the rows that did not change', async () => {
    await one.heartbeat({ software: [{ name: 'A', version: '1' }, { name: 'B', version: '1' }] });
    const before = t.db.select().from(deviceSoftware).where(eq(deviceSoftware.deviceId, one.deviceId)).all();
    await one.heartbeat({ software: [{ name: 'A', version: '1', vendor: 'Acme' }, { name: 'B', version: '2' }, { name: 'C' }] });
    const after = t.db.select().from(deviceSoftware).where(eq(deviceSoftware.deviceId, one.deviceId)).all();
    expect(after.map((s) => [s.name, s.version]).sort()).toEqual([['A', '1'], ['B', '2'], ['C', null]]);
    expect(after.find((s) => s.name === 'A')?.id).toBe(before.find((s) => s.name === 'A')?.id);
    expect(after.find((s) => s.name === 'A')?.vendor).toBe('Acme');
    expect(after.find((s) => s.name === 'B')?.id).not.toBe(before.find((s) => s.name === 'B')?.id);
    // A heartbeat without a software list keeps the inventory; an empty list empties it.
    await one.heartbeat({});
    expect(t.db.select().from(deviceSoftware).where(eq(deviceSoftware.deviceId, one.deviceId)).all()).toHaveLength(3);
    await one.heartbeat({ software: [] });
    expect((await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`)).body.error).toBe('Device inventory not found');
  });

  it('05 4.3 GET /software/inventory/:deviceId answers {data:<entry>}; a device without inventory is 404 `Device inventory not found`', async () => {
    const none = await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`);
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('Device inventory not found');
    expect((await as('orgUser', 'GET', `/software/inventory/${randomUUID()}`)).status).toBe(404);
    await one.heartbeat({ software: [{ name: 'Git', version: '2.44' }] });
    const res = await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ deviceId: one.deviceId, items: [expect.objectContaining({ name: 'Git', version: '2.44' })] });
  });

  it('05 4.3 POST /software/inventory/:deviceId/:softwareId/uninstall answers 202 {data:<uninstall deployment>}; pendingUninstall until it ends', async () => {
    await one.heartbeat({ software: [{ name: 'Git', version: '2.44', uninstallString: '/usr/bin/apt remove git' }] });
    const item = (await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`)).body.data.items[0];
    const res = await as('orgUser', 'POST', `/software/inventory/${one.deviceId}/${item.softwareId}/uninstall`, { requestedBy: 'Jane', reason: 'Unapproved' });
    expect(res.status, res.text).toBe(202);
    expect(res.body.data).toMatchObject({ action: 'uninstall', status: 'pending', softwareName: 'Git', version: '2.44', deviceIds: [one.deviceId], requestedBy: 'Jane', requestReason: 'Unapproved' });
    expect((await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`)).body.data.items[0].pendingUninstall).toBe(true);
    const [command] = await one.fetch();
    expect(command).toMatchObject({ type: 'uninstall_software', payload: { deploymentId: res.body.data.id, name: 'Git', uninstallString: '/usr/bin/apt remove git' } });
    await one.report(command?.id ?? '', { status: 'completed', exitCode: 0 });
    expect((await deployment(res.body.data.id)).status).toBe('completed');
    expect((await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`)).status).toBe(404);
  });

  it('05 4.3 uninstall of software not on the device is 404 `Software not found on device`; requestedBy is required (1-200)', async () => {
    await one.heartbeat({ software: [{ name: 'Git', version: '2.44' }] });
    const missing = await as('orgUser', 'POST', `/software/inventory/${one.deviceId}/${randomUUID()}/uninstall`, { requestedBy: 'Jane' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('Software not found on device');
    const item = (await as('orgUser', 'GET', `/software/inventory/${one.deviceId}`)).body.data.items[0];
    expect((await as('orgUser', 'POST', `/software/inventory/${one.deviceId}/${item.softwareId}/uninstall`, {})).status).toBe(400);
    expect((await as('orgUser', 'POST', `/software/inventory/${one.deviceId}/${item.softwareId}/uninstall`, { requestedBy: 'x'.repeat(201) })).status).toBe(400);
    // Another device's row is not this device's.
    expect((await as('orgUser', 'POST', `/software/inventory/${two.deviceId}/${item.softwareId}/uninstall`, { requestedBy: 'Jane' })).status).toBe(404);
    const noMfa = await mintToken(t, r.w.users.orgUser.id, { mfa: false });
    expect((await as(noMfa, 'POST', `/software/inventory/${one.deviceId}/${item.softwareId}/uninstall`, { requestedBy: 'Jane' })).status).toBe(403);
  });
});
