import { generateKeyPairSync, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { eq, like } from 'drizzle-orm';
import { jobs, mobileDevices, mobilePushNotifications } from '../../src/server/db/schema/index.js';
import { publishEvent } from '../../src/server/jobs/queue.js';
import { MAX_PUSH_ATTEMPTS, inQuietHours } from '../../src/server/modules/mobile/push.js';
import { retryAfterMs } from '../../src/server/modules/mobile/providers.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { seedWorld, type World, type WorldCaller } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const tls = (name: string) => fs.readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url));

let t: TestApp | undefined;
let w: World;
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const close of closers.splice(0)) await close();
});

async function start(env: Record<string, string> = {}) {
  t = await createTestApp({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32', ...env });
  w = await seedWorld(t, { mfa: true });
  return t;
}

async function phone(who: WorldCaller, body: Record<string, unknown>, settings?: Record<string, unknown>) {
  const app = t as TestApp;
  const res = await app.call('POST', '/api/v1/mobile/devices', { token: w.tokens[who], body: { deviceId: randomUUID(), ...body } });
  expect(res.status, res.text).toBe(201);
  if (settings) {
    const patched = await app.call('PATCH', `/api/v1/mobile/devices/${res.body.id}/settings`, { token: w.tokens[who], body: settings });
    expect(patched.status, patched.text).toBe(200);
  }
  return res.body.id as string;
}

/** An alert.triggered event as the alerts module publishes it, worked by the job worker. */
async function trigger(orgId: string, severity = 'critical', alertId: string = randomUUID()) {
  const app = t as TestApp;
  const payload = { alertId, orgId, orgName: 'A1', ruleId: null, ruleName: null, templateId: null, deviceId: null, deviceName: 'web-01', severity, status: 'active', title: 'Disk Space Low', message: 'disk 4% free', context: {}, triggeredAt: new Date().toISOString(), notificationChannelIds: null, escalationPolicyId: null, actorUserId: null };
  app.db.$client.transaction(() => publishEvent(app.db, 'alert.triggered', payload, orgId))();
  await app.worker.tick();
  return alertId;
}

const records = () => (t as TestApp).db.select().from(mobilePushNotifications).all();
const hhmm = (d: Date) => d.toISOString().slice(11, 16);
const around = (now: Date) => ({ start: hhmm(new Date(now.getTime() - 3600_000)), end: hhmm(new Date(now.getTime() + 3600_000)) });


/** A loopback FCM stand-in (token exchange and messages:send, `answer` per registration token) and a test app
 * configured for it. */
async function startFcm(answer: (token: string, res: http.ServerResponse) => void) {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const r: Receiver = await startReceiver((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.path === '/token') return res.end(JSON.stringify({ access_token: 'ya29.stand-in', expires_in: 3600 }));
    answer((JSON.parse(req.body) as { message: { token: string } }).message.token, res);
  });
  closers.push(() => r.close());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-fcm-'));
  closers.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const keyFile = path.join(dir, 'sa.json');
  fs.writeFileSync(keyFile, JSON.stringify({ client_email: 'push@proj-1.iam.example', private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), token_uri: `${r.url}/token` }));
  await start({ SVC_FCM_PROJECT_ID: 'proj-1', SVC_FCM_SERVICE_ACCOUNT_FILE: keyFile, SVC_FCM_API_URL: r.url });
  return { r, publicKey };
}

const sendsTo = (r: Receiver, token: string) => r.received.filter((q) => q.path === '/v1/projects/proj-1/messages:send' && (JSON.parse(q.body) as { message: { token: string } }).message.token === token);
const pushJobs = () => (t as TestApp).db.select().from(jobs).where(like(jobs.type, 'mobile.push.%')).all();
const HOUR = 3_600_000;
/** Runs the worker with its clock `ms` ahead: retries whose backoff has passed are due. */
const later = (ms: number) => (t as TestApp).worker.tick(new Date(Date.now() + ms));

describe('mobile push delivery (02 §2.10, §6)', () => {
  it('02§6 quiet hours: [start, end) in the device time zone, across midnight; start = end is none', () => {
    const at = new Date('2026-01-10T23:30:00Z');
    expect(inQuietHours({ start: '22:00', end: '07:00' }, at)).toBe(true);
    expect(inQuietHours({ start: '22:00', end: '07:00' }, new Date('2026-01-10T07:00:00Z'))).toBe(false);
    expect(inQuietHours({ start: '09:00', end: '17:00' }, at)).toBe(false);
    // 23:30 UTC is 08:30 the next day in Tokyo (UTC+9).
    expect(inQuietHours({ start: '08:00', end: '09:00', timezone: 'Asia/Tokyo' }, at)).toBe(true);
    expect(inQuietHours({ start: '08:00', end: '08:00' }, at)).toBe(false);
    expect(inQuietHours(null, at)).toBe(false);
  });

  it('02§2.10 without provider credentials (air-gapped) every push is recorded `stubbed`, to the users the alert reaches', async () => {
    await start();
    const own = await phone('orgUser', { platform: 'android', fcmToken: 'fcm-1' });
    const partner = await phone('aAdmin', { platform: 'ios', apnsToken: 'apns-1' });
    await phone('bAdmin', { platform: 'android', fcmToken: 'fcm-b' });
    const alertId = await trigger(w.orgA1.id);
    const rows = records();
    expect(rows.map((r) => r.mobileDeviceId).sort()).toEqual([own, partner].sort());
    for (const row of rows) expect(row).toMatchObject({ alertId, status: 'stubbed', title: '[CRITICAL] Disk Space Low', body: 'web-01: disk 4% free', messageId: null });
    expect(rows.find((r) => r.mobileDeviceId === partner)?.platform).toBe('ios');
    // A replayed event pushes nothing twice.
    await trigger(w.orgA1.id, 'critical', alertId);
    expect(records()).toHaveLength(2);
  });

  it("02§6 push honours each device's notifications switch, severity filter and quiet hours (in its time zone)", async () => {
    await start();
    const now = new Date();
    const tokyo = new Date(now.getTime() + 9 * 3600_000);
    const plain = await phone('orgUser', { platform: 'android', fcmToken: 'a' });
    await phone('orgUser', { platform: 'android', fcmToken: 'b' }, { enabled: false });
    await phone('orgUser', { platform: 'android', fcmToken: 'c' }, { severities: ['critical'] });
    await phone('orgUser', { platform: 'android', fcmToken: 'd' }, { quietHours: around(now) });
    await phone('orgUser', { platform: 'android', fcmToken: 'e' }, { quietHours: { ...around(tokyo), timezone: 'Asia/Tokyo' } });
    const utcOnly = await phone('orgUser', { platform: 'android', fcmToken: 'f' }, { quietHours: around(tokyo) });
    await trigger(w.orgA1.id, 'high');
    expect(records().map((r) => r.mobileDeviceId).sort()).toEqual([plain, utcOnly].sort());
  });

  it('02§2.10 with FCM settings: service-account JWT exchanged for a token, HTTP v1 messages:send; sent with messageId, failed with the error', async () => {
    const { r, publicKey } = await startFcm((token, res) => {
      if (token === 'dead-token') {
        res.statusCode = 404;
        return res.end(JSON.stringify({ error: { status: 'NOT_FOUND' } }));
      }
      res.end(JSON.stringify({ name: `projects/proj-1/messages/${token}-1` }));
    });
    const good = await phone('orgUser', { platform: 'android', fcmToken: 'live-token' });
    const dead = await phone('orgUser', { platform: 'android', fcmToken: 'dead-token' });
    const ios = await phone('aAdmin', { platform: 'ios', apnsToken: 'apns-x' });
    await trigger(w.orgA1.id);
    const byDevice = new Map(records().map((row) => [row.mobileDeviceId, row]));
    expect(byDevice.get(good)).toMatchObject({ status: 'sent', messageId: 'projects/proj-1/messages/live-token-1' });
    expect(byDevice.get(dead)).toMatchObject({ status: 'failed', errorMessage: 'FCM answered HTTP 404' });
    expect(byDevice.get(ios)?.status).toBe('stubbed');
    const exchanges = r.received.filter((q) => q.path === '/token');
    expect(exchanges).toHaveLength(1);
    const form = new URLSearchParams(exchanges[0]?.body);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const spki = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'RS256');
    const { payload } = await jwtVerify(form.get('assertion') ?? '', spki, { issuer: 'push@proj-1.iam.example', audience: `${r.url}/token` });
    expect(payload.scope).toBe('https://www.googleapis.com/auth/firebase.messaging');
    const sends = r.received.filter((q) => q.path === '/v1/projects/proj-1/messages:send');
    expect(sends).toHaveLength(2);
    expect(sends[0]?.headers.authorization).toBe('Bearer ya29.stand-in');
    expect(JSON.parse(sends[0]?.body ?? '{}').message).toMatchObject({ notification: { title: '[CRITICAL] Disk Space Low' }, data: { type: 'alert', severity: 'critical' }, android: { notification: { channel_id: 'alerts' } } });
  });

  it('02§2.10 with APNs settings: HTTP/2 POST /3/device/<token> with an ES256 provider token; sent with the apns-id, failed with the reason', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const seen: Array<{ headers: http2.IncomingHttpHeaders; body: string }> = [];
    const server = http2.createSecureServer({ key: tls('receiver-key.pem'), cert: tls('receiver-cert.pem') });
    server.on('stream', (stream, headers) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        seen.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
        if (String(headers[':path']).endsWith('/gone-token')) {
          stream.respond({ ':status': 410, 'content-type': 'application/json' });
          return stream.end(JSON.stringify({ reason: 'Unregistered', timestamp: Date.now() }));
        }
        if (String(headers[':path']).endsWith('/bad-token')) {
          stream.respond({ ':status': 400, 'content-type': 'application/json' });
          return stream.end(JSON.stringify({ reason: 'BadDeviceToken' }));
        }
        stream.respond({ ':status': 200, 'apns-id': 'A1B2C3D4-0000-0000-0000-000000000001' });
        stream.end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-apns-'));
    closers.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const keyFile = path.join(dir, 'AuthKey.p8');
    fs.writeFileSync(keyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    await start({
      SVC_APNS_KEY_FILE: keyFile,
      SVC_APNS_KEY_ID: 'KEY1234567',
      SVC_APNS_TEAM_ID: 'TEAM123456',
      SVC_APNS_TOPIC: 'com.example.svc',
      SVC_APNS_URL: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    });
    const good = await phone('orgUser', { platform: 'ios', apnsToken: 'good-token' });
    const bad = await phone('orgUser', { platform: 'ios', apnsToken: 'bad-token' });
    const gone = await phone('orgUser', { platform: 'ios', apnsToken: 'gone-token' });
    await trigger(w.orgA1.id);
    const byDevice = new Map(records().map((row) => [row.mobileDeviceId, row]));
    expect(byDevice.get(good)).toMatchObject({ status: 'sent', messageId: 'A1B2C3D4-0000-0000-0000-000000000001' });
    expect(byDevice.get(bad)).toMatchObject({ status: 'failed', errorMessage: 'APNs answered HTTP 400: BadDeviceToken' });
    expect(byDevice.get(gone)).toMatchObject({ status: 'failed', errorMessage: 'APNs answered HTTP 410: Unregistered' });
    // Both tokens are dead: removed from their phones, never retried.
    const app = t as TestApp;
    for (const id of [bad, gone]) expect(app.db.select().from(mobileDevices).where(eq(mobileDevices.id, id)).get()?.apnsToken).toBeNull();
    expect(app.db.select().from(mobileDevices).where(eq(mobileDevices.id, good)).get()?.apnsToken).toBe('good-token');
    await later(HOUR);
    expect(seen.filter((q) => String(q.headers[':path']) !== '/3/device/good-token')).toHaveLength(2);
    const first = seen.find((s) => String(s.headers[':path']) === '/3/device/good-token');
    expect(first?.headers).toMatchObject({ ':method': 'POST', 'apns-topic': 'com.example.svc', 'apns-push-type': 'alert' });
    const jwt = String(first?.headers.authorization).replace(/^bearer /, '');
    expect(decodeProtectedHeader(jwt)).toMatchObject({ alg: 'ES256', kid: 'KEY1234567' });
    const spki = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'ES256');
    expect((await jwtVerify(jwt, spki, { issuer: 'TEAM123456' })).payload.iat).toBeTypeOf('number');
    expect(JSON.parse(first?.body ?? '{}')).toMatchObject({ aps: { alert: { title: '[CRITICAL] Disk Space Low', body: 'web-01: disk 4% free' } }, type: 'alert' });
  });
  it('02§2.10 a retryable FCM failure (5xx, 429 after its Retry-After) is sent again by a durable job with backoff until sent', async () => {
    let calls = 0;
    const { r } = await startFcm((token, res) => {
      calls++;
      if (calls === 1) {
        res.statusCode = 503;
        return res.end(JSON.stringify({ error: { status: 'UNAVAILABLE' } }));
      }
      if (calls === 2) {
        res.statusCode = 429;
        res.setHeader('retry-after', '600');
        return res.end(JSON.stringify({ error: { status: 'RESOURCE_EXHAUSTED', details: [{ errorCode: 'QUOTA_EXCEEDED' }] } }));
      }
      res.end(JSON.stringify({ name: `projects/proj-1/messages/${token}-3` }));
    });
    const flaky = await phone('orgUser', { platform: 'android', fcmToken: 'flaky-token' });
    await trigger(w.orgA1.id);
    expect(records()[0]).toMatchObject({ mobileDeviceId: flaky, status: 'pending', errorMessage: 'FCM answered HTTP 503' });
    const retry = pushJobs().find((j) => j.status === 'pending');
    expect(retry?.payload).toMatchObject({ attempt: 2 });
    expect(Date.parse(retry?.runAt ?? '')).toBeGreaterThan(Date.now());
    await later(HOUR);
    expect(records()[0]).toMatchObject({ status: 'pending', errorMessage: 'FCM answered HTTP 429: QUOTA_EXCEEDED' });
    // Not before the provider's Retry-After (600 s), whatever the backoff says.
    const third = pushJobs().find((j) => j.status === 'pending');
    expect(Date.parse(third?.runAt ?? '')).toBeGreaterThanOrEqual(Date.now() + 590_000);
    await later(2 * HOUR);
    expect(records()[0]).toMatchObject({ status: 'sent', messageId: 'projects/proj-1/messages/flaky-token-3', errorMessage: null });
    expect(sendsTo(r, 'flaky-token')).toHaveLength(3);
    await later(3 * HOUR);
    expect(sendsTo(r, 'flaky-token')).toHaveLength(3);
  });

  it(`02§2.10 retries are bounded: a push failing every time is recorded failed after ${MAX_PUSH_ATTEMPTS} attempts`, async () => {
    const { r } = await startFcm((_token, res) => {
      res.statusCode = 500;
      res.end('{}');
    });
    await phone('orgUser', { platform: 'android', fcmToken: 'down-token' });
    await trigger(w.orgA1.id);
    for (let i = 1; i <= MAX_PUSH_ATTEMPTS + 2; i++) await later(i * HOUR);
    expect(records()[0]).toMatchObject({ status: 'failed', errorMessage: 'FCM answered HTTP 500' });
    expect(sendsTo(r, 'down-token')).toHaveLength(MAX_PUSH_ATTEMPTS);
    expect(pushJobs().filter((j) => j.status === 'pending')).toHaveLength(0);
  });

  it('02§2.10 FCM UNREGISTERED is permanent: failed without a retry, the token removed from the phone (later pushes stubbed)', async () => {
    const { r } = await startFcm((_token, res) => {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { status: 'NOT_FOUND', details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }] } }));
    });
    const gone = await phone('orgUser', { platform: 'android', fcmToken: 'gone-token' });
    await trigger(w.orgA1.id);
    expect(records()[0]).toMatchObject({ status: 'failed', errorMessage: 'FCM answered HTTP 404: UNREGISTERED' });
    await later(HOUR);
    expect(sendsTo(r, 'gone-token')).toHaveLength(1);
    const app = t as TestApp;
    expect(app.db.select().from(mobileDevices).where(eq(mobileDevices.id, gone)).get()?.fcmToken).toBeNull();
    const next = await trigger(w.orgA1.id);
    expect(records().find((row) => row.alertId === next)?.status).toBe('stubbed');
    expect(sendsTo(r, 'gone-token')).toHaveLength(1);
  });

  it('02§2.10 an alert of an organization without a registered phone queues no push job', async () => {
    await start();
    await phone('orgUser', { platform: 'android', fcmToken: 'a1-only' });
    await trigger(w.orgB1.id);
    expect(records()).toHaveLength(0);
    expect(pushJobs()).toHaveLength(0);
  });

  it('Retry-After is delay-seconds or an HTTP date, capped at an hour; anything else is ignored', () => {
    const now = Date.parse('2026-01-10T12:00:00Z');
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Sat, 10 Jan 2026 12:05:00 GMT', now)).toBe(300_000);
    expect(retryAfterMs('86400', now)).toBe(3_600_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });
});
