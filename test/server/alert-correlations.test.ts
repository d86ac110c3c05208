import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { alertCorrelations, alerts, auditLogs } from '../../src/server/db/schema/index.js';
import { correlate } from '../../src/server/modules/alerts/correlation.js';
import { enrollAgent, instantOf, reportSeries } from '../helpers/alerts.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1/alert-templates/correlations';
const MIN = 60_000;

const at = (minutes: number) => new Date(Date.UTC(2026, 0, 1, 12, minutes)).toISOString();

describe('alert correlation (02 §2.3, §4.1)', () => {
  it('02§2.3 the method: same device within the window, or the same rule on devices of one site; the earlier alert first', () => {
    const rows = [
      { id: 'a', deviceId: 'd1', ruleId: 'r1', siteId: 's1', triggeredAt: at(0) },
      { id: 'b', deviceId: 'd1', ruleId: 'r2', siteId: 's1', triggeredAt: at(30) },
      { id: 'c', deviceId: 'd2', ruleId: 'r1', siteId: 's1', triggeredAt: at(6) },
      { id: 'd', deviceId: 'd3', ruleId: 'r1', siteId: 's2', triggeredAt: at(1) },
      { id: 'e', deviceId: 'd1', ruleId: 'r3', siteId: 's1', triggeredAt: at(100) },
    ];
    const pairs = correlate(rows, 60);
    expect(pairs).toEqual([
      { alertId: 'a', relatedAlertId: 'c', reason: 'same_rule_site', confidence: 0.77 },
      { alertId: 'a', relatedAlertId: 'b', reason: 'same_device', confidence: 0.7 },
    ]);
    expect(correlate(rows, 5)).toEqual([]);
    expect(correlate(rows, 60, new Set(['b']))).toEqual([{ alertId: 'a', relatedAlertId: 'b', reason: 'same_device', confidence: 0.7 }]);
  });

  describe('through the API', () => {
    let t: TestApp, w: World;
    useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

    const alert = (values: Partial<typeof alerts.$inferInsert> & { triggeredAt: string }) =>
      t.db
        .insert(alerts)
        .values({ orgId: w.orgA1.id, siteId: w.siteA1a.id, severity: 'high', title: 't', message: 'm', ruleId: randomUUID(), deviceId: randomUUID(), ...values })
        .returning()
        .get();
    const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * MIN).toISOString();

    it('02§4.1 analyze links the window, returns groups and the summary, is audited; window 5-1440', async () => {
      const device = randomUUID();
      const a = alert({ deviceId: device, triggeredAt: recent(20), deviceName: 'web-1' });
      const b = alert({ deviceId: device, triggeredAt: recent(10), deviceName: 'web-1' });
      alert({ triggeredAt: recent(5) });
      for (const windowMinutes of [4, 1441]) {
        const bad = await t.call('POST', `${API}/analyze`, { token: w.tokens.orgUser, body: { windowMinutes } });
        expect(bad.status).toBe(400);
      }
      const res = await t.call('POST', `${API}/analyze`, { token: w.tokens.orgUser, body: {} });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ requestedAlertIds: [], windowMinutes: 60, summary: 'Returning all correlation data.' });
      expect(res.body.data.links).toEqual([expect.objectContaining({ alertId: a.id, relatedAlertId: b.id, reason: 'same_device' })]);
      const [group] = res.body.data.groups;
      expect(group).toMatchObject({ id: a.id, title: 'Correlated Alert Group (2 alerts)', correlationScore: res.body.data.links[0].confidence });
      expect(group.rootCauseHint).toContain('web-1');
      expect(group.alerts.map((x: any) => x.id)).toEqual([a.id, b.id]);
      expect(t.db.select().from(auditLogs).all().map((r) => r.action)).toContain('alert_correlation.analyze');
      const none = await t.call('POST', `${API}/analyze`, { token: w.tokens.bAdmin, body: { orgId: w.orgB1.id } });
      expect(none.body.data.summary).toBe('No alerts found for this organization.');
      const requested = await t.call('POST', `${API}/analyze`, { token: w.tokens.orgUser, body: { alertIds: [b.id], windowMinutes: 5 } });
      expect(requested.body.data.summary).toBe('Correlation analysis complete for requested alerts.');
      expect(requested.body.data.links).toEqual([]);
    });

    it('02§4.1 links list (alertId, minConfidence), groups of the caller organization only, and one alert’s correlations', async () => {
      const device = randomUUID();
      const a = alert({ deviceId: device, triggeredAt: recent(30) });
      const b = alert({ deviceId: device, triggeredAt: recent(29) });
      const c = alert({ deviceId: device, triggeredAt: recent(1) });
      const foreign = alert({ orgId: w.orgB1.id, siteId: w.siteB1a.id, triggeredAt: recent(3) });
      t.db.insert(alertCorrelations).values([
        { orgId: w.orgA1.id, alertId: a.id, relatedAlertId: b.id, reason: 'same_device', confidence: 0.9 },
        { orgId: w.orgA1.id, alertId: a.id, relatedAlertId: c.id, reason: 'same_device', confidence: 0.55 },
      ]).run();
      const list = await t.call('GET', `${API}?minConfidence=0.7`, { token: w.tokens.orgUser });
      expect(Object.keys(list.body).sort()).toEqual(['data', 'limit', 'page', 'total']);
      expect(list.body.data.map((l: any) => l.relatedAlertId)).toEqual([b.id]);
      expect((await t.call('GET', `${API}?alertId=${c.id}`, { token: w.tokens.orgUser })).body.total).toBe(1);
      expect((await t.call('GET', API, { token: w.tokens.bAdmin })).body.total).toBe(0);
      const groups = await t.call('GET', `${API}/groups`, { token: w.tokens.orgUser });
      expect(groups.body.data).toHaveLength(1);
      expect(groups.body.data[0]).toMatchObject({ id: a.id, title: 'Correlated Alert Group (3 alerts)', correlationScore: 0.73 });
      expect((await t.call('GET', `${API}/groups`, { token: w.tokens.bAdmin })).body.data).toEqual([]);
      const one = await t.call('GET', `${API}/${c.id}`, { token: w.tokens.orgUser });
      expect(one.body.data.alert.id).toBe(c.id);
      expect(one.body.data.correlations).toHaveLength(1);
      expect(one.body.data.relatedAlerts.map((x: any) => x.id)).toEqual([a.id]);
      expect(one.body.data.groups).toHaveLength(1);
      expect((await t.call('GET', `${API}/${foreign.id}`, { token: w.tokens.orgUser })).status).toBe(404);
    });

    it('02§2.3 the evaluator links alerts that fire on the same device', async () => {
      const agent = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'db-1', w.siteA1a.id);
      for (const [templateId, name] of [['00000000-0000-4000-a000-000000000001', 'CPU'], ['00000000-0000-4000-a000-000000000004', 'Memory']]) {
        const res = await t.call('POST', '/api/v1/alert-templates/rules', { token: w.tokens.orgUser, body: { templateId, name } });
        expect(res.status).toBe(201);
      }
      const end = instantOf(Date.now());
      await reportSeries(t, agent, 'cpu.usage', 99, end - 6 * MIN, end);
      await reportSeries(t, agent, 'memory.availablePercent', 3, end - 6 * MIN, end);
      expect(t.services.alertEvaluator.run(new Date())).toHaveLength(2);
      const links = t.db.select().from(alertCorrelations).all();
      expect(links).toEqual([expect.objectContaining({ reason: 'same_device', confidence: 0.9, orgId: w.orgA1.id })]);
    });
  });
});
