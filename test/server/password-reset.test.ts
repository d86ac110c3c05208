import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { auditLogs, ssoProviders, userTokens, users } from '../../src/server/db/schema/index.js';
import { sha256Hex } from '../../src/server/security/crypto.js';
import { createTestApp, loginAs, type TestApp } from '../helpers/server.js';
import { SEED_PASSWORD, seedWorld, type World } from '../helpers/seed.js';
import { expectCommitFailure } from '../helpers/commit-failure.js';
import { linkIn, tokenOf, type Inbox } from '../helpers/smtp.js';
import { useMailWorld } from '../helpers/world.js';

const API = '/api/v1';
const NEW_PASSWORD = 'Brand-New-Passw0rd';
const ANSWER = { success: true, message: 'If an account exists for this e-mail address, a password reset link has been sent to it.' };

const resetTokenIn = (message: string) => tokenOf(linkIn(message, 'reset-password'));

describe('password reset (01 §4.5, §8)', () => {
  let t: TestApp;
  let w: World;
  let inbox: Inbox;
  const forgot = (email: string, ip = '203.0.113.9') =>
    t.call('POST', `${API}/auth/forgot-password`, { body: { email }, headers: { 'x-forwarded-for': ip } });
  const reset = (token: string, password = NEW_PASSWORD) => t.call('POST', `${API}/auth/reset-password`, { body: { token, password } });

  useMailWorld({ SVC_PUBLIC_URL: 'https://svc.example.test', SVC_TRUSTED_PROXIES: '127.0.0.1' }, {}, (f) => {
    ({ t, w, inbox } = f);
  });

  it('01§4.5 forgot-password answers 200 with the same body whether the account exists or not; only an active account gets mail', async () => {
    const known = await forgot('A-Tech@a.test');
    const unknown = await forgot('nobody@nowhere.test');
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(known.body).toEqual(ANSWER);
    expect(unknown.body).toEqual(known.body);
    const message = await inbox.next();
    expect(message).toMatch(/^To: a-tech@a\.test/m);
    expect(message).toMatch(/^Subject: Reset your svc password/m);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox.messages).toHaveLength(1);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.password.reset.request')).all()).toHaveLength(1);
  });

  it('01§5.12 forgot-password mails no link to a user of an organization that enforces SSO (a password they could not use); same answer', async () => {
    t.db
      .insert(ssoProviders)
      .values({ orgId: w.orgA1.id, name: 'Corp IdP', type: 'oidc', scopes: 'openid email', attributeMapping: { email: 'email', name: 'name' }, enforceSso: true, status: 'active' })
      .run();
    const enforced = await forgot('org-admin@a1.test');
    expect(enforced.body).toEqual(ANSWER);
    // A partner user is never bound by one customer's enforcement: that one still gets its link.
    await forgot('a-tech@a.test');
    expect(await inbox.next()).toMatch(/^To: a-tech@a\.test/m);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox.messages).toHaveLength(1);
  });

  it('01§4.5 the link from the e-mail sets a new password once; every session ends; the token is stored hashed', async () => {
    await forgot('a-tech@a.test');
    const token = resetTokenIn(await inbox.next());
    expect(t.db.select().from(userTokens).get()?.tokenHash).toBe(sha256Hex(token));
    const before = await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech });
    expect(before.status).toBe(200);

    const weak = await reset(token, 'password');
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('WEAK_PASSWORD');

    const res = await reset(token);
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    expect((await t.call('GET', `${API}/users/me`, { token: w.tokens.aTech })).status).toBe(401);
    const old = await t.call('POST', `${API}/auth/login`, { body: { email: 'a-tech@a.test', password: SEED_PASSWORD } });
    expect(old.status).toBe(401);
    expect(await loginAs(t, 'a-tech@a.test', NEW_PASSWORD)).toBeTruthy();

    const again = await reset(token, 'Yet-Another-Passw0rd');
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'Invalid or expired reset token', code: 'INVALID_RESET_TOKEN' });
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.password.reset')).all()).toHaveLength(1);
  });

  it('01§8 a reset link is valid for one hour', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await forgot('a-tech@a.test');
    const expired = resetTokenIn(await inbox.next());
    vi.setSystemTime(Date.now() + 61 * 60_000);
    expect((await reset(expired)).status).toBe(400);

    await forgot('a-admin@a.test');
    const fresh = resetTokenIn(await inbox.next());
    vi.setSystemTime(Date.now() + 59 * 60_000);
    expect((await reset(fresh)).status).toBe(200);
  });

  it('01§4.5 a newer request replaces the previous link', async () => {
    await forgot('a-tech@a.test');
    const first = resetTokenIn(await inbox.next());
    await forgot('a-tech@a.test');
    const second = resetTokenIn(await inbox.next());
    expect((await reset(first)).status).toBe(400);
    expect((await reset(second)).status).toBe(200);
  });

  it('docs/api-notes: reset requests are limited per client IP (429) and silently per address', async () => {
    for (let i = 0; i < 5; i++) expect((await forgot(`nobody${i}@x.test`)).status).toBe(200);
    const limited = await forgot('nobody@x.test');
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await forgot('nobody@x.test', '203.0.113.10')).status).toBe(200);
  });

  it('docs/api-notes: without a mail service forgot-password does nothing observable; an administrator issues the link instead', async () => {
    await t.close();
    t = await createTestApp({ SVC_PUBLIC_URL: 'https://svc.example.test' });
    w = await seedWorld(t, { mfa: true });
    const res = await forgot('a-tech@a.test');
    expect(res.body).toEqual(ANSWER);
    expect(t.db.select().from(userTokens).all()).toEqual([]);

    const issued = await t.call('POST', `${API}/users/${w.users.aTech.id}/reset-password`, { token: w.tokens.aAdmin });
    expect(issued.status).toBe(200);
    expect(issued.body).toMatchObject({ id: w.users.aTech.id, email: 'a-tech@a.test', resetEmailSent: false });
    const link = new URL(issued.body.resetUrl as string);
    expect(link.origin + link.pathname).toBe('https://svc.example.test/reset-password');
    expect((await reset(link.searchParams.get('token') ?? '')).status).toBe(200);
    expect((await t.call('POST', `${API}/users/${w.users.bAdmin.id}/reset-password`, { token: w.tokens.aAdmin })).status).toBe(404);
  });

  it('01§4.5 a reset link is mailed only once its token is committed: a failed commit answers 503 and mails nothing', async () => {
    await expectCommitFailure(t.db, 'user_tokens', () => forgot('a-tech@a.test'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox.messages).toHaveLength(0);
    expect(t.db.select().from(userTokens).all()).toEqual([]);
    expect((await forgot('a-tech@a.test')).status).toBe(200);
    expect((await reset(resetTokenIn(await inbox.next()))).status).toBe(200);
  });

  it('01§4.5 a disabled account gets no reset, and a link issued before disabling stops working', async () => {
    await forgot('a-tech@a.test');
    const token = resetTokenIn(await inbox.next());
    t.db.update(users).set({ status: 'disabled' }).where(eq(users.id, w.users.aTech.id)).run();
    expect((await reset(token)).status).toBe(400);
    await forgot('a-tech@a.test');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox.messages).toHaveLength(1);
  });
});
