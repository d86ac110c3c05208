import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { alertEscalations, alerts, jobs, notifications, outboxEvents } from '../../src/server/db/schema/index.js';
import { publishEvent } from '../../src/server/jobs/queue.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { ROLES, seedOrg, seedPartner, seedUser, type SeededUser } from '../helpers/seed.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createTestApp, type TestApp } from '../helpers/server.js';

let t: TestApp;
let r: Receiver;
let orgId: string;
let otherOrgId: string;
let admin: SeededUser;

beforeEach(async () => {
  r = await startReceiver();
  t = await createTestApp({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32' });
  const partner = seedPartner(t, { name: 'P', slug: 'p' });
  orgId = seedOrg(t, partner.id, { name: 'Org One', slug: 'o1' }).id;
  otherOrgId = seedOrg(t, partner.id, { name: 'Org Two', slug: 'o2' }).id;
  admin = await seedUser(t, { email: 'admin@o1.test', org: { orgId }, login: 'mint', mfa: true });
});
afterEach(async () => {
  await r.close();
  await t.close();
});

function alertPayload(overrides: Record<string, unknown> = {}) {
  return {
    alertId: randomUUID(),
    orgId,
    orgName: 'Org One',
    ruleId: randomUUID(),
    ruleName: 'Disk rule',
    templateId: null,
    deviceId: randomUUID(),
    deviceName: 'web-01',
    severity: 'critical',
    status: 'active',
    title: 'Disk Space Low',
    message: 'disk.freePercent 4 < 10',
    context: { freePercent: 4 },
    triggeredAt: new Date().toISOString(),
    notificationChannelIds: null,
    escalationPolicyId: null,
    actorUserId: null,
    ...overrides,
  };
}

function publish(type: string, payload: Record<string, unknown>, app: TestApp | { db: TestApp['db'] } = t): void {
  app.db.$client.transaction(() => publishEvent(app.db, type, payload, String(payload.orgId)))();
}

async function channel(name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call('POST', '/api/v1/alerts/channels', {
    token: admin.token,
    body: { name, type: 'webhook', config: { url: `${r.url}/${name}` }, ...extra },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const paths = () => r.received.map((q) => q.path).sort();

/** An alert row (active), for the pipeline's reads of the alert's status. */
const alertRow = () =>
  t.db
    .insert(alerts)
    .values({ orgId, severity: 'critical', title: 'Disk Space Low', message: 'low', triggeredAt: new Date().toISOString() })
    .returning()
    .get();

describe('alert notification pipeline (02 §6)', () => {
  it('02§6 in-app notifications go to active org users and partner users with access, once each, priority from severity', async () => {
    const partnerId = seedPartner(t, { name: 'Q', slug: 'q' }).id;
    const all = await seedUser(t, { email: 'all@p.test', partner: { partnerId: (await partnerOf()).id, orgAccess: 'all' }, login: false });
    const selected = await seedUser(t, { email: 'sel@p.test', partner: { partnerId: (await partnerOf()).id, orgAccess: 'selected', orgIds: [orgId] }, login: false });
    const elsewhere = await seedUser(t, { email: 'else@p.test', partner: { partnerId: (await partnerOf()).id, orgAccess: 'selected', orgIds: [otherOrgId] }, login: false });
    const none = await seedUser(t, { email: 'none@p.test', partner: { partnerId: (await partnerOf()).id, orgAccess: 'none' }, login: false });
    const disabled = await seedUser(t, { email: 'off@o1.test', org: { orgId, roleId: ROLES.orgViewer }, status: 'disabled', login: false });
    const otherOrg = await seedUser(t, { email: 'o2@o2.test', org: { orgId: otherOrgId }, login: false });
    const otherPartner = await seedUser(t, { email: 'q@q.test', partner: { partnerId, orgAccess: 'all' }, login: false });
    const alert = alertPayload();
    publish('alert.triggered', alert);
    await t.worker.tick();
    publish('alert.triggered', alert); // a replayed event notifies nobody twice
    await t.worker.tick();
    const rows = t.db.select().from(notifications).all();
    expect(rows.map((n) => n.userId).sort()).toEqual([admin.id, all.id, selected.id].sort());
    for (const user of [elsewhere, none, disabled, otherOrg, otherPartner]) expect(rows.some((n) => n.userId === user.id)).toBe(false);
    expect(rows[0]).toMatchObject({ type: 'alert', priority: 'urgent', title: 'Disk Space Low', orgId, metadata: { alertId: alert.alertId, severity: 'critical' } });
    const inbox = await t.call('GET', '/api/v1/notifications', { token: admin.token });
    expect(inbox.body.notifications[0].link).toBe(`/alerts/${alert.alertId}`);
  });

  it('02§2.5 priority: high → high, medium → normal, low and info → low', async () => {
    for (const severity of ['high', 'medium', 'low', 'info']) publish('alert.triggered', alertPayload({ severity }));
    await t.worker.tick();
    const bySeverity = Object.fromEntries(t.db.select().from(notifications).all().map((n) => [n.metadata.severity, n.priority]));
    expect(bySeverity).toEqual({ high: 'high', medium: 'normal', low: 'low', info: 'low' });
  });

  it('02§6 sends go to every enabled channel of the organization, each recorded and visible through forAlert', async () => {
    await channel('a');
    await channel('b');
    await channel('off', { enabled: false });
    const otherOrgChannel = await t.call('POST', '/api/v1/alerts/channels', {
      token: await (await import('../helpers/seed.js')).adminToken(t, { mfa: true }),
      body: { orgId: otherOrgId, name: 'x', type: 'webhook', config: { url: `${r.url}/x` } },
    });
    expect(otherOrgChannel.status).toBe(201);
    const alert = alertPayload();
    publish('alert.triggered', alert);
    await t.worker.tick();
    expect(paths()).toEqual(['/a', '/b']);
    const body = JSON.parse(r.received[0]?.body ?? '');
    expect(body).toMatchObject({ event: 'alert.triggered', alert: { id: alert.alertId, name: 'Disk Space Low', severity: 'critical' }, device: { name: 'web-01' } });
    const log = t.services.alertDeliveries.forAlert(alert.alertId);
    expect(log).toHaveLength(2);
    for (const row of log) {
      expect(Object.keys(row).sort()).toEqual(['channelId', 'channelName', 'channelType', 'createdAt', 'errorMessage', 'id', 'sentAt', 'status'].sort());
      expect(row).toMatchObject({ status: 'sent', channelType: 'webhook', errorMessage: null });
    }
  });

  it("02§6 the rule's override channels replace the organization's channels", async () => {
    await channel('a');
    const b = await channel('b');
    publish('alert.triggered', alertPayload({ notificationChannelIds: [b] }));
    await t.worker.tick();
    expect(paths()).toEqual(['/b']);
  });

  it('02§3 a failed send is recorded failed with its error', async () => {
    const id = (
      await t.call('POST', '/api/v1/alerts/channels', {
        token: admin.token,
        body: { name: 'bad', type: 'webhook', config: { url: 'https://10.1.2.3/hook' } },
      })
    ).body.id as string;
    const alert = alertPayload();
    publish('alert.triggered', alert);
    await t.worker.tick();
    const [row] = t.services.alertDeliveries.forAlert(alert.alertId);
    expect(row).toMatchObject({ channelId: id, status: 'failed', sentAt: null });
    expect(row?.errorMessage).toMatch(/^Outbound request blocked/);
  });

  it('05-wire 4.1 per-channel throttling: beyond throttleMaxPerWindow within the window a send is not made', async () => {
    await channel('t', { throttleMaxPerWindow: 1, throttleWindowSeconds: 60 });
    const first = alertPayload();
    const second = alertPayload();
    publish('alert.triggered', first);
    publish('alert.triggered', second);
    await t.worker.tick();
    expect(r.received).toHaveLength(1);
    expect(t.services.alertDeliveries.forAlert(first.alertId)[0]?.status).toBe('sent');
    const throttled = t.services.alertDeliveries.forAlert(second.alertId)[0];
    expect(throttled?.status).toBe('failed');
    expect(throttled?.errorMessage).toMatch(/^Throttled/);
  });

  it('02§8 dispatch concurrency is 5: seven slow channels are sent in two waves', async () => {
    await r.close();
    let inFlight = 0;
    let peak = 0;
    r = await startReceiver((_req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.end('ok');
      }, 300);
    });
    for (let i = 0; i < 7; i++) await channel(`c${i}`);
    publish('alert.triggered', alertPayload());
    await t.worker.tick();
    expect(r.received).toHaveLength(7);
    expect(peak).toBe(5);
  });
});

describe('escalation (02 §2.6, §3)', () => {
  async function policy(steps: unknown[]): Promise<string> {
    const res = await t.call('POST', '/api/v1/alerts/policies', { token: admin.token, body: { name: 'Escalate', steps } });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  }

  it('02§3 a step fires delayMinutes after the trigger, sends to its channels and publishes alert.escalated', async () => {
    const first = await channel('first');
    const late = await channel('late');
    const policyId = await policy([{ delayMinutes: 5, channelIds: [late] }]);
    const alert = alertPayload({ notificationChannelIds: [first], escalationPolicyId: policyId });
    publish('alert.triggered', alert);
    const now = Date.now();
    await t.worker.tick(new Date(now));
    expect(paths()).toEqual(['/first']);
    await t.worker.tick(new Date(now + 4 * 60_000));
    expect(paths()).toEqual(['/first']);
    await t.worker.tick(new Date(now + 5 * 60_000 + 1000));
    expect(paths()).toEqual(['/first', '/late']);
    expect(JSON.parse(r.received[1]?.body ?? '').event).toBe('alert.escalated');
    const escalated = t.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'alert.escalated')).all();
    expect(escalated).toHaveLength(1);
    expect(escalated[0]?.payload).toMatchObject({ alertId: alert.alertId, step: 1, title: 'Disk Space Low' });
    expect(t.services.alertDeliveries.forAlert(alert.alertId).map((d) => d.status)).toEqual(['sent', 'sent']);
  });

  for (const closing of ['alert.acknowledged', 'alert.resolved']) {
    it(`02§3 ${closing} before the delay cancels the pending escalation`, async () => {
      const late = await channel('late');
      const policyId = await policy([{ delayMinutes: 1, channelIds: [late] }]);
      const alert = alertPayload({ notificationChannelIds: [], escalationPolicyId: policyId });
      publish('alert.triggered', alert);
      const now = Date.now();
      await t.worker.tick(new Date(now));
      publish(closing, { ...alert, status: closing === 'alert.resolved' ? 'resolved' : 'acknowledged', actorUserId: admin.id });
      await t.worker.tick(new Date(now + 1000));
      await t.worker.tick(new Date(now + 2 * 60_000));
      expect(r.received).toHaveLength(0);
      expect(t.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'alert.escalated')).all()).toHaveLength(0);
    });
  }

  it('02§3 closing events cost no job: the steps are cancelled as the event is relayed; alert.triggered is one job each; a non-alert payload none', async () => {
    const late = await channel('late');
    const policyId = await policy([{ delayMinutes: 1, channelIds: [late] }, { delayMinutes: 2, channelIds: [late] }]);
    const alert = alertPayload({ notificationChannelIds: [], escalationPolicyId: policyId });
    const quiet = alertPayload({ notificationChannelIds: [] });
    publish('alert.triggered', alert);
    publish('alert.triggered', quiet);
    publish('alert.triggered', { orgId, seq: 1 }); // not an alert event: no alertId
    const now = Date.now();
    await t.worker.tick(new Date(now));
    const jobTypes = () => t.db.select({ type: jobs.type }).from(jobs).all().map((j) => j.type).filter((type) => type.startsWith('notify.'));
    expect(jobTypes().sort()).toEqual(['notify.alert-triggered', 'notify.alert-triggered', 'notify.escalate', 'notify.escalate']);
    publish('alert.resolved', { ...quiet, status: 'resolved' });
    publish('alert.acknowledged', { ...alert, status: 'acknowledged' });
    await t.worker.tick(new Date(now + 1000));
    expect(jobTypes().filter((type) => type === 'notify.alert-closed')).toEqual([]);
    expect(t.db.select({ status: alertEscalations.status }).from(alertEscalations).all().map((e) => e.status)).toEqual(['cancelled', 'cancelled']);
    await t.worker.tick(new Date(now + 3 * 60_000));
    expect(r.received).toHaveLength(0);
  });

  it('02§3 an alert acknowledged before its alert.triggered job ran never escalates (both events relayed together)', async () => {
    const late = await channel('late');
    const policyId = await policy([{ delayMinutes: 1, channelIds: [late] }]);
    const row = alertRow();
    const alert = alertPayload({ alertId: row.id, notificationChannelIds: [], escalationPolicyId: policyId });
    publish('alert.triggered', alert);
    t.db.update(alerts).set({ status: 'acknowledged' }).where(eq(alerts.id, row.id)).run();
    publish('alert.acknowledged', { ...alert, status: 'acknowledged' });
    const now = Date.now();
    await t.worker.tick(new Date(now));
    await t.worker.tick(new Date(now + 2 * 60_000));
    expect(r.received).toHaveLength(0);
    expect(t.db.select().from(alertEscalations).all()).toHaveLength(0);
    // The in-app notification of the trigger still went out.
    expect(t.db.select().from(notifications).all().map((n) => n.userId)).toEqual([admin.id]);
  });

  it('02§3 a step that comes due after its alert was closed, before the closing event is relayed, is cancelled, not fired', async () => {
    const late = await channel('late');
    const policyId = await policy([{ delayMinutes: 1, channelIds: [late] }]);
    const row = alertRow();
    publish('alert.triggered', alertPayload({ alertId: row.id, notificationChannelIds: [], escalationPolicyId: policyId }));
    const now = Date.now();
    await t.worker.tick(new Date(now));
    t.db.update(alerts).set({ status: 'resolved' }).where(eq(alerts.id, row.id)).run(); // its event not published yet
    await t.worker.tick(new Date(now + 2 * 60_000));
    expect(r.received).toHaveLength(0);
    expect(t.db.select({ status: alertEscalations.status }).from(alertEscalations).all()).toEqual([{ status: 'cancelled' }]);
    expect(t.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'alert.escalated')).all()).toHaveLength(0);
  });

  it('02§6 an alert.triggered job relayed but not yet run survives a server restart: its notifications and sends go out after', async () => {
    await channel('first');
    const alert = alertPayload();
    publish('alert.triggered', alert);
    // Relay only (the tick's first half), then stop: the event is marked relayed, its job waits in the table.
    (t.worker as unknown as { relayEvents(now: Date): void }).relayEvents(new Date());
    expect(t.db.select({ type: jobs.type, status: jobs.status }).from(jobs).where(eq(jobs.type, 'notify.alert-triggered')).all()).toEqual([
      { type: 'notify.alert-triggered', status: 'pending' },
    ]);
    await t.app.close();
    const again = await buildApp(
      loadConfig({ SVC_DATA_DIR: t.dataDir, SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'silent', SVC_OUTBOUND_ALLOW: '127.0.0.1/32' }),
      { logger: false },
    );
    try {
      await again.worker.tick(new Date());
      expect(again.db.select().from(notifications).all().map((n) => n.userId)).toEqual([admin.id]);
      expect(paths()).toEqual(['/first']);
      expect(again.services.alertDeliveries.forAlert(alert.alertId)[0]?.status).toBe('sent');
    } finally {
      await again.app.close();
      fs.rmSync(t.dataDir, { recursive: true, force: true });
    }
    t = { ...t, close: async () => {} };
  });

  it('02§3 a scheduled escalation survives a server restart', async () => {
    const late = await channel('late');
    const policyId = await policy([{ delayMinutes: 2, channelIds: [late] }]);
    const alert = alertPayload({ notificationChannelIds: [], escalationPolicyId: policyId });
    publish('alert.triggered', alert);
    const now = Date.now();
    await t.worker.tick(new Date(now));
    await t.app.close();
    const again = await buildApp(
      loadConfig({ SVC_DATA_DIR: t.dataDir, SVC_ADMIN_EMAIL: ADMIN_EMAIL, SVC_ADMIN_PASSWORD: ADMIN_PASSWORD, SVC_LOG_LEVEL: 'silent', SVC_OUTBOUND_ALLOW: '127.0.0.1/32' }),
      { logger: false },
    );
    try {
      await again.worker.tick(new Date(now + 3 * 60_000));
      expect(paths()).toEqual(['/late']);
      expect(again.services.alertDeliveries.forAlert(alert.alertId)[0]?.status).toBe('sent');
    } finally {
      await again.app.close();
      fs.rmSync(t.dataDir, { recursive: true, force: true });
    }
    t = { ...t, close: async () => {} };
  });

  it('05-wire 4.1 policies: CRUD, 404 `Escalation policy not found`, steps naming channels of the organization only', async () => {
    const c = await channel('c');
    const id = await policy([{ delayMinutes: 10, channelIds: [c] }]);
    const got = await t.call('GET', `/api/v1/alerts/policies/${id}`, { token: admin.token });
    expect(got.body).toMatchObject({ id, orgId, name: 'Escalate', steps: [{ delayMinutes: 10, channelIds: [c] }] });
    expect(Object.keys(got.body).sort()).toEqual(['createdAt', 'id', 'name', 'orgId', 'steps', 'updatedAt']);
    const list = await t.call('GET', '/api/v1/alerts/policies', { token: admin.token });
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([id]);
    const renamed = await t.call('PUT', `/api/v1/alerts/policies/${id}`, { token: admin.token, body: { name: 'Night' } });
    expect(renamed.body).toMatchObject({ name: 'Night', steps: [{ delayMinutes: 10 }] });
    expect((await t.call('PUT', `/api/v1/alerts/policies/${id}`, { token: admin.token, body: {} })).body.error).toBe('No updates provided');
    const foreign = await t.call('POST', '/api/v1/alerts/policies', { token: admin.token, body: { name: 'x', steps: [{ delayMinutes: 1, channelIds: [randomUUID()] }] } });
    expect(foreign.status).toBe(400);
    expect((await t.call('POST', '/api/v1/alerts/policies', { token: admin.token, body: { name: 'x', steps: [{ delayMinutes: -1, channelIds: [] }] } })).status).toBe(400);
    expect((await t.call('DELETE', `/api/v1/alerts/policies/${id}`, { token: admin.token })).body).toEqual({ success: true });
    const gone = await t.call('GET', `/api/v1/alerts/policies/${id}`, { token: admin.token });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('Escalation policy not found');
  });
});

async function partnerOf() {
  const { organizations } = await import('../../src/server/db/schema/index.js');
  const org = t.db.select().from(organizations).where(eq(organizations.id, orgId)).get();
  if (!org) throw new Error('no org');
  return { id: org.partnerId };
}
