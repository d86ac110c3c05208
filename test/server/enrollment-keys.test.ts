import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { auditLogs, enrollmentKeys } from '../../src/server/db/schema/index.js';
import { createTestApp, recordedCalls, type TestApp } from '../helpers/server.js';
import { seedOrgRole, seedUser, seedWorld, type World } from '../helpers/seed.js';

const API = '/api/v1';
const MINUTE = 60_000;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

function pepperOf(t: TestApp): string {
  return (JSON.parse(fs.readFileSync(path.join(t.dataDir, 'secrets.json'), 'utf8')) as { enrollmentPepper: string }).enrollmentPepper;
}

const ENROLL = { hostname: 'host-1', osType: 'linux', osVersion: '6.8', architecture: 'x86_64', agentVersion: '1.0.0' };

describe('enrollment keys (01 §2.2, §3, §4.2)', () => {
  let t: TestApp;
  let w: World;
  const { call, as, expectNoLeak } = recordedCalls(() => t);
  const create = (body: Record<string, unknown>, token = w.tokens.system) => as(token, 'POST', '/enrollment-keys', body);
  const enroll = (enrollmentKey: string, extra: Record<string, unknown> = {}) => call('POST', `${API}/agents/enroll`, { body: { ...ENROLL, enrollmentKey, ...extra } });

  async function setup(env: Record<string, string> = {}) {
    t = await createTestApp(env);
    w = await seedWorld(t, { mfa: true });
  }
  afterEach(async () => {
    const hashes = t.db.select({ h: enrollmentKeys.keyHash }).from(enrollmentKeys).all().map((r) => r.h);
    expectNoLeak('keyHash', hashes);
    await t.close();
  });

  it('01§2.2 create returns 64 hex characters once; only SHA-256 of pepper:key is stored; defaults maxUsage 1, TTL 60 min', async () => {
    await setup();
    const before = Date.now();
    const res = await create({ orgId: w.orgA1.id, name: 'laptops' });
    const after = Date.now();
    expect(res.status).toBe(201);
    expect(res.body.key).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body).toMatchObject({ orgId: w.orgA1.id, siteId: null, name: 'laptops', usageCount: 0, maxUsage: 1, createdBy: w.users.system.id });
    const expires = Date.parse(res.body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 60 * MINUTE);
    expect(expires).toBeLessThanOrEqual(after + 60 * MINUTE);

    const row = t.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, res.body.id)).get();
    expect(row?.keyHash).toBe(sha256(`${pepperOf(t)}:${res.body.key}`));
    expect(JSON.stringify(t.db.select().from(enrollmentKeys).all())).not.toContain(res.body.key);

    const got = await as(w.tokens.system, 'GET', `/enrollment-keys/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.key).toBeUndefined();
    expect(got.body).toMatchObject({ id: res.body.id, usageCount: 0, maxUsage: 1, expiresAt: res.body.expiresAt });
    const list = await as(w.tokens.system, 'GET', '/enrollment-keys');
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].key).toBeUndefined();
    expect(JSON.stringify(list.body)).not.toContain(res.body.key);
  });

  it('01§8 the default TTL is configurable (SVC_ENROLLMENT_KEY_TTL_MINUTES)', async () => {
    await setup({ SVC_ENROLLMENT_KEY_TTL_MINUTES: '5' });
    const before = Date.now();
    const res = await create({ orgId: w.orgA1.id, name: 'short' });
    expect(Date.parse(res.body.expiresAt) - before).toBeGreaterThanOrEqual(5 * MINUTE);
    expect(Date.parse(res.body.expiresAt) - before).toBeLessThan(6 * MINUTE);
  });

  it('01§4.2 (04 notes) expiresAt or ttlMinutes (1-525600), not both; maxUsage 1-100000', async () => {
    await setup();
    const before = Date.now();
    const ttl = await create({ orgId: w.orgA1.id, name: 'ttl', ttlMinutes: 30, maxUsage: 100_000 });
    expect(ttl.status).toBe(201);
    expect(Date.parse(ttl.body.expiresAt) - before).toBeGreaterThanOrEqual(30 * MINUTE);
    expect(Date.parse(ttl.body.expiresAt) - before).toBeLessThan(31 * MINUTE);
    expect(ttl.body.maxUsage).toBe(100_000);
    const at = await create({ orgId: w.orgA1.id, name: 'at', expiresAt: '2099-06-01T12:00:00+02:00' });
    expect(at.body.expiresAt).toBe('2099-06-01T10:00:00.000Z');
    expect((await create({ orgId: w.orgA1.id, name: 'year', ttlMinutes: 525_600 })).status).toBe(201);

    for (const body of [
      { name: 'both', ttlMinutes: 10, expiresAt: '2099-01-01T00:00:00Z' },
      { name: 'zero', ttlMinutes: 0 },
      { name: 'long', ttlMinutes: 525_601 },
      { name: 'past', expiresAt: new Date(Date.now() - MINUTE).toISOString() },
      { name: 'few', maxUsage: 0 },
      { name: 'many', maxUsage: 100_001 },
      { name: 'unlimited on create', maxUsage: null },
      { name: '' },
      { name: 'x'.repeat(256) },
    ]) {
      const res = await create({ orgId: w.orgA1.id, ...body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect(t.db.select().from(enrollmentKeys).all()).toHaveLength(3);
  });

  it('01§4.2 orgId is required for partner and system callers and inferred for organization callers; siteId must be in the org', async () => {
    await setup();
    for (const token of [w.tokens.system, w.tokens.aAdmin]) {
      const res = await create({ name: 'no org' }, token);
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('orgId');
    }
    const roleId = seedOrgRole(t, w.orgA1.id, ['organizations:read', 'organizations:write'], 'key writer');
    const writer = await seedUser(t, { email: 'writer@a1.test', org: { orgId: w.orgA1.id, roleId }, login: 'mint', mfa: true });
    const inferred = await create({ name: 'inferred' }, writer.token);
    expect(inferred.status).toBe(201);
    expect(inferred.body.orgId).toBe(w.orgA1.id);
    const foreign = await create({ orgId: w.orgA2.id, name: 'foreign' }, writer.token);
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toBe('Access to this organization denied');

    const pinned = await create({ orgId: w.orgA1.id, siteId: w.siteA1b.id, name: 'pinned' });
    expect(pinned.status).toBe(201);
    expect(pinned.body.siteId).toBe(w.siteA1b.id);
    for (const siteId of [w.siteA2a.id, w.siteB1a.id, randomUUID()]) {
      const res = await create({ orgId: w.orgA1.id, siteId, name: 'elsewhere' });
      expect(res.status).toBe(400);
      expect(res.body.error).toContain('siteId');
    }
    // Site-restricted users create keys for their own sites only.
    const restricted = await seedUser(t, { email: 'restricted@a1.test', org: { orgId: w.orgA1.id, roleId, siteIds: [w.siteA1a.id] }, login: 'mint', mfa: true });
    expect((await create({ siteId: w.siteA1a.id, name: 'mine' }, restricted.token)).status).toBe(201);
    expect((await create({ siteId: w.siteA1b.id, name: 'theirs' }, restricted.token)).body.error).toBe('Access to this site denied');
    expect((await create({ name: 'org-wide' }, restricted.token)).body.error).toBe('Access to this site denied');
    const visible = await as(restricted.token, 'GET', '/enrollment-keys');
    expect(visible.body.data.map((k: any) => k.name)).toEqual(['mine']);
    expect((await as(restricted.token, 'GET', `/enrollment-keys/${pinned.body.id}`)).status).toBe(404);
  });

  it('01§4.2 scope: partner callers reach accessible organizations only (404 for keys out of reach, 403 naming one)', async () => {
    await setup();
    const a1 = await create({ orgId: w.orgA1.id, name: 'a1' });
    const a2 = await create({ orgId: w.orgA2.id, name: 'a2' });
    await create({ orgId: w.orgB1.id, name: 'b1' });
    const names = async (token: string, query = '') => (await as(token, 'GET', `/enrollment-keys${query}`)).body.data.map((k: any) => k.name).sort();
    expect(await names(w.tokens.system)).toEqual(['a1', 'a2', 'b1']);
    expect(await names(w.tokens.aAdmin)).toEqual(['a1', 'a2']);
    expect(await names(w.tokens.aSelAdmin)).toEqual(['a1']);
    expect(await names(w.tokens.bAdmin)).toEqual(['b1']);
    expect(await names(w.tokens.orgUser)).toEqual(['a1']);
    expect(await names(w.tokens.system, `?orgId=${w.orgA2.id}`)).toEqual(['a2']);

    for (const [method, url, body] of [
      ['GET', `/enrollment-keys/${a2.body.id}`, undefined],
      ['POST', `/enrollment-keys/${a2.body.id}/rotate`, {}],
      ['DELETE', `/enrollment-keys/${a2.body.id}`, undefined],
    ] as const) {
      expect((await as(w.tokens.aSelAdmin, method, url, body)).status).toBe(404);
      expect((await as(w.tokens.bAdmin, method, url, body)).status).toBe(404);
    }
    for (const res of [
      await create({ orgId: w.orgA2.id, name: 'x' }, w.tokens.aSelAdmin),
      await create({ orgId: w.orgA1.id, name: 'x' }, w.tokens.bAdmin),
      await as(w.tokens.aSelAdmin, 'GET', `/enrollment-keys?orgId=${w.orgA2.id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('Access to this organization denied');
    }
    expect((await as(w.tokens.aSelAdmin, 'GET', `/enrollment-keys/${a1.body.id}`)).status).toBe(200);
  });

  it('01§4.2 list: newest first, paged, filtered by expired true/false', async () => {
    await setup();
    const live = await create({ orgId: w.orgA1.id, name: 'live' });
    const old = await create({ orgId: w.orgA1.id, name: 'old' });
    t.db.update(enrollmentKeys).set({ expiresAt: new Date(Date.now() - MINUTE).toISOString() }).where(eq(enrollmentKeys.id, old.body.id)).run();
    const all = await as(w.tokens.system, 'GET', '/enrollment-keys');
    expect(all.body.data.map((k: any) => k.name)).toEqual(['old', 'live']);
    expect(all.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    expect((await as(w.tokens.system, 'GET', '/enrollment-keys?expired=true')).body.data.map((k: any) => k.id)).toEqual([old.body.id]);
    expect((await as(w.tokens.system, 'GET', '/enrollment-keys?expired=false')).body.data.map((k: any) => k.id)).toEqual([live.body.id]);
    expect((await as(w.tokens.system, 'GET', '/enrollment-keys?expired=maybe')).status).toBe(400);
    expect((await as(w.tokens.system, 'GET', '/enrollment-keys?limit=1&page=2')).body.data.map((k: any) => k.id)).toEqual([live.body.id]);
  });

  it('01§3 §4.2 rotate: new key, the old one stops at once, usageCount back to 0, omitted values kept, maxUsage null accepted', async () => {
    await setup();
    const created = await create({ orgId: w.orgA1.id, siteId: w.siteA1a.id, name: 'fleet', maxUsage: 3, ttlMinutes: 120 });
    expect((await enroll(created.body.key, { hostname: 'one' })).status).toBe(201);
    expect((await enroll(created.body.key, { hostname: 'two' })).status).toBe(201);
    expect(t.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, created.body.id)).get()?.usageCount).toBe(2);

    const kept = await as(w.tokens.system, 'POST', `/enrollment-keys/${created.body.id}/rotate`);
    expect(kept.status).toBe(200);
    expect(kept.body.key).toMatch(/^[0-9a-f]{64}$/);
    expect(kept.body.key).not.toBe(created.body.key);
    expect(kept.body).toMatchObject({ id: created.body.id, siteId: w.siteA1a.id, name: 'fleet', usageCount: 0, maxUsage: 3, expiresAt: created.body.expiresAt });
    const stale = await enroll(created.body.key, { hostname: 'three' });
    expect(stale.status).toBe(401);
    expect(stale.body.reason).toBe('enrollment_key_not_found');
    expect((await enroll(kept.body.key, { hostname: 'three' })).status).toBe(201);

    const unlimited = await as(w.tokens.system, 'POST', `/enrollment-keys/${created.body.id}/rotate`, { maxUsage: null, expiresAt: '2099-01-01T00:00:00Z' });
    expect(unlimited.status).toBe(200);
    expect(unlimited.body).toMatchObject({ usageCount: 0, maxUsage: null, expiresAt: '2099-01-01T00:00:00.000Z' });
    for (let i = 0; i < 5; i++) expect((await enroll(unlimited.body.key, { hostname: `many-${i}` })).status).toBe(201);

    for (const body of [{ maxUsage: 0 }, { ttlMinutes: 5, expiresAt: '2099-01-01T00:00:00Z' }, { name: 'renamed' }]) {
      expect((await as(w.tokens.system, 'POST', `/enrollment-keys/${created.body.id}/rotate`, body)).status).toBe(400);
    }
  });

  it('01§4.2 DELETE is a hard delete', async () => {
    await setup();
    const created = await create({ orgId: w.orgA1.id, name: 'gone' });
    const res = await as(w.tokens.system, 'DELETE', `/enrollment-keys/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect(t.db.select().from(enrollmentKeys).where(eq(enrollmentKeys.id, created.body.id)).get()).toBeUndefined();
    expect((await as(w.tokens.system, 'GET', `/enrollment-keys/${created.body.id}`)).status).toBe(404);
    expect((await as(w.tokens.system, 'DELETE', `/enrollment-keys/${created.body.id}`)).status).toBe(404);
    expect((await enroll(created.body.key)).body.reason).toBe('enrollment_key_not_found');
  });

  it('01§5.5 MFA for changes, user sessions only', async () => {
    await setup();
    const noMfa = (await t.services.sessions.issue(w.users.system.id, false, { ip: null, userAgent: null, signInMethod: 'password' })).accessToken;
    const created = await create({ orgId: w.orgA1.id, name: 'k' });
    for (const [method, url, body] of [
      ['POST', '/enrollment-keys', { orgId: w.orgA1.id, name: 'x' }],
      ['POST', `/enrollment-keys/${created.body.id}/rotate`, {}],
      ['DELETE', `/enrollment-keys/${created.body.id}`, undefined],
    ] as const) {
      const res = await as(noMfa, method, url, body);
      expect({ url, status: res.status, code: res.body.code }).toEqual({ url, status: 403, code: 'MFA_REQUIRED' });
    }
    expect((await as(noMfa, 'GET', '/enrollment-keys')).status).toBe(200);
    // Partner Technicians hold organizations:read, not write.
    expect((await create({ orgId: w.orgA1.id, name: 'x' }, w.tokens.aTech)).body.error).toBe('Permission denied');
  });

  it('01§4.2 a retried create with the same Idempotency-Key creates one key', async () => {
    await setup();
    const headers = { 'idempotency-key': 'enroll-key-1' };
    const body = { orgId: w.orgA1.id, name: 'once', maxUsage: 5 };
    const first = await as(w.tokens.system, 'POST', '/enrollment-keys', body, headers);
    const second = await as(w.tokens.system, 'POST', '/enrollment-keys', body, headers);
    expect(first.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(t.db.select().from(enrollmentKeys).all()).toHaveLength(1);
    expect((await as(w.tokens.system, 'POST', '/enrollment-keys', { ...body, maxUsage: 6 }, headers)).status).toBe(422);
  });

  it('01§6 create, rotate and delete are audited', async () => {
    await setup();
    const created = await create({ orgId: w.orgA1.id, name: 'audited' });
    await as(w.tokens.system, 'POST', `/enrollment-keys/${created.body.id}/rotate`, { ttlMinutes: 10 });
    await as(w.tokens.system, 'DELETE', `/enrollment-keys/${created.body.id}`);
    const entries = t.db.select().from(auditLogs).where(eq(auditLogs.resourceId, created.body.id)).all();
    expect(entries.map((e) => e.action)).toEqual(['enrollment_key.create', 'enrollment_key.rotate', 'enrollment_key.delete']);
    for (const entry of entries) {
      expect(entry).toMatchObject({ actorType: 'user', actorId: w.users.system.id, orgId: w.orgA1.id, resourceType: 'enrollment_key', resourceName: 'audited' });
      expect(JSON.stringify(entry)).not.toContain(created.body.key);
    }
  });
});
