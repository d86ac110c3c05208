import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { openDatabase } from '../../src/server/db/connection.js';
import { apiKeys, auditLogs, organizations, partners } from '../../src/server/db/schema/index.js';
import { systemContext } from '../../src/server/context.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { seedWorld, type World } from '../helpers/seed.js';

const API = '/api/v1';

function enroll(t: TestApp, orgId: string, siteId: string | null, hostname: string) {
  const key = t.services.enrollmentKeys.create(systemContext(), { orgId, siteId, name: `for ${hostname}`, maxUsage: 10 });
  return t.services.devices.enroll(systemContext(), { enrollmentKey: key.key, hostname, osType: 'linux', osVersion: '6.8', architecture: 'x86_64', agentVersion: '1.0.0' });
}

describe('authentication by API key (01 §5.2-5.4)', () => {
  let t: TestApp;
  let w: World;
  const newKey = async (body: Record<string, unknown>) => {
    const res = await t.call('POST', `${API}/api-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'k', ...body } });
    expect(res.status).toBe(201);
    return res.body as { id: string; key: string };
  };
  const withKey = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, extra: { token?: string; body?: unknown } = {}) =>
    t.call(method, `${API}${url}`, { apiKey: key, ...extra });

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  it('01§5.2 §5.14 (04 notes) answers in order: empty header, wrong prefix or shape, unknown hash', async () => {
    const { key } = await newKey({ scopes: ['*'] });
    const cases: [string, string, string][] = [
      ['', 'Missing X-API-Key header', 'MISSING_API_KEY'],
      ['abc', 'Invalid API key format', 'INVALID_API_KEY_FORMAT'],
      [`sk_${key.slice(4)}`, 'Invalid API key format', 'INVALID_API_KEY_FORMAT'],
      [`SVC_${key.slice(4)}`, 'Invalid API key format', 'INVALID_API_KEY_FORMAT'],
      [`${key}x`, 'Invalid API key format', 'INVALID_API_KEY_FORMAT'],
      ['svc_' + 'A'.repeat(32), 'Invalid API key', 'INVALID_API_KEY'],
      [`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`, 'Invalid API key', 'INVALID_API_KEY'],
    ];
    for (const [value, error, code] of cases) {
      const res = await t.call('GET', `${API}/devices`, { headers: { 'x-api-key': value } });
      expect({ value, status: res.status, error: res.body.error, code: res.body.code }).toEqual({ value, status: 401, error, code });
      // Refused before the key check: no rate-limit headers.
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
    expect((await withKey(key, 'GET', '/devices')).status).toBe(200);
  });

  it('01§5.3 with both credentials the API key wins', async () => {
    const narrow = await newKey({ scopes: [] });
    // The bearer token alone (system administrator) may list devices …
    expect((await t.call('GET', `${API}/devices`, { token: w.tokens.system })).status).toBe(200);
    // … but next to a key with no scopes the key decides.
    const both = await withKey(narrow.key, 'GET', '/devices', { token: w.tokens.system });
    expect(both.status).toBe(403);
    expect(both.body.error).toBe('Insufficient permissions');
    // An invalid key is not rescued by a valid bearer token.
    const invalid = await t.call('GET', `${API}/devices`, { token: w.tokens.system, apiKey: 'svc_' + 'z'.repeat(32) });
    expect(invalid.status).toBe(401);
    expect(invalid.body.error).toBe('Invalid API key');
    // A valid key is not spoiled by a bad bearer token.
    const wide = await newKey({ scopes: ['*'] });
    expect((await withKey(wide.key, 'GET', '/devices', { token: 'garbage' })).status).toBe(200);
  });

  it('01§5.4 scopes: * satisfies all; empty scopes are denied on protected routes and allowed on unprotected ones', async () => {
    const device = enroll(t, w.orgA1.id, w.siteA1a.id, 'ws-01');
    const star = await newKey({ scopes: ['*'] });
    const none = await newKey({ scopes: [] });
    const reader = await newKey({ scopes: ['devices:read'] });
    const deleter = await newKey({ scopes: ['devices:*'] });

    expect((await withKey(star.key, 'GET', '/devices')).status).toBe(200);
    expect((await withKey(star.key, 'GET', '/orgs/sites')).status).toBe(200);
    expect((await withKey(star.key, 'GET', `/devices/${device.deviceId}`)).status).toBe(200);

    for (const url of ['/devices', `/devices/${device.deviceId}`, '/orgs/sites']) {
      const res = await withKey(none.key, 'GET', url);
      expect({ url, status: res.status, error: res.body.error, code: res.body.code }).toEqual({ url, status: 403, error: 'Insufficient permissions', code: 'INSUFFICIENT_SCOPE' });
    }
    // GET /orgs/ declares no permission: any authenticated caller, empty scopes included.
    const orgs = await withKey(none.key, 'GET', '/orgs/');
    expect(orgs.status).toBe(200);
    expect(orgs.body.data.map((o: any) => o.id)).toEqual([w.orgA1.id]);

    expect((await withKey(reader.key, 'GET', '/devices')).status).toBe(200);
    const missing = await withKey(reader.key, 'GET', '/orgs/sites');
    expect(missing.status).toBe(403);
    expect(missing.body.error).toBe('Insufficient permissions');
    expect((await withKey(reader.key, 'DELETE', `/devices/${device.deviceId}`)).status).toBe(403);
    expect((await withKey(deleter.key, 'DELETE', `/devices/${device.deviceId}`)).status).toBe(200);
  });

  it("01§5.2 the key's organization context limits everything it reaches", async () => {
    const mine = enroll(t, w.orgA1.id, w.siteA1a.id, 'a1-host');
    const sibling = enroll(t, w.orgA2.id, w.siteA2a.id, 'a2-host');
    enroll(t, w.orgB1.id, null, 'b1-host');
    const { key, id } = await newKey({ scopes: ['*'] });

    const list = await withKey(key, 'GET', '/devices');
    expect(list.body.data.map((d: any) => d.id)).toEqual([mine.deviceId]);
    expect((await withKey(key, 'GET', `/devices/${sibling.deviceId}`)).status).toBe(404);
    const named = await withKey(key, 'GET', `/devices?orgId=${w.orgA2.id}`);
    expect(named.status).toBe(403);
    expect(named.body.error).toBe('Access to this organization denied');
    expect((await withKey(key, 'DELETE', `/devices/${sibling.deviceId}`)).status).toBe(404);

    // Attribution: the key is the actor of what it does.
    expect((await withKey(key, 'DELETE', `/devices/${mine.deviceId}`)).status).toBe(200);
    const entry = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'device.decommission')).get();
    expect(entry).toMatchObject({ actorType: 'api_key', actorId: id, orgId: w.orgA1.id });
  });

  it("01§3 a key of an inactive partner's organization is refused with PARTNER_INACTIVE", async () => {
    const { key } = await newKey({ scopes: ['*'] });
    expect((await withKey(key, 'GET', '/devices')).status).toBe(200);
    t.db.update(partners).set({ status: 'suspended' }).where(eq(partners.id, w.partnerA.id)).run();
    const res = await withKey(key, 'GET', '/devices');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ error: 'Account inactive', code: 'PARTNER_INACTIVE', status: 'suspended' });

    t.db.update(partners).set({ status: 'active' }).where(eq(partners.id, w.partnerA.id)).run();
    expect((await withKey(key, 'GET', '/devices')).status).toBe(200);
    // A soft-deleted organization takes its keys with it.
    t.db.update(organizations).set({ deletedAt: new Date().toISOString() }).where(eq(organizations.id, w.orgA1.id)).run();
    expect((await withKey(key, 'GET', '/devices')).body.code).toBe('PARTNER_INACTIVE');
  });

  it('01§2.1 §5.2 lastUsedAt and usageCount are written asynchronously, in batches', async () => {
    const { key, id } = await newKey({ scopes: ['*'] });
    const started = new Date().toISOString();
    for (let i = 0; i < 3; i++) expect((await withKey(key, 'GET', '/devices')).status).toBe(200);
    // Not written on the request path: the batch lands within about a second.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const row = t.db.select().from(apiKeys).where(eq(apiKeys.id, id)).get();
    expect(row?.usageCount).toBe(3);
    expect(row?.lastUsedAt && row.lastUsedAt >= started).toBe(true);
  });
});

describe('usage counters on shutdown (01 §2.1)', () => {
  it('01§2.1 usage counted before a graceful close is in the database afterwards', async () => {
    const t = await createTestApp();
    try {
      const w = await seedWorld(t, { mfa: true });
      const created = await t.call('POST', `${API}/api-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'k', scopes: ['*'] } });
      for (let i = 0; i < 4; i++) expect((await t.call('GET', `${API}/devices`, { apiKey: created.body.key })).status).toBe(200);
      await t.app.close();
      const db = openDatabase(`${t.dataDir}/svc.db`);
      const row = db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get();
      db.$client.close();
      expect(row?.usageCount).toBe(4);
      expect(row?.lastUsedAt).not.toBeNull();
    } finally {
      await t.close();
    }
  });
});
