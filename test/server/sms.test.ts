import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { auditLogs, smsCodes, users } from '../../src/server/db/schema/index.js';
import { expectCommitFailure } from '../helpers/commit-failure.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { ROLES, SEED_PASSWORD, seedPartner, seedUser, type SeededUser } from '../helpers/seed.js';

const API = '/api/v1';
const PHONE = '+14155550100';
const GATEWAY_TOKEN = 'gateway-secret-token';

interface Sms {
  to: string;
  body: string;
  authorization: string | undefined;
}

interface Gateway {
  url: string;
  received: Sms[];
  /** The status the gateway answers with (200 unless a test changes it). */
  status: number;
  /** The six-digit code of the last message. */
  lastCode(): string;
  close(): Promise<void>;
}

/** A real HTTP server on a loopback port acting as the SMS gateway: POST JSON {to, body}. */
async function startGateway(): Promise<Gateway> {
  const received: Sms[] = [];
  const gateway: Gateway = {
    url: '',
    received,
    status: 200,
    lastCode() {
      const match = /\b(\d{6})\b/.exec(received.at(-1)?.body ?? '');
      if (!match?.[1]) throw new Error('no code in the last SMS');
      return match[1];
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/sms') {
        const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { to: string; body: string };
        received.push({ to: parsed.to, body: parsed.body, authorization: req.headers.authorization });
      }
      res.writeHead(gateway.status, { 'content-type': 'application/json' });
      res.end('{"queued":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sms`;
  return gateway;
}

function wrongCode(code: string): string {
  return code === '000000' ? '111111' : '000000';
}

describe('phone verification and SMS MFA (01 §4.5, §5.7)', () => {
  let t: TestApp;
  let gateway: Gateway;
  let user: SeededUser;
  const call = (method: 'POST' | 'GET', url: string, body?: unknown, token = user.token) =>
    t.call(method, `${API}${url}`, { token, ...(body !== undefined ? { body } : {}) });

  async function verifyPhone(): Promise<void> {
    expect((await call('POST', '/auth/phone/verify', { phoneNumber: PHONE })).status).toBe(200);
    expect((await call('POST', '/auth/phone/confirm', { code: gateway.lastCode() })).status).toBe(200);
  }

  beforeEach(async () => {
    gateway = await startGateway();
    t = await createTestApp({ SVC_SMS_URL: gateway.url, SVC_SMS_TOKEN: GATEWAY_TOKEN });
    const partner = seedPartner(t, { name: 'P', slug: 'p' });
    user = await seedUser(t, { email: 'phone@p.test', partner: { partnerId: partner.id, orgAccess: 'all' }, login: 'mint' });
  });
  afterEach(async () => {
    vi.useRealTimers();
    await t.close();
    await gateway.close();
  });

  it('01§4.5 phone/verify sends a 6-digit code through the gateway; phone/confirm with it marks the phone verified', async () => {
    const res = await call('POST', '/auth/phone/verify', { phoneNumber: PHONE });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Verification code sent', expiresInSeconds: 600 });
    expect(gateway.received).toHaveLength(1);
    expect(gateway.received[0]).toMatchObject({ to: PHONE, authorization: `Bearer ${GATEWAY_TOKEN}` });
    const code = gateway.lastCode();
    expect(gateway.received[0]?.body).toBe(`Your svc verification code is ${code}. It expires in 10 minutes.`);

    // Stored as an HMAC, never the code itself.
    const row = t.db.select().from(smsCodes).get();
    expect(row?.codeHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain(`"${code}"`);

    const wrong = await call('POST', '/auth/phone/confirm', { code: wrongCode(code) });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatchObject({ error: 'Invalid or expired verification code', code: 'INVALID_VERIFICATION_CODE' });
    const ok = await call('POST', '/auth/phone/confirm', { code });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, phoneNumber: PHONE, phoneVerified: true });
    expect(t.db.select().from(users).where(eq(users.id, user.id)).get()).toMatchObject({ phoneNumber: PHONE, phoneVerified: true });
    // A code works once.
    expect((await call('POST', '/auth/phone/confirm', { code })).status).toBe(400);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.phone.verify')).all()).toHaveLength(1);
  });

  it('01§4.5 a code is texted only once it is stored for good: a failed commit answers 503 and texts nothing', async () => {
    await expectCommitFailure(t.db, 'sms_codes', () => call('POST', '/auth/phone/verify', { phoneNumber: PHONE }));
    expect(gateway.received).toHaveLength(0);
    expect(t.db.select().from(smsCodes).all()).toEqual([]);
    await verifyPhone();
    expect(gateway.received).toHaveLength(1);
  });

  it('01§4.5 the phone number must be E.164; the code must be 6 digits', async () => {
    for (const phoneNumber of ['4155550100', '+0155550100', '+1415555010012345', '+1 415 555 0100']) {
      expect((await call('POST', '/auth/phone/verify', { phoneNumber })).status).toBe(400);
    }
    expect((await call('POST', '/auth/phone/confirm', { code: '12345' })).status).toBe(400);
    expect(gateway.received).toEqual([]);
  });

  it('01§5.7 a code expires after 10 minutes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    await call('POST', '/auth/phone/verify', { phoneNumber: PHONE });
    const code = gateway.lastCode();
    vi.setSystemTime(Date.now() + 10 * 60_000 + 1000);
    expect((await call('POST', '/auth/phone/confirm', { code })).status).toBe(400);
  });

  it('01§5.7 a code dies after 5 wrong guesses; a new code replaces the previous one', async () => {
    await call('POST', '/auth/phone/verify', { phoneNumber: PHONE });
    const code = gateway.lastCode();
    for (let i = 0; i < 5; i++) expect((await call('POST', '/auth/phone/confirm', { code: wrongCode(code) })).status).toBe(400);
    expect((await call('POST', '/auth/phone/confirm', { code })).status).toBe(400);

    await call('POST', '/auth/phone/verify', { phoneNumber: PHONE });
    const first = gateway.lastCode();
    await call('POST', '/auth/phone/verify', { phoneNumber: '+442071838750' });
    const second = gateway.lastCode();
    if (first !== second) expect((await call('POST', '/auth/phone/confirm', { code: first })).status).toBe(400);
    const ok = await call('POST', '/auth/phone/confirm', { code: second });
    expect(ok.body.phoneNumber).toBe('+442071838750');
  });

  it('docs/api-notes: sends per user are limited (SVC_SMS_SEND_LIMIT, 429)', async () => {
    for (let i = 0; i < 5; i++) expect((await call('POST', '/auth/phone/verify', { phoneNumber: PHONE })).status).toBe(200);
    const limited = await call('POST', '/auth/phone/verify', { phoneNumber: PHONE });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('TOO_MANY_SMS');
    expect(gateway.received).toHaveLength(5);
  });

  it('01§5.7 SMS MFA: enable needs a verified phone and returns recovery codes; login then needs an SMS code', async () => {
    const early = await call('POST', '/auth/mfa/sms/enable');
    expect(early.status).toBe(400);
    expect(early.body.code).toBe('PHONE_NOT_VERIFIED');
    await verifyPhone();
    const enabled = await call('POST', '/auth/mfa/sms/enable');
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ success: true, mfaMethod: 'sms' });
    expect(enabled.body.recoveryCodes).toHaveLength(10);
    expect((await call('POST', '/auth/mfa/sms/enable')).body.code).toBe('MFA_ALREADY_ENABLED');

    const login = await t.call('POST', `${API}/auth/login`, { body: { email: 'phone@p.test', password: SEED_PASSWORD } });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ mfaRequired: true, mfaMethod: 'sms' });
    const tempToken = login.body.tempToken as string;

    const sent = await t.call('POST', `${API}/auth/mfa/sms/send`, { body: { tempToken } });
    expect(sent.status).toBe(200);
    expect(sent.body.expiresInSeconds).toBe(600);
    expect(gateway.received.at(-1)?.to).toBe(PHONE);
    expect(gateway.received.at(-1)?.body).toMatch(/^Your svc sign-in code is \d{6}\./);
    const code = gateway.lastCode();

    const wrong = await t.call('POST', `${API}/auth/mfa/verify`, { body: { code: wrongCode(code), tempToken } });
    expect(wrong.status).toBe(401);
    const verified = await t.call('POST', `${API}/auth/mfa/verify`, { body: { code, tempToken } });
    expect(verified.status).toBe(200);
    const token = verified.body.tokens.accessToken as string;
    // The session carries mfa true: an MFA-gated route passes.
    const invite = await t.call('POST', `${API}/users/invite`, { token, body: { email: 'x@p.test', name: 'X', roleId: ROLES.partnerViewer } });
    expect(invite.status).toBe(201);
    // The code was used up.
    expect((await t.call('POST', `${API}/auth/mfa/verify`, { body: { code, tempToken } })).status).toBe(401);
    // A recovery code works too.
    const recovery = await t.call('POST', `${API}/auth/mfa/verify`, { body: { code: enabled.body.recoveryCodes[0], tempToken } });
    expect(recovery.status).toBe(200);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'user.mfa.enable')).get()?.details).toMatchObject({ method: 'sms' });
  });

  it('01§4.5 mfa/sms/send: 401 for a bad tempToken, 400 for users without SMS MFA; a bearer session can step up', async () => {
    expect((await t.call('POST', `${API}/auth/mfa/sms/send`, { body: { tempToken: 'garbage' } })).status).toBe(401);
    const notSms = await t.call('POST', `${API}/auth/mfa/sms/send`, { body: {}, token: user.token });
    expect(notSms.status).toBe(400);
    expect(notSms.body.code).toBe('SMS_MFA_NOT_ENABLED');

    await verifyPhone();
    await call('POST', '/auth/mfa/sms/enable');
    const stepUp = await t.call('POST', `${API}/auth/mfa/sms/send`, { body: {}, token: user.token });
    expect(stepUp.status).toBe(200);
    const verified = await t.call('POST', `${API}/auth/mfa/verify`, { body: { code: gateway.lastCode() }, token: user.token });
    expect(verified.status).toBe(200);

    // Disabling SMS MFA takes an SMS code as well.
    await t.call('POST', `${API}/auth/mfa/sms/send`, { body: {}, token: user.token });
    const disabled = await call('POST', '/auth/mfa/disable', { code: gateway.lastCode() });
    expect(disabled.status).toBe(200);
    const login = await t.call('POST', `${API}/auth/login`, { body: { email: 'phone@p.test', password: SEED_PASSWORD } });
    expect(login.body.mfaRequired).toBe(false);
  });

  it('01§5.7 while SMS is the second factor, phone/verify and phone/confirm need a session that proved MFA (403 MFA_REQUIRED); a step-up allows the change', async () => {
    const OTHER = '+442071838750';
    await verifyPhone();
    // A code to another number asked for before SMS MFA is on must not re-point the factor afterwards either.
    expect((await call('POST', '/auth/phone/verify', { phoneNumber: OTHER })).status).toBe(200);
    const earlier = gateway.lastCode();
    expect((await call('POST', '/auth/mfa/sms/enable')).status).toBe(200);
    const texted = gateway.received.length;

    // user.token is a session without MFA (as a stolen password would give).
    const verify = await call('POST', '/auth/phone/verify', { phoneNumber: OTHER });
    expect(verify.status).toBe(403);
    expect(verify.body).toEqual({ error: 'MFA required', code: 'MFA_REQUIRED' });
    const confirm = await call('POST', '/auth/phone/confirm', { code: earlier });
    expect(confirm.status).toBe(403);
    expect(confirm.body).toEqual({ error: 'MFA required', code: 'MFA_REQUIRED' });
    expect(gateway.received).toHaveLength(texted);
    expect(t.db.select().from(users).where(eq(users.id, user.id)).get()).toMatchObject({ phoneNumber: PHONE, mfaMethod: 'sms' });

    // Stepping up with a code sent to the current phone gives a session that may move the factor.
    expect((await t.call('POST', `${API}/auth/mfa/sms/send`, { body: {}, token: user.token })).status).toBe(200);
    expect(gateway.received.at(-1)?.to).toBe(PHONE);
    const stepUp = await t.call('POST', `${API}/auth/mfa/verify`, { body: { code: gateway.lastCode() }, token: user.token });
    expect(stepUp.status).toBe(200);
    const mfaToken = stepUp.body.tokens.accessToken as string;
    expect((await call('POST', '/auth/phone/verify', { phoneNumber: OTHER }, mfaToken)).status).toBe(200);
    expect(gateway.received.at(-1)?.to).toBe(OTHER);
    expect((await call('POST', '/auth/phone/confirm', { code: gateway.lastCode() }, mfaToken)).status).toBe(200);
    expect(t.db.select().from(users).where(eq(users.id, user.id)).get()?.phoneNumber).toBe(OTHER);
  });

  it('01§4.5 a gateway failure answers 502 SMS_DELIVERY_FAILED and leaves no usable code', async () => {
    gateway.status = 500;
    const res = await call('POST', '/auth/phone/verify', { phoneNumber: PHONE });
    expect(res.status).toBe(502);
    expect(res.body).toMatchObject({ error: 'SMS delivery failed', code: 'SMS_DELIVERY_FAILED' });
    expect(t.db.select().from(smsCodes).all()).toEqual([]);
  });

  it('docs/api-notes: without SVC_SMS_URL every SMS sender answers 503 `SMS service not configured`', async () => {
    await t.close();
    t = await createTestApp();
    const partner = seedPartner(t, { name: 'P', slug: 'p' });
    user = await seedUser(t, { email: 'phone@p.test', partner: { partnerId: partner.id, orgAccess: 'all' }, login: 'mint' });
    const res = await call('POST', '/auth/phone/verify', { phoneNumber: PHONE });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'SMS service not configured', code: 'SMS_NOT_CONFIGURED' });

    t.db.update(users).set({ phoneNumber: PHONE, phoneVerified: true, mfaEnabled: true, mfaMethod: 'sms' }).where(eq(users.id, user.id)).run();
    const login = await t.call('POST', `${API}/auth/login`, { body: { email: 'phone@p.test', password: SEED_PASSWORD } });
    const send = await t.call('POST', `${API}/auth/mfa/sms/send`, { body: { tempToken: login.body.tempToken } });
    expect(send.status).toBe(503);
    expect(send.body.code).toBe('SMS_NOT_CONFIGURED');
    expect(gateway.received).toEqual([]);
  });
});
