import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { auditLogs, idempotencyKeys, organizations, partners, sites } from '../../src/server/db/schema/index.js';
import { purgeIdempotencyKeys } from '../../src/server/http/idempotency.js';
import { type TestApp } from '../helpers/server.js';
import { type World, type WorldCaller } from '../helpers/seed.js';

const API = '/api/v1';

/** Issue text: "POST endpoints that create honour an Idempotency-Key header: the same key and body from the
 * same caller within 24 hours returns the first response without creating again; the same key with a
 * different body is 422". */
describe('Idempotency-Key on creating POSTs', () => {
  let t: TestApp;
  let w: World;
  const post = (who: WorldCaller, path: string, body: unknown, key?: string) =>
    t.call('POST', `${API}${path}`, {
      token: w.tokens[who],
      body,
      ...(key !== undefined ? { headers: { 'idempotency-key': key } } : {}),
    });
  const count = (
    table: typeof partners | typeof organizations | typeof sites | typeof idempotencyKeys | typeof auditLogs,
  ) => t.db.select().from(table).all().length;

  useWorld({}, (app, world) => ([t, w] = [app, world]));

  it('idempotency: the same key and body twice answers the first 201 again, creates once, and marks the replay', async () => {
    const audits = count(auditLogs);
    const first = await post('system', '/orgs/partners', { name: 'Once', slug: 'once' }, 'key-1');
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await post('system', '/orgs/partners', { slug: 'once', name: 'Once' }, 'key-1');
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(t.db.select().from(partners).where(eq(partners.slug, 'once')).all()).toHaveLength(1);
    expect(count(auditLogs)).toBe(audits + 1);
    // Without the key a repeat really is a second attempt.
    expect((await post('system', '/orgs/partners', { name: 'Once', slug: 'once' })).status).toBe(409);
  });

  it('idempotency: the stored replay is sealed, so a secret shown once (a new API key) is never kept in plaintext', async () => {
    const first = await post('system', '/orgs/partners', { name: 'Sealed Partner', slug: 'sealed' }, 'key-sealed');
    expect(first.status).toBe(201);
    const [record] = t.db.select().from(idempotencyKeys).all();
    expect(record?.body).toMatch(/^v1\./);
    expect(record?.body).not.toContain('Sealed Partner');
    expect(record?.body).not.toContain(first.body.id);
    const replay = await post('system', '/orgs/partners', { name: 'Sealed Partner', slug: 'sealed' }, 'key-sealed');
    expect(replay.body).toEqual(first.body);
  });

  it('idempotency: the same key with a different body is 422 and creates nothing', async () => {
    expect((await post('aAdmin', '/orgs/organizations', { name: 'First', slug: 'first' }, 'k')).status).toBe(201);
    const other = await post('aAdmin', '/orgs/organizations', { name: 'Second', slug: 'second' }, 'k');
    expect(other).toMatchObject({ status: 422, body: { code: 'IDEMPOTENCY_KEY_REUSED', error: expect.any(String) } });
    expect(t.db.select().from(organizations).where(eq(organizations.slug, 'second')).all()).toEqual([]);
  });

  it('idempotency: keys are per caller and per endpoint', async () => {
    const a = await post('aAdmin', '/orgs/organizations', { name: 'Shared', slug: 'shared' }, 'same-key');
    const b = await post('bAdmin', '/orgs/organizations', { name: 'Shared', slug: 'shared' }, 'same-key');
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(a.body.partnerId).toBe(w.partnerA.id);
    expect(b.body.partnerId).toBe(w.partnerB.id);
    expect(b.body.id).not.toBe(a.body.id);
    const site = await post('aAdmin', '/orgs/sites', { name: 'Shared', orgId: w.orgA1.id }, 'same-key');
    expect(site.status).toBe(201);
    expect(site.body.orgId).toBe(w.orgA1.id);
  });

  it('idempotency: a failed create leaves nothing behind, so a retry with the same key runs again (409 stays 409)', async () => {
    const first = await post('system', '/orgs/partners', { name: 'Taken', slug: 'partner-a' }, 'retry-key');
    expect(first).toMatchObject({ status: 409, body: { code: 'SLUG_TAKEN' } });
    expect(count(idempotencyKeys)).toBe(0);
    const again = await post('system', '/orgs/partners', { name: 'Taken', slug: 'partner-a' }, 'retry-key');
    expect(again).toMatchObject({ status: 409, body: { code: 'SLUG_TAKEN' } });
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(count(idempotencyKeys)).toBe(0);
    expect(count(partners)).toBe(2);

    // A validation failure does not claim the key either; the corrected body then succeeds with it.
    expect((await post('system', '/orgs/partners', { name: '', slug: 'fixed' }, 'fix-key')).status).toBe(400);
    expect(count(idempotencyKeys)).toBe(0);
    expect((await post('system', '/orgs/partners', { name: 'Fixed', slug: 'fixed' }, 'fix-key')).status).toBe(201);
    expect(count(idempotencyKeys)).toBe(1);
  });

  it('idempotency: after 24 hours the key is forgotten; a periodic purge removes old records', async () => {
    const body = { name: 'Daily', orgId: w.orgA1.id };
    expect((await post('orgUser', '/orgs/sites', body, 'daily')).status).toBe(201);
    expect((await post('orgUser', '/orgs/sites', body, 'daily')).headers['idempotent-replayed']).toBe('true');
    expect(t.db.select().from(sites).where(eq(sites.name, 'Daily')).all()).toHaveLength(1);
    const old = new Date(Date.now() - 24 * 3600 * 1000 - 1000).toISOString();
    t.db.update(idempotencyKeys).set({ createdAt: old }).run();
    const later = await post('orgUser', '/orgs/sites', body, 'daily');
    expect(later.status).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(t.db.select().from(sites).where(eq(sites.name, 'Daily')).all()).toHaveLength(2);

    t.db.update(idempotencyKeys).set({ createdAt: old }).run();
    expect(purgeIdempotencyKeys(t.db)).toBe(1);
    expect(count(idempotencyKeys)).toBe(0);
  });

  it('idempotency: a key in flight is 409; one abandoned in flight for minutes is taken over', async () => {
    const body = { name: 'Flight', orgId: w.orgA1.id };
    expect((await post('orgUser', '/orgs/sites', body, 'flight')).status).toBe(201);
    // Pretend the first request is still running.
    t.db.update(idempotencyKeys).set({ status: 0, body: '' }).run();
    expect(await post('orgUser', '/orgs/sites', body, 'flight')).toMatchObject({
      status: 409,
      body: { code: 'IDEMPOTENCY_IN_PROGRESS' },
    });
    // ... or died long ago.
    t.db
      .update(idempotencyKeys)
      .set({ createdAt: new Date(Date.now() - 10 * 60 * 1000).toISOString() })
      .run();
    const retried = await post('orgUser', '/orgs/sites', body, 'flight');
    expect(retried.status).toBe(201);
    expect((await post('orgUser', '/orgs/sites', body, 'flight')).body).toEqual(retried.body);
  });

  it('idempotency: the key must be 1-255 characters', async () => {
    expect(await post('system', '/orgs/partners', { name: 'K', slug: 'k' }, 'x'.repeat(256))).toMatchObject({
      status: 400,
      body: { error: 'Idempotency-Key must be 1-255 characters' },
    });
    expect((await post('system', '/orgs/partners', { name: 'K', slug: 'k' }, '')).status).toBe(400);
    expect(count(partners)).toBe(2);
    expect((await post('system', '/orgs/partners', { name: 'K', slug: 'k' }, 'x'.repeat(255))).status).toBe(201);
  });
});
