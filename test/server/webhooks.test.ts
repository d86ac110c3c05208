import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useReceiverWorld } from '../helpers/world.js';
import { buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { notifications, webhookDeliveries, webhooks } from '../../src/server/db/schema/index.js';
import { publishEvent } from '../../src/server/jobs/queue.js';
import { verifySignature } from '../../src/lib/webhook-signature.js';
import type { Receiver, Responder } from '../helpers/https-receiver.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1';
const SECRET = 'whsec-test-secret-1';
// Retry delays at 5 % of 02 §8's: 50, 100, 200, 400, 800 ms.
const SCALE = 0.05;
const ENV = { SVC_OUTBOUND_ALLOW: '127.0.0.1/32', SVC_WEBHOOK_TIME_SCALE: String(SCALE), SVC_JOB_POLL_MS: '10' };

const sign = (secret: string, ts: string, body: string) => `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;

async function until<T>(probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('webhooks (02 §2.7, §3, §4.3, §5, §6, §8)', () => {
  let t: TestApp;
  let w: World;
  const world = useReceiverWorld(ENV);
  const setup = async (respond?: Responder): Promise<Receiver> => {
    let receiver: Receiver;
    ({ t, w, receiver } = await world.setup(respond));
    return receiver;
  };
  const create = async (r: Receiver, body: Record<string, unknown> = {}, token = w.tokens.aAdmin) => {
    const res = await t.call('POST', `${API}/webhooks`, { token, body: { name: 'hook', orgId: w.orgA1.id, url: `${r.url}/hook?k=1`, secret: SECRET, events: ['alert.triggered'], ...body } });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string; orgId: string };
  };
  const deliveryRows = (webhookId: string) => t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId)).all();

  it('02§4.3 create answers the object with hasSecret, masked header values and no secret; the secret is sealed at rest', async () => {
    const r = await setup();
    const res = await t.call('POST', `${API}/webhooks`, {
      token: w.tokens.aAdmin,
      body: { name: 'ops', orgId: w.orgA1.id, url: `https://user:pw@127.0.0.1:${r.port}/in?token=abc#x`, secret: SECRET, events: ['alert.triggered', 'device.enrolled'], headers: [{ key: 'X-Team', value: 'blue' }] },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      orgId: w.orgA1.id,
      name: 'ops',
      url: `https://127.0.0.1:${r.port}/in`,
      events: ['alert.triggered', 'device.enrolled'],
      headers: [{ key: 'X-Team', value: '********' }],
      status: 'active',
      hasSecret: true,
      lastDeliveryAt: null,
    });
    expect(res.text).not.toContain(SECRET);
    const row = t.db.select().from(webhooks).where(eq(webhooks.id, res.body.id)).get();
    expect(row?.secretEnc).toMatch(/^v1\./);
    expect(row?.secretEnc).not.toContain(SECRET);
  });

  it.each([
    ['http://example.com/x', 'Webhook URL must use HTTPS'],
    ['https://printer.local/x', 'Webhook URL cannot target localhost or local network hostnames'],
    ['https://10.0.0.1/x', 'Webhook URL cannot target private, loopback, or link-local addresses'],
    ['https://[::ffff:7f00:2]/x', 'Webhook URL cannot target private, loopback, or link-local addresses'],
    ['not a url', 'Invalid URL format'],
  ])('02§4.3 the URL %s is refused at creation', async (url, detail) => {
    await setup();
    const res = await t.call('POST', `${API}/webhooks`, { token: w.tokens.aAdmin, body: { name: 'x', orgId: w.orgA1.id, url, secret: SECRET, events: ['*'] } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('Invalid webhook URL');
    expect(res.body.details[0]).toBe(detail);
  });

  it.each([
    [[{ key: 'Content-Type', value: 'x' }], 'Header "Content-Type" is reserved'],
    [[{ key: 'X-Svc-Signature', value: 'x' }], 'Header "X-Svc-Signature" is reserved'],
    [[{ key: 'bad header', value: 'x' }], 'must be a valid RFC token'],
    [[{ key: 'X-A', value: 'a\nb' }], 'cannot contain control characters'],
    [[{ key: 'X-A', value: '1' }, { key: 'x-a', value: '2' }], 'is duplicated'],
  ])('02§2.7 custom headers %j are refused', async (headers, message) => {
    const r = await setup();
    const res = await t.call('POST', `${API}/webhooks`, { token: w.tokens.aAdmin, body: { name: 'x', orgId: w.orgA1.id, url: r.url, secret: SECRET, events: ['*'], headers } });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(message);
  });

  it('02§4.3 list, get with deliveryStats, PATCH (empty refused), DELETE; other organizations see 404', async () => {
    const r = await setup();
    const hook = await create(r);
    const list = await t.call('GET', `${API}/webhooks`, { token: w.tokens.aAdmin });
    expect(list.body.pagination.total).toBe(1);
    const got = await t.call('GET', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin });
    expect(got.body.deliveryStats).toEqual({ total: 0, pending: 0, delivered: 0, failed: 0, retrying: 0, lastDeliveredAt: null });
    expect((await t.call('GET', `${API}/webhooks/${hook.id}`, { token: w.tokens.bAdmin })).status).toBe(404);
    const empty = await t.call('PATCH', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin, body: {} });
    expect([empty.status, empty.body.error]).toEqual([400, 'No updates provided']);
    const paused = await t.call('PATCH', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin, body: { status: 'paused', name: 'renamed' } });
    expect(paused.body).toMatchObject({ status: 'paused', name: 'renamed' });
    expect((await t.call('DELETE', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin })).body).toEqual({ success: true });
    expect((await t.call('GET', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin })).status).toBe(404);
  });

  it('02§5 02§6 a test delivery carries exactly the body and headers of §6, signed as §5 (the receiver recomputes it)', async () => {
    const r = await setup();
    const hook = await create(r, { headers: [{ key: 'X-Team', value: 'blue' }] });
    const res = await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ message: 'Test delivery queued', delivery: { webhookId: hook.id, status: 'pending', event: 'webhook.test', attempt: 0 } });
    t.worker.start();
    const [got] = await r.waitFor(1);
    const h = got?.headers ?? {};
    const body = JSON.parse(got?.body ?? '{}');
    expect(got?.method).toBe('POST');
    expect(got?.path).toBe('/hook?k=1');
    expect(Object.keys(body).sort()).toEqual(['data', 'id', 'orgId', 'timestamp', 'type']);
    expect(body).toMatchObject({ type: 'webhook.test', orgId: w.orgA1.id, data: { message: 'Test webhook from Svc', webhookId: hook.id } });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    expect(h['content-type']).toBe('application/json');
    expect(h['user-agent']).toBe('Svc-Webhooks/1.0');
    expect(h['x-svc-delivery-id']).toBe(res.body.delivery.id);
    expect(h['x-svc-event-id']).toBe(body.id);
    expect(h['x-svc-event-type']).toBe('webhook.test');
    expect(h['x-svc-timestamp']).toMatch(/^\d{13}$/);
    expect(h['x-svc-signature-timestamp']).toBe(h['x-svc-timestamp']);
    expect(h['x-svc-signature']).toBe(sign(SECRET, String(h['x-svc-timestamp']), got?.body ?? ''));
    expect(h['x-team']).toBe('blue');
    const delivered = await until(() => deliveryRows(hook.id).find((d) => d.status === 'delivered'));
    expect(delivered).toMatchObject({ attempt: 1, responseStatus: 200, responseBody: 'ok' });
    const stats = (await t.call('GET', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin })).body;
    expect(stats.deliveryStats).toMatchObject({ total: 1, delivered: 1 });
    expect(stats.lastDeliveryAt).not.toBeNull();
  });

  it('02§6 an event reaches the active webhooks of its organization subscribed to its type, and no others', async () => {
    const r = await setup();
    const subscribed = await create(r, { name: 'sub' });
    const wildcard = await create(r, { name: 'all', events: ['*'] });
    const otherType = await create(r, { name: 'other', events: ['device.enrolled'] });
    const paused = await create(r, { name: 'paused' });
    await t.call('PATCH', `${API}/webhooks/${paused.id}`, { token: w.tokens.aAdmin, body: { status: 'paused' } });
    const otherOrg = await create(r, { name: 'b', orgId: w.orgB1.id }, w.tokens.bAdmin);
    t.db.$client.transaction(() => publishEvent(t.db, 'alert.triggered', { orgId: w.orgA1.id, alertId: 'a-1', severity: 'high' }, w.orgA1.id))();
    t.worker.start();
    await r.waitFor(2);
    await until(() => deliveryRows(subscribed.id)[0]?.status === 'delivered' && deliveryRows(wildcard.id)[0]?.status === 'delivered');
    for (const id of [otherType.id, paused.id, otherOrg.id]) expect(deliveryRows(id)).toHaveLength(0);
    const body = JSON.parse(r.received[0]?.body ?? '{}');
    expect(body).toMatchObject({ type: 'alert.triggered', orgId: w.orgA1.id, data: { alertId: 'a-1', severity: 'high' } });
    expect(new Set(r.received.map((x) => JSON.parse(x.body).id)).size).toBe(1);
  });

  it('02§8 02§3 failures are retried after 1, 2, 4, 8, 16 s (time-scaled), then the delivery fails and stays as the dead letter', async () => {
    const r = await setup((_req, res) => res.writeHead(503).end('down'));
    const hook = await create(r);
    const queued = await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    t.worker.start();
    await r.waitFor(2);
    const retrying = deliveryRows(hook.id)[0];
    expect(retrying?.status).toBe('retrying');
    const failed = await until(() => deliveryRows(hook.id).find((d) => d.status === 'failed'), 15_000);
    expect(failed).toMatchObject({ attempt: 6, responseStatus: 503, responseBody: 'down', nextAttemptAt: null });
    expect(r.received).toHaveLength(6);
    const times = r.received.map((x) => Number(x.headers['x-svc-timestamp']));
    const gaps = times.slice(1).map((ts, i) => ts - (times[i] ?? 0));
    // Never early; late only by what a busy machine adds (a shared CI box once added 400+ ms to one gap). A schedule
    // one step off (2, 4, 8, 16, 32 s) doubles the total, which the bound on the sum refuses.
    const schedule = [1000, 2000, 4000, 8000, 16000].map((ms) => ms * SCALE);
    schedule.forEach((ms, i) => {
      expect(gaps[i]).toBeGreaterThanOrEqual(ms - 5);
      expect(gaps[i]).toBeLessThan(ms + 1000);
    });
    const planned = schedule.reduce((a, b) => a + b, 0);
    expect(gaps.reduce((a, b) => a + b, 0)).toBeLessThan(planned * 1.5 + 400);
    // The dead letter: the failed delivery, listed by status and retried by hand.
    const dead = await t.call('GET', `${API}/webhooks/${hook.id}/deliveries?status=failed`, { token: w.tokens.aAdmin });
    expect(dead.body.data.map((d: { id: string }) => d.id)).toEqual([queued.body.delivery.id]);
  });

  it('02§2.4 a 4xx answer is not retried', async () => {
    const r = await setup((_req, res) => res.writeHead(410).end('gone'));
    const hook = await create(r);
    await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    t.worker.start();
    await until(() => deliveryRows(hook.id).find((d) => d.status === 'failed'));
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received).toHaveLength(1);
    expect(deliveryRows(hook.id)[0]).toMatchObject({ attempt: 1, responseStatus: 410 });
  });

  it('02§3 retry of a failed delivery is a new pending delivery with attempt 0 and a new event id; others are refused', async () => {
    let answer = 404;
    const r = await setup((_req, res) => res.writeHead(answer).end());
    const hook = await create(r);
    await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    t.worker.start();
    const failed = await until(() => deliveryRows(hook.id).find((d) => d.status === 'failed'));
    answer = 200;
    const res = await t.call('POST', `${API}/webhooks/${hook.id}/retry/${failed.id}`, { token: w.tokens.aAdmin });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ message: 'Delivery retry queued', delivery: { status: 'pending', attempt: 0 } });
    expect(res.body.delivery.id).not.toBe(failed.id);
    const delivered = await until(() => deliveryRows(hook.id).find((d) => d.status === 'delivered'));
    expect(delivered.eventId).not.toBe(failed.eventId);
    const again = await t.call('POST', `${API}/webhooks/${hook.id}/retry/${delivered.id}`, { token: w.tokens.aAdmin });
    expect([again.status, again.body.error]).toEqual([400, 'Only failed deliveries can be retried']);
    const missing = await t.call('POST', `${API}/webhooks/${hook.id}/retry/${crypto.randomUUID()}`, { token: w.tokens.aAdmin });
    expect([missing.status, missing.body.error]).toEqual([404, 'Delivery not found']);
  });

  it('02§4.3 deliveries are listed newest first, filtered by status', async () => {
    const r = await setup();
    const hook = await create(r);
    for (let i = 0; i < 3; i++) await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: { payload: { n: i } } });
    const all = await t.call('GET', `${API}/webhooks/${hook.id}/deliveries?limit=2`, { token: w.tokens.aAdmin });
    expect(all.body.pagination).toEqual({ page: 1, limit: 2, total: 3 });
    expect(all.body.data.map((d: any) => d.payload.data.n)).toEqual([2, 1]);
    const none = await t.call('GET', `${API}/webhooks/${hook.id}/deliveries?status=failed`, { token: w.tokens.aAdmin });
    expect(none.body.pagination.total).toBe(0);
  });

  it('02§6 the URL is re-checked before every attempt: a stored URL now refused fails without a request', async () => {
    const r = await setup();
    const hook = await create(r);
    t.db.update(webhooks).set({ url: 'https://10.1.2.3/hook' }).where(eq(webhooks.id, hook.id)).run();
    await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    t.worker.start();
    const failed = await until(() => deliveryRows(hook.id).find((d) => d.status === 'failed'));
    expect(failed.responseBody).toContain('Unsafe webhook URL');
    expect(r.received).toHaveLength(0);
  });

  it('02§2.7 a paused webhook sends nothing; set active again, the waiting delivery is sent', async () => {
    const r = await setup();
    const hook = await create(r);
    await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    await t.call('PATCH', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin, body: { status: 'paused' } });
    t.worker.start();
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received).toHaveLength(0);
    expect(deliveryRows(hook.id)[0]?.status).toBe('pending');
    await t.call('PATCH', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin, body: { status: 'active' } });
    await r.waitFor(1);
    await until(() => deliveryRows(hook.id)[0]?.status === 'delivered');
  });

  it('02§3 a pending delivery survives a restart and is delivered once the server is back', async () => {
    const r = await setup();
    const hook = await create(r);
    await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    await t.app.close();
    expect(r.received).toHaveLength(0);
    const config = loadConfig({ ...ENV, SVC_DATA_DIR: t.dataDir, SVC_LOG_LEVEL: 'silent' });
    const second = await buildApp(config, { logger: false, firstStart: false });
    world.alsoClose({ close: () => second.app.close() });
    second.worker.start();
    await r.waitFor(1);
    await until(() => second.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, hook.id)).get()?.status === 'delivered');
  });

  it('02§3 two workers never send the same attempt twice (the claim is a conditional UPDATE)', async () => {
    const r = await setup((_req, res) => setTimeout(() => res.end('ok'), 100));
    const hook = await create(r);
    const queued = await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    const config = loadConfig({ ...ENV, SVC_DATA_DIR: t.dataDir, SVC_LOG_LEVEL: 'silent' });
    const second = await buildApp(config, { logger: false, firstStart: false });
    world.alsoClose({ close: () => second.app.close() });
    const id = queued.body.delivery.id as string;
    const [one, two] = [t.services.webhooks.dispatcher, second.services.webhooks.dispatcher];
    await Promise.all([one.deliverAttempt(id, 0), two.deliverAttempt(id, 0), one.deliverAttempt(id, 0)]);
    await new Promise((res) => setTimeout(res, 200));
    expect(r.received).toHaveLength(1);
    expect(deliveryRows(hook.id)[0]).toMatchObject({ status: 'delivered', attempt: 1 });
  });

  it('02§5 after rotate-secret every delivery carries both signatures until the overlap ends', async () => {
    const r = await setup();
    const hook = await create(r);
    const rotated = await t.call('POST', `${API}/webhooks/${hook.id}/rotate-secret`, { token: w.tokens.aAdmin, body: { secret: 'new-secret-2', overlapSeconds: 3600 } });
    expect(rotated.status, rotated.text).toBe(200);
    expect(rotated.body.previousSecretExpiresAt).not.toBeNull();
    await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    t.worker.start();
    const [got] = await r.waitFor(1);
    const ts = String(got?.headers['x-svc-timestamp']);
    const body = got?.body ?? '';
    expect(got?.headers['x-svc-signature']).toBe(`${sign('new-secret-2', ts, body)},${sign(SECRET, ts, body)}`);
    for (const secret of ['new-secret-2', SECRET]) {
      expect(verifySignature({ secret, body, signature: String(got?.headers['x-svc-signature']), timestamp: ts, toleranceSeconds: 300 })).toEqual({ valid: true });
    }
    expect(verifySignature({ secret: 'wrong', body, signature: String(got?.headers['x-svc-signature']), timestamp: ts, toleranceSeconds: 300 }).valid).toBe(false);
  });

  it('02§3 the system sets a webhook to failed when its last day of deliveries all failed (at least 5)', async () => {
    const r = await setup((_req, res) => res.writeHead(400).end());
    const hook = await create(r);
    for (let i = 0; i < 5; i++) await t.call('POST', `${API}/webhooks/${hook.id}/test`, { token: w.tokens.aAdmin, body: {} });
    t.worker.start();
    await until(() => deliveryRows(hook.id).filter((d) => d.status === 'failed').length === 5);
    const got = await t.call('GET', `${API}/webhooks/${hook.id}`, { token: w.tokens.aAdmin });
    expect(got.body.status).toBe('failed');
    expect(got.body.deliveryStats).toMatchObject({ total: 5, failed: 5 });
    // Issue 12: the organization's admins hear of it in-app: the users who reach org A1 and hold organizations:write
    // (the webhook write permission), which the Partner Admin role grants and Org Admin, Partner Technician do not.
    const noticed = () => t.db.select({ userId: notifications.userId, type: notifications.type, title: notifications.title }).from(notifications).all();
    await until(() => noticed().length > 0);
    const rows = noticed();
    expect(rows.map((n) => n.userId).sort()).toEqual([w.users.aAdmin.id, w.users.aSelAdmin.id].sort());
    expect(rows[0]).toMatchObject({ type: 'system', title: 'Webhook "hook" was set to failed' });
    const inbox = await t.call('GET', `${API}/notifications`, { token: w.tokens.aAdmin });
    expect(inbox.body.notifications[0]).toMatchObject({ type: 'system', priority: 'high', metadata: { webhookId: hook.id } });
  });
});

