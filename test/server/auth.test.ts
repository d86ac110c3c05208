import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/server/config.js';
import { auditLogs, users } from '../../src/server/db/schema/index.js';
import { hashLoad } from '../../src/server/security/passwords.js';
import { expectCommitFailure } from '../helpers/commit-failure.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, type CookieReply, sendWithCookies, type TestApp, useTestApp } from '../helpers/server.js';

const LOGIN = '/api/v1/auth/login';
const REFRESH = '/api/v1/auth/refresh';
const ME = '/api/v1/users/me';

const send = sendWithCookies;

const login = (t: TestApp, email: string, password: string, ip = '127.0.0.1') =>
  send(t, 'POST', LOGIN, { ip, body: { email, password } });

/** Neither the access token nor the refresh token of each signed-in answer works any more (401). */
async function expectSessionsEnded(t: TestApp, sessions: CookieReply[]): Promise<void> {
  for (const session of sessions) {
    expect((await send(t, 'GET', ME, { token: session.body.tokens.accessToken })).status).toBe(401);
    expect((await send(t, 'POST', REFRESH, { body: { refreshToken: session.body.tokens.refreshToken } })).status).toBe(401);
  }
}

/**
 * Starts `count` requests at once and resolves once every one of them has reached its password hash (running,
 * queued, or done: hashes run one at a time), so that a request sent next is checked after all of them. Bounded
 * by `timeoutMs`.
 */
async function startAll(count: number, start: (i: number) => Promise<CookieReply>, timeoutMs = 5000): Promise<{ answers: Promise<CookieReply[]> }> {
  let done = 0;
  const pending = Array.from({ length: count }, (_, i) => start(i).finally(() => (done += 1)));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { running, waiting } = hashLoad();
    if (running + waiting + done >= count) break;
    if (Date.now() > deadline) throw new Error(`only ${running + waiting + done} of ${count} requests reached their hash`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { answers: Promise.all(pending) };
}

describe('sign-in (01 §4.5, §8; 04 "Sign-in")', () => {
  let t: TestApp | undefined;
  const startApp = useTestApp();

  it('04 Sign-in: default limits are 10/5 min per IP, 5/5 min per IP+e-mail, lockout 5 in 15 min, MFA 5/5 min; 01§8 registration 5 and 3 per IP per hour', () => {
    const { throttle } = loadConfig({ SVC_DATA_DIR: '/tmp/svc-config-test' });
    expect(throttle).toEqual({
      loginPerIp: 10,
      loginPerEmail: 5,
      loginWindowSeconds: 300,
      lockoutFailures: 5,
      lockoutSeconds: 900,
      mfaAttempts: 5,
      mfaWindowSeconds: 300,
      registerPerIp: 5,
      registerPartnerPerIp: 3,
      registerWindowSeconds: 3600,
    });
  });

  it('04 Sign-in: login is throttled per IP (SVC_LOGIN_IP_LIMIT) with 429 and Retry-After; other IPs are unaffected', async () => {
    t = await startApp({
      SVC_LOGIN_IP_LIMIT: '3',
      SVC_LOGIN_EMAIL_LIMIT: '100',
      SVC_LOGIN_LOCKOUT_FAILURES: '100',
    });
    for (const email of ['a@x.test', 'b@x.test', 'c@x.test']) {
      expect((await login(t, email, 'Wrong-Passw0rd', '10.0.0.1')).status).toBe(401);
    }
    const blocked = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, '10.0.0.1');
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ error: 'Too many login attempts', code: 'TOO_MANY_ATTEMPTS' });
    const retryAfter = Number(blocked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(300);
    expect((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, '10.0.0.2')).status).toBe(200);
  });

  it('04 Sign-in: login is throttled per IP and e-mail (SVC_LOGIN_EMAIL_LIMIT); another e-mail from the same IP still gets through', async () => {
    t = await startApp({ SVC_LOGIN_EMAIL_LIMIT: '2', SVC_LOGIN_LOCKOUT_FAILURES: '100' });
    expect((await login(t, ADMIN_EMAIL, 'Wrong-Passw0rd')).status).toBe(401);
    expect((await login(t, ADMIN_EMAIL, 'Wrong-Passw0rd')).status).toBe(401);
    const blocked = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
    expect((await login(t, 'someone@x.test', 'Wrong-Passw0rd')).status).toBe(401);
    expect((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, '10.9.9.9')).status).toBe(200);
  });

  it('04 Sign-in: with the default limits the 11th attempt from one IP and the 6th for one e-mail are refused', async () => {
    t = await startApp();
    for (let i = 0; i < 5; i++)
      expect((await login(t, 'nobody@x.test', 'Wrong-Passw0rd', '10.1.1.1')).status).toBe(401);
    expect((await login(t, 'nobody@x.test', 'Wrong-Passw0rd', '10.1.1.1')).status).toBe(429);
    // Every attempt counts against the IP, the refused sixth one included: four more reach ten.
    for (let i = 0; i < 4; i++)
      expect((await login(t, `other${i}@x.test`, 'Wrong-Passw0rd', '10.1.1.1')).status).toBe(401);
    expect((await login(t, 'fresh@x.test', 'Wrong-Passw0rd', '10.1.1.1')).status).toBe(429);
  });

  it('04 Sign-in: 5 failures lock the account; the correct password then gets the generic 401 (SVC_LOGIN_LOCKOUT_FAILURES)', async () => {
    // The per-IP and per-e-mail throttles are raised so that only the lockout is at work.
    for (const [env, failures] of [
      [{}, 5],
      [{ SVC_LOGIN_LOCKOUT_FAILURES: '2' }, 2],
    ] as const) {
      const app = await startApp({ SVC_LOGIN_EMAIL_LIMIT: '100', SVC_LOGIN_IP_LIMIT: '100', ...env });
      t = app;
      for (let i = 0; i < failures - 1; i++) expect((await login(app, ADMIN_EMAIL, 'Wrong-Passw0rd')).status).toBe(401);
      expect(app.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get()?.lockedUntil).toBeNull();
      const last = await login(app, ADMIN_EMAIL, 'Wrong-Passw0rd');
      expect(last.body.error).toBe('Invalid email or password');
      const locked = await login(app, ADMIN_EMAIL, ADMIN_PASSWORD);
      expect(locked.status).toBe(401);
      expect(locked.body).toEqual({ error: 'Invalid email or password', code: 'INVALID_CREDENTIALS' });
      // The lock is on the account, not on the address.
      expect((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD, '10.2.2.2')).status).toBe(401);
      expect(app.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get()?.lockedUntil).toBeTruthy();
      await app.close();
      t = undefined;
    }
  });

  it('04 Sign-in: concurrent wrong passwords from many addresses get at most 5 checked; the right one sent meanwhile gets the generic 401 and the lock holds', async () => {
    // Default limits; one address per attempt keeps every attempt under the per-IP and per-IP+e-mail limits.
    const app = await startApp();
    t = app;
    const wrong = await startAll(12, (i) => login(app, ADMIN_EMAIL, `Wrong-Passw0rd-${i}`, `10.20.0.${i + 1}`));
    // Sent while the twelve wait for their hashes (one at a time).
    const right = await login(app, ADMIN_EMAIL, ADMIN_PASSWORD, '10.20.1.1');
    const wrongAnswers = await wrong.answers;

    const generic = { error: 'Invalid email or password', code: 'INVALID_CREDENTIALS' };
    expect(right.status).toBe(401);
    expect(right.body).toEqual(generic);
    expect(right.cookies.get('svc_refresh_token')).toBeUndefined();
    for (const answer of wrongAnswers) expect([answer.status, answer.body]).toEqual([401, generic]);
    // Which passwords were checked: the audit reason says; the rest were refused as locked without a check.
    const reasons = app.db
      .select()
      .from(auditLogs)
      .where(eq(auditLogs.action, 'user.login.failed'))
      .all()
      .map((entry) => (entry.details as { reason: string }).reason);
    expect(reasons).toHaveLength(13);
    expect(reasons.filter((reason) => reason === 'bad password')).toHaveLength(5);
    expect(reasons.filter((reason) => reason === 'locked')).toHaveLength(8);
    expect(app.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.login')).all()).toEqual([]);
    expect(app.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get()?.lockedUntil).toBeTruthy();
    expect((await login(app, ADMIN_EMAIL, ADMIN_PASSWORD, '10.20.2.2')).status).toBe(401);
  });

  it('01§4.5 refresh rotates the pair: the old refresh token is refused, and presenting it again ends the session', async () => {
    t = await startApp();
    const first = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const r1 = first.body.tokens.refreshToken as string;
    const rotated = await send(t, 'POST', REFRESH, { body: { refreshToken: r1 } });
    expect(rotated.status).toBe(200);
    const r2 = rotated.body.tokens.refreshToken as string;
    expect(r2).not.toBe(r1);
    expect((await send(t, 'GET', ME, { token: rotated.body.tokens.accessToken })).status).toBe(200);

    const reused = await send(t, 'POST', REFRESH, { body: { refreshToken: r1 } });
    expect(reused.status).toBe(401);
    expect(reused.body.code).toBe('INVALID_REFRESH_TOKEN');
    // The reuse revoked the whole session: its newest refresh token and its access tokens stop working.
    expect((await send(t, 'POST', REFRESH, { body: { refreshToken: r2 } })).status).toBe(401);
    expect((await send(t, 'GET', ME, { token: rotated.body.tokens.accessToken })).status).toBe(401);
    expect((await send(t, 'GET', ME, { token: first.body.tokens.accessToken })).status).toBe(401);
  });

  it('01§4.5 tokens are handed out only once their session is committed: a failed commit answers 503, and the refresh token presented stays good', async () => {
    t = await startApp();
    const app = t;
    await expectCommitFailure(app.db, 'sessions', () => login(app, ADMIN_EMAIL, ADMIN_PASSWORD));
    const first = await login(app, ADMIN_EMAIL, ADMIN_PASSWORD);
    expect(first.status).toBe(200);
    const refresh = () => send(app, 'POST', REFRESH, { body: { refreshToken: first.body.tokens.refreshToken } });
    await expectCommitFailure(app.db, 'refresh_tokens', refresh);
    // The rotation was not kept: the token presented is still the session's live one.
    const rotated = await refresh();
    expect(rotated.status).toBe(200);
    expect((await send(app, 'GET', ME, { token: rotated.body.tokens.accessToken })).status).toBe(200);
  });

  it('01§4.5 refresh from the svc_refresh_token cookie requires the x-svc-csrf header', async () => {
    t = await startApp();
    const first = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const refreshCookie = first.cookies.get('svc_refresh_token') ?? '';
    expect(refreshCookie).toBe(first.body.tokens.refreshToken);
    const cookies = { svc_refresh_token: refreshCookie };

    const missing = await send(t, 'POST', REFRESH, { cookies });
    expect(missing.status).toBe(401);
    expect(missing.body.code).toBe('CSRF_REQUIRED');
    const empty = await send(t, 'POST', REFRESH, { cookies, headers: { 'x-svc-csrf': '' } });
    expect(empty.status).toBe(401);
    expect(empty.body.code).toBe('CSRF_REQUIRED');

    const ok = await send(t, 'POST', REFRESH, { cookies, headers: { 'x-svc-csrf': 'any value' } });
    expect(ok.status).toBe(200);
    expect(ok.cookies.get('svc_refresh_token')).toBe(ok.body.tokens.refreshToken);
    expect(ok.cookies.get('svc_refresh_token')).not.toBe(refreshCookie);
  });

  it('02§4.6 the mobile client refreshes from the cookie with the constant `x-svc-csrf: 1`', async () => {
    t = await startApp();
    const first = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    // Only what a cookie jar keeps: the cookies the server set, not a value read out of one.
    const cookies = Object.fromEntries(first.cookies);
    const res = await send(t, 'POST', REFRESH, { cookies, headers: { 'x-svc-csrf': '1' } });
    expect(res.status).toBe(200);
    expect((await send(t, 'GET', ME, { token: res.body.tokens.accessToken })).status).toBe(200);
  });

  it('01§4.5 CORS stays closed: a cross-origin preflight for x-svc-csrf gets no Access-Control-Allow-* headers', async () => {
    t = await startApp();
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: REFRESH,
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-svc-csrf',
      },
    });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const first = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const post = await send(t, 'POST', REFRESH, {
      cookies: Object.fromEntries(first.cookies),
      headers: { origin: 'https://evil.example', 'x-svc-csrf': '1' },
    });
    expect(Object.keys(post.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  it('01§4.5 logout revokes every token of the user and clears the cookie', async () => {
    t = await startApp();
    const a = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const b = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, '10.3.3.3');
    const out = await send(t, 'POST', '/api/v1/auth/logout', { token: a.body.tokens.accessToken });
    expect(out.status).toBe(200);
    expect(out.body.success).toBe(true);
    expect(out.cookies.get('svc_refresh_token')).toBe('');
    await expectSessionsEnded(t, [a, b]);
  });

  it('01§4.5 change-password checks the current password, strength and difference, then ends every session', async () => {
    t = await startApp();
    const a = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD);
    const b = await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, '10.4.4.4');
    const token = a.body.tokens.accessToken as string;
    const change = (currentPassword: string, newPassword: string) =>
      send(t as TestApp, 'POST', '/api/v1/auth/change-password', { token, body: { currentPassword, newPassword } });

    const wrongCurrent = await change('Not-The-Passw0rd', 'New-Passw0rd-2024');
    expect(wrongCurrent.status).toBe(401);
    expect(wrongCurrent.body).toEqual({ error: 'Current password is incorrect', code: 'INVALID_CURRENT_PASSWORD' });
    const weak = await change(ADMIN_PASSWORD, 'short1A');
    expect(weak.status).toBe(400);
    expect(weak.body.error).toBe('Password must be at least 8 characters');
    const noDigit = await change(ADMIN_PASSWORD, 'OnlyLettersHere');
    expect(noDigit.body.error).toBe('Password must contain a number');
    const same = await change(ADMIN_PASSWORD, ADMIN_PASSWORD);
    expect(same.status).toBe(400);
    expect(same.body.code).toBe('PASSWORD_UNCHANGED');

    const ok = await change(ADMIN_PASSWORD, 'New-Passw0rd-2024');
    expect(ok.status).toBe(200);
    expect(ok.body.success).toBe(true);
    expect(ok.cookies.get('svc_refresh_token')).toBe('');
    await expectSessionsEnded(t, [a, b]);
    expect((await login(t, ADMIN_EMAIL, ADMIN_PASSWORD, '10.5.5.5')).status).toBe(401);
    expect((await login(t, ADMIN_EMAIL, 'New-Passw0rd-2024', '10.5.5.6')).status).toBe(200);
    expect(t.db.select().from(users).where(eq(users.email, ADMIN_EMAIL)).get()?.passwordChangedAt).toBeTruthy();
    const entry = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.password.change')).get();
    expect(entry).toMatchObject({ actorEmail: ADMIN_EMAIL, result: 'success' });
  });

  it('01§4.5 change-password: wrong current passwords are throttled like login (SVC_LOGIN_EMAIL_LIMIT failures)', async () => {
    t = await startApp({ SVC_LOGIN_EMAIL_LIMIT: '2' });
    const token = (await login(t, ADMIN_EMAIL, ADMIN_PASSWORD)).body.tokens.accessToken as string;
    const change = (currentPassword: string) =>
      send(t as TestApp, 'POST', '/api/v1/auth/change-password', {
        token,
        body: { currentPassword, newPassword: 'New-Passw0rd-2024' },
      });
    expect((await change('Wrong-Passw0rd-1')).status).toBe(401);
    expect((await change('Wrong-Passw0rd-2')).status).toBe(401);
    const blocked = await change(ADMIN_PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toBeDefined();
  });

  it('01§4.5 change-password: concurrent wrong current passwords get at most SVC_LOGIN_EMAIL_LIMIT checked; the right one sent meanwhile is refused 429', async () => {
    const app = await startApp();
    t = app;
    const token = (await login(app, ADMIN_EMAIL, ADMIN_PASSWORD)).body.tokens.accessToken as string;
    const change = (currentPassword: string) =>
      send(app, 'POST', '/api/v1/auth/change-password', { token, body: { currentPassword, newPassword: 'New-Passw0rd-2024' } });
    const wrong = await startAll(12, (i) => change(`Wrong-Passw0rd-${i}`));
    const right = await change(ADMIN_PASSWORD);
    const statuses = (await wrong.answers).map((answer) => answer.status);

    // Five checked and wrong (401); the others refused before any check (429), the right one too.
    expect(statuses.filter((status) => status === 401)).toHaveLength(5);
    expect(statuses.filter((status) => status === 429)).toHaveLength(7);
    expect(right.status).toBe(429);
    expect(right.body.code).toBe('TOO_MANY_ATTEMPTS');
    expect(Number(right.headers['retry-after'])).toBeGreaterThan(0);
    expect(app.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.password.change')).all()).toEqual([]);
  });
});
