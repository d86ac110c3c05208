import { eq } from 'drizzle-orm';
import { beforeEach, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { alertEvaluatorState, alertMetricSamples, alerts, devices, outboxEvents } from '../../src/server/db/schema/index.js';
import { conditionHeld, RETENTION_MS, SAMPLE_GRACE_MS } from '../../src/server/modules/alerts/evaluator.js';
import { enrollAgent, instantOf, reportSeries, type Agent } from '../helpers/alerts.js';
import { ROLES, seedUser, type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1';
const CPU_HIGH = '00000000-0000-4000-a000-000000000001';
const SERVICE_STOPPED = '00000000-0000-4000-a000-000000000003';
const MIN = 60_000;

describe('alerts: metrics, evaluation and the alert state machine (02 §3, 05 "4.1 Core alerts")', () => {
  let t: TestApp, w: World;
  let clock: number;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  beforeEach(async () => {
    clock = Date.now();
  });

  /** The next evaluation: 30 s after the previous one (never twice the same instant). */
  const evaluate = (at?: number) => {
    clock = at ?? Math.max(clock + 30_000, Date.now());
    return t.services.alertEvaluator.run(new Date(clock));
  };
  const rule = async (body: Record<string, unknown> = {}, token = w.tokens.orgUser) => {
    const res = await t.call('POST', `${API}/alert-templates/rules`, { token, body: { templateId: CPU_HIGH, name: 'CPU', ...body } });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  const agent = (hostname: string, siteId?: string) => enrollAgent(t, w.tokens.system, w.orgA1.id, hostname, siteId);
  /** CPU at `value` for the 6 minutes up to the instant the next evaluation looks at. */
  const cpu = (a: Agent, value: number | ((at: number) => number) = 95, minutes = 6) => {
    const end = instantOf(Math.max(clock + 30_000, Date.now()));
    return reportSeries(t, a, 'cpu.usage', value, end - minutes * MIN, end);
  };
  const events = (type: string) => t.db.select().from(outboxEvents).where(eq(outboxEvents.type, type)).all();
  /** An active alert of a fresh device and a device-targeted rule. */
  const raise = async (hostname = 'web-1', siteId?: string) => {
    const a = await agent(hostname, siteId);
    const r = await rule({ name: `CPU ${hostname}`, targets: { scope: 'device', deviceIds: [a.deviceId] } });
    await cpu(a);
    const [alert] = evaluate();
    expect(alert).toBeDefined();
    return { agent: a, rule: r, alert: alert as typeof alerts.$inferSelect };
  };

  it('brief§4 the decision: samples covering the whole window, every one satisfying the condition', () => {
    const window = { start: 0, end: 5 * MIN };
    expect(conditionHeld(window, { samples: 11, failing: 0, firstAt: 0, lastAt: 5 * MIN })).toBe(true);
    expect(conditionHeld(window, { samples: 11, failing: 1, firstAt: 0, lastAt: 5 * MIN })).toBe(false);
    expect(conditionHeld(window, { samples: 4, failing: 0, firstAt: 3 * MIN, lastAt: 5 * MIN })).toBe(false);
    expect(conditionHeld(window, { samples: 4, failing: 0, firstAt: 0, lastAt: 5 * MIN - SAMPLE_GRACE_MS - 1 })).toBe(false);
    expect(conditionHeld(window, undefined)).toBe(false);
  });

  it('02§3 samples above the threshold for the whole duration raise one active alert and alert.triggered, once', async () => {
    const a = await agent('web-1');
    // Override channels must be channels of the rule's organization.
    const channel = await t.call('POST', `${API}/alerts/channels`, { token: w.tokens.orgUser, body: { name: 'On call', type: 'email', config: { recipients: ['oncall@a1.test'] } } });
    expect(channel.status, channel.text).toBe(201);
    const r = await rule({ notificationChannelIds: [channel.body.id] });
    expect(await cpu(a)).toBe(13);
    const raised = evaluate();
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({ status: 'active', severity: 'high', ruleId: r.id, deviceId: a.deviceId, orgId: w.orgA1.id, title: 'web-1: CPU' });
    expect(raised[0]?.context).toMatchObject({ metric: 'cpu.usage', operator: '>', threshold: 90, observed: { min: 95, max: 95 } });
    const [event] = events('alert.triggered');
    expect(event?.payload).toMatchObject({
      alertId: raised[0]?.id,
      orgId: w.orgA1.id,
      orgName: 'Alpha One',
      ruleId: r.id,
      ruleName: 'CPU',
      templateId: CPU_HIGH,
      deviceId: a.deviceId,
      deviceName: 'web-1',
      severity: 'high',
      status: 'active',
      notificationChannelIds: [channel.body.id],
      escalationPolicyId: null,
      actorUserId: null,
    });
    // The same instant is not evaluated twice; later instants find the open alert (one per rule and device).
    expect(t.services.alertEvaluator.run(new Date(clock))).toEqual([]);
    await cpu(a);
    expect(evaluate()).toEqual([]);
    expect(t.db.select().from(alerts).all()).toHaveLength(1);
    expect(t.db.select().from(alertEvaluatorState).get()?.evaluatedThrough).toBe(instantOf(clock));
  });

  it('brief§4 a condition that does not hold for the whole duration raises nothing', async () => {
    const a = await agent('web-1');
    await rule();
    const end = instantOf(clock + 30_000);
    await cpu(a, (at) => (at === end - 2 * MIN ? 50 : 95)); // one dip inside the 5 minutes
    expect(evaluate()).toEqual([]);
    const b = await agent('web-2');
    await cpu(b, 95, 2); // above, but only for the last 2 of 5 minutes
    expect(evaluate()).toEqual([]);
  });

  it('brief§4 targets select devices by site, device and tag; other organizations are never evaluated', async () => {
    const hq = await agent('hq-1', w.siteA1a.id);
    const branch = await agent('branch-1', w.siteA1b.id);
    t.db.update(devices).set({ tags: ['db'] }).where(eq(devices.id, branch.deviceId)).run();
    const foreign = await enrollAgent(t, w.tokens.system, w.orgB1.id, 'b-1');
    await rule({ name: 'site', targets: { scope: 'site', siteIds: [w.siteA1a.id] } });
    await rule({ name: 'tag', targets: { scope: 'tag', tags: ['db', 'x'] } });
    for (const a of [hq, branch, foreign]) await cpu(a);
    const raised = evaluate();
    expect(raised.map((r) => `${r.ruleName}:${r.deviceName}`).sort()).toEqual(['site:hq-1', 'tag:branch-1']);
  });

  it('brief§4 an offline device raises nothing (missing data never fires), whatever its last samples said', async () => {
    const a = await agent('web-1');
    await rule();
    await cpu(a);
    t.db.update(devices).set({ status: 'offline' }).where(eq(devices.id, a.deviceId)).run();
    expect(evaluate()).toEqual([]);
  });

  it('brief§4 Service Stopped: service.status equals stopped for the service named in the rule', async () => {
    const a = await agent('srv-1');
    await rule({ templateId: SERVICE_STOPPED, name: 'Spooler', conditions: { metric: 'service.status', operator: 'equals', threshold: 'stopped', durationMinutes: 1, serviceName: 'spooler' } });
    const end = instantOf(clock + 30_000);
    await reportSeries(t, a, 'service.status', 'running', end - 2 * MIN, end, 'other');
    await reportSeries(t, a, 'service.status', 'stopped', end - 2 * MIN, end, 'spooler');
    const raised = evaluate();
    expect(raised).toHaveLength(1);
    expect(raised[0]).toMatchObject({ severity: 'critical', context: { serviceName: 'spooler', observed: { value: 'stopped' } } });
  });

  it('02§3 acknowledge only from active, resolve with a note, suppress never from resolved; events per transition', async () => {
    const { alert } = await raise();
    const ack = await t.call('POST', `${API}/alerts/${alert.id}/acknowledge`, { token: w.tokens.orgUser });
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({ status: 'acknowledged', acknowledgedBy: w.users.orgUser.id, deviceHostname: 'web-1', orgName: 'Alpha One' });
    const again = await t.call('POST', `${API}/alerts/${alert.id}/acknowledge`, { token: w.tokens.orgUser });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('Cannot acknowledge alert with status: acknowledged');
    const res = await t.call('POST', `${API}/alerts/${alert.id}/resolve`, { token: w.tokens.orgUser, body: { note: 'rebooted' } });
    expect(res.body).toMatchObject({ status: 'resolved', resolutionNote: 'rebooted', resolvedBy: w.users.orgUser.id });
    const twice = await t.call('POST', `${API}/alerts/${alert.id}/resolve`, { token: w.tokens.orgUser, body: {} });
    expect(twice.status).toBe(400);
    expect(twice.body.error).toBe('Alert is already resolved');
    const sup = await t.call('POST', `${API}/alerts/${alert.id}/suppress`, { token: w.tokens.orgUser, body: {} });
    expect(sup.status).toBe(400);
    expect(sup.body.error).toBe('Cannot suppress a resolved alert');
    expect(events('alert.acknowledged')[0]?.payload).toMatchObject({ alertId: alert.id, status: 'acknowledged', actorUserId: w.users.orgUser.id });
    expect(events('alert.resolved')[0]?.payload).toMatchObject({ alertId: alert.id, status: 'resolved' });
  });

  it('02§3 suppress: until in the future or indefinitely; a past or invalid time is 400; it ends when the time passes', async () => {
    const { alert } = await raise();
    for (const until of ['2000-01-01T00:00:00Z', 'tomorrow']) {
      const bad = await t.call('POST', `${API}/alerts/${alert.id}/suppress`, { token: w.tokens.orgUser, body: { until } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('Suppression time must be in the future');
    }
    const forever = await t.call('POST', `${API}/alerts/${alert.id}/suppress`, { token: w.tokens.orgUser, body: {} });
    expect(forever.body).toMatchObject({ status: 'suppressed', suppressedUntil: null });
    const until = new Date(Date.now() + 60_000).toISOString();
    const timed = await t.call('POST', `${API}/alerts/${alert.id}/suppress`, { token: w.tokens.orgUser, body: { until } });
    expect(timed.body).toMatchObject({ status: 'suppressed', suppressedUntil: until });
    expect(events('alert.suppressed')).toHaveLength(2);
    evaluate(Date.now() + 2 * MIN);
    expect(t.db.select().from(alerts).where(eq(alerts.id, alert.id)).get()?.status).toBe('active');
  });

  it("05 resolve starts the rule's cooldown: no new alert for the rule and device until it ends", async () => {
    const { agent: a, rule: r, alert } = await raise();
    await t.call('PATCH', `${API}/alert-templates/rules/${r.id}`, { token: w.tokens.orgUser, body: { cooldownMinutes: 2 } });
    await t.call('POST', `${API}/alerts/${alert.id}/resolve`, { token: w.tokens.orgUser, body: {} });
    const resolvedAt = Date.now();
    const stored = t.db.select().from(alerts).where(eq(alerts.id, alert.id)).get();
    expect(Date.parse(stored?.cooldownUntil ?? '') - Date.parse(stored?.resolvedAt ?? '')).toBe(2 * MIN);
    await cpu(a, 95, 8);
    expect(evaluate()).toEqual([]);
    await reportSeries(t, a, 'cpu.usage', 95, instantOf(resolvedAt) - 5 * MIN, instantOf(resolvedAt + 3 * MIN));
    const later = evaluate(resolvedAt + 3 * MIN);
    expect(later).toHaveLength(1);
  });

  it('05 GET /alerts filters (status list, severity, deviceId, dates), newest first; summary; get with device, rule, notifications', async () => {
    const one = await raise('web-1');
    const two = await raise('web-2');
    await t.call('POST', `${API}/alerts/${one.alert.id}/acknowledge`, { token: w.tokens.orgUser });
    const list = async (qs: string, token = w.tokens.orgUser) => (await t.call('GET', `${API}/alerts?${qs}`, { token })).body;
    expect((await list('')).data.map((a: any) => a.id)).toEqual([two.alert.id, one.alert.id]);
    expect((await list('status=active')).data.map((a: any) => a.id)).toEqual([two.alert.id]);
    expect((await list('status=active,acknowledged')).pagination.total).toBe(2);
    expect((await list(`deviceId=${one.agent.deviceId}`)).data.map((a: any) => a.id)).toEqual([one.alert.id]);
    expect((await list('severity=low')).pagination.total).toBe(0);
    expect((await list(`startDate=${encodeURIComponent(two.alert.triggeredAt)}`)).data.map((a: any) => a.id)).toEqual([two.alert.id]);
    expect((await list(`endDate=${encodeURIComponent(one.alert.triggeredAt)}`)).data.map((a: any) => a.id)).toEqual([one.alert.id]);
    expect((await t.call('GET', `${API}/alerts?status=open`, { token: w.tokens.orgUser })).status).toBe(400);
    expect((await list('', w.tokens.bAdmin)).pagination.total).toBe(0);
    const summary = await t.call('GET', `${API}/alerts/summary`, { token: w.tokens.orgUser });
    expect(summary.body).toEqual({
      bySeverity: { critical: 0, high: 1, medium: 0, low: 0, info: 0 },
      byStatus: { active: 1, acknowledged: 1, resolved: 0, suppressed: 0 },
      total: 2,
    });
    const get = await t.call('GET', `${API}/alerts/${one.alert.id}`, { token: w.tokens.orgUser });
    expect(get.body).toMatchObject({
      id: one.alert.id,
      device: { id: one.agent.deviceId, hostname: 'web-1', osType: 'linux', status: 'online' },
      rule: { id: one.rule.id, name: 'CPU web-1', templateId: CPU_HIGH, targetType: 'device', targetId: one.agent.deviceId, isActive: true },
      notifications: [],
    });
    expect((await t.call('GET', `${API}/alerts/${one.alert.id}`, { token: w.tokens.bAdmin })).status).toBe(404);
    expect((await t.call('GET', `${API}/alerts/not-a-uuid`, { token: w.tokens.orgUser })).status).toBe(400);
  });

  it('05 site-restricted users see only their sites’ alerts', async () => {
    const hq = await raise('hq-1', w.siteA1a.id);
    const branch = await raise('br-1', w.siteA1b.id);
    const res = await t.call('GET', `${API}/alerts`, { token: w.tokens.siteUser });
    expect(res.body.data.map((a: any) => a.id)).toEqual([hq.alert.id]);
    expect((await t.call('GET', `${API}/alerts/${branch.alert.id}`, { token: w.tokens.siteUser })).status).toBe(404);
  });

  it('05 POST /alerts/bulk: updated and skipped counts; none accessible is 404', async () => {
    const one = await raise('web-1');
    const two = await raise('web-2');
    await t.call('POST', `${API}/alerts/${one.alert.id}/acknowledge`, { token: w.tokens.orgUser });
    const res = await t.call('POST', `${API}/alerts/bulk`, { token: w.tokens.orgUser, body: { action: 'acknowledge', alertIds: [one.alert.id, two.alert.id] } });
    expect(res.body).toEqual({ updated: 1, skipped: 1, failed: 0 });
    const resolve = await t.call('POST', `${API}/alerts/bulk`, { token: w.tokens.orgUser, body: { action: 'resolve', alertIds: [one.alert.id, two.alert.id] } });
    expect(resolve.body).toEqual({ updated: 2, skipped: 0, failed: 0 });
    const none = await t.call('POST', `${API}/alerts/bulk`, { token: w.tokens.bAdmin, body: { action: 'resolve', alertIds: [one.alert.id] } });
    expect(none.status).toBe(404);
    expect(none.body.error).toBe('No accessible alerts found');
    const tooMany = await t.call('POST', `${API}/alerts/bulk`, { token: w.tokens.orgUser, body: { action: 'resolve', alertIds: [] } });
    expect(tooMany.status).toBe(400);
  });

  it('01§2.8 acknowledge needs alerts:acknowledge, resolve alerts:write (an Org Viewer has neither)', async () => {
    const { alert } = await raise();
    const viewer = await seedUser(t, { email: 'viewer@a1.test', org: { orgId: w.orgA1.id, roleId: ROLES.orgViewer }, login: 'mint', mfa: true });
    expect((await t.call('GET', `${API}/alerts`, { token: viewer.token })).status).toBe(200);
    expect((await t.call('POST', `${API}/alerts/${alert.id}/acknowledge`, { token: viewer.token })).status).toBe(403);
    expect((await t.call('POST', `${API}/alerts/${alert.id}/resolve`, { token: viewer.token, body: {} })).status).toBe(403);
    const tech = await seedUser(t, { email: 'tech@a1.test', org: { orgId: w.orgA1.id, roleId: ROLES.orgTechnician }, login: 'mint', mfa: true });
    expect((await t.call('POST', `${API}/alerts/${alert.id}/acknowledge`, { token: tech.token })).status).toBe(200);
  });

  it('brief§4 metrics: only the agent itself reports; bad samples are 400; old samples are pruned', async () => {
    const a = await agent('web-1');
    const b = await agent('web-2');
    const sample = { metric: 'cpu.usage', value: 10 };
    expect((await t.call('POST', `${API}/agents/${a.agentId}/metrics`, { token: b.token, body: { samples: [sample] } })).status).toBe(403);
    expect((await t.call('POST', `${API}/agents/${a.agentId}/metrics`, { body: { samples: [sample] } })).status).toBe(401);
    const future = new Date(Date.now() + 3600_000).toISOString();
    for (const body of [{ samples: [] }, { samples: [{ metric: '', value: 1 }] }, { samples: [{ ...sample, timestamp: future }] }]) {
      expect((await t.call('POST', `${API}/agents/${a.agentId}/metrics`, { token: a.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    const ok = await t.call('POST', `${API}/agents/${a.agentId}/metrics`, { token: a.token, body: { samples: [sample, { metric: 'service.status', value: 'running', serviceName: 'sshd' }] } });
    expect(ok.status).toBe(202);
    expect(ok.body).toEqual({ accepted: 2 });
    t.db.update(alertMetricSamples).set({ at: Date.now() - RETENTION_MS - 1000 }).where(eq(alertMetricSamples.metric, 'cpu.usage')).run();
    evaluate();
    expect(t.db.select().from(alertMetricSamples).all().map((s) => s.metric)).toEqual(['service.status']);
  });
});
