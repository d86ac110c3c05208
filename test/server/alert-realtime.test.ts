import { and, eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { alertEscalations, alerts, jobs, outboxEvents } from '../../src/server/db/schema/index.js';
import { EVALUATE_RECENT_JOB } from '../../src/server/modules/alerts/evaluator.js';
import { enrollAgent, reportSeries, type Agent } from '../helpers/alerts.js';
import type { Receiver } from '../helpers/https-receiver.js';
import type { World } from '../helpers/seed.js';
import type { TestApp } from '../helpers/server.js';
import { useReceiverWorld } from '../helpers/world.js';

// Issue 11 latency and auto-resolve (brief alerts2 §1, §2): metrics ingest evaluates the reporting device at once
// (the 30 s sweep stays for the rest), and an alert whose condition no longer holds resolves itself.
const API = '/api/v1';
const CPU_HIGH = '00000000-0000-4000-a000-000000000001';
const SEC = 1000;
/** CPU above 90 %, no duration: one sample crossing the threshold is enough. */
const INSTANT = { metric: 'cpu.usage', operator: '>', threshold: 90, durationMinutes: 0 };

describe('event-driven evaluation and auto-resolve (02 §3; issue 11 latency)', () => {
  let t: TestApp;
  let w: World;
  let r: Receiver;
  let agent: Agent;
  // A poll of a minute: anything that happens within a second happens because the worker was woken.
  const world = useReceiverWorld({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32', SVC_JOB_POLL_MS: '60000' });
  beforeEach(async () => {
    ({ t, w, receiver: r } = await world.setup());
    agent = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'db-1');
  });

  async function rule(extra: Record<string, unknown> = {}) {
    const res = await t.call('POST', `${API}/alert-templates/rules`, {
      token: w.tokens.orgUser,
      body: { templateId: CPU_HIGH, name: 'CPU db-1', targets: { scope: 'device', deviceIds: [agent.deviceId] }, conditions: INSTANT, ...extra },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data as { id: string };
  }
  const report = (value: number, at = Date.now()) => reportSeries(t, agent, 'cpu.usage', value, at, at);
  const alertRows = () => t.db.select().from(alerts).where(eq(alerts.deviceId, agent.deviceId)).all();
  const recentJobs = () => t.db.select().from(jobs).where(eq(jobs.type, EVALUATE_RECENT_JOB)).all();

  it('brief§1 a crossing sample raises its alert at once, without the 30 s sweep', async () => {
    await rule();
    await report(97);
    // The sweep has never run: no instant was evaluated.
    expect(t.services.alertEvaluator.watermark()).toBeUndefined();
    await t.worker.tick();
    const [alert] = alertRows();
    expect(alert).toMatchObject({ status: 'active', severity: 'high' });
    expect(alert?.context).toMatchObject({ metric: 'cpu.usage', observed: { max: 97, samples: 1 } });
    expect(t.services.alertEvaluator.watermark()).toBeUndefined();
  });

  it('brief§1 samples arriving while the evaluation waits share one job; each batch is evaluated by the event path once', async () => {
    await rule();
    await report(50);
    await report(60);
    await report(70);
    expect(recentJobs().filter((j) => j.status === 'pending')).toHaveLength(1);
    await t.worker.tick();
    expect(recentJobs().map((j) => j.status)).toEqual(['done']);
    // Nothing new since: a second evaluation finds no samples to evaluate and raises nothing.
    expect(t.services.alertEvaluator.runRecent(new Date())).toEqual([]);
    await report(97);
    expect(t.services.alertEvaluator.runRecent(new Date())).toHaveLength(1);
    expect(t.services.alertEvaluator.runRecent(new Date())).toEqual([]);
    expect(alertRows()).toHaveLength(1);
  });

  it('brief§1 with the worker running, the first channel request leaves within a second of the crossing sample (a poll of 60 s)', async () => {
    const channel = await t.call('POST', `${API}/alerts/channels`, { token: w.tokens.orgUser, body: { name: 'hook', type: 'webhook', config: { url: `${r.url}/hook` } } });
    expect(channel.status, channel.text).toBe(201);
    await rule();
    // Let the started worker's first tick (the periodic jobs) pass, so that only the wake-up can explain speed.
    t.worker.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = Date.now();
    await report(97);
    await r.waitFor(1, 5_000);
    const latency = Date.now() - sent;
    expect(r.received[0]?.path).toBe('/hook');
    expect(latency).toBeLessThan(1_000);
  });

  it('02§3 auto-resolve: once the opposite held for the window after the alert was raised, the alert resolves itself, its cooldown starts and its escalation is cancelled', async () => {
    const policy = await t.call('POST', `${API}/alerts/policies`, { token: w.tokens.orgUser, body: { name: 'Late', steps: [{ delayMinutes: 30, channelIds: [] }] } });
    expect(policy.status, policy.text).toBe(201);
    await rule({ escalationPolicyId: policy.body.id, cooldownMinutes: 20 });
    const t0 = Date.now();
    await report(97, t0);
    await t.worker.tick();
    await t.worker.tick();
    const [raised] = alertRows();
    expect(raised?.status).toBe('active');
    expect(t.db.select().from(alertEscalations).where(eq(alertEscalations.alertId, raised?.id ?? '')).get()?.status).toBe('scheduled');

    // Below the threshold every 30 s for the two minutes after the crossing (timestamps a little ahead are allowed).
    await reportSeries(t, agent, 'cpu.usage', 40, t0 + 30 * SEC, t0 + 150 * SEC);
    t.services.alertEvaluator.run(new Date(t0 + 180 * SEC));
    const [resolved] = alertRows();
    expect(resolved).toMatchObject({ id: raised?.id, status: 'resolved', resolvedBy: null });
    expect(resolved?.resolutionNote).toMatch(/^Auto-resolved: cpu\.usage > 90 for 0 min no longer holds on db-1\.$/);
    const cooldown = Date.parse(resolved?.cooldownUntil ?? '') - Date.parse(resolved?.resolvedAt ?? '');
    expect(cooldown).toBe(20 * 60 * SEC);
    const events = t.db.select().from(outboxEvents).where(eq(outboxEvents.type, 'alert.resolved')).all();
    expect(events.map((e) => e.payload)).toEqual([expect.objectContaining({ alertId: raised?.id, status: 'resolved', actorUserId: null })]);
    await t.worker.tick();
    expect(t.db.select().from(alertEscalations).where(eq(alertEscalations.alertId, raised?.id ?? '')).get()?.status).toBe('cancelled');
  });

  it('02§3 auto-resolve of a duration rule needs its whole window clear: missing data or a window with one high sample resolve nothing', async () => {
    await rule({ conditions: { ...INSTANT, durationMinutes: 1 } });
    const t0 = Date.now();
    await reportSeries(t, agent, 'cpu.usage', 97, t0 - 90 * SEC, t0);
    await t.worker.tick();
    expect(alertRows().map((a) => a.status)).toEqual(['active']);
    // No samples since: an offline or silent device keeps its alert.
    t.services.alertEvaluator.run(new Date(t0 + 150 * SEC));
    expect(alertRows().map((a) => a.status)).toEqual(['active']);
    // Low, high, low: the condition held again within the window.
    await reportSeries(t, agent, 'cpu.usage', (at) => (at === t0 + 180 * SEC ? 95 : 30), t0 + 150 * SEC, t0 + 210 * SEC);
    t.services.alertEvaluator.run(new Date(t0 + 240 * SEC));
    expect(alertRows().map((a) => a.status)).toEqual(['active']);
    // Then clear for the whole window: resolved.
    await reportSeries(t, agent, 'cpu.usage', 30, t0 + 240 * SEC, t0 + 290 * SEC);
    t.services.alertEvaluator.run(new Date(t0 + 330 * SEC));
    expect(alertRows().map((a) => a.status)).toEqual(['resolved']);
  });

  it('02§3 a rule without a duration is decided by the newest sample: a crossing right after low samples fires, a low sample after it resolves (once the alert is 90 s old)', async () => {
    await rule();
    const t0 = Date.now();
    await reportSeries(t, agent, 'cpu.usage', 20, t0 - 60 * SEC, t0 - 30 * SEC);
    await report(97, t0);
    await t.worker.tick();
    expect(alertRows().map((a) => a.status)).toEqual(['active']);
    await report(20, t0 + 120 * SEC);
    t.services.alertEvaluator.run(new Date(t0 + 180 * SEC));
    expect(alertRows().map((a) => a.status)).toEqual(['resolved']);
  });

  it('02§3 a rule with autoResolve false keeps its alert open until a person resolves it', async () => {
    const created = await rule({ autoResolve: false });
    expect(created).toMatchObject({ autoResolve: false });
    const t0 = Date.now();
    await report(97, t0);
    await t.worker.tick();
    await reportSeries(t, agent, 'cpu.usage', 40, t0 + 30 * SEC, t0 + 150 * SEC);
    t.services.alertEvaluator.run(new Date(t0 + 180 * SEC));
    expect(alertRows().map((a) => a.status)).toEqual(['active']);
    expect(t.db.select().from(outboxEvents).where(and(eq(outboxEvents.type, 'alert.resolved'))).all()).toEqual([]);
  });
});
