import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { auditLogs, mfaRecoveryCodes, organizationUsers, users } from '../../src/server/db/schema/index.js';
import { ORG_ADMIN_ROLE_ID } from '../../src/server/modules/identity/builtin-roles.js';
import { hashPassword } from '../../src/server/security/passwords.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, loginAs, totpFor, type TestApp } from '../helpers/server.js';

const EXPORT = '/api/v1/audit-logs/export';
const STEP_MS = 30_000;

/** Date is faked (timers are not) so TOTP steps and token expiry can be moved on deterministically. */
function advance(ms: number): void {
  vi.setSystemTime(Date.now() + ms);
}

function codeFor(secret: string): string {
  return totpFor(secret).generate({ timestamp: Date.now() });
}

function setCookies(headers: Record<string, unknown>): string[] {
  const raw = headers['set-cookie'];
  return Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
}

function actions(t: TestApp): string[] {
  return t.db
    .select({ action: auditLogs.action })
    .from(auditLogs)
    .all()
    .map((r) => r.action);
}

interface Enrolled {
  secret: string;
  recoveryCodes: string[];
  /** The access token of the session that enable returned (mfa true). */
  mfaToken: string;
}

/** setup → enable with the current code, then moves past that code's step. */
async function enrol(t: TestApp, token: string): Promise<Enrolled> {
  const setup = await t.call('POST', '/api/v1/auth/mfa/setup', { token });
  expect(setup.status).toBe(200);
  const secret = setup.body.secret as string;
  const enable = await t.call('POST', '/api/v1/auth/mfa/enable', { token, body: { code: codeFor(secret) } });
  expect(enable.status).toBe(200);
  advance(STEP_MS);
  return {
    secret,
    recoveryCodes: setup.body.recoveryCodes as string[],
    mfaToken: enable.body.tokens.accessToken as string,
  };
}

async function tempTokenFor(t: TestApp, email = ADMIN_EMAIL, password = ADMIN_PASSWORD): Promise<string> {
  const res = await t.call('POST', '/api/v1/auth/login', { body: { email, password } });
  expect(res.status).toBe(200);
  expect(res.body.mfaRequired).toBe(true);
  return res.body.tempToken as string;
}

describe('TOTP multi-factor authentication (01 §4.5, §5.7)', () => {
  let t: TestApp;
  let token: string;
  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // The start of a 30-second step, so no test crosses a step boundary by accident.
    vi.setSystemTime(Math.floor(Date.now() / STEP_MS) * STEP_MS + 1000);
    t = await createTestApp();
    token = await loginAs(t);
  });
  afterEach(async () => {
    await t.close();
    vi.useRealTimers();
  });

  it('01§4.5 setup returns the secret, an otpauth URL, a QR data URL and 10 recovery codes, stored sealed and hashed', async () => {
    const res = await t.call('POST', '/api/v1/auth/mfa/setup', { token });
    expect(res.status).toBe(200);
    const { secret, otpAuthUrl, qrCodeDataUrl, recoveryCodes } = res.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(otpAuthUrl as string);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(decodeURIComponent(url.pathname)).toBe(`/svc:${ADMIN_EMAIL}`);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      issuer: 'svc',
      secret,
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
    expect(qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);

    const user = t.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get();
    expect(user?.mfaEnabled).toBe(false);
    expect(user?.mfaPendingSecretEnc).toBeTruthy();
    expect(user?.mfaPendingSecretEnc).not.toContain(secret);
    const stored = t.db.select().from(mfaRecoveryCodes).all();
    expect(stored).toHaveLength(10);
    for (const row of stored) expect(recoveryCodes).not.toContain(row.codeHash);
    expect(res.body).not.toHaveProperty('tokens');
  });

  it('01§4.5 enable needs a code of the pending secret and returns a fresh session with mfa true and the refresh cookie', async () => {
    const noSetup = await t.call('POST', '/api/v1/auth/mfa/enable', { token, body: { code: '123456' } });
    expect(noSetup.status).toBe(400);
    expect(noSetup.body.code).toBe('MFA_SETUP_REQUIRED');

    const setup = await t.call('POST', '/api/v1/auth/mfa/setup', { token });
    const secret = setup.body.secret as string;
    const wrong = await t.call('POST', '/api/v1/auth/mfa/enable', {
      token,
      body: { code: codeFor(secret) === '000000' ? '111111' : '000000' },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: 'Invalid MFA code', code: 'INVALID_MFA_CODE' });

    const ok = await t.call('POST', '/api/v1/auth/mfa/enable', { token, body: { code: codeFor(secret) } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ success: true, user: { email: ADMIN_EMAIL, mfaEnabled: true } });
    expect(ok.body.tokens.refreshToken).toEqual(expect.any(String));
    expect(setCookies(ok.headers).some((c) => c.startsWith('svc_refresh_token=') && /HttpOnly/i.test(c))).toBe(true);

    const user = t.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get();
    expect(user).toMatchObject({ mfaEnabled: true, mfaMethod: 'totp', mfaPendingSecretEnc: null });
    expect(user?.mfaSecretEnc).toBeTruthy();
    expect(actions(t)).toContain('user.mfa.enable');

    // The session enable returned passed the second factor: it reaches an MFA-gated endpoint.
    const gated = await t.call('GET', EXPORT, { token: ok.body.tokens.accessToken });
    expect(gated.status).toBe(200);
    const again = await t.call('POST', '/api/v1/auth/mfa/setup', { token });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('MFA_ALREADY_ENABLED');
  });

  it('01§5.7 login asks for MFA with a tempToken; verify with a TOTP code gives tokens with mfa that pass the MFA gate', async () => {
    const before = await t.call('GET', EXPORT, { token });
    expect(before.status).toBe(403);
    expect(before.body).toEqual({ error: 'MFA required', code: 'MFA_REQUIRED' });

    const { secret } = await enrol(t, token);
    const login = await t.call('POST', '/api/v1/auth/login', {
      body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });
    expect(login.status).toBe(200);
    expect(login.body).toEqual({ mfaRequired: true, tempToken: expect.any(String), mfaMethod: 'totp' });
    expect(setCookies(login.headers)).toEqual([]);

    const verify = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: codeFor(secret), tempToken: login.body.tempToken },
    });
    expect(verify.status).toBe(200);
    expect(verify.body.user).toMatchObject({ email: ADMIN_EMAIL, mfaEnabled: true });
    expect(setCookies(verify.headers).some((c) => c.startsWith('svc_refresh_token='))).toBe(true);
    const [, payload = ''] = (verify.body.tokens.accessToken as string).split('.');
    expect(JSON.parse(Buffer.from(payload, 'base64url').toString())).toMatchObject({ mfa: true });

    const gated = await t.call('GET', EXPORT, { token: verify.body.tokens.accessToken });
    expect(gated.status).toBe(200);
    const login2 = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.login')).all().at(-1);
    expect(login2?.details).toMatchObject({ mfa: true, mfaMethod: 'totp' });
  });

  it('01§5.7 a TOTP code is refused the second time, even within its window', async () => {
    const { secret } = await enrol(t, token);
    const code = codeFor(secret);
    const first = await t.call('POST', '/api/v1/auth/mfa/verify', { body: { code, tempToken: await tempTokenFor(t) } });
    expect(first.status).toBe(200);
    const replay = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code, tempToken: await tempTokenFor(t) },
    });
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({ code: 'MFA_CODE_USED', error: 'MFA code already used; wait for the next one' });
    advance(STEP_MS);
    const next = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: codeFor(secret), tempToken: await tempTokenFor(t) },
    });
    expect(next.status).toBe(200);
  });

  it('01§5.7 a TOTP code is used once across endpoints: the code that signed in does not disable MFA', async () => {
    const { secret, mfaToken } = await enrol(t, token);
    const code = codeFor(secret);
    expect((await t.call('POST', '/api/v1/auth/mfa/verify', { body: { code, tempToken: await tempTokenFor(t) } })).status).toBe(200);
    const disable = await t.call('POST', '/api/v1/auth/mfa/disable', { token: mfaToken, body: { code } });
    expect(disable.status).toBe(400);
    expect(disable.body).toMatchObject({ code: 'MFA_CODE_USED', error: 'MFA code already used; wait for the next one' });
    expect(t.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get()?.mfaEnabled).toBe(true);
  });

  it('01§5.7 two concurrent sign-ins with one TOTP code: exactly one passes', async () => {
    const { secret } = await enrol(t, token);
    const code = codeFor(secret);
    const [a, b] = await Promise.all([tempTokenFor(t), tempTokenFor(t)]);
    const results = await Promise.all(
      [a, b].map((tempToken) => t.call('POST', '/api/v1/auth/mfa/verify', { body: { code, tempToken } })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it('01§5.7 a recovery code signs in once and is then used up', async () => {
    const { recoveryCodes } = await enrol(t, token);
    const code = recoveryCodes[3] ?? '';
    const first = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: code.toLowerCase(), tempToken: await tempTokenFor(t) },
    });
    expect(first.status).toBe(200);
    expect((await t.call('GET', EXPORT, { token: first.body.tokens.accessToken })).status).toBe(200);
    const used = t.db
      .select()
      .from(mfaRecoveryCodes)
      .all()
      .filter((r) => r.usedAt !== null);
    expect(used).toHaveLength(1);

    const second = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code, tempToken: await tempTokenFor(t) },
    });
    expect(second.status).toBe(401);
    expect(second.body).toMatchObject({ error: 'Invalid MFA code', code: 'INVALID_MFA_CODE' });
  });

  it('01§5.7 wrong code 401; garbage and expired (5 minutes) temp tokens 401', async () => {
    const { secret } = await enrol(t, token);
    const tempToken = await tempTokenFor(t);
    const current = codeFor(secret);
    const wrong = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: current === '999999' ? '999998' : '999999', tempToken },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('INVALID_MFA_CODE');

    const garbage = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: current, tempToken: 'not-a-token' },
    });
    expect(garbage.status).toBe(401);
    expect(garbage.body.code).toBe('INVALID_MFA_TOKEN');
    // An access token is not a temp token.
    const access = await t.call('POST', '/api/v1/auth/mfa/verify', { body: { code: current, tempToken: token } });
    expect(access.status).toBe(401);

    advance(5 * 60_000 + 1000);
    const expired = await t.call('POST', '/api/v1/auth/mfa/verify', { body: { code: codeFor(secret), tempToken } });
    expect(expired.status).toBe(401);
    expect(expired.body.code).toBe('INVALID_MFA_TOKEN');
  });

  it('04 Sign-in: after 5 bad codes in 5 minutes MFA verify answers 429 Too many MFA attempts with Retry-After', async () => {
    const { secret } = await enrol(t, token);
    const tempToken = await tempTokenFor(t);
    const good = codeFor(secret);
    const bad = good === '000000' ? '000001' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await t.call('POST', '/api/v1/auth/mfa/verify', { body: { code: bad, tempToken } });
      expect(res.status).toBe(401);
    }
    const blocked = await t.call('POST', '/api/v1/auth/mfa/verify', { body: { code: good, tempToken } });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('Too many MFA attempts');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(blocked.headers['retry-after'])).toBeLessThanOrEqual(300);

    // The window slides: five minutes later the user may try again.
    advance(5 * 60_000 + 1000);
    const later = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: codeFor(secret), tempToken: await tempTokenFor(t) },
    });
    expect(later.status).toBe(200);
  });

  it('04 Sign-in: the MFA limit is configurable (SVC_MFA_LIMIT)', async () => {
    const small = await createTestApp({ SVC_MFA_LIMIT: '2' });
    try {
      const adminToken = await loginAs(small);
      const { secret } = await enrol(small, adminToken);
      const tempToken = await tempTokenFor(small);
      const bad = codeFor(secret) === '000000' ? '000001' : '000000';
      expect((await small.call('POST', '/api/v1/auth/mfa/verify', { body: { code: bad, tempToken } })).status).toBe(
        401,
      );
      expect((await small.call('POST', '/api/v1/auth/mfa/verify', { body: { code: bad, tempToken } })).status).toBe(
        401,
      );
      expect((await small.call('POST', '/api/v1/auth/mfa/verify', { body: { code: bad, tempToken } })).status).toBe(
        429,
      );
    } finally {
      await small.close();
    }
  });

  it('01§4.5 verify without tempToken steps up the bearer session to a new session with mfa true', async () => {
    const { secret } = await enrol(t, token);
    // `token` is the pre-MFA session: still valid, but without the second factor.
    expect((await t.call('GET', EXPORT, { token })).status).toBe(403);
    const none = await t.call('POST', '/api/v1/auth/mfa/verify', { body: { code: codeFor(secret) } });
    expect(none.status).toBe(401);
    const stepUp = await t.call('POST', '/api/v1/auth/mfa/verify', { token, body: { code: codeFor(secret) } });
    expect(stepUp.status).toBe(200);
    expect(stepUp.body.user.email).toBe(ADMIN_EMAIL);
    expect((await t.call('GET', EXPORT, { token: stepUp.body.tokens.accessToken })).status).toBe(200);
  });

  it('01§4.5 recovery-codes takes no body: a session signed in with MFA replaces every code; one without is 403', async () => {
    const { recoveryCodes, mfaToken } = await enrol(t, token);
    // The session from before MFA was enabled has not proved the second factor.
    const plain = await t.call('POST', '/api/v1/auth/mfa/recovery-codes', { token });
    expect(plain.status).toBe(403);
    expect(plain.body.code).toBe('MFA_REQUIRED');
    // An older client's code in the body is ignored.
    const res = await t.call('POST', '/api/v1/auth/mfa/recovery-codes', { token: mfaToken, body: { code: '000000' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.recoveryCodes).toHaveLength(10);
    expect(res.body.recoveryCodes).not.toContain(recoveryCodes[0]);
    expect(t.db.select().from(mfaRecoveryCodes).all()).toHaveLength(10);
    expect(actions(t)).toContain('user.mfa.recovery_codes.regenerate');

    const old = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: recoveryCodes[0], tempToken: await tempTokenFor(t) },
    });
    expect(old.status).toBe(401);
    const fresh = await t.call('POST', '/api/v1/auth/mfa/verify', {
      body: { code: res.body.recoveryCodes[0], tempToken: await tempTokenFor(t) },
    });
    expect(fresh.status).toBe(200);
  });

  it('01§4.5 disable needs a valid code, then login no longer asks for MFA', async () => {
    const { secret, mfaToken } = await enrol(t, token);
    const wrong = await t.call('POST', '/api/v1/auth/mfa/disable', {
      token: mfaToken,
      body: { code: codeFor(secret) === '000000' ? '000001' : '000000' },
    });
    expect(wrong.status).toBe(400);
    const ok = await t.call('POST', '/api/v1/auth/mfa/disable', { token: mfaToken, body: { code: codeFor(secret) } });
    expect(ok.status).toBe(200);
    expect(ok.body.success).toBe(true);
    expect(t.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get()).toMatchObject({
      mfaEnabled: false,
      mfaSecretEnc: null,
      mfaMethod: null,
    });
    expect(t.db.select().from(mfaRecoveryCodes).all()).toHaveLength(0);
    expect(actions(t)).toContain('user.mfa.disable');
    const login = await t.call('POST', '/api/v1/auth/login', {
      body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
    });
    expect(login.body.mfaRequired).toBe(false);
  });

  it('01§4.5 disable is refused with 403 while the partner settings require MFA', async () => {
    const reg = await t.call('POST', '/api/v1/auth/register-partner', {
      body: {
        companyName: 'Strict MSP',
        name: 'Pat',
        email: 'pat@strict.test',
        password: 'Str0ng-Passw0rd',
        acceptTerms: true,
      },
    });
    expect(reg.status).toBe(201);
    const patToken = reg.body.tokens.accessToken as string;
    const { secret, mfaToken } = await enrol(t, patToken);

    const patch = await t.call('PATCH', `/api/v1/orgs/partners/${reg.body.partner.id}`, {
      token,
      body: { settings: { requireMfa: true } },
    });
    expect(patch.status).toBe(200);
    const refused = await t.call('POST', '/api/v1/auth/mfa/disable', {
      token: mfaToken,
      body: { code: codeFor(secret) },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('MFA_ENFORCED');
    expect(t.db.select().from(users).where(eq(users.email, 'pat@strict.test')).get()?.mfaEnabled).toBe(true);

    await t.call('PATCH', `/api/v1/orgs/partners/${reg.body.partner.id}`, {
      token,
      body: { settings: { requireMfa: false } },
    });
    const allowed = await t.call('POST', '/api/v1/auth/mfa/disable', {
      token: mfaToken,
      body: { code: codeFor(secret) },
    });
    expect(allowed.status).toBe(200);
  });

  it('01§4.5 disable is refused with 403 while the organization settings require MFA', async () => {
    const partner = await t.call('POST', '/api/v1/orgs/partners', { token, body: { name: 'Open MSP', slug: 'open' } });
    const org = await t.call('POST', '/api/v1/orgs/organizations', {
      token,
      body: { name: 'Strict Org', slug: 'strict', partnerId: partner.body.id, settings: { requireMfa: true } },
    });
    expect(org.status).toBe(201);
    const member = t.db
      .insert(users)
      .values({
        email: 'olga@strict.test',
        name: 'Olga',
        passwordHash: await hashPassword('Str0ng-Passw0rd'),
        status: 'active',
      })
      .returning()
      .get();
    t.db.insert(organizationUsers).values({ orgId: org.body.id, userId: member.id, roleId: ORG_ADMIN_ROLE_ID }).run();
    const olga = await loginAs(t, 'olga@strict.test', 'Str0ng-Passw0rd');
    const { secret, mfaToken } = await enrol(t, olga);
    const refused = await t.call('POST', '/api/v1/auth/mfa/disable', {
      token: mfaToken,
      body: { code: codeFor(secret) },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('MFA_ENFORCED');
  });

  it('01§5.7 with ENABLE_2FA off, setup and enable answer MFA_DISABLED and login never asks for MFA', async () => {
    const off = await createTestApp({ ENABLE_2FA: 'false' });
    try {
      const adminToken = await loginAs(off);
      const setup = await off.call('POST', '/api/v1/auth/mfa/setup', { token: adminToken });
      expect(setup.status).toBe(400);
      expect(setup.body).toEqual({ error: 'MFA is disabled on this server', code: 'MFA_DISABLED' });
      const enable = await off.call('POST', '/api/v1/auth/mfa/enable', { token: adminToken, body: { code: '123456' } });
      expect(enable.status).toBe(400);
      expect(enable.body.code).toBe('MFA_DISABLED');

      // A user who turned MFA on while the feature was on signs in with the password alone.
      off.db.update(users).set({ mfaEnabled: true, mfaMethod: 'totp' }).where(eq(users.email, ADMIN_EMAIL)).run();
      const login = await off.call('POST', '/api/v1/auth/login', {
        body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
      });
      expect(login.status).toBe(200);
      expect(login.body.mfaRequired).toBe(false);
      // And the MFA gate does not apply.
      expect((await off.call('GET', EXPORT, { token: login.body.tokens.accessToken })).status).toBe(200);
    } finally {
      await off.close();
    }
  });
});
