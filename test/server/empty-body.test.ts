import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { enrollmentKeys, sites } from '../../src/server/db/schema/index.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from '../helpers/server.js';
import { adminToken, seedOrg, seedPartner, seedSite } from '../helpers/seed.js';

const API = '/api/v1';

/**
 * Issue 15 item 9 (the spec is silent): the web and mobile clients of the deployed service send every body-less
 * write with `Content-Type: application/json` and no body. An empty body is no body; only a non-empty body that
 * is not JSON is 400 `Malformed JSON in request body`.
 */
describe('an empty body with a JSON content type is no body (issue 15 item 9)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  /** Exactly what those clients send: the JSON content type, no payload at all. */
  const emptyJson = (method: 'POST' | 'DELETE', url: string, token: string, contentType = 'application/json') =>
    t.app.inject({ method, url, headers: { authorization: `Bearer ${token}`, 'content-type': contentType } });

  const world = async () => {
    const partner = seedPartner(t, { name: 'Acme MSP', slug: 'acme' });
    const org = seedOrg(t, partner.id, { name: 'Acme Org', slug: 'acme-org' });
    return { partner, org, token: await adminToken(t, { mfa: true }) };
  };

  it('issue 15 item 9: logout with an empty JSON body revokes the session', async () => {
    const login = await t.call('POST', `${API}/auth/login`, { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    expect(login.status).toBe(200);
    const token = login.body.tokens.accessToken as string;
    expect((await t.call('GET', `${API}/users/me`, { token })).status).toBe(200);

    const out = await emptyJson('POST', `${API}/auth/logout`, token);
    expect(out.statusCode).toBe(200);
    expect(JSON.parse(out.body)).toMatchObject({ success: true });
    expect((await t.call('GET', `${API}/users/me`, { token })).status).toBe(401);
    const refresh = await t.call('POST', `${API}/auth/refresh`, { body: { refreshToken: login.body.tokens.refreshToken } });
    expect(refresh.status).toBe(401);
  });

  it('issue 15 item 9: rotate and revoke an API key, rotate an enrollment key and delete a site with empty JSON bodies', async () => {
    const { org, token } = await world();
    const created = await t.call('POST', `${API}/api-keys`, { token, body: { orgId: org.id, name: 'ci' } });
    expect(created.status).toBe(201);

    const rotated = await emptyJson('POST', `${API}/api-keys/${created.body.id}/rotate`, token);
    expect(rotated.statusCode).toBe(200);
    const key = JSON.parse(rotated.body).key as string;
    expect(key).toMatch(/^svc_/);
    expect(key).not.toBe(created.body.key);

    // A charset parameter changes nothing.
    const revoked = await emptyJson('DELETE', `${API}/api-keys/${created.body.id}`, token, 'application/json; charset=utf-8');
    expect(revoked.statusCode).toBe(200);
    expect(JSON.parse(revoked.body)).toMatchObject({ success: true, apiKey: { id: created.body.id, status: 'revoked' } });

    // An optional body (01 §4.2 rotate: omitted values preserved) is simply absent.
    const ek = await t.call('POST', `${API}/enrollment-keys`, { token, body: { orgId: org.id, name: 'fleet', maxUsage: 7 } });
    expect(ek.status).toBe(201);
    t.db.update(enrollmentKeys).set({ usageCount: 3 }).where(eq(enrollmentKeys.id, ek.body.id)).run();
    const ekRotated = await emptyJson('POST', `${API}/enrollment-keys/${ek.body.id}/rotate`, token);
    expect(ekRotated.statusCode).toBe(200);
    expect(JSON.parse(ekRotated.body)).toMatchObject({ id: ek.body.id, maxUsage: 7, usageCount: 0 });

    const site = seedSite(t, org.id, { name: 'HQ' });
    const deleted = await emptyJson('DELETE', `${API}/orgs/sites/${site.id}`, token);
    expect(deleted.statusCode).toBe(200);
    expect(t.db.select().from(sites).where(eq(sites.id, site.id)).get()).toBeUndefined();
  });

  it('issue 15 item 9: an endpoint that needs a body answers its normal validation 400, not Malformed JSON', async () => {
    const { token } = await world();
    const res = await emptyJson('POST', `${API}/orgs/partners`, token);
    expect(res.statusCode).toBe(400);
    const body = JSON.parse(res.body);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.error).not.toMatch(/Malformed JSON/);
    // Public routes too: a login without a body names the missing fields.
    const login = await t.app.inject({ method: 'POST', url: `${API}/auth/login`, headers: { 'content-type': 'application/json' } });
    expect(login.statusCode).toBe(400);
    expect(JSON.parse(login.body).code).toBe('VALIDATION_ERROR');
  });

  it('issue 15 item 9: a non-empty body that is not JSON is still 400 Malformed JSON in request body', async () => {
    const { token } = await world();
    for (const payload of [' ', '\n', '{"name":', 'null x', '{"__proto__":{"x":1}}']) {
      const res = await t.app.inject({
        method: 'POST',
        url: `${API}/auth/logout`,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(JSON.parse(res.body), JSON.stringify(payload)).toMatchObject({ code: 'MALFORMED_JSON', error: 'Malformed JSON in request body' });
    }
    // The session survived every refused request.
    expect((await t.call('GET', `${API}/users/me`, { token })).status).toBe(200);
  });
});
