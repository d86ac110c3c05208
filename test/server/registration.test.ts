import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditLogs, partnerUsers, partners, rolePermissions, roles, users } from '../../src/server/db/schema/index.js';
import { slugBase, slugCandidate } from '../../src/server/modules/identity/registration-service.js';
import { type CookieReply, sendWithCookies, type TestApp, useTestApp } from '../helpers/server.js';

const REGISTER_PARTNER = '/api/v1/auth/register-partner';
const REGISTER = '/api/v1/auth/register';
const STRONG = 'Str0ng-Passw0rd';

const post = (t: TestApp, url: string, payload: object | string, ip = '127.0.0.1'): Promise<CookieReply> =>
  sendWithCookies(t, 'POST', url, { ip, body: payload, headers: { 'content-type': 'application/json' } });

const partnerBody = (overrides: Record<string, unknown> = {}) => ({
  companyName: 'Acme IT Services',
  name: 'Ada Admin',
  email: 'ada@acme.test',
  password: STRONG,
  acceptTerms: true,
  ...overrides,
});

const counts = (t: TestApp) => ({
  users: t.db.select().from(users).all().length,
  partners: t.db.select().from(partners).all().length,
  roles: t.db.select().from(roles).all().length,
  links: t.db.select().from(partnerUsers).all().length,
});

describe('self-registration (01 §4.6, §5.8, §8)', () => {
  let t: TestApp | undefined;
  const startApp = useTestApp();

  it('01§4.6 register-partner creates a pending msp partner, its Partner Admin role, the user and the link, and signs in', async () => {
    t = await startApp();
    const res = await post(t, REGISTER_PARTNER, partnerBody());
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['mfaRequired', 'partner', 'tokens', 'user']);
    expect(res.body).toEqual({
      user: { id: expect.any(String), name: 'Ada Admin', mfaEnabled: false },
      partner: { id: expect.any(String), name: 'Acme IT Services', slug: 'acme-it-services' },
      tokens: { accessToken: expect.any(String), expiresInSeconds: 900 },
      mfaRequired: false,
    });
    // The refresh token is only the HTTP-only cookie.
    expect(res.body.tokens).not.toHaveProperty('refreshToken');
    expect(res.cookies.get('svc_refresh_token')).toMatch(/.{20,}/);
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] as string[]);
    expect(setCookie.find((c) => c.startsWith('svc_refresh_token='))).toMatch(/HttpOnly/i);

    const partner = t.db.select().from(partners).where(eq(partners.id, res.body.partner.id)).get();
    expect(partner).toMatchObject({ type: 'msp', plan: 'free', status: 'pending', slug: 'acme-it-services' });
    const user = t.db.select().from(users).where(eq(users.id, res.body.user.id)).get();
    expect(user).toMatchObject({ email: 'ada@acme.test', status: 'active', isSystemAdmin: false });
    expect(user?.passwordHash).toMatch(/^scrypt\$/);
    const link = t.db.select().from(partnerUsers).where(eq(partnerUsers.userId, res.body.user.id)).get();
    expect(link).toMatchObject({ partnerId: partner?.id, orgAccess: 'all' });
    const role = t.db
      .select()
      .from(roles)
      .where(eq(roles.id, link?.roleId ?? ''))
      .get();
    expect(role).toMatchObject({ name: 'Partner Admin', scope: 'partner', isSystem: true, partnerId: partner?.id });
    expect(
      t.db
        .select()
        .from(rolePermissions)
        .where(eq(rolePermissions.roleId, role?.id ?? ''))
        .all(),
    ).toEqual([{ roleId: role?.id, resource: '*', action: '*' }]);

    const audited = t.db
      .select()
      .from(auditLogs)
      .where(eq(auditLogs.partnerId, partner?.id ?? ''))
      .all();
    expect(audited.map((a) => a.action)).toEqual(
      expect.arrayContaining(['partner.create', 'role.create', 'user.create', 'user.login']),
    );
    expect(audited.every((a) => a.actorEmail === 'ada@acme.test')).toBe(true);

    // The partner is pending: the account reaches /users/me and /orgs/partners/me, and nothing else.
    const token = res.body.tokens.accessToken as string;
    const me = await t.call('GET', '/api/v1/users/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({
      scope: 'partner',
      partnerId: partner?.id,
      roleId: role?.id,
      roleName: 'Partner Admin',
      permissions: ['*:*'],
    });
    expect((await t.call('GET', '/api/v1/orgs/partners/me', { token })).status).toBe(200);
    const blocked = await t.call('GET', '/api/v1/orgs/organizations', { token });
    expect(blocked.status).toBe(403);
    expect(blocked.body).toMatchObject({ code: 'PARTNER_INACTIVE', status: 'pending' });
  });

  it('01§5.8 with ENABLE_REGISTRATION off both routes answer 403 REGISTRATION_DISABLED, whatever the body', async () => {
    t = await startApp({ ENABLE_REGISTRATION: 'off' });
    for (const url of [REGISTER_PARTNER, REGISTER]) {
      for (const payload of [partnerBody(), { nonsense: true }, '{"broken json']) {
        const res = await post(t, url, payload);
        expect(res.status).toBe(403);
        expect(res.body).toEqual({ error: 'Registration is currently disabled', code: 'REGISTRATION_DISABLED' });
      }
    }
    expect(counts(t).partners).toBe(0);
  });

  it('01§4.6 a weak password is 400 with the first message of the strength check', async () => {
    t = await startApp();
    const before = counts(t);
    const cases: [string, string][] = [
      ['short1A', 'Password must be at least 8 characters'],
      ['nodigitsHere', 'Password must contain a number'],
      ['alllower123', 'Password must contain upper and lower case letters'],
    ];
    for (const [password, message] of cases) {
      const res = await post(t, REGISTER_PARTNER, partnerBody({ password }), `10.0.0.${password.length}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message, code: 'WEAK_PASSWORD' });
    }
    expect(counts(t)).toEqual(before);
  });

  it('01§4.6 acceptTerms must be true (400), checked before password strength', async () => {
    t = await startApp();
    const res = await post(t, REGISTER_PARTNER, partnerBody({ acceptTerms: false, password: 'weak' }));
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'You must accept the terms of service', code: 'TERMS_NOT_ACCEPTED' });
    const missing = await post(t, REGISTER_PARTNER, { ...partnerBody(), acceptTerms: undefined });
    expect(missing.status).toBe(400);
    expect(counts(t).partners).toBe(0);
  });

  it('01§4.6 an e-mail already registered gets the generic success answer with the same status and creates nothing', async () => {
    t = await startApp({ SVC_REGISTER_PARTNER_LIMIT: '100' });
    const first = await post(t, REGISTER_PARTNER, partnerBody());
    expect(first.status).toBe(201);
    const before = counts(t);
    const auditBefore = t.db.select().from(auditLogs).all().length;

    const again = await post(t, REGISTER_PARTNER, partnerBody({ email: 'ADA@acme.test', companyName: 'Other Co' }));
    expect(again.status).toBe(first.status);
    expect(again.body).toEqual({ success: true, message: expect.any(String) });
    expect(again.cookies.size).toBe(0);
    expect(counts(t)).toEqual(before);
    expect(t.db.select().from(auditLogs).all().length).toBe(auditBefore);

    // The first admin (created at start) is no exception.
    const admin = await post(t, REGISTER, { name: 'X', email: 'admin@example.test', password: STRONG });
    expect(admin.status).toBe(201);
    expect(admin.body).toEqual(again.body);
  });

  it('01§4.6 the slug comes from the company name and gets -2, -3 … on collision', async () => {
    t = await startApp({ SVC_REGISTER_PARTNER_LIMIT: '100' });
    const slugs: string[] = [];
    for (const [i, companyName] of ['Acme, Inc.', 'ACME inc', '  acme -- inc!  '].entries()) {
      const res = await post(t, REGISTER_PARTNER, partnerBody({ companyName, email: `u${i}@acme.test` }));
      expect(res.status).toBe(201);
      slugs.push(res.body.partner.slug as string);
    }
    expect(slugs).toEqual(['acme-inc', 'acme-inc-2', 'acme-inc-3']);

    const long = await post(
      t,
      REGISTER_PARTNER,
      partnerBody({ companyName: `${'Very Long Company Name '.repeat(5)}Ltd`, email: 'long@acme.test' }),
    );
    expect(long.body.partner.slug).toBe('very-long-company-name-very-long-company-name-very');
    expect(long.body.partner.slug.length).toBeLessThanOrEqual(50);
    const symbols = await post(
      t,
      REGISTER_PARTNER,
      partnerBody({ companyName: '日本 株式会社', email: 'jp@acme.test' }),
    );
    expect(symbols.body.partner.slug).toBe('partner');
  });

  it('01§4.6 slug rules: lowercase, non-alphanumerics to hyphens, at most 50 chars with the suffix', () => {
    expect(slugBase('Hello World & Co.')).toBe('hello-world-co');
    expect(slugBase('--Edge__Case--')).toBe('edge-case');
    expect(slugBase('Ünited Büro GmbH')).toBe('united-buro-gmbh');
    expect(slugBase('a'.repeat(80))).toHaveLength(50);
    expect(slugCandidate('acme', 1)).toBe('acme');
    expect(slugCandidate('acme', 2)).toBe('acme-2');
    expect(slugCandidate('a'.repeat(50), 100)).toBe(`${'a'.repeat(46)}-100`);
  });

  it('01§4.6 after 100 taken slugs registration answers 409 and creates nothing', async () => {
    t = await startApp();
    const taken = Array.from({ length: 100 }, (_, i) => ({ name: 'Busy', slug: i === 0 ? 'busy' : `busy-${i + 1}` }));
    t.db.insert(partners).values(taken).run();
    const before = counts(t);
    const res = await post(t, REGISTER_PARTNER, partnerBody({ companyName: 'Busy' }));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('SLUG_UNAVAILABLE');
    expect(counts(t)).toEqual(before);
  });

  it('01§8 partner registration is limited to 3 per IP per hour (429 with Retry-After), before the body is checked', async () => {
    t = await startApp();
    for (let i = 0; i < 3; i++) {
      expect((await post(t, REGISTER_PARTNER, partnerBody({ email: `p${i}@acme.test` }), '10.7.7.7')).status).toBe(201);
    }
    const fourth = await post(t, REGISTER_PARTNER, partnerBody({ email: 'p4@acme.test' }), '10.7.7.7');
    expect(fourth.status).toBe(429);
    expect(fourth.body.code).toBe('TOO_MANY_REGISTRATIONS');
    const retryAfter = Number(fourth.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // The rate limit comes before validation and before the password check.
    expect((await post(t, REGISTER_PARTNER, { nonsense: true }, '10.7.7.7')).status).toBe(429);
    // Another address is not affected, nor is the separate standalone-user limit.
    expect((await post(t, REGISTER_PARTNER, partnerBody({ email: 'p5@acme.test' }), '10.8.8.8')).status).toBe(201);
    expect((await post(t, REGISTER, { name: 'Solo', email: 'solo@x.test', password: STRONG }, '10.7.7.7')).status).toBe(
      201,
    );
  });

  it('01§8 standalone registration is limited to 5 per IP per hour; the limits are configurable', async () => {
    t = await startApp();
    for (let i = 0; i < 5; i++) {
      expect((await post(t, REGISTER, { name: 'U', email: `u${i}@x.test`, password: STRONG }, '10.6.6.6')).status).toBe(
        201,
      );
    }
    expect((await post(t, REGISTER, { name: 'U', email: 'u6@x.test', password: STRONG }, '10.6.6.6')).status).toBe(429);
    await t.close();
    t = await startApp({ SVC_REGISTER_LIMIT: '1' });
    expect((await post(t, REGISTER, { name: 'U', email: 'a@x.test', password: STRONG })).status).toBe(201);
    expect((await post(t, REGISTER, { name: 'U', email: 'b@x.test', password: STRONG })).status).toBe(429);
  });

  it('01§4.5 register creates a standalone active user with no tenant and signs in; the refresh token only as cookie', async () => {
    t = await startApp();
    const before = counts(t);
    const res = await post(t, REGISTER, {
      name: 'Solo User',
      email: 'Solo@Example.test',
      password: STRONG,
      acceptTerms: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      user: { id: expect.any(String), name: 'Solo User', mfaEnabled: false },
      tokens: { accessToken: expect.any(String), expiresInSeconds: 900 },
      mfaRequired: false,
    });
    expect(res.cookies.get('svc_refresh_token')).toBeTruthy();
    expect(counts(t)).toEqual({ ...before, users: before.users + 1 });
    const me = await t.call('GET', '/api/v1/users/me', { token: res.body.tokens.accessToken });
    expect(me.body).toMatchObject({
      email: 'solo@example.test',
      status: 'active',
      partnerId: null,
      orgId: null,
      permissions: [],
    });
    expect(
      t.db
        .select()
        .from(auditLogs)
        .where(eq(auditLogs.action, 'user.create'))
        .all()
        .some((a) => a.resourceId === res.body.user.id),
    ).toBe(true);

    const weak = await post(t, REGISTER, { name: 'W', email: 'w@x.test', password: 'password' });
    expect(weak.status).toBe(400);
    const refused = await post(t, REGISTER, { name: 'W', email: 'w@x.test', password: STRONG, acceptTerms: false });
    expect(refused.body.code).toBe('TERMS_NOT_ACCEPTED');
  });
});
