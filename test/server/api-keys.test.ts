import { createHash, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { apiKeys, auditLogs, enrollmentKeys } from '../../src/server/db/schema/index.js';
import { recordedCalls, type TestApp } from '../helpers/server.js';
import { seedOrgRole, seedUser, type World } from '../helpers/seed.js';

const API = '/api/v1';
const WARNING = 'Store this API key securely. It will not be shown again.';
const KEY_RE = /^svc_[A-Za-z0-9_-]{32}$/;

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('API keys (01 §2.1, §3, §4.1)', () => {
  let t: TestApp;
  let w: World;
  const { call, as, expectNoLeak } = recordedCalls(() => t);
  const create = (body: Record<string, unknown>, token = w.tokens.system) => as(token, 'POST', '/api-keys', body);

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  afterEach(async () => {
    // 01 §2.1: keyHash is stored, never returned; no stored hash ever appears in a response.
    const hashes = [
      ...t.db.select({ h: apiKeys.keyHash }).from(apiKeys).all(),
      ...t.db.select({ h: enrollmentKeys.keyHash }).from(enrollmentKeys).all(),
    ].map((r) => r.h);
    expectNoLeak('keyHash', hashes);
  });

  it('01§2.1 create returns svc_ + 32 base64url characters once, with its prefix, defaults and the warning', async () => {
    const res = await create({ orgId: w.orgA1.id, name: 'CI pipeline' });
    expect(res.status).toBe(201);
    const key: string = res.body.key;
    expect(key).toMatch(KEY_RE);
    expect(res.body).toMatchObject({
      orgId: w.orgA1.id,
      name: 'CI pipeline',
      keyPrefix: key.slice(0, 12),
      scopes: [],
      expiresAt: null,
      rateLimit: 1000,
      status: 'active',
      createdBy: w.users.system.id,
      usageCount: 0,
      lastUsedAt: null,
      warning: WARNING,
    });
    expect(res.body.keyPrefix).toHaveLength(12);
    const row = t.db.select().from(apiKeys).where(eq(apiKeys.id, res.body.id)).get();
    expect(row?.keyHash).toBe(sha256(key));
    expect(row?.keyPrefix).toBe(key.slice(0, 12));
    // The full key is stored nowhere.
    const dump = JSON.stringify(t.db.select().from(apiKeys).all());
    expect(dump).not.toContain(key);

    const got = await as(w.tokens.system, 'GET', `/api-keys/${res.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body.key).toBeUndefined();
    expect(got.body.warning).toBeUndefined();
    expect(got.body.id).toBe(res.body.id);
    const list = await as(w.tokens.system, 'GET', '/api-keys');
    expect(list.body.data[0].key).toBeUndefined();

    // Two keys never share material.
    const other = await create({ orgId: w.orgA1.id, name: 'second' });
    expect(other.body.key).not.toBe(key);
  });

  it('01§2.1 §8 field bounds: name 1-255, rateLimit 1-100000, scopes resource:action or *', async () => {
    const bad = [
      { orgId: w.orgA1.id, name: '' },
      { orgId: w.orgA1.id, name: 'x'.repeat(256) },
      { orgId: w.orgA1.id, name: 'k', rateLimit: 0 },
      { orgId: w.orgA1.id, name: 'k', rateLimit: 100_001 },
      { orgId: w.orgA1.id, name: 'k', rateLimit: 1.5 },
      { orgId: w.orgA1.id, name: 'k', scopes: ['devices'] },
      { orgId: w.orgA1.id, name: 'k', scopes: ['Devices:Read'] },
      { orgId: w.orgA1.id, name: 'k', expiresAt: 'tomorrow' },
      { orgId: w.orgA1.id, name: 'k', expiresAt: new Date(Date.now() - 60_000).toISOString() },
      { name: 'k' },
      { orgId: 'not-a-uuid', name: 'k' },
      { orgId: w.orgA1.id, name: 'k', unknown: true },
    ];
    for (const body of bad) {
      const res = await create(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.code).toBe('VALIDATION_ERROR');
    }
    const ok = await create({ orgId: w.orgA1.id, name: 'x'.repeat(255), rateLimit: 100_000, scopes: ['*', 'devices:read', '*:read', 'devices:read'], expiresAt: '2099-01-01T00:00:00+02:00' });
    expect(ok.status).toBe(201);
    expect(ok.body.scopes).toEqual(['*', 'devices:read', '*:read']);
    expect(ok.body.expiresAt).toBe('2098-12-31T22:00:00.000Z');
    expect((await create({ orgId: w.orgA1.id, name: 'k', rateLimit: 1 })).status).toBe(201);
    expect(t.db.select().from(apiKeys).all()).toHaveLength(2);
  });

  it('01§4.1 list answers {data, pagination} newest first, filtered by orgId and status', async () => {
    const a = await create({ orgId: w.orgA1.id, name: 'a' });
    const b = await create({ orgId: w.orgA2.id, name: 'b' });
    const c = await create({ orgId: w.orgA1.id, name: 'c' });
    await as(w.tokens.system, 'DELETE', `/api-keys/${a.body.id}`);

    const all = await as(w.tokens.system, 'GET', '/api-keys');
    expect(all.status).toBe(200);
    expect(all.body.data.map((k: any) => k.name)).toEqual(['c', 'b', 'a']);
    expect(all.body.pagination).toEqual({ page: 1, limit: 50, total: 3 });

    const a1 = await as(w.tokens.system, 'GET', `/api-keys?orgId=${w.orgA1.id}`);
    expect(a1.body.data.map((k: any) => k.id)).toEqual([c.body.id, a.body.id]);
    const active = await as(w.tokens.system, 'GET', '/api-keys?status=active');
    expect(active.body.data.map((k: any) => k.id)).toEqual([c.body.id, b.body.id]);
    const revoked = await as(w.tokens.system, 'GET', `/api-keys?status=revoked&orgId=${w.orgA1.id}`);
    expect(revoked.body.data.map((k: any) => k.id)).toEqual([a.body.id]);
    const paged = await as(w.tokens.system, 'GET', '/api-keys?limit=1&page=2');
    expect(paged.body.data.map((k: any) => k.id)).toEqual([b.body.id]);
    expect(paged.body.pagination).toEqual({ page: 2, limit: 1, total: 3 });
    expect((await as(w.tokens.system, 'GET', '/api-keys?status=lost')).status).toBe(400);
    expect((await as(w.tokens.system, 'GET', `/api-keys/${randomUUID()}`)).status).toBe(404);
  });

  it('01§4.1 PATCH changes name, scopes (replaced) and rateLimit of an active key; the key material stays', async () => {
    const created = await create({ orgId: w.orgA1.id, name: 'old', scopes: ['devices:read', 'sites:read'] });
    const res = await as(w.tokens.system, 'PATCH', `/api-keys/${created.body.id}`, { name: 'new', scopes: ['alerts:read'], rateLimit: 5 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.body.id, name: 'new', scopes: ['alerts:read'], rateLimit: 5, keyPrefix: created.body.keyPrefix, status: 'active' });
    expect(res.body.key).toBeUndefined();
    expect(t.db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get()?.keyHash).toBe(sha256(created.body.key));

    const empty = await as(w.tokens.system, 'PATCH', `/api-keys/${created.body.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No updates provided');
    // Only name, scopes and rateLimit may change.
    expect((await as(w.tokens.system, 'PATCH', `/api-keys/${created.body.id}`, { expiresAt: null })).status).toBe(400);
    expect((await as(w.tokens.system, 'PATCH', `/api-keys/${created.body.id}`, { rateLimit: 0 })).status).toBe(400);
  });

  it('01§3 DELETE revokes (soft, permanent): the key stops working, a second DELETE, PATCH and rotate are 400', async () => {
    const created = await create({ orgId: w.orgA1.id, name: 'doomed', scopes: ['*'] });
    expect((await call('GET', `${API}/devices`, { apiKey: created.body.key })).status).toBe(200);

    const res = await as(w.tokens.system, 'DELETE', `/api-keys/${created.body.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: expect.any(String),
      apiKey: { id: created.body.id, name: 'doomed', keyPrefix: created.body.keyPrefix, status: 'revoked', updatedAt: expect.any(String) },
    });
    // Soft: the row stays, marked revoked.
    expect(t.db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get()?.status).toBe('revoked');
    expect((await as(w.tokens.system, 'GET', `/api-keys/${created.body.id}`)).body.status).toBe('revoked');

    const used = await call('GET', `${API}/devices`, { apiKey: created.body.key });
    expect(used.status).toBe(401);
    expect(used.body.error).toBe('API key is revoked');

    const again = await as(w.tokens.system, 'DELETE', `/api-keys/${created.body.id}`);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('API key is already revoked');
    const patch = await as(w.tokens.system, 'PATCH', `/api-keys/${created.body.id}`, { name: 'back' });
    expect(patch.status).toBe(400);
    expect(patch.body.error).toBe('Cannot update revoked API key');
    const rotate = await as(w.tokens.system, 'POST', `/api-keys/${created.body.id}/rotate`);
    expect(rotate.status).toBe(400);
    expect(rotate.body.error).toBe('Cannot rotate revoked API key');
  });

  it('01§3 an active key past expiresAt becomes expired at its first authentication (401 API key is expired)', async () => {
    const created = await create({ orgId: w.orgA1.id, name: 'short', scopes: ['*'], expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await call('GET', `${API}/devices`, { apiKey: created.body.key })).status).toBe(200);
    t.db.update(apiKeys).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }).where(eq(apiKeys.id, created.body.id)).run();

    // Reads already show the effective state; the record changes at the authentication attempt.
    expect((await as(w.tokens.system, 'GET', `/api-keys/${created.body.id}`)).body.status).toBe('expired');
    expect((await as(w.tokens.system, 'GET', '/api-keys?status=expired')).body.data.map((k: any) => k.id)).toEqual([created.body.id]);
    expect((await as(w.tokens.system, 'GET', '/api-keys?status=active')).body.data).toEqual([]);
    expect(t.db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get()?.status).toBe('active');

    const used = await call('GET', `${API}/devices`, { apiKey: created.body.key });
    expect(used.status).toBe(401);
    expect(used.body.error).toBe('API key is expired');
    expect(t.db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get()?.status).toBe('expired');
    expect((await call('GET', `${API}/devices`, { apiKey: created.body.key })).body.error).toBe('API key is expired');

    const patch = await as(w.tokens.system, 'PATCH', `/api-keys/${created.body.id}`, { name: 'renew' });
    expect(patch.status).toBe(400);
    expect(patch.body.error).toBe('Cannot update expired API key');
    const rotate = await as(w.tokens.system, 'POST', `/api-keys/${created.body.id}/rotate`);
    expect(rotate.status).toBe(400);
    expect(rotate.body.error).toBe('Cannot rotate expired API key');
    // An expired key can still be revoked, which is final.
    expect((await as(w.tokens.system, 'DELETE', `/api-keys/${created.body.id}`)).status).toBe(200);
  });

  it('01§4.1 rotate replaces the key in place: the old key fails at once, usage resets, other attributes stay', async () => {
    const created = await create({ orgId: w.orgA1.id, name: 'rotating', scopes: ['devices:read'], rateLimit: 50 });
    const old: string = created.body.key;
    for (let i = 0; i < 3; i++) expect((await call('GET', `${API}/devices`, { apiKey: old })).status).toBe(200);
    t.services.apiKeyAuth.flush();
    const before = t.db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get();
    expect(before?.usageCount).toBe(3);
    expect(before?.lastUsedAt).not.toBeNull();
    // One more use that has not been written yet belongs to the statistics rotation resets.
    expect((await call('GET', `${API}/devices`, { apiKey: old })).status).toBe(200);

    const res = await as(w.tokens.system, 'POST', `/api-keys/${created.body.id}/rotate`);
    expect(res.status).toBe(200);
    expect(res.body.key).toMatch(KEY_RE);
    expect(res.body.key).not.toBe(old);
    expect(res.body).toMatchObject({
      id: created.body.id,
      orgId: w.orgA1.id,
      name: 'rotating',
      scopes: ['devices:read'],
      rateLimit: 50,
      status: 'active',
      createdBy: created.body.createdBy,
      createdAt: created.body.createdAt,
      keyPrefix: res.body.key.slice(0, 12),
      usageCount: 0,
      lastUsedAt: null,
      warning: WARNING,
    });

    const stale = await call('GET', `${API}/devices`, { apiKey: old });
    expect(stale.status).toBe(401);
    expect(stale.body.error).toBe('Invalid API key');
    t.services.apiKeyAuth.flush();
    const after = t.db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get();
    expect(after).toMatchObject({ usageCount: 0, lastUsedAt: null, keyHash: sha256(res.body.key) });

    expect((await call('GET', `${API}/devices`, { apiKey: res.body.key })).status).toBe(200);
    t.services.apiKeyAuth.flush();
    expect(t.db.select().from(apiKeys).where(eq(apiKeys.id, created.body.id)).get()?.usageCount).toBe(1);
  });

  it('01§5.5 key management needs MFA for mutating calls (403 MFA_REQUIRED); reads do not', async () => {
    const noMfa = (await t.services.sessions.issue(w.users.system.id, false, { ip: null, userAgent: null, signInMethod: 'password' })).accessToken;
    const created = await create({ orgId: w.orgA1.id, name: 'k' });
    for (const [method, url, body] of [
      ['POST', '/api-keys', { orgId: w.orgA1.id, name: 'x' }],
      ['PATCH', `/api-keys/${created.body.id}`, { name: 'y' }],
      ['POST', `/api-keys/${created.body.id}/rotate`, undefined],
      ['DELETE', `/api-keys/${created.body.id}`, undefined],
    ] as const) {
      const res = await as(noMfa, method, url, body);
      expect({ method, url, status: res.status, code: res.body.code, error: res.body.error }).toEqual({ method, url, status: 403, code: 'MFA_REQUIRED', error: 'MFA required' });
    }
    expect((await as(noMfa, 'GET', '/api-keys')).status).toBe(200);
    expect((await as(noMfa, 'GET', `/api-keys/${created.body.id}`)).status).toBe(200);
    expect(t.db.select().from(apiKeys).all()).toHaveLength(1);
  });

  it('01§5.5 key management refuses API keys, even a * key (403 SESSION_REQUIRED)', async () => {
    const created = await create({ orgId: w.orgA1.id, name: 'all', scopes: ['*'] });
    const key: string = created.body.key;
    for (const [method, url, body] of [
      ['GET', '/api-keys', undefined],
      ['GET', `/api-keys/${created.body.id}`, undefined],
      ['POST', '/api-keys', { orgId: w.orgA1.id, name: 'child' }],
      ['PATCH', `/api-keys/${created.body.id}`, { name: 'x' }],
      ['POST', `/api-keys/${created.body.id}/rotate`, undefined],
      ['DELETE', `/api-keys/${created.body.id}`, undefined],
      ['GET', '/enrollment-keys', undefined],
      ['POST', '/enrollment-keys', { orgId: w.orgA1.id, name: 'e' }],
    ] as const) {
      const res = await call(method, `${API}${url}`, { apiKey: key, ...(body ? { body } : {}) });
      expect({ url, method, status: res.status, code: res.body.code }).toEqual({ url, method, status: 403, code: 'SESSION_REQUIRED' });
    }
    expect(t.db.select().from(apiKeys).all()).toHaveLength(1);
    expect(t.db.select().from(apiKeys).get()?.status).toBe('active');
  });

  it('01§4.1 partner callers manage keys of accessible organizations only: 404 for keys out of reach, 403 naming one', async () => {
    const a1 = await create({ orgId: w.orgA1.id, name: 'a1' });
    const a2 = await create({ orgId: w.orgA2.id, name: 'a2' });
    const b1 = await create({ orgId: w.orgB1.id, name: 'b1' });

    const names = async (token: string) => (await as(token, 'GET', '/api-keys')).body.data.map((k: any) => k.name).sort();
    expect(await names(w.tokens.system)).toEqual(['a1', 'a2', 'b1']);
    expect(await names(w.tokens.aAdmin)).toEqual(['a1', 'a2']);
    expect(await names(w.tokens.aSelAdmin)).toEqual(['a1']);
    expect(await names(w.tokens.aNone)).toEqual([]);
    expect(await names(w.tokens.bAdmin)).toEqual(['b1']);
    expect(await names(w.tokens.orgUser)).toEqual(['a1']);

    // Keys out of reach do not exist for the caller.
    for (const [method, url, body] of [
      ['GET', `/api-keys/${a2.body.id}`, undefined],
      ['PATCH', `/api-keys/${a2.body.id}`, { name: 'mine' }],
      ['POST', `/api-keys/${a2.body.id}/rotate`, undefined],
      ['DELETE', `/api-keys/${a2.body.id}`, undefined],
    ] as const) {
      const res = await as(w.tokens.aSelAdmin, method, url, body);
      expect({ url, method, status: res.status }).toEqual({ url, method, status: 404 });
      expect((await as(w.tokens.bAdmin, method, url, body)).status).toBe(404);
    }
    expect((await as(w.tokens.bAdmin, 'GET', `/api-keys/${a1.body.id}`)).status).toBe(404);
    expect((await as(w.tokens.aAdmin, 'GET', `/api-keys/${b1.body.id}`)).status).toBe(404);

    // Naming an organization out of reach is 403.
    for (const res of [
      await as(w.tokens.aSelAdmin, 'POST', '/api-keys', { orgId: w.orgA2.id, name: 'x' }),
      await as(w.tokens.bAdmin, 'POST', '/api-keys', { orgId: w.orgA1.id, name: 'x' }),
      await as(w.tokens.aSelAdmin, 'GET', `/api-keys?orgId=${w.orgA2.id}`),
      await as(w.tokens.aNone, 'GET', `/api-keys?orgId=${w.orgA1.id}`),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('Access to this organization denied');
    }
    expect((await as(w.tokens.aSelAdmin, 'POST', '/api-keys', { orgId: w.orgA1.id, name: 'ok' })).status).toBe(201);
    expect((await as(w.tokens.aAdmin, 'PATCH', `/api-keys/${a2.body.id}`, { name: 'renamed' })).status).toBe(200);
    expect(t.db.select().from(apiKeys).where(eq(apiKeys.id, a2.body.id)).get()?.name).toBe('renamed');
  });

  it('01§4.1 organization callers manage only their own organization, within their own permissions', async () => {
    // Org Admin holds organizations:read only: it reads keys but cannot write them.
    const denied = await as(w.tokens.orgUser, 'POST', '/api-keys', { orgId: w.orgA1.id, name: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('Permission denied');

    const roleId = seedOrgRole(t, w.orgA1.id, ['organizations:read', 'organizations:write', 'devices:read']);
    const writer = await seedUser(t, { email: 'writer@a1.test', org: { orgId: w.orgA1.id, roleId }, login: 'mint', mfa: true });
    const mine = await as(writer.token, 'POST', '/api-keys', { orgId: w.orgA1.id, name: 'mine', scopes: ['devices:read'] });
    expect(mine.status).toBe(201);
    expect(mine.body.createdBy).toBe(writer.id);
    const elsewhere = await as(writer.token, 'POST', '/api-keys', { orgId: w.orgA2.id, name: 'x' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error).toBe('Access to this organization denied');
    // A key cannot carry more than its creator holds.
    const wider = await as(writer.token, 'POST', '/api-keys', { orgId: w.orgA1.id, name: 'x', scopes: ['*'] });
    expect(wider.status).toBe(403);
    expect(wider.body.code).toBe('SCOPE_NOT_HELD');
    expect((await as(writer.token, 'PATCH', `/api-keys/${mine.body.id}`, { scopes: ['devices:delete'] })).body.code).toBe('SCOPE_NOT_HELD');

    // Organization-wide keys are not for users restricted to some sites.
    const restricted = await seedUser(t, { email: 'restricted@a1.test', org: { orgId: w.orgA1.id, roleId, siteIds: [w.siteA1a.id] }, login: 'mint', mfa: true });
    const res = await as(restricted.token, 'POST', '/api-keys', { orgId: w.orgA1.id, name: 'x' });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('Access to this site denied');
    expect((await as(restricted.token, 'DELETE', `/api-keys/${mine.body.id}`)).status).toBe(403);
    expect((await as(restricted.token, 'GET', `/api-keys/${mine.body.id}`)).status).toBe(200);
  });

  it('01§4.1 a retried create with the same Idempotency-Key answers the first response and creates one key', async () => {
    const headers = { 'idempotency-key': 'create-ci-key-1' };
    const body = { orgId: w.orgA1.id, name: 'ci' };
    const first = await as(w.tokens.system, 'POST', '/api-keys', body, headers);
    const second = await as(w.tokens.system, 'POST', '/api-keys', body, headers);
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(t.db.select().from(apiKeys).all()).toHaveLength(1);

    const changed = await as(w.tokens.system, 'POST', '/api-keys', { ...body, name: 'other' }, headers);
    expect(changed.status).toBe(422);
    expect(changed.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(t.db.select().from(apiKeys).all()).toHaveLength(1);
    // The replay store keeps the response, not the key's hash.
    expect((await as(w.tokens.system, 'POST', '/api-keys', body, { 'idempotency-key': 'another' })).status).toBe(201);
  });

  it('01§6 every key operation is audited with actor, action and resource', async () => {
    const created = await create({ orgId: w.orgA1.id, name: 'audited' });
    await as(w.tokens.system, 'PATCH', `/api-keys/${created.body.id}`, { name: 'audited-2' });
    await as(w.tokens.system, 'POST', `/api-keys/${created.body.id}/rotate`);
    await as(w.tokens.system, 'DELETE', `/api-keys/${created.body.id}`);
    const entries = t.db.select().from(auditLogs).where(eq(auditLogs.resourceId, created.body.id)).all();
    expect(entries.map((e) => e.action)).toEqual(['api_key.create', 'api_key.update', 'api_key.rotate', 'api_key.revoke']);
    for (const entry of entries) {
      expect(entry).toMatchObject({ actorType: 'user', actorId: w.users.system.id, orgId: w.orgA1.id, resourceType: 'api_key', result: 'success' });
      expect(JSON.stringify(entry)).not.toContain(created.body.key);
    }
    // A failed operation leaves no entry.
    await as(w.tokens.system, 'DELETE', `/api-keys/${created.body.id}`);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.resourceId, created.body.id)).all()).toHaveLength(4);
  });
});
