import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ssoProviders, users } from '../../src/server/db/schema/index.js';
import { issueUserToken } from '../../src/server/modules/identity/user-tokens.js';
import { startIdp, type TestIdp } from '../helpers/oidc-provider.js';
import { ROLES, SEED_PASSWORD, adminToken, seedOrg, seedPartner, seedRole, seedUser } from '../helpers/seed.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from '../helpers/server.js';
import { totp } from '../helpers/totp.js';

let idp: TestIdp;
let t: TestApp;
let admin: string;
let partnerId: string;
let orgId: string;

beforeAll(async () => {
  idp = await startIdp('http://127.0.0.1:3000/api/v1/sso/callback');
});
afterAll(async () => {
  await idp.close();
});
beforeEach(async () => {
  // The plain-http test provider on loopback, through the server's own URL guard with loopback allowed.
  t = await createTestApp({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32' });
  Object.assign(t.services.sso.transport, { allowHttp: true, fetch: t.services.outbound.fetcher({ httpsOnly: false }) });
  admin = await adminToken(t, { mfa: true });
  partnerId = seedPartner(t, { name: 'MSP', slug: 'msp' }).id;
  orgId = seedOrg(t, partnerId, { name: 'Customer', slug: 'customer' }).id;
});
afterEach(async () => {
  await t.close();
});

function create(body: Record<string, unknown>, token = admin) {
  return t.call('POST', '/api/v1/sso/providers', { token, body: { orgId, name: 'Corp IdP', type: 'oidc', defaultRoleId: ROLES.orgViewer, ...body } });
}

describe('SSO providers (01 §2.9, §4.7)', () => {
  it('01§2.9 nine presets: four OpenID Connect, five SAML; the identity platform adds the groups scope', async () => {
    const res = await t.call('GET', '/api/v1/sso/presets', { token: admin });
    expect(res.status).toBe(200);
    const presets = res.body.data as { id: string; type: string; scopes?: string }[];
    expect(presets).toHaveLength(9);
    expect(presets.filter((p) => p.type === 'oidc')).toHaveLength(4);
    expect(presets.filter((p) => p.type === 'saml')).toHaveLength(5);
    expect(presets.find((p) => p.id === 'okta')?.scopes).toContain('groups');
  });

  it('01§2.9 defaults: inactive, openid profile email, email/name mapping, autoProvision on, enforceSSO off; the secret sealed and never returned', async () => {
    const res = await create({ clientId: 'cid', clientSecret: 'top-secret-value' });
    expect(res.status, res.text).toBe(201);
    const p = res.body.data;
    expect(p).toMatchObject({ status: 'inactive', scopes: 'openid profile email', attributeMapping: { email: 'email', name: 'name' }, autoProvision: true, enforceSSO: false, hasClientSecret: true });
    expect(res.text).not.toContain('top-secret-value');
    expect(p.clientSecret).toBeUndefined();
    const row = t.db.select().from(ssoProviders).where(eq(ssoProviders.id, p.id)).get();
    expect(row?.clientSecretEnc).toMatch(/^v1\./);
    expect(row?.clientSecretEnc).not.toContain('top-secret-value');
    const got = await t.call('GET', `/api/v1/sso/providers/${p.id}`, { token: admin });
    expect(got.body.data.hasClientSecret).toBe(true);
    expect(got.text).not.toContain('top-secret-value');
    expect(got.text).not.toContain(row?.clientSecretEnc);
  });

  it("01§2.9 a preset pre-fills scopes and mapping", async () => {
    const res = await create({ preset: 'okta' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.scopes).toBe('openid profile email groups');
    expect(res.body.data.attributeMapping.groups).toBe('groups');
    expect((await create({ preset: 'no-such' })).status).toBe(400);
    expect((await create({ preset: 'okta-saml' })).status).toBe(400);
  });

  it('01§2.9 defaultRoleId is required with autoProvision and must be an organization role of the target organization', async () => {
    const missing = await create({ defaultRoleId: undefined });
    expect(missing.status).toBe(400);
    expect(missing.text).toContain('defaultRoleId');
    expect((await create({ defaultRoleId: undefined, autoProvision: false })).status).toBe(201);
    expect((await create({ defaultRoleId: ROLES.partnerAdmin })).status).toBe(400);
    const otherOrg = seedOrg(t, seedPartner(t, { name: 'Other MSP', slug: 'other-msp' }).id, { name: 'X', slug: 'x' });
    const foreignRole = await t.call('POST', '/api/v1/roles', { token: admin, body: { name: 'Foreign', scope: 'organization', orgId: otherOrg.id, permissions: [] } });
    expect(foreignRole.status, foreignRole.text).toBe(201);
    expect((await create({ defaultRoleId: foreignRole.body.id ?? foreignRole.body.data?.id })).status).toBe(400);
  });

  it('01§4.7 an issuer is discovered: the four endpoint URLs are filled', async () => {
    const res = await create({ issuer: idp.issuer, clientId: idp.clientId });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({
      issuer: idp.issuer,
      authorizationUrl: `${idp.issuer}/auth`,
      tokenUrl: `${idp.issuer}/token`,
      userInfoUrl: `${idp.issuer}/me`,
      jwksUrl: `${idp.issuer}/jwks`,
    });
  });

  it('01§4.7 a failed discovery only logs a warning: the provider is still created', async () => {
    const res = await create({ issuer: 'http://127.0.0.1:9/nowhere' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.authorizationUrl).toBeNull();
  });

  it('01§4.7 discovery goes through the outbound URL guard: a loopback issuer is refused without SVC_OUTBOUND_ALLOW', async () => {
    const guarded = await createTestApp();
    // Plain http admitted, so that only the guard's address check stands between the server and the loopback issuer.
    Object.assign(guarded.services.sso.transport, { allowHttp: true, fetch: guarded.services.outbound.fetcher({ httpsOnly: false }) });
    try {
      const token = await adminToken(guarded, { mfa: true });
      const org = seedOrg(guarded, seedPartner(guarded, { name: 'MSP', slug: 'msp' }).id, { name: 'C', slug: 'c' }).id;
      const body = { orgId: org, name: 'Corp IdP', type: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: 'top-secret', autoProvision: false };
      const res = await guarded.call('POST', '/api/v1/sso/providers', { token, body });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.authorizationUrl).toBeNull();
      const test = await guarded.call('POST', `/api/v1/sso/providers/${res.body.data.id}/test`, { token });
      expect(test.status).toBe(400);
      expect(test.body.code).toBe('oidc_discovery_failed');
    } finally {
      await guarded.close();
    }
  });

  it('01§4.7 test checks the discovery document; SAML providers cannot be tested', async () => {
    const good = await create({ issuer: idp.issuer });
    const ok = await t.call('POST', `/api/v1/sso/providers/${good.body.data.id}/test`, { token: admin });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ success: true, message: 'Provider configuration is valid', discovery: { issuer: idp.issuer, tokenEndpoint: `${idp.issuer}/token` } });
    const bad = await create({ issuer: 'http://127.0.0.1:9/nowhere' });
    const failed = await t.call('POST', `/api/v1/sso/providers/${bad.body.data.id}/test`, { token: admin });
    expect(failed.status).toBe(400);
    expect(failed.body.code).toBe('oidc_discovery_failed');
    const saml = await create({ type: 'saml', preset: 'okta-saml' });
    expect((await t.call('POST', `/api/v1/sso/providers/${saml.body.data.id}/test`, { token: admin })).status).toBe(400);
  });

  it('01§3 status: activating a provider deactivates the active one; check names the active provider', async () => {
    const a = (await create({ name: 'A' })).body.data.id;
    const b = (await create({ name: 'B', enforceSSO: true })).body.data.id;
    const none = await t.call('GET', `/api/v1/sso/check/${orgId}`);
    expect(none.body).toEqual({ ssoEnabled: false, provider: null });
    expect((await t.call('POST', `/api/v1/sso/providers/${a}/status`, { token: admin, body: { status: 'active' } })).body.data.status).toBe('active');
    expect((await t.call('POST', `/api/v1/sso/providers/${b}/status`, { token: admin, body: { status: 'active' } })).status).toBe(200);
    const list = await t.call('GET', `/api/v1/sso/providers?orgId=${orgId}`, { token: admin });
    expect(Object.fromEntries(list.body.data.map((p: { name: string; status: string }) => [p.name, p.status]))).toEqual({ A: 'inactive', B: 'active' });
    const check = await t.call('GET', `/api/v1/sso/check/${orgId}`);
    expect(check.status).toBe(200);
    expect(check.body).toEqual({ ssoEnabled: true, provider: { name: 'B', type: 'oidc', enforceSSO: true } });
    expect((await t.call('POST', `/api/v1/sso/providers/${b}/status`, { token: admin, body: { status: 'paused' } })).status).toBe(400);
  });

  it('01§4.7 update (PATCH) and delete; clearing an OIDC issuer is refused', async () => {
    const id = (await create({ issuer: idp.issuer, clientSecret: 'one' })).body.data.id;
    const patched = await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { name: 'Renamed', allowedDomains: 'customer.test', clientSecret: null } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.data).toMatchObject({ name: 'Renamed', allowedDomains: 'customer.test', hasClientSecret: false });
    const cleared = await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { issuer: null } });
    expect(cleared.status).toBe(400);
    expect(cleared.body.code).toBe('oidc_issuer_required');
    const off = await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { defaultRoleId: null } });
    expect(off.status).toBe(400);
    expect((await t.call('DELETE', `/api/v1/sso/providers/${id}`, { token: admin })).body).toEqual({ success: true });
    const gone = await t.call('GET', `/api/v1/sso/providers/${id}`, { token: admin });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('Provider not found');
  });

  it('05 wire notes: writes need sso:admin with MFA; other tenants get 403 Access denied; no organization → 400', async () => {
    const noMfa = await adminToken(t, { mfa: false });
    expect((await create({}, noMfa)).status).toBe(403);
    const viewer = await seedUser(t, { email: 'viewer@customer.test', org: { orgId, roleId: ROLES.orgViewer }, login: 'mint', mfa: true });
    expect((await create({}, viewer.token)).status).toBe(403);
    const orgAdmin = await seedUser(t, { email: 'boss@customer.test', org: { orgId }, login: 'mint', mfa: true });
    const own = await t.call('POST', '/api/v1/sso/providers', { token: orgAdmin.token, body: { name: 'Mine', type: 'oidc', defaultRoleId: ROLES.orgViewer } });
    expect(own.status, own.text).toBe(201);
    expect(own.body.data.orgId).toBe(orgId);
    const stranger = await seedUser(t, { email: 'x@other.test', partner: { partnerId: seedPartner(t, { name: 'P2', slug: 'p2' }).id, orgAccess: 'all' }, login: 'mint', mfa: true });
    const denied = await t.call('GET', `/api/v1/sso/providers/${own.body.data.id}`, { token: stranger.token });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('Access denied');
    const noOrg = await t.call('GET', '/api/v1/sso/providers', { token: admin });
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.error).toBe('Organization ID required');
  });

  it('01§2.9 defaultRoleId hands its permissions to every provisioned user: a caller names only a role whose permissions it holds (403 PERMISSION_NOT_HELD)', async () => {
    const ssoOnly = seedRole(t, { scope: 'organization', orgId, permissions: ['sso:admin', 'users:read'] });
    const admin2 = await seedUser(t, { email: 'idp-admin@customer.test', org: { orgId, roleId: ssoOnly }, login: 'mint', mfa: true });
    const own = (body: Record<string, unknown>) => t.call('POST', '/api/v1/sso/providers', { token: admin2.token, body: { name: 'Mine', type: 'oidc', ...body } });
    const escalating = await own({ defaultRoleId: ROLES.orgAdmin });
    expect(escalating.status, escalating.text).toBe(403);
    expect(escalating.body.code).toBe('PERMISSION_NOT_HELD');
    const narrow = seedRole(t, { scope: 'organization', orgId, permissions: ['users:read'] });
    const created = await own({ defaultRoleId: narrow });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id as string;
    const patch = (body: Record<string, unknown>) => t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin2.token, body });
    expect((await patch({ defaultRoleId: ROLES.orgAdmin })).status).toBe(403);
    // Set by the system administrator, a default role the caller could not name leaves it able to rename the provider.
    expect((await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { defaultRoleId: ROLES.orgAdmin } })).status).toBe(200);
    expect((await patch({ name: 'Renamed' })).status).toBe(200);
  });

  it("01§5.10 who sets up an organization's sign-in can sign in as its users: creating, activating or re-pointing a provider needs every permission of the roles the organization's users hold (403 PERMISSION_NOT_HELD)", async () => {
    await seedUser(t, { email: 'boss@customer.test', org: { orgId, roleId: ROLES.orgAdmin }, login: false });
    // A delegated SSO administrator: may manage SSO providers, nothing else.
    const ssoRole = seedRole(t, { scope: 'organization', orgId, permissions: ['sso:admin', 'organizations:read'] });
    const delegate = await seedUser(t, { email: 'sso-delegate@customer.test', org: { orgId, roleId: ssoRole }, login: 'mint', mfa: true });
    // A provider at an IdP the delegate controls would sign its "boss@customer.test" in as the Org Admin (matched by e-mail).
    const refused = await create({ issuer: idp.issuer, clientId: idp.clientId, autoProvision: false, defaultRoleId: null }, delegate.token);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body.code).toBe('PERMISSION_NOT_HELD');
    expect(refused.body.missing).toEqual(expect.arrayContaining(['users:*', 'devices:*']));

    const id = (await create({ issuer: idp.issuer, clientId: idp.clientId })).body.data.id as string;
    const activate = await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: delegate.token, body: { status: 'active' } });
    expect(activate.status, activate.text).toBe(403);
    expect(activate.body.code).toBe('PERMISSION_NOT_HELD');
    expect((await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: admin, body: { status: 'active' } })).status).toBe(200);

    const patch = (body: Record<string, unknown>) => t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: delegate.token, body });
    for (const trust of [
      { issuer: 'https://idp.attacker.test' },
      { clientId: 'another-client' },
      { clientSecret: 'another-secret' },
      { tokenUrl: 'https://idp.attacker.test/token' },
      { jwksUrl: 'https://idp.attacker.test/jwks' },
      { allowedDomains: 'customer.test' },
      { attributeMapping: { email: 'nickname', name: 'name' } },
    ]) {
      const res = await patch(trust);
      expect(res.status, `${JSON.stringify(trust)}: ${res.text}`).toBe(403);
      expect(res.body.code).toBe('PERMISSION_NOT_HELD');
    }
    expect(t.db.select().from(ssoProviders).where(eq(ssoProviders.id, id)).get()).toMatchObject({ issuer: idp.issuer, clientId: idp.clientId, allowedDomains: null });
    // What does not change whom the provider vouches for stays the delegate's to manage; so does restating a setting.
    expect((await patch({ name: 'Renamed' })).status).toBe(200);
    expect((await patch({ issuer: idp.issuer, clientId: idp.clientId })).status).toBe(200);
    expect((await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: delegate.token, body: { status: 'inactive' } })).status).toBe(200);
    expect((await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: admin, body: { status: 'active' } })).status).toBe(200);
    expect((await patch({ enforceSSO: true })).status).toBe(200);
    // Enforcement ends the sessions of the organization's users, the delegate's own included (01 §5.12).
    expect((await patch({ name: 'Again' })).status).toBe(401);
  });

  it('05 4.7 a failed test answers 400 {success:false, error, code}', async () => {
    const bad = await create({ issuer: 'http://127.0.0.1:9/nowhere', clientId: 'cid', autoProvision: false, defaultRoleId: null });
    expect(bad.status, bad.text).toBe(201);
    const res = await t.call('POST', `/api/v1/sso/providers/${bad.body.data.id}/test`, { token: admin });
    expect(res.status, res.text).toBe(400);
    expect(res.body).toMatchObject({ success: false, code: 'oidc_discovery_failed' });
    expect(res.body.error).toMatch(/^Discovery failed: /);
  });

  it("01§4.7 a PATCH to another issuer whose discovery fails clears the previous issuer's endpoints (the first sign-in discovers again); given URLs win", async () => {
    const id = (await create({ issuer: idp.issuer, clientId: idp.clientId })).body.data.id as string;
    expect((await t.call('GET', `/api/v1/sso/providers/${id}`, { token: admin })).body.data.authorizationUrl).toBe(`${idp.issuer}/auth`);
    const patch = await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { issuer: 'http://127.0.0.1:9/new-tenant' } });
    expect(patch.status, patch.text).toBe(200);
    expect(patch.body.data).toMatchObject({ issuer: 'http://127.0.0.1:9/new-tenant', authorizationUrl: null, tokenUrl: null, userInfoUrl: null, jwksUrl: null });
    const given = await t.call('PATCH', `/api/v1/sso/providers/${id}`, {
      token: admin,
      body: { issuer: 'http://127.0.0.1:9/third-tenant', jwksUrl: 'http://127.0.0.1:9/third-tenant/keys' },
    });
    expect(given.status, given.text).toBe(200);
    expect(given.body.data).toMatchObject({ authorizationUrl: null, jwksUrl: 'http://127.0.0.1:9/third-tenant/keys' });
    // A PATCH that leaves the issuer alone keeps the endpoints.
    const renamed = await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { name: 'Renamed' } });
    expect(renamed.body.data.jwksUrl).toBe('http://127.0.0.1:9/third-tenant/keys');
  });
});

describe('SSO enforcement (01 §5.12)', () => {
  async function enforce(on: boolean, status: 'active' | 'testing' = 'active') {
    const id = (await create({ enforceSSO: on })).body.data.id;
    await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: admin, body: { status } });
  }

  it("01§5.12 enforceSSO on the active provider refuses password login to the organization's users, naming SSO", async () => {
    const user = await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    await enforce(true);
    const res = await t.call('POST', '/api/v1/auth/login', { body: { email: user.email, password: SEED_PASSWORD } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('SSO_REQUIRED');
    expect(res.body.error).toMatch(/single sign-on \(SSO\)/);
    // A wrong password still answers as any wrong password: enforcement says nothing about unknown accounts.
    const wrong = await t.call('POST', '/api/v1/auth/login', { body: { email: user.email, password: 'nope-nope-nope' } });
    expect(wrong.status).toBe(401);
  });

  it('01§5.12 without enforcement, or on a provider that is not active, password login works', async () => {
    const user = await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    await enforce(false);
    expect((await t.call('POST', '/api/v1/auth/login', { body: { email: user.email, password: SEED_PASSWORD } })).status).toBe(200);
    await enforce(true, 'testing');
    expect((await t.call('POST', '/api/v1/auth/login', { body: { email: user.email, password: SEED_PASSWORD } })).status).toBe(200);
  });

  it("01§5.12 accepting an invitation into an organization that enforces SSO activates the account but opens no password session (403 SSO_REQUIRED)", async () => {
    await enforce(true);
    const invited = await seedUser(t, { email: 'invited@customer.test', status: 'invited', org: { orgId, roleId: ROLES.orgTechnician }, login: false });
    const { token } = issueUserToken(t.db, invited.id, 'invite', 3_600_000);
    const res = await t.call('POST', '/api/v1/auth/accept-invite', { body: { token, password: 'Corr3ct-Horse-Battery!' } });
    expect(res.status, res.text).toBe(403);
    expect(res.body).toMatchObject({ code: 'SSO_REQUIRED', orgId, activated: true });
    expect(res.body.error).toMatch(/is active.*single sign-on \(SSO\)/);
    expect(res.body.tokens).toBeUndefined();
    expect(res.headers['set-cookie']).toBeUndefined();
    // Activated, so its holder can sign in through the identity provider; the password still opens nothing.
    expect(t.db.select().from(users).where(eq(users.id, invited.id)).get()?.status).toBe('active');
    expect((await t.call('POST', '/api/v1/auth/login', { body: { email: invited.email, password: 'Corr3ct-Horse-Battery!' } })).body.code).toBe('SSO_REQUIRED');
  });

  it('01§5.12 when enforcement begins (activated, or enforceSSO turned on) the sessions of the organization\'s users end; partner users keep theirs', async () => {
    const pat = await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: 'password' });
    const tech = await seedUser(t, { email: 'tech@msp.test', partner: { partnerId, orgAccess: 'all' }, login: 'password' });
    const me = (token: string) => t.call('GET', '/api/v1/users/me', { token });
    expect((await me(pat.token)).status).toBe(200);
    const id = (await create({ enforceSSO: false })).body.data.id;
    await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: admin, body: { status: 'active' } });
    expect((await me(pat.token)).status).toBe(200); // active but not enforcing: nothing ends
    const on = await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { enforceSSO: true } });
    expect(on.status, on.text).toBe(200);
    expect((await me(pat.token)).status).toBe(401);
    expect((await me(tech.token)).status).toBe(200);
    // Again with enforcement already on: nothing more ends (enforcement does not begin again).
    const sam = await seedUser(t, { email: 'sam@customer.test', org: { orgId }, login: 'mint' });
    expect((await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body: { name: 'Renamed' } })).status).toBe(200);
    expect((await me(sam.token)).status).toBe(200);
  });

  it('01§5.12 a password login waiting for its second factor when enforcement begins opens no session (403 SSO_REQUIRED)', async () => {
    const pat = await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: 'password' });
    const setup = await t.call('POST', '/api/v1/auth/mfa/setup', { token: pat.token });
    expect(setup.status, setup.text).toBe(200);
    expect((await t.call('POST', '/api/v1/auth/mfa/enable', { token: pat.token, body: { code: totp(setup.body.secret as string) } })).status).toBe(200);
    const login = await t.call('POST', '/api/v1/auth/login', { body: { email: pat.email, password: SEED_PASSWORD } });
    expect(login.body.mfaRequired).toBe(true);
    await enforce(true);
    const verify = await t.call('POST', '/api/v1/auth/mfa/verify', { body: { tempToken: login.body.tempToken, code: setup.body.recoveryCodes[0] } });
    expect(verify.status, verify.text).toBe(403);
    expect(verify.body.code).toBe('SSO_REQUIRED');
    expect(verify.body.tokens).toBeUndefined();
  });

  it("01§5.12 system and partner administrators are never locked out by a customer's enforcement", async () => {
    const partnerAdmin = await seedUser(t, { email: 'tech@msp.test', partner: { partnerId, orgAccess: 'all' }, login: false });
    await enforce(true);
    expect((await t.call('POST', '/api/v1/auth/login', { body: { email: partnerAdmin.email, password: SEED_PASSWORD } })).status).toBe(200);
    expect((await t.call('POST', '/api/v1/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status).toBe(200);
  });
});
