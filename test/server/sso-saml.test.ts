import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { organizationUsers, ssoExchangeCodes, ssoIdentities, ssoLoginStates, ssoSamlReplays, users } from '../../src/server/db/schema/index.js';
import {
  acsForm,
  assertionXml,
  fromBase64,
  readAuthnRequest,
  responseXml,
  samlKey,
  samlResponse,
  signAssertion,
  toBase64,
  type AssertionFields,
  type SamlKey,
} from '../helpers/saml-idp.js';
import { ROLES, adminToken, seedOrg, seedPartner, seedUser } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const BASE = 'http://127.0.0.1:3000';
const ACS = `${BASE}/api/v1/sso/saml/acs`;
const SP_ENTITY = `${BASE}/api/v1/sso/saml/metadata`;
const IDP_ENTITY = 'https://idp.customer.test/saml/entity';
const IDP_SSO = 'https://idp.customer.test/saml/sso';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let idpKey: SamlKey;
let otherKey: SamlKey;
let t: TestApp;
let admin: string;
let orgId: string;

beforeAll(async () => {
  [idpKey, otherKey] = await Promise.all([samlKey('Customer IdP'), samlKey('Someone else')]);
});
beforeEach(async () => {
  t = await createTestApp();
  admin = await adminToken(t, { mfa: true });
  const partner = seedPartner(t, { name: 'MSP', slug: 'msp' });
  orgId = seedOrg(t, partner.id, { name: 'Customer', slug: 'customer' }).id;
});
afterEach(async () => {
  await t.close();
});

async function provider(overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call('POST', '/api/v1/sso/providers', {
    token: admin,
    body: { orgId, name: 'Customer SAML', type: 'saml', preset: 'okta-saml', ssoUrl: IDP_SSO, idpEntityId: IDP_ENTITY, idpCertificate: idpKey.cert, defaultRoleId: ROLES.orgViewer, ...overrides },
  });
  expect(res.status, res.text).toBe(201);
  const id = res.body.data.id as string;
  const active = await t.call('POST', `/api/v1/sso/providers/${id}/status`, { token: admin, body: { status: 'active' } });
  expect(active.status, active.text).toBe(200);
  return id;
}

/** GET /sso/login → the AuthnRequest the IdP would receive (its id and the relay state). */
async function start(query = ''): Promise<{ requestId: string; relayState: string }> {
  const res = await t.call('GET', `/api/v1/sso/login/${orgId}${query}`);
  expect(res.status, res.text).toBe(302);
  const request = readAuthnRequest(String(res.headers.location));
  return { requestId: request.id, relayState: request.relayState };
}

/** The assertion a correct IdP would send for this sign-in. */
function fields(requestId: string, overrides: Partial<AssertionFields> = {}): AssertionFields {
  return { issuer: IDP_ENTITY, audience: SP_ENTITY, recipient: ACS, inResponseTo: requestId, nameId: 'pat@customer.test', ...overrides };
}

async function post(samlResponseB64: string, relayState: string) {
  return t.call('POST', '/api/v1/sso/saml/acs', { headers: FORM, body: acsForm(samlResponseB64, relayState) });
}

/** Posts to the ACS; answers the fragment of the redirect back to where the sign-in started. */
async function acs(samlResponseB64: string, relayState: string): Promise<URLSearchParams> {
  const res = await post(samlResponseB64, relayState);
  expect(res.status, res.text).toBe(302);
  const location = String(res.headers.location);
  expect(location.startsWith(`${BASE}/#`)).toBe(true);
  return new URLSearchParams(location.slice(location.indexOf('#') + 1));
}

function expectRefused(answer: URLSearchParams, reason: RegExp, code = 'SSO_ASSERTION_REJECTED') {
  expect(answer.get('ssoCode')).toBeNull();
  expect(answer.get('ssoError')).toBe(code);
  expect(answer.get('ssoErrorDescription')).toMatch(reason);
  expect(t.db.select().from(ssoExchangeCodes).all()).toHaveLength(0);
}

async function seedPat() {
  return seedUser(t, { email: 'pat@customer.test', org: { orgId, roleId: ROLES.orgTechnician }, login: false });
}

/** The signed assertion element of a signed response (for the wrapping and replay attacks). */
function signedAssertionOf(xml: string): string {
  const found = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml);
  if (!found) throw new Error('no assertion');
  return found[0];
}

describe('SAML service provider (01 §4.7, §5.11)', () => {
  it('01§5.11 metadata: entity id, the ACS over HTTP-POST, e-mail NameID, WantAssertionsSigned', async () => {
    const res = await t.call('GET', '/api/v1/sso/saml/metadata');
    expect(res.status, res.text).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/samlmetadata\+xml/);
    expect(res.text).toContain(`entityID="${SP_ENTITY}"`);
    expect(res.text).toMatch(/WantAssertionsSigned="true"/);
    expect(res.text).toContain('<NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</NameIDFormat>');
    expect(res.text).toMatch(new RegExp(`<AssertionConsumerService [^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${ACS}"`));
  });

  it('01§4.7 login redirects to the IdP with an AuthnRequest for the ACS; the request id and relay state are kept 10 minutes', async () => {
    await provider();
    const res = await t.call('GET', `/api/v1/sso/login/${orgId}`);
    expect(res.status, res.text).toBe(302);
    const request = readAuthnRequest(String(res.headers.location));
    expect(request.url.origin + request.url.pathname).toBe(IDP_SSO);
    expect(request.xml).toContain(`AssertionConsumerServiceURL="${ACS}"`);
    expect(request.xml).toContain(`Destination="${IDP_SSO}"`);
    expect(request.xml).toMatch(new RegExp(`<saml:Issuer[^>]*>${SP_ENTITY}</saml:Issuer>`));
    expect(request.xml).toContain('Format="urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"');
    expect(request.relayState).toMatch(/^[\w-]{40,}$/);
    const [row] = t.db.select().from(ssoLoginStates).all();
    expect(row?.nonce).toBe(request.id);
    expect(Date.parse(row?.expiresAt ?? '') - Date.parse(row?.createdAt ?? '')).toBe(10 * 60_000);
  });

  it('01§5.11 a valid signed assertion signs the user in: ACS → #ssoCode= → exchange → a working session', async () => {
    await provider();
    const user = await seedPat();
    const { requestId, relayState } = await start();
    const answer = await acs(samlResponse(fields(requestId, { nameId: 'Pat@Customer.test' }), idpKey), relayState);
    const code = answer.get('ssoCode');
    expect(code, answer.toString()).toBeTruthy();
    const exchanged = await t.call('POST', '/api/v1/sso/exchange', { body: { code } });
    expect(exchanged.status, exchanged.text).toBe(200);
    expect(exchanged.body.user).toMatchObject({ id: user.id, email: 'pat@customer.test' });
    const me = await t.call('GET', '/api/v1/users/me', { token: exchanged.body.accessToken });
    expect(me.status, me.text).toBe(200);
    const link = t.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, user.id)).get();
    expect(link).toMatchObject({ externalId: 'Pat@Customer.test', email: 'pat@customer.test', tokensEnc: null });
    expect(t.db.select().from(ssoSamlReplays).all()).toHaveLength(1);
    // The code is single-use, as for OIDC.
    expect((await t.call('POST', '/api/v1/sso/exchange', { body: { code } })).status).toBe(401);
  });

  it('01§5.11 attribute OID forms map to email, name, first and last name (autoProvision with defaultRoleId)', async () => {
    await provider({ attributeMapping: { email: 'urn:oid:0.9.2342.19200300.100.1.3', name: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name', firstName: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname', lastName: 'urn:oid:2.5.4.4' } });
    const { requestId, relayState } = await start();
    const attributes = {
      'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress': 'Robin@Customer.test',
      'urn:oid:2.16.840.1.113730.3.1.241': 'Robin Display',
      'urn:oid:2.5.4.42': 'Robin',
      'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname': 'Example',
    };
    const persistent = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';
    const answer = await acs(samlResponse(fields(requestId, { nameId: 'opaque-7f3a', nameIdFormat: persistent, attributes }), idpKey), relayState);
    expect(answer.get('ssoCode'), answer.toString()).toBeTruthy();
    const created = t.db.select().from(users).where(eq(users.email, 'robin@customer.test')).get();
    expect(created).toMatchObject({ name: 'Robin Display' });
    const link = t.db.select().from(organizationUsers).where(eq(organizationUsers.userId, created?.id ?? '')).get();
    expect(link).toMatchObject({ orgId, roleId: ROLES.orgViewer });
    const identity = t.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, created?.id ?? '')).get();
    expect(identity?.externalId).toBe('opaque-7f3a');
    expect(identity?.profile).toMatchObject({ firstName: 'Robin', lastName: 'Example' });
  });

  it("01§5.11 a SAML session's mfa claim is false, even with trustsIdpMfa and an `amr` attribute in the assertion", async () => {
    await provider({ trustsIdpMfa: true });
    const user = await seedPat();
    const { requestId, relayState } = await start();
    // An ordinary signed attribute: IdPs release profile attributes that users or directory admins set.
    const answer = await acs(samlResponse(fields(requestId, { attributes: { amr: ['pwd', 'mfa'] } }), idpKey), relayState);
    const exchanged = await t.call('POST', '/api/v1/sso/exchange', { body: { code: answer.get('ssoCode') } });
    expect(exchanged.status, exchanged.text).toBe(200);
    expect(exchanged.body.user.id).toBe(user.id);
    expect(decodeJwt(exchanged.body.accessToken as string).mfa).toBe(false);
  });

  it('01§5.10 another IdP (entity id, certificate or sign-in URL) removes the identity links of a SAML provider; other changes keep them', async () => {
    const id = await provider();
    const user = await seedPat();
    const linkCount = () => t.db.select().from(ssoIdentities).where(eq(ssoIdentities.providerId, id)).all().length;
    const signIn = async () => {
      const { requestId, relayState } = await start();
      expect((await acs(samlResponse(fields(requestId), idpKey), relayState)).get('ssoCode')).toBeTruthy();
    };
    const patch = async (body: Record<string, unknown>) => {
      const res = await t.call('PATCH', `/api/v1/sso/providers/${id}`, { token: admin, body });
      expect(res.status, res.text).toBe(200);
    };
    await signIn();
    expect(linkCount()).toBe(1);
    await patch({ name: 'Renamed', idpEntityId: IDP_ENTITY, idpCertificate: idpKey.cert.replace(/-----[A-Z ]+-----|\s/g, '') });
    expect(linkCount()).toBe(1);
    for (const change of [{ idpEntityId: 'https://idp2.customer.test/entity' }, { idpCertificate: otherKey.cert }, { ssoUrl: 'https://idp2.customer.test/sso' }]) {
      await patch({ idpEntityId: IDP_ENTITY, idpCertificate: idpKey.cert, ssoUrl: IDP_SSO });
      await signIn();
      expect(t.db.select().from(ssoIdentities).where(eq(ssoIdentities.userId, user.id)).all()).toHaveLength(1);
      await patch(change);
      expect(linkCount(), JSON.stringify(change)).toBe(0);
    }
  });

  it('01§2.9 allowedDomains and 01§5.10 autoProvision off apply to SAML sign-ins as to OIDC', async () => {
    await provider({ allowedDomains: 'example.org', autoProvision: false });
    let { requestId, relayState } = await start();
    expectRefused(await acs(samlResponse(fields(requestId), idpKey), relayState), /domain/i, 'SSO_DOMAIN_NOT_ALLOWED');
    ({ requestId, relayState } = await start());
    expectRefused(await acs(samlResponse(fields(requestId, { nameId: 'nobody@example.org' }), idpKey), relayState), /not found/i, 'USER_NOT_FOUND');
  });
});

describe('SAML responses refused (01 §5.11)', () => {
  beforeEach(async () => {
    await provider();
    await seedPat();
  });

  it('01§5.11 an unsigned assertion is refused (WantAssertionsSigned)', async () => {
    const { requestId, relayState } = await start();
    expectRefused(await acs(samlResponse(fields(requestId), null), relayState), /signature/i);
  });

  it('01§5.11 an assertion signed by another key is refused, even with that key in its KeyInfo', async () => {
    const { requestId, relayState } = await start();
    const response = samlResponse(fields(requestId), otherKey);
    expect(fromBase64(response)).toContain('<X509Certificate>');
    expectRefused(await acs(response, relayState), /signature/i);
  });

  it('01§5.11 a signed assertion altered after signing (another NameID) is refused', async () => {
    const { requestId, relayState } = await start();
    const tampered = fromBase64(samlResponse(fields(requestId), idpKey)).replace('>pat@customer.test<', '>admin@customer.test<');
    expectRefused(await acs(toBase64(tampered), relayState), /signature/i);
  });

  it('01§5.11 signature wrapping: a signed assertion plus an injected unsigned one with another NameID is refused', async () => {
    const { requestId, relayState } = await start();
    const f = fields(requestId, { assertionId: '_signed' });
    const signed = signedAssertionOf(signAssertion(responseXml(f, assertionXml(f)), '_signed', idpKey));
    const evil = assertionXml({ ...f, assertionId: '_evil', nameId: 'admin@customer.test' });
    for (const order of [[evil, signed], [signed, evil]]) {
      const { requestId: again, relayState: state } = order[0] === evil ? { requestId, relayState } : await start();
      const xml = responseXml({ ...f, inResponseTo: again }, ...order);
      expectRefused(await acs(toBase64(xml), state), /signature|multiple assertions/i);
    }
  });

  it('01§5.11 signature wrapping: an evil assertion with the signed one\'s ID and signature, the original hidden in Extensions, is refused', async () => {
    const { requestId, relayState } = await start();
    const f = fields(requestId, { assertionId: '_orig' });
    const signed = signedAssertionOf(signAssertion(responseXml(f, assertionXml(f)), '_orig', idpKey));
    const signature = /<Signature[\s\S]*<\/Signature>/.exec(signed)?.[0] ?? '';
    expect(signature).not.toBe('');
    const evil = assertionXml({ ...f, assertionId: '_orig', nameId: 'admin@customer.test' }).replace('</saml:Issuer>', `</saml:Issuer>${signature}`);
    const xml = responseXml(f, evil).replace('<samlp:Status>', `<samlp:Extensions>${signed}</samlp:Extensions><samlp:Status>`);
    expectRefused(await acs(toBase64(xml), relayState), /signature/i);
  });

  it('01§5.11 an expired assertion is refused (NotOnOrAfter past, beyond the clock skew)', async () => {
    const { requestId, relayState } = await start();
    const past = Date.now() - 5 * 60_000;
    const response = samlResponse(fields(requestId, { notBefore: new Date(past - 5 * 60_000), notOnOrAfter: new Date(past) }), idpKey);
    expectRefused(await acs(response, relayState), /expired|subject confirmation/i);
  });

  it('01§5.11 an assertion not yet valid is refused (NotBefore ahead, beyond the clock skew)', async () => {
    const { requestId, relayState } = await start();
    const response = samlResponse(fields(requestId, { notBefore: new Date(Date.now() + 5 * 60_000), notOnOrAfter: new Date(Date.now() + 10 * 60_000) }), idpKey);
    expectRefused(await acs(response, relayState), /not yet valid/i);
  });

  it('01§5.11 a clock 30 seconds off is within the accepted skew', async () => {
    const { requestId, relayState } = await start();
    const response = samlResponse(fields(requestId, { notBefore: new Date(Date.now() + 30_000) }), idpKey);
    expect((await acs(response, relayState)).get('ssoCode')).toBeTruthy();
  });

  it('01§5.11 an assertion for another audience is refused', async () => {
    const { requestId, relayState } = await start();
    expectRefused(await acs(samlResponse(fields(requestId, { audience: 'https://other-sp.test/metadata' }), idpKey), relayState), /audience/i);
  });

  it('01§5.11 an assertion from another issuer is refused, though signed with the configured key', async () => {
    const { requestId, relayState } = await start();
    expectRefused(await acs(samlResponse(fields(requestId, { issuer: 'https://evil-idp.test/entity' }), idpKey), relayState), /issuer/i);
  });

  it('01§5.11 a response to another AuthnRequest (wrong InResponseTo) is refused', async () => {
    const { relayState } = await start();
    const { requestId: otherRequest } = await start();
    expectRefused(await acs(samlResponse(fields(otherRequest), idpKey), relayState), /InResponseTo/i);
    const { relayState: third } = await start();
    expectRefused(await acs(samlResponse(fields('_made-up'), idpKey), third), /InResponseTo/i);
  });

  it('01§5.11 an unsolicited response (no InResponseTo) is refused', async () => {
    const { relayState } = await start();
    expectRefused(await acs(samlResponse(fields('', { inResponseTo: null }), idpKey), relayState), /InResponseTo/i);
  });

  it('01§5.11 a replayed response is refused: its relay state is used once (400)', async () => {
    const { requestId, relayState } = await start();
    const response = samlResponse(fields(requestId), idpKey);
    expect((await acs(response, relayState)).get('ssoCode')).toBeTruthy();
    const again = await post(response, relayState);
    expect(again.status, again.text).toBe(400);
    expect(again.body.code).toBe('SSO_INVALID_STATE');
  });

  it('01§5.11 a replayed assertion is refused in a new sign-in: its id is kept until its NotOnOrAfter', async () => {
    const first = await start();
    // An IdP that leaves InResponseTo out of the (signed) subject confirmation: only the unsigned Response names the request.
    const f = fields(first.requestId, { assertionId: '_once', subjectInResponseTo: null });
    const signed = signedAssertionOf(signAssertion(responseXml(f, assertionXml(f)), '_once', idpKey));
    expect((await acs(toBase64(responseXml(f, signed)), first.relayState)).get('ssoCode')).toBeTruthy();
    const replay = t.db.select().from(ssoSamlReplays).get();
    expect(replay?.messageId).toBe('assertion:_once');
    expect(Date.parse(replay?.expiresAt ?? '')).toBeGreaterThan(Date.now() + 4 * 60_000);

    t.db.delete(ssoExchangeCodes).run();
    const second = await start();
    const rewrapped = responseXml({ ...f, inResponseTo: second.requestId }, signed);
    expectRefused(await acs(toBase64(rewrapped), second.relayState), /already used/i, 'SSO_ASSERTION_REPLAYED');
  });

  it('01§5.11 an unknown relay state is 400 before the response is read', async () => {
    const res = await post(samlResponse(fields('_x'), idpKey), 'not-a-state');
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('SSO_INVALID_STATE');
  });

  it('01§4.7 the state of a SAML sign-in is not accepted at the OIDC callback (no browser holds an OIDC binding for it)', async () => {
    const { relayState } = await start();
    const res = await t.call('GET', `/api/v1/sso/callback?state=${relayState}&code=abc`);
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('SSO_STATE_MISMATCH');
  });
});

describe('SAML provider settings (01 §2.9)', () => {
  it('01§2.9 the IdP certificate must be an X.509 certificate; PEM or bare base64 are accepted and stored as PEM', async () => {
    const bad = await t.call('POST', '/api/v1/sso/providers', { token: admin, body: { orgId, name: 'S', type: 'saml', idpCertificate: 'not a certificate', defaultRoleId: ROLES.orgViewer } });
    expect(bad.status, bad.text).toBe(400);
    expect(bad.text).toContain('idpCertificate');
    const bare = idpKey.cert.replace(/-----[A-Z ]+-----|\s/g, '');
    const id = await provider({ idpCertificate: bare });
    const got = await t.call('GET', `/api/v1/sso/providers/${id}`, { token: admin });
    expect(got.body.data).toMatchObject({ ssoUrl: IDP_SSO, idpEntityId: IDP_ENTITY, preset: 'okta-saml' });
    expect(got.body.data.idpCertificate).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
  });

  it('01§2.9 the five SAML presets name their sign-in URL and entity id templates and the claim URIs', async () => {
    const res = await t.call('GET', '/api/v1/sso/presets', { token: admin });
    const saml = (res.body.data as { type: string; ssoUrlTemplate?: string; entityIdTemplate?: string; attributeMapping: { email: string } }[]).filter((p) => p.type === 'saml');
    expect(saml).toHaveLength(5);
    for (const p of saml) {
      expect(p.ssoUrlTemplate).toMatch(/^https:\/\//);
      expect(p.entityIdTemplate).toMatch(/^https?:\/\//);
      expect(p.attributeMapping.email).toBe('http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress');
    }
  });

  it('01§4.7 an active SAML provider without its IdP settings cannot start a sign-in (400)', async () => {
    await provider({ ssoUrl: null, idpCertificate: null });
    const res = await t.call('GET', `/api/v1/sso/login/${orgId}`);
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('saml_config_incomplete');
  });

  it('the form body parser serves the ACS only: other routes still answer 415 to a form post', async () => {
    const res = await t.call('POST', '/api/v1/auth/login', { headers: FORM, body: 'email=a%40b.test&password=x' });
    expect(res.status).toBe(415);
  });
});
