import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { userTokens, users } from '../../src/server/db/schema/index.js';
import { buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { sha256Hex } from '../../src/server/security/crypto.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { ROLES, seedWorld, type World } from '../helpers/seed.js';
import { expectCommitFailure } from '../helpers/commit-failure.js';
import { linkIn, tokenOf, type Inbox } from '../helpers/smtp.js';
import { useMailWorld } from '../helpers/world.js';

const API = '/api/v1';
const PASSWORD = 'Invited-Passw0rd';

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('invitations (01 §4.4, 04 Users and roles)', () => {
  let t: TestApp;
  let w: World;
  let inbox: Inbox;

  const invite = (email: string, token = w.tokens.aAdmin) =>
    t.call('POST', `${API}/users/invite`, { token, body: { email, name: 'Invited Person', roleId: ROLES.partnerViewer } });
  const accept = (token: string, password = PASSWORD, name?: string) =>
    t.call('POST', `${API}/auth/accept-invite`, { body: { token, password, ...(name ? { name } : {}) } });

  useMailWorld({ SVC_PUBLIC_URL: 'https://svc.example.test/', SVC_SMTP_FROM: 'svc <admin@svc.example.test>' }, { mfa: true }, (f) => {
    ({ t, w, inbox } = f);
  });

  it('01§4.4 the invitation goes out through a real SMTP server; the link in it accepts the invite, sets the password and signs in', async () => {
    const res = await invite('newcomer@a.test');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'invited', inviteEmailSent: true, inviteUrl: null });

    const message = await inbox.next();
    expect(message).toMatch(/^To: newcomer@a\.test/m);
    expect(message).toMatch(/^From: svc <admin@svc\.example\.test>/m);
    expect(message).toMatch(/^Subject: You have been invited to svc/m);
    const link = linkIn(message, 'accept-invite');
    expect(link.startsWith('https://svc.example.test/accept-invite?token=')).toBe(true);

    const accepted = await accept(tokenOf(link), PASSWORD, 'New Comer');
    expect(accepted.status).toBe(200);
    expect(accepted.body.user).toMatchObject({ id: res.body.id, email: 'newcomer@a.test', name: 'New Comer', mfaEnabled: false });
    expect(String(accepted.headers['set-cookie'])).toContain('svc_refresh_token=');
    const me = await t.call('GET', `${API}/users/me`, { token: accepted.body.tokens.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ status: 'active', roleId: ROLES.partnerViewer, partnerId: w.partnerA.id });

    const login = await t.call('POST', `${API}/auth/login`, { body: { email: 'newcomer@a.test', password: PASSWORD } });
    expect(login.status).toBe(200);
    expect(login.body.mfaRequired).toBe(false);
  });

  it('01§4.4 an invitation token is single-use and stored only as its SHA-256', async () => {
    await invite('once@a.test');
    const token = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    const rows = t.db.select().from(userTokens).all();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.tokenHash).toBe(sha256Hex(token));
    expect(JSON.stringify(rows)).not.toContain(token);

    expect((await accept(token)).status).toBe(200);
    const again = await accept(token, 'Another-Passw0rd');
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: 'Invalid or expired invitation', code: 'INVALID_INVITE_TOKEN' });
    expect((await accept('not-a-token')).status).toBe(400);
  });

  it('01§4.4 an invitation expires after SVC_INVITE_TTL_HOURS (72 by default)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await invite('late@a.test');
    await invite('intime@a.test');
    const late = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    const inTime = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    vi.setSystemTime(Date.now() + 72 * 3600_000 - 60_000);
    expect((await accept(inTime)).status).toBe(200);
    vi.setSystemTime(Date.now() + 2 * 60_000);
    const expired = await accept(late);
    expect(expired.status).toBe(400);
    expect(expired.body.code).toBe('INVALID_INVITE_TOKEN');
    expect(t.db.select().from(users).where(eq(users.email, 'late@a.test')).get()?.status).toBe('invited');
  });

  it('01§4.4 the invitation lifetime is configurable (SVC_INVITE_TTL_HOURS)', async () => {
    await t.close();
    t = await createTestApp({ SVC_INVITE_TTL_HOURS: '1' });
    w = await seedWorld(t, { mfa: true });
    vi.useFakeTimers({ toFake: ['Date'] });
    const res = await invite('hour@a.test');
    vi.setSystemTime(Date.now() + 61 * 60_000);
    expect((await accept(tokenOf(res.body.inviteUrl as string))).status).toBe(400);
  });

  it('01§4.5 a weak password is refused (400) without using up the link', async () => {
    await invite('weak@a.test');
    const token = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    const weak = await accept(token, 'short');
    expect(weak.status).toBe(400);
    expect(weak.body).toMatchObject({ error: 'Password must be at least 8 characters', code: 'WEAK_PASSWORD' });
    expect((await accept(token, 'alllowercase1')).status).toBe(400);
    expect((await accept(token)).status).toBe(200);
  });

  it('01§4.4 resend-invite mails a new link and the previous one stops working', async () => {
    const res = await invite('resend@a.test');
    const first = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    const again = await t.call('POST', `${API}/users/resend-invite`, { token: w.tokens.aAdmin, body: { userId: res.body.id } });
    expect(again.body).toMatchObject({ inviteEmailSent: true, inviteUrl: null });
    const second = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    expect(second).not.toBe(first);
    expect((await accept(first)).status).toBe(400);
    expect((await accept(second)).status).toBe(200);
    // Accepted: no more resending.
    const after = await t.call('POST', `${API}/users/resend-invite`, { token: w.tokens.aAdmin, body: { userId: res.body.id } });
    expect(after.status).toBe(400);
  });

  it('01§4.4 the invitation is mailed only once its token is committed: a failed commit answers 503 and mails nothing', async () => {
    await expectCommitFailure(t.db, 'user_tokens', () => invite('uncommitted@a.test'));
    expect(t.db.select().from(users).where(eq(users.email, 'uncommitted@a.test')).get()).toBeUndefined();
    const again = await invite('uncommitted@a.test');
    expect(again.status).toBe(201);
    // The one mail is the second invitation's, and its link works.
    expect((await accept(tokenOf(linkIn(await inbox.next(), 'accept-invite')))).status).toBe(200);
    expect(inbox.messages).toHaveLength(1);
  });

  it("01§4.5 an administrator's reset link is mailed only once its token is committed: a failed commit answers 503 and mails nothing", async () => {
    const resetLink = () => t.call('POST', `${API}/users/${w.users.aTech.id}/reset-password`, { token: w.tokens.aAdmin });
    await expectCommitFailure(t.db, 'user_tokens', resetLink);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(inbox.messages).toHaveLength(0);
    expect(t.db.select().from(userTokens).all()).toEqual([]);
    expect(await resetLink()).toMatchObject({ status: 200, body: { resetEmailSent: true, resetUrl: null } });
    expect(tokenOf(linkIn(await inbox.next(), 'reset-password'))).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('01§4.4 removing an invited user ends the invitation', async () => {
    const res = await invite('removed@a.test');
    const token = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    expect((await t.call('DELETE', `${API}/users/${res.body.id}`, { token: w.tokens.aAdmin })).status).toBe(200);
    expect((await accept(token)).status).toBe(400);
  });

  it('01§3 PATCH status disabled on an invited user disables it and withdraws the invitation', async () => {
    const res = await invite('withdrawn@a.test');
    const token = tokenOf(linkIn(await inbox.next(), 'accept-invite'));
    const disabled = await t.call('PATCH', `${API}/users/${res.body.id}`, { token: w.tokens.aAdmin, body: { status: 'disabled' } });
    expect(disabled.status, disabled.text).toBe(200);
    expect(disabled.body.status).toBe('disabled');
    expect((await accept(token)).status).toBe(400);
    const resend = await t.call('POST', `${API}/users/resend-invite`, { token: w.tokens.aAdmin, body: { userId: res.body.id } });
    expect(resend.body.code).toBe('NOT_INVITED');
  });

  it('04 Users and roles: when the mail server cannot be reached, the inviter gets the link, and the log never shows it', async () => {
    await t.close();
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-invite-'));
    const config = loadConfig({
      SVC_DATA_DIR: dataDir,
      SVC_ADMIN_EMAIL: 'admin@example.test',
      SVC_ADMIN_PASSWORD: 'Admin-Passw0rd!',
      SVC_SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`,
      SVC_SMTP_TIMEOUT_MS: '2000',
    });
    const built = await buildApp(config, { logger: { level: 'info', stream }, announce: () => {} });
    const logged: TestApp = {
      ...built,
      dataDir,
      announced: [],
      async close() {
        await built.app.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
      async call(method, url, options = {}) {
        const headers: Record<string, string> = {};
        if (options.token) headers.authorization = `Bearer ${options.token}`;
        const res = await built.app.inject({ method, url, headers, ...(options.body !== undefined ? { payload: options.body as object } : {}) });
        return { status: res.statusCode, headers: res.headers, body: res.json<unknown>(), text: res.body };
      },
    };
    t = logged;
    w = await seedWorld(t, { mfa: true });
    const res = await invite('offline@a.test');
    expect(res.status).toBe(201);
    expect(res.body.inviteEmailSent).toBe(false);
    const token = tokenOf(res.body.inviteUrl as string);
    const log = lines.join('');
    expect(log).toContain('e-mail delivery failed');
    expect(log).not.toContain(token);
    expect((await accept(token)).status).toBe(200);
  });
});
