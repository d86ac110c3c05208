import { eq, inArray } from 'drizzle-orm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jobs, outboxEvents, webhookDeliveries } from '../../src/server/db/schema/index.js';
import { enqueueJob, publishEvent } from '../../src/server/jobs/queue.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { seedWorld, type World } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const API = '/api/v1';
const ENV = { SVC_OUTBOUND_ALLOW: '127.0.0.1/32', SVC_JOB_POLL_MS: '10' };

/** The batch fan-out: the job worker hands each relayed batch of events to the webhooks module inside the relaying
 * transaction, which writes one delivery per (webhook, event) with an INSERT … ON CONFLICT DO NOTHING. */
describe('webhook fan-out per relayed batch (02 §6, §8)', () => {
  let t: TestApp;
  let w: World;
  let r: Receiver;
  afterEach(async () => {
    await t?.close();
    await r?.close();
  });

  const setup = async () => {
    t = await createTestApp(ENV);
    w = await seedWorld(t, { mfa: true });
    r = await startReceiver();
  };
  const create = async (body: Record<string, unknown>, token = w.tokens.aAdmin) => {
    const res = await t.call('POST', `${API}/webhooks`, { token, body: { name: 'hook', orgId: w.orgA1.id, url: `${r.url}/hook`, secret: 'whsec-fanout', events: ['alert.triggered'], ...body } });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string };
  };
  /** Events published in one transaction, as a module does; returns their outbox ids in order. */
  const publish = (count: number, type = 'alert.triggered', orgId = w.orgA1.id) =>
    t.db.$client.transaction(() => {
      for (let seq = 0; seq < count; seq++) publishEvent(t.db, type, { orgId, seq }, orgId);
      return t.db.select({ id: outboxEvents.id }).from(outboxEvents).all().map((e) => e.id);
    })();
  const deliveriesOf = (webhookId: string) =>
    t.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId)).orderBy(webhookDeliveries.createdAt).all();

  it('02§6 a relayed batch creates exactly one delivery per (webhook, event) subscribed to its type, and no job per event', async () => {
    await setup();
    const one = await create({ name: 'one' });
    const two = await create({ name: 'two', events: ['alert.triggered', 'device.online'] });
    const all = await create({ name: 'all', events: ['*'] });
    const otherType = await create({ name: 'other', events: ['device.enrolled'] });
    const otherOrg = await create({ name: 'b', orgId: w.orgB1.id }, w.tokens.bAdmin);
    publish(40);
    publish(10, 'device.online');
    publish(5, 'alert.triggered', w.orgB1.id);
    // The worker is not started: one tick relays the batch and fans it out; the pump sends nothing.
    await t.worker.tick();
    expect(t.db.select().from(outboxEvents).all().every((e) => e.dispatchedAt !== null)).toBe(true);
    expect(deliveriesOf(one.id)).toHaveLength(40);
    expect(deliveriesOf(two.id)).toHaveLength(50);
    expect(deliveriesOf(all.id)).toHaveLength(50);
    expect(deliveriesOf(otherType.id)).toHaveLength(0);
    expect(deliveriesOf(otherOrg.id)).toHaveLength(5);
    for (const id of [one.id, two.id, all.id]) expect(new Set(deliveriesOf(id).map((d) => d.eventId)).size).toBe(deliveriesOf(id).length);
    const sample = deliveriesOf(one.id)[0];
    expect(sample).toMatchObject({ status: 'pending', attempt: 0, event: 'alert.triggered', orgId: w.orgA1.id });
    const event = t.db.select().from(outboxEvents).where(eq(outboxEvents.id, sample?.eventId ?? '')).get();
    // 02 §6 body: the event's id, type, time and organization, its payload as data.
    expect(sample?.payload).toEqual({ id: event?.id, type: 'alert.triggered', timestamp: event?.createdAt, orgId: w.orgA1.id, data: event?.payload });
    expect(t.db.select().from(jobs).where(eq(jobs.type, 'webhooks.fanout')).all()).toHaveLength(0);
  });

  it('02§6 relaying the same events again (a crash between the fan-out and the relay mark) creates no duplicate delivery', async () => {
    await setup();
    const hook = await create({});
    const ids = publish(30);
    await t.worker.tick();
    const first = deliveriesOf(hook.id);
    expect(first).toHaveLength(30);
    // The relay mark lost: the same events come to the fan-out a second time.
    t.db.update(outboxEvents).set({ dispatchedAt: null }).where(inArray(outboxEvents.id, ids)).run();
    await t.worker.tick();
    expect(t.db.select().from(outboxEvents).all().every((e) => e.dispatchedAt !== null)).toBe(true);
    const second = deliveriesOf(hook.id);
    expect(second.map((d) => d.id).sort()).toEqual(first.map((d) => d.id).sort());
    // The same through the fan-out itself, and through a job an older server queued for one of these events.
    const events = t.db.select().from(outboxEvents).all();
    expect(t.db.$client.transaction(() => t.services.webhooks.dispatcher.fanOutBatch(t.db, events))()).toBe(0);
    const old = events[0];
    // Due before the other subscribers' jobs of these events, so this tick runs it.
    enqueueJob(t.db, 'webhooks.fanout', { ...old?.payload, eventId: old?.id, eventType: old?.type }, { runAt: new Date(0) });
    await t.worker.tick();
    expect(t.db.select().from(jobs).where(eq(jobs.type, 'webhooks.fanout')).get()?.status).toBe('done');
    expect(deliveriesOf(hook.id)).toHaveLength(30);
  });

  it('02§2.7 02§6 a paused webhook gets no delivery of a relayed batch; an active one beside it gets them all', async () => {
    await setup();
    const active = await create({ name: 'active' });
    const paused = await create({ name: 'paused' });
    expect((await t.call('PATCH', `${API}/webhooks/${paused.id}`, { token: w.tokens.aAdmin, body: { status: 'paused' } })).status).toBe(200);
    publish(25);
    await t.worker.tick();
    expect(deliveriesOf(active.id)).toHaveLength(25);
    expect(deliveriesOf(paused.id)).toHaveLength(0);
  });

  it('02§6 02§8 the first attempts of one webhook are claimed in event order, across batches, and not twice', async () => {
    await setup();
    const hook = await create({});
    const other = await create({ name: 'other', events: ['device.online'] });
    publish(120);
    publish(30, 'device.online');
    await t.worker.tick();
    publish(80);
    await t.worker.tick();
    const seqOf = new Map(t.db.select().from(outboxEvents).all().map((e) => [e.id, e]));
    const claimed = t.services.webhooks.dispatcher.claimDue(1000);
    const mine = claimed.filter((c) => c.hook.id === hook.id).map((c) => seqOf.get(c.delivery.eventId));
    expect(mine).toHaveLength(200);
    // Event order: the outbox order (time, then insertion), which is the payload's seq within each publish.
    expect(mine.map((e) => e?.payload.seq)).toEqual([...Array.from({ length: 120 }, (_, i) => i), ...Array.from({ length: 80 }, (_, i) => i)]);
    expect(claimed.filter((c) => c.hook.id === other.id)).toHaveLength(30);
    // A claimed delivery is not claimed again while its attempt is in flight.
    expect(t.services.webhooks.dispatcher.claimDue(1000)).toHaveLength(0);
  });

  it('02§6 with the worker running, a fan-out wakes the pump: every event of a batch reaches the receiver once, signed body as stored', async () => {
    await setup();
    const hook = await create({});
    t.worker.start();
    const started = Date.now();
    publish(60);
    const got = await r.waitFor(60);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(new Set(got.map((x) => x.headers['x-svc-event-id'])).size).toBe(60);
    const stored = new Map(deliveriesOf(hook.id).map((d) => [d.id, d]));
    for (const x of got) expect(JSON.parse(x.body)).toEqual(stored.get(String(x.headers['x-svc-delivery-id']))?.payload);
    await new Promise((res) => setTimeout(res, 200));
    expect(r.received).toHaveLength(60);
  });

  it('02§8 an idle pump only reads: no claim (write lock) while nothing is due; a delivery queued without waking it (as by another process) is still sent at the next poll', async () => {
    await setup();
    const hook = await create({});
    const dispatcher = t.services.webhooks.dispatcher;
    const claims = vi.spyOn(dispatcher, 'claimDue');
    t.worker.start();
    // Over one poll interval of the pump (1 s) with nothing queued, it looked (nextDue) but never claimed.
    const looks = vi.spyOn(dispatcher, 'nextDue');
    await new Promise((res) => setTimeout(res, 1_300));
    expect(looks).toHaveBeenCalled();
    expect(claims).not.toHaveBeenCalled();
    // A row written without waking the pump (as another process would write it): the poll finds it due and claims it.
    const now = new Date().toISOString();
    t.db
      .insert(webhookDeliveries)
      .values({ webhookId: hook.id, orgId: w.orgA1.id, event: 'alert.triggered', eventId: 'evt-elsewhere', payload: { seq: 1 }, nextAttemptAt: now })
      .run();
    const [got] = await r.waitFor(1);
    expect(got?.headers['x-svc-event-id']).toBe('evt-elsewhere');
    expect(claims).toHaveBeenCalled();
  });
});
