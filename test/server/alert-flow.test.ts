import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { notifications } from '../../src/server/db/schema/index.js';
import { enrollAgent, instantOf, reportSeries } from '../helpers/alerts.js';
import type { Receiver } from '../helpers/https-receiver.js';
import type { World } from '../helpers/seed.js';
import type { TestApp } from '../helpers/server.js';
import { useReceiverWorld } from '../helpers/world.js';

// The whole alert path across its two modules, as one server runs it: agent samples → the evaluator (alerts) →
// alert.triggered on the outbox → the notification pipeline (notifications) → in-app rows and channel sends on a
// real HTTPS receiver → the escalation step, and what acknowledging does to it.
const API = '/api/v1';
const CPU_HIGH = '00000000-0000-4000-a000-000000000001';
const MIN = 60_000;

describe('alert path from samples to notifications (02 §3, §6)', () => {
  const world = useReceiverWorld({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32' });
  let t: TestApp;
  let w: World;
  let r: Receiver;
  beforeEach(async () => {
    ({ t, w, receiver: r } = await world.setup());
  });

  /** An org-A1 rule on one fresh device, with a first channel and an escalation step of `delay` minutes. */
  async function setUp(delay: number) {
    const token = w.tokens.orgUser;
    const channel = async (name: string) => {
      const res = await t.call('POST', `${API}/alerts/channels`, { token, body: { name, type: 'webhook', config: { url: `${r.url}/${name}` } } });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    const first = await channel('first');
    const late = await channel('late');
    const policy = await t.call('POST', `${API}/alerts/policies`, { token, body: { name: 'Escalate', steps: [{ delayMinutes: delay, channelIds: [late] }] } });
    expect(policy.status, policy.text).toBe(201);
    const agent = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'web-1');
    const rule = await t.call('POST', `${API}/alert-templates/rules`, {
      token,
      body: { templateId: CPU_HIGH, name: 'CPU web-1', targets: { scope: 'device', deviceIds: [agent.deviceId] }, notificationChannelIds: [first], escalationPolicyId: policy.body.id },
    });
    expect(rule.status, rule.text).toBe(201);
    // CPU above the template's 90 % for the 6 minutes up to the instant the next evaluation looks at.
    const now = Date.now();
    const end = instantOf(now + 30_000);
    await reportSeries(t, agent, 'cpu.usage', 97, end - 6 * MIN, end);
    const raised = t.services.alertEvaluator.run(new Date(now + 30_000));
    expect(raised).toHaveLength(1);
    return { now, alertId: (raised[0] as { id: string }).id };
  }

  const paths = () => r.received.map((q) => q.path);

  it('02§6 a threshold crossing raises one alert, notifies the right users in-app and sends on the rule’s channel; the escalation step fires after its delay', async () => {
    const { now, alertId } = await setUp(5);
    await t.worker.tick(new Date(now + 31_000));

    const recipients = t.db.select({ userId: notifications.userId, priority: notifications.priority }).from(notifications).all();
    const expected = [w.users.orgUser, w.users.siteUser, w.users.aAdmin, w.users.aTech, w.users.aSelAdmin].map((u) => u.id).sort();
    expect(recipients.map((n) => n.userId).sort()).toEqual(expected);
    // CPU High is a high-severity template: priority high (02 §2.5). Partner users without access get nothing.
    expect(new Set(recipients.map((n) => n.priority))).toEqual(new Set(['high']));
    for (const outsider of [w.users.aNone, w.users.bAdmin]) {
      expect(t.db.select().from(notifications).where(eq(notifications.userId, outsider.id)).all()).toEqual([]);
    }
    expect(paths()).toEqual(['/first']);
    const body = JSON.parse(r.received[0]?.body ?? '{}');
    expect(body.alert).toMatchObject({ id: alertId, severity: 'high', ruleName: 'CPU web-1' });

    await t.worker.tick(new Date(now + 5 * MIN + 32_000));
    expect(paths()).toEqual(['/first', '/late']);
    const alert = await t.call('GET', `${API}/alerts/${alertId}`, { token: w.tokens.orgUser });
    expect(alert.status).toBe(200);
    expect(alert.body.notifications.map((n: { status: string }) => n.status)).toEqual(['sent', 'sent']);
  });

  it('02§3 acknowledging the alert before the delay cancels its escalation', async () => {
    const { now, alertId } = await setUp(2);
    await t.worker.tick(new Date(now + 31_000));
    expect(paths()).toEqual(['/first']);
    const ack = await t.call('POST', `${API}/alerts/${alertId}/acknowledge`, { token: w.tokens.orgUser });
    expect(ack.status, ack.text).toBe(200);
    await t.worker.tick(new Date(now + 40_000));
    await t.worker.tick(new Date(now + 3 * MIN));
    expect(paths()).toEqual(['/first']);
  });
});
