import { createHash, randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { auditLogs, organizationUsers, sessions, ssoIdentities, ssoLoginStates, users } from '../../src/server/db/schema/index.js';
import type { OidcTransport } from '../../src/server/modules/sso/oidc.js';
import { resign, startIdp, type SigningKey, type TestIdp } from '../helpers/oidc-provider.js';
import { signInAt } from '../helpers/sso-browser.js';
import { ROLES, adminToken, seedOrg, seedPartner, seedUser } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { totp } from '../helpers/totp.js';

const BASE = 'http://127.0.0.1:3000';
const CALLBACK = `${BASE}/api/v1/sso/callback`;

let idp: TestIdp;
let idp2: TestIdp;
let t: TestApp;
let admin: string;
let orgId: string;
let otherOrgId: string;

beforeAll(async () => {
  [idp, idp2] = await Promise.all([startIdp(CALLBACK), startIdp(CALLBACK)]);
});
afterAll(async () => {
  await Promise.all([idp.close(), idp2.close()]);
});

/** Token responses pass through here, so a test can make the provider answer wrongly. */
let alterIdToken: ((claims: Record<string, unknown>) => void) | null = null;
let signWith: { key: SigningKey; kid: string } | null = null;
const tokenBodies: URLSearchParams[] = [];

beforeEach(async () => {
  t = await createTestApp({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32' });
  // The plain-http test provider on loopback, through the server's own URL guard with loopback allowed.
  const guarded = t.services.outbound.fetcher({ httpsOnly: false });
  alterIdToken = null;
  signWith = null;
  tokenBodies.length = 0;
  const transport: OidcTransport = {
    allowHttp: true,
    fetch: async (url, options) => {
      const res = await guarded(url, options);
      if (!url.endsWith('/token')) return res;
      if (typeof options.body === 'string' || options.body instanceof URLSearchParams) tokenBodies.push(new URLSearchParams(options.body.toString()));
      if (!alterIdToken && !signWith) return res;
      const json = (await res.json()) as Record<string, unknown>;
      const key = signWith ?? { key: idp.privateKey, kid: idp.kid };
      if (typeof json.id_token === 'string') json.id_token = await resign(json.id_token, key.key, key.kid, alterIdToken ?? (() => {}));
      return new Response(JSON.stringify(json), { status: res.status, headers: { 'content-type': 'application/json' } });
    },
  };
  Object.assign(t.services.sso.transport, transport);
  admin = await adminToken(t, { mfa: true });
  const partner = seedPartner(t, { name: 'MSP', slug: 'msp' });
  orgId = seedOrg(t, partner.id, { name: 'Customer', slug: 'customer' }).id;
  otherOrgId = seedOrg(t, partner.id, { name: 'Other', slug: 'other' }).id;
});
afterEach(async () => {
  await t.close();
});

async function provider(overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call('POST', '/api/v1/sso/providers', {
    token: admin,
    body: { orgId, name: 'Test IdP', type: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, defaultRoleId: ROLES.orgViewer, ...overrides },
  });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.id as string;
  const active = await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: admin, body: { status: 'active' } });
  expect(active.status, active.text).toBe(200);
  return id;
}

function account(id: string, email: string, name = 'Pat Example') {
  idp.accounts.set(id, { email, name });
}

/** GET /sso/login → the provider's sign-in → our callback; answers the callback's redirect target. */
/** The cookie a sign-in's start leaves in the browser (`name=value`), which the callback must bring back. */
function browserCookie(start: { headers: Record<string, unknown> }): string {
  const lines = [start.headers['set-cookie']].flat().map(String);
  const line = lines.find((l) => l.startsWith('svc_sso_browser='));
  if (!line) throw new Error(`no sign-in cookie in ${JSON.stringify(lines)}`);
  return line.split(';')[0] ?? '';
}

/** GET /sso/login → the provider's sign-in → our callback (from the same browser); answers the callback's
 * redirect target. */
async function signIn(accountId: string, query = '', beforeCallback?: () => void): Promise<{ location: string; callbackPath: string; cookie: string }> {
  const start = await t.call('GET', `/api/v1/sso/login/${orgId}${query}`);
  expect(start.status, start.text).toBe(302);
  const cookie = browserCookie(start);
  const callbackUrl = await signInAt(String(start.headers.location), accountId, CALLBACK);
  beforeCallback?.();
  const callbackPath = callbackUrl.slice(BASE.length);
  const back = await t.call('GET', callbackPath, { headers: { cookie } });
  expect(back.status, back.text).toBe(302);
  return { location: String(back.headers.location), callbackPath, cookie };
}

function fragment(location: string): URLSearchParams {
  return new URLSearchParams(location.slice(location.indexOf('#') + 1));
}

describe('SSO OpenID Connect sign-in (01 §5.9, §5.10)', () => {
  it('01§5.9 the whole flow: PKCE S256 redirect, callback, #ssoCode=, single-use exchange, a working session', async () => {
    await provider();
    const user = await seedUser(t, { email: 'pat@customer.test', org: { orgId, roleId: ROLES.orgTechnician }, login: false });
    account('pat-1', 'Pat@Customer.test');

    const start = await t.call('GET', `/api/v1/sso/login/${orgId}`);
    const auth = new URL(String(start.headers.location));
    expect(auth.origin).toBe(idp.issuer);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(auth.searchParams.get('state')).toBeTruthy();
    expect(auth.searchParams.get('nonce')).toBeTruthy();
    expect(auth.searchParams.get('scope')).toBe('openid profile email');
    expect(auth.searchParams.get('redirect_uri')).toBe(CALLBACK);

    const { location } = await signIn('pat-1');
    expect(location.startsWith(`${BASE}/#ssoCode=`)).toBe(true);
    // The provider checked the PKCE verifier we sent against the challenge (it requires PKCE for this client).
    expect(tokenBodies.at(-1)?.get('code_verifier')).toMatch(/^[\w-]{43,128}$/);

    const code = fragment(location).get('ssoCode') ?? '';
    const exchanged = await t.call('POST', '/api/v1/sso/exchange', { body: { code } });
    expect(exchanged.status, exchanged.text).toBe(200);
    expect(exchanged.body.user).toMatchObject({ id: user.id, email: 'pat@customer.test' });
    const me = await t.call('GET', '/api/v1/users/me', { token: exchanged.body.accessToken });
    expect(me.status, me.text).toBe(200);
    expect(me.body.id ?? me.body.user?.id).toBe(user.id);

    const again = await t.call('POST', '/api/v1/sso/exchange', { body: { code } });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('INVALID_SSO_CODE');

    // 01 §2.9 identity link: subject, e-mail, profile, tokens sealed (never in the clear).
    const link = t.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, user.id)).get();
    expect(link).toMatchObject({ externalId: 'pat-1', email: 'pat@customer.test' });
    expect(link?.tokensEnc).toMatch(/^v1\./);
    expect(link?.lastLoginAt).toBeTruthy();
  });

  it('01§5.9 a wrong state is rejected (400)', async () => {
    await provider();
    const cookie = browserCookie(await t.call('GET', `/api/v1/sso/login/${orgId}`));
    const res = await t.call('GET', `/api/v1/sso/callback?code=abc&state=${randomBytes(16).toString('hex')}`, { headers: { cookie } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('SSO_STATE_MISMATCH');
  });

  it('01§5.9 login CSRF: a callback URL opened in a browser that did not start the sign-in is refused, and the sign-in stays usable where it started', async () => {
    await provider();
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const start = await t.call('GET', `/api/v1/sso/login/${orgId}`);
    expect(String(start.headers['set-cookie'])).toMatch(/svc_sso_browser=[0-9a-f]{64}; Max-Age=600; Path=\/api\/v1\/sso\/callback; HttpOnly; SameSite=Lax/);
    const callbackPath = (await signInAt(String(start.headers.location), 'pat-1', CALLBACK)).slice(BASE.length);
    const victim = await t.call('GET', callbackPath);
    expect(victim.status).toBe(400);
    expect(victim.body.code).toBe('SSO_STATE_MISMATCH');
    const otherBrowser = browserCookie(await t.call('GET', `/api/v1/sso/login/${orgId}`));
    expect((await t.call('GET', callbackPath, { headers: { cookie: otherBrowser } })).body.code).toBe('SSO_STATE_MISMATCH');
    const own = await t.call('GET', callbackPath, { headers: { cookie: browserCookie(start) } });
    expect(own.status, own.text).toBe(302);
    expect(String(own.headers.location)).toContain('#ssoCode=');
  });

  it('01§5.9 a state is used once: replaying the callback is rejected (400)', async () => {
    await provider();
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const { location, callbackPath, cookie } = await signIn('pat-1');
    expect(fragment(location).get('ssoCode')).toBeTruthy();
    const replay = await t.call('GET', callbackPath, { headers: { cookie } });
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('SSO_INVALID_STATE');
  });

  it('01§8 a sign-in started more than 10 minutes ago is rejected', async () => {
    await provider();
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const start = await t.call('GET', `/api/v1/sso/login/${orgId}`);
    const callbackUrl = await signInAt(String(start.headers.location), 'pat-1', CALLBACK);
    t.db.update(ssoLoginStates).set({ expiresAt: new Date(Date.now() - 1000).toISOString() }).run();
    const res = await t.call('GET', callbackUrl.slice(BASE.length), { headers: { cookie: browserCookie(start) } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('SSO_INVALID_STATE');
  });

  const refusals: [string, () => void, RegExp][] = [
    ['nonce', () => (alterIdToken = (c) => void (c.nonce = 'not-the-nonce')), /nonce/],
    ['audience', () => (alterIdToken = (c) => void (c.aud = 'another-client')), /aud/],
    ['expiry', () => (alterIdToken = (c) => void (c.exp = Math.floor(Date.now() / 1000) - 3600)), /exp/],
    ['issuer', () => (alterIdToken = (c) => void (c.iss = 'https://impostor.test')), /iss/],
  ];
  for (const [what, arrange, reason] of refusals) {
    it(`01§5.9 an ID token with a wrong ${what} is refused`, async () => {
      await provider();
      await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
      account('pat-1', 'pat@customer.test');
      arrange();
      const { location } = await signIn('pat-1');
      const answer = fragment(location);
      expect(answer.get('ssoCode')).toBeNull();
      expect(answer.get('ssoError')).toBe('SSO_TOKEN_REJECTED');
      expect(answer.get('ssoErrorDescription')).toMatch(reason);
    });
  }

  it("01§5.9 an ID token not signed by a key of the provider's JWKS is refused", async () => {
    await provider();
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const { generateKeyPair } = await import('jose');
    signWith = { key: (await generateKeyPair('RS256')).privateKey, kid: idp.kid };
    const { location } = await signIn('pat-1');
    expect(fragment(location).get('ssoError')).toBe('SSO_TOKEN_REJECTED');
    expect(fragment(location).get('ssoErrorDescription')).toMatch(/signature/i);
  });

  it('01§5.9 PKCE is verified by the provider: a wrong code verifier gets no tokens', async () => {
    await provider();
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const { location } = await signIn('pat-1', '', () => {
      const wrong = t.services.sso['box' as never] as { seal(v: string): string };
      t.db.update(ssoLoginStates).set({ codeVerifierEnc: wrong.seal(randomBytes(32).toString('base64url')) }).run();
    });
    expect(fragment(location).get('ssoError')).toBe('SSO_TOKEN_REJECTED');
    expect(fragment(location).get('ssoErrorDescription')).toMatch(/invalid_grant|PKCE|code_verifier/i);
  });

  it('01§2.9 allowedDomains: an e-mail outside them is refused', async () => {
    await provider({ allowedDomains: 'example.org, customer.example' });
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const { location } = await signIn('pat-1');
    expect(fragment(location).get('ssoError')).toBe('SSO_DOMAIN_NOT_ALLOWED');
  });

  it('01§5.10 no such user and autoProvision off: user not found', async () => {
    await provider({ autoProvision: false, defaultRoleId: null });
    account('new-1', 'newcomer@customer.test');
    const { location } = await signIn('new-1');
    expect(fragment(location).get('ssoError')).toBe('USER_NOT_FOUND');
    expect(t.db.select().from(users).where(eq(users.email, 'newcomer@customer.test')).get()).toBeUndefined();
  });

  it('01§5.10 autoProvision creates a passwordless user with defaultRoleId in the organization', async () => {
    await provider();
    account('new-1', 'newcomer@customer.test', 'New Comer');
    const { location } = await signIn('new-1');
    expect(fragment(location).get('ssoCode')).toBeTruthy();
    const created = t.db.select().from(users).where(eq(users.email, 'newcomer@customer.test')).get();
    expect(created).toMatchObject({ name: 'New Comer', status: 'active', passwordHash: null });
    const link = t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, created?.id ?? '')).get();
    expect(link).toMatchObject({ orgId, roleId: ROLES.orgViewer });
  });

  it("01§5.10 a user without an organization-user record for the provider's organization is rejected", async () => {
    await provider();
    await seedUser(t, { email: 'pat@other.test', org: { orgId: otherOrgId }, login: false });
    account('pat-2', 'pat@other.test');
    const { location } = await signIn('pat-2');
    expect(fragment(location).get('ssoError')).toBe('SSO_NO_ORG_ACCESS');
  });

  it('01§5.10 a returning user keeps one identity link, updated', async () => {
    await provider();
    const user = await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    await signIn('pat-1');
    await signIn('pat-1');
    expect(t.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, user.id)).all()).toHaveLength(1);
  });

  it("01§2.9/§5.10 one identity link per user and provider: a new subject with the user's e-mail updates the link", async () => {
    const providerId = await provider();
    const user = await seedUser(t, { email: 'pat@customer.test', org: { orgId, roleId: ROLES.orgTechnician }, login: false });
    account('pat-old', 'pat@customer.test');
    account('pat-new', 'pat@customer.test');
    expect(fragment((await signIn('pat-old')).location).get('ssoCode')).toBeTruthy();
    expect(fragment((await signIn('pat-new')).location).get('ssoCode')).toBeTruthy();
    const links = t.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, user.id)).all();
    expect(links.map((l) => [l.providerId, l.externalId])).toEqual([[providerId, 'pat-new']]);
  });

  it("01§5.10 re-pointing a provider at another issuer removes its identity links: the new issuer's subject is not whoever had it at the old one", async () => {
    const providerId = await provider();
    const pat = await seedUser(t, { email: 'pat@customer.test', org: { orgId, roleId: ROLES.orgAdmin }, login: false });
    account('u-100', 'pat@customer.test', 'Pat Admin');
    await signIn('u-100');
    expect(t.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, pat.id)).all()).toHaveLength(1);
    // A PATCH that keeps the issuer keeps the links.
    expect((await t.call('PATCH', `/api/v1/sso/providers/${providerId}`, { token: admin, body: { issuer: idp.issuer, name: 'Renamed' } })).status).toBe(200);
    expect(t.db.select().from(ssoIdentities).where(eq(ssoIdentities.providerId, providerId)).all()).toHaveLength(1);

    const patch = await t.call('PATCH', `/api/v1/sso/providers/${providerId}`, {
      token: admin,
      body: { issuer: idp2.issuer, clientId: idp2.clientId, clientSecret: idp2.clientSecret },
    });
    expect(patch.status, patch.text).toBe(200);
    expect(t.db.select().from(ssoIdentities).where(eq(ssoIdentities.providerId, providerId)).all()).toHaveLength(0);
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'sso_provider.update')).all().at(-1);
    expect(audit?.details).toMatchObject({ identityLinksRemoved: 1 });

    // At the new issuer, subject u-100 is somebody else (OIDC Core §5.7: sub is unique only within its issuer).
    idp2.accounts.set('u-100', { email: 'mallory@customer.test', name: 'Mallory' });
    const code = fragment((await signIn('u-100')).location).get('ssoCode');
    const exchanged = await t.call('POST', '/api/v1/sso/exchange', { body: { code } });
    expect(exchanged.status, exchanged.text).toBe(200);
    expect(exchanged.body.user).toMatchObject({ email: 'mallory@customer.test' });
    expect(exchanged.body.user.id).not.toBe(pat.id);
  });

  it("01§5.11 trustsIdpMfa: an ID token whose amr names a second factor makes an MFA session; without trustsIdpMfa it does not", async () => {
    const providerId = await provider({ trustsIdpMfa: true });
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const mfaOf = async () => {
      const code = fragment((await signIn('pat-1')).location).get('ssoCode');
      const exchanged = await t.call('POST', '/api/v1/sso/exchange', { body: { code } });
      expect(exchanged.status, exchanged.text).toBe(200);
      return decodeJwt(exchanged.body.accessToken as string).mfa;
    };
    alterIdToken = (claims) => {
      claims.amr = ['pwd', 'otp'];
    };
    expect(await mfaOf()).toBe(true);
    expect((await t.call('PATCH', `/api/v1/sso/providers/${providerId}`, { token: admin, body: { trustsIdpMfa: false } })).status).toBe(200);
    expect(await mfaOf()).toBe(false);
  });

  it("01§5.12 enforcement ends the organization's users' password sessions only: an SSO session stays, and so do the sessions MFA enable and step-up open from it", async () => {
    const providerId = await provider();
    const pat = await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: 'password' });
    account('pat-1', 'pat@customer.test');
    const code = fragment((await signIn('pat-1')).location).get('ssoCode');
    const sso = (await t.call('POST', '/api/v1/sso/exchange', { body: { code } })).body.accessToken as string;
    // MFA turned on from the SSO session, then a step-up of that session with a recovery code: each opens a session.
    const setup = await t.call('POST', '/api/v1/auth/mfa/setup', { token: sso });
    expect(setup.status, setup.text).toBe(200);
    const enabled = await t.call('POST', '/api/v1/auth/mfa/enable', { token: sso, body: { code: totp(setup.body.secret as string) } });
    expect(enabled.status, enabled.text).toBe(200);
    const steppedUp = await t.call('POST', '/api/v1/auth/mfa/verify', { token: sso, body: { code: setup.body.recoveryCodes[0] } });
    expect(steppedUp.status, steppedUp.text).toBe(200);
    const methods = t.db.select({ method: sessions.signInMethod }).from(sessions).where(eq(sessions.userId, pat.id)).all().map((r) => r.method);
    expect(methods.sort()).toEqual(['password', 'sso', 'sso', 'sso']);

    const on = await t.call('PATCH', `/api/v1/sso/providers/${providerId}`, { token: admin, body: { enforceSSO: true } });
    expect(on.status, on.text).toBe(200);
    const me = async (token: string) => (await t.call('GET', '/api/v1/users/me', { token })).status;
    expect(await me(pat.token)).toBe(401);
    for (const token of [sso, enabled.body.tokens.accessToken, steppedUp.body.tokens.accessToken]) expect(await me(token as string)).toBe(200);
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'sso_provider.update')).all().at(-1);
    expect(audit?.details).toMatchObject({ sessionsEnded: 1 });
  });

  it('01§5.9 a CLI loopback redirect needs a code challenge, gets the code in the query and must prove the verifier', async () => {
    await provider();
    await seedUser(t, { email: 'pat@customer.test', org: { orgId }, login: false });
    account('pat-1', 'pat@customer.test');
    const loopback = 'http://127.0.0.1:53682/callback';
    const noChallenge = await t.call('GET', `/api/v1/sso/login/${orgId}?redirectUri=${encodeURIComponent(loopback)}`);
    expect(noChallenge.status).toBe(400);
    expect(noChallenge.body.code).toBe('SSO_CODE_CHALLENGE_REQUIRED');
    const foreign = await t.call('GET', `/api/v1/sso/login/${orgId}?redirectUri=${encodeURIComponent('https://evil.test/cb')}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('SSO_INVALID_REDIRECT');

    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const { location } = await signIn('pat-1', `?redirectUri=${encodeURIComponent(loopback)}&codeChallenge=${challenge}`);
    const back = new URL(location);
    expect(back.origin + back.pathname).toBe(loopback);
    const code = back.searchParams.get('ssoCode') ?? '';
    const stolen = await t.call('POST', '/api/v1/sso/exchange', { body: { code } });
    expect(stolen.status).toBe(401);
    // The failed attempt used the code up: single use, whoever tried.
    const late = await t.call('POST', '/api/v1/sso/exchange', { body: { code, codeVerifier: verifier } });
    expect(late.status).toBe(401);

    const second = await signIn('pat-1', `?redirectUri=${encodeURIComponent(loopback)}&codeChallenge=${challenge}`);
    const ok = await t.call('POST', '/api/v1/sso/exchange', { body: { code: new URL(second.location).searchParams.get('ssoCode'), codeVerifier: verifier } });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.accessToken).toBeTruthy();
  });

  it('01§4.7 login for an organization without an active provider is 404', async () => {
    const res = await t.call('GET', `/api/v1/sso/login/${orgId}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('SSO_NOT_CONFIGURED');
  });
});
