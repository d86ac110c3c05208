import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenSigner } from '../../src/server/security/tokens.js';
import { organizations, partnerUsers, rolePermissions, sessions, sites, users } from '../../src/server/db/schema/index.js';
import type { ReadCache } from '../../src/server/lib/read-cache.js';
import { createTestApp, loginAs, type TestApp } from '../helpers/server.js';
import { writeAsAnotherProcess } from '../helpers/other-process.js';
import { ROLES, seedOrg, seedPartner, seedUser } from '../helpers/seed.js';

/**
 * The callers of access tokens are kept while the database is unchanged (modules/identity/auth-service.ts):
 * every change that ends or narrows a session must show on the very next request, after the caller was
 * resolved (and kept) by the requests before it.
 */
describe('session callers kept between requests', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await t?.close();
    t = undefined;
  });

  const ME = '/api/v1/users/me';
  const ORGS = '/api/v1/orgs/organizations';

  async function technician(app: TestApp) {
    const partner = seedPartner(app, { name: 'Partner A', slug: 'partner-a' });
    seedOrg(app, partner.id, { name: 'Alpha One', slug: 'alpha-one' });
    return seedUser(app, {
      email: 'tech@a.test',
      partner: { partnerId: partner.id, roleId: ROLES.partnerTechnician, orgAccess: 'all' },
      login: 'mint',
    });
  }

  it('01§4.5 logout ends an access token on the next request, though it was just used', async () => {
    t = await createTestApp();
    const token = await loginAs(t);
    for (let i = 0; i < 3; i++) expect((await t.call('GET', ME, { token })).status).toBe(200);
    expect((await t.call('POST', '/api/v1/auth/logout', { token })).status).toBe(200);
    expect((await t.call('GET', ME, { token })).status).toBe(401);
  });

  it('01§4.5 a session revoked in the database ends its access token on the next request', async () => {
    t = await createTestApp();
    const tech = await technician(t);
    expect((await t.call('GET', ME, { token: tech.token })).status).toBe(200);
    expect((await t.call('GET', ME, { token: tech.token })).status).toBe(200);
    t.db.update(sessions).set({ revokedAt: new Date().toISOString() }).where(eq(sessions.userId, tech.id)).run();
    expect((await t.call('GET', ME, { token: tech.token })).status).toBe(401);
  });

  it('01§2.8 a removed partner link shows on the next request', async () => {
    t = await createTestApp();
    const tech = await technician(t);
    expect((await t.call('GET', ORGS, { token: tech.token })).status).toBe(200);
    t.db.delete(partnerUsers).where(eq(partnerUsers.userId, tech.id)).run();
    // Without its link the user is a standalone account: no partner scope, no organizations list.
    expect((await t.call('GET', ORGS, { token: tech.token })).status).toBe(403);
  });

  it('01§2.8 a permission taken from the role applies to the next request of a signed-in user', async () => {
    t = await createTestApp();
    const tech = await technician(t);
    expect((await t.call('GET', ORGS, { token: tech.token })).status).toBe(200);
    expect((await t.call('GET', ORGS, { token: tech.token })).status).toBe(200);
    t.db
      .delete(rolePermissions)
      .where(and(eq(rolePermissions.roleId, ROLES.partnerTechnician), eq(rolePermissions.resource, 'organizations')))
      .run();
    const denied = await t.call('GET', ORGS, { token: tech.token });
    expect(denied.status).toBe(403);
  });

  it('01§4.5 a user disabled by another process (another connection to the database) is refused from its next event-loop turn', async () => {
    t = await createTestApp();
    const tech = await technician(t);
    expect((await t.call('GET', ME, { token: tech.token })).status).toBe(200);
    await writeAsAnotherProcess(t.db.$client.name, 'UPDATE users SET status = ? WHERE id = ?', 'disabled', tech.id);
    expect((await t.call('GET', ME, { token: tech.token })).status).toBe(401);
    expect(t.db.select({ status: users.status }).from(users).where(eq(users.id, tech.id)).get()?.status).toBe('disabled');
  });

  it('01§4.5 a kept caller survives writes that cannot change it (a site, a user renamed to the same name); a rename applies at once', async () => {
    t = await createTestApp();
    const tech = await technician(t);
    const callers = (t.services.auth as unknown as { callers: ReadCache<unknown> }).callers;
    const kept = () => callers.lookup(tech.token) !== undefined;
    expect((await t.call('GET', ME, { token: tech.token })).status).toBe(200);
    expect(kept()).toBe(true);
    const [org] = t.db.select().from(organizations).all();
    t.db.insert(sites).values({ orgId: org?.id ?? '', name: 'Unrelated' }).run();
    const [user] = t.db.select({ name: users.name }).from(users).where(eq(users.id, tech.id)).all();
    t.db.update(users).set({ updatedAt: new Date().toISOString(), name: user?.name }).where(eq(users.id, tech.id)).run();
    expect(kept()).toBe(true);
    t.db.update(users).set({ name: 'Renamed Tech' }).where(eq(users.id, tech.id)).run();
    expect(kept()).toBe(false);
    expect((await t.call('GET', ME, { token: tech.token })).body.name).toBe('Renamed Tech');
  });

  it('01§4.5 an access token that expires while its caller is kept is refused on its first request after expiry', async () => {
    t = await createTestApp({ SVC_ACCESS_TOKEN_TTL_SECONDS: '60' });
    const token = await loginAs(t);
    expect((await t.call('GET', ME, { token })).status).toBe(200);
    // Only the clock moves (no write): the kept caller must not outlive the token.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
    expect((await t.call('GET', ME, { token })).status).toBe(401);
  });

  describe('verified tokens remembered by the signer (security/tokens.ts)', () => {
    const signer = new TokenSigner('s'.repeat(64));
    const access = { sub: 'user-1', sid: 'session-1', mfa: false, typ: 'access' as const };

    it('01§4.5 a remembered token is refused from its exp on, and as a token of the other kind', async () => {
      const token = await signer.sign(access, 60);
      expect(await signer.verify(token, 'access')).toMatchObject({ sub: 'user-1', sid: 'session-1' });
      expect(await signer.verify(token, 'access')).toMatchObject({ sub: 'user-1' });
      expect(await signer.verify(token, 'mfa_pending')).toBeNull();
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
      expect(await signer.verify(token, 'access')).toBeNull();
    });

    it('01§4.5 a token with the claims of a remembered one but another signature is refused', async () => {
      const token = await signer.sign(access, 600);
      expect(await signer.verify(token, 'access')).not.toBeNull();
      const [header, payload, signature = ''] = token.split('.');
      const forged = `${header}.${payload}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      expect(await signer.verify(forged, 'access')).toBeNull();
      const other = await new TokenSigner('t'.repeat(64)).sign(access, 600);
      expect(await signer.verify(other, 'access')).toBeNull();
    });
  });
});
