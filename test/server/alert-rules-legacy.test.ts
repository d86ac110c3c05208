import { beforeEach, describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { enrollAgent, reportSeries, type Agent } from '../helpers/alerts.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

// 05-wire-notes "4.1 Core alerts": the legacy `/alerts/rules` routes over the same rules as /alert-templates/rules.
const API = '/api/v1';
const CPU_HIGH = '00000000-0000-4000-a000-000000000001';
const CONDITIONS = { metric: 'cpu.usage', operator: '>', threshold: 80, durationMinutes: 0 };

describe('legacy /alerts/rules (05 4.1)', () => {
  let t: TestApp, w: World;
  let agent: Agent;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));
  beforeEach(async () => {
    agent = await enrollAgent(t, w.tokens.system, w.orgA1.id, 'app-1');
  });

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown) =>
    t.call(method, `${API}/alerts/rules${path}`, { token: w.tokens.orgUser, ...(body !== undefined ? { body } : {}) });

  it('05-wire 4.1 POST without a template needs name, severity and conditions, creates a template from them, and answers 201 in the legacy shape', async () => {
    expect((await call('POST', '', { severity: 'high', conditions: CONDITIONS })).body.error).toBe('Rule name is required');
    expect((await call('POST', '', { name: 'Hot', conditions: CONDITIONS })).body.error).toBe('Severity is required');
    expect((await call('POST', '', { name: 'Hot', severity: 'high' })).body.error).toBe('Conditions are required');
    const created = await call('POST', '', { name: 'Hot', severity: 'high', conditions: CONDITIONS, cooldownMinutes: 30, targets: { type: 'device', ids: [agent.deviceId] } });
    expect(created.status, created.text).toBe(201);
    expect(created.body).toMatchObject({
      orgId: w.orgA1.id,
      name: 'Hot',
      enabled: true,
      isActive: true,
      severity: 'high',
      targets: { type: 'device', ids: [agent.deviceId] },
      targetType: 'device',
      targetId: agent.deviceId,
      conditions: CONDITIONS,
      cooldownMinutes: 30,
      autoResolve: true,
      notificationChannelIds: [],
      notificationChannels: [],
      templateName: 'Hot',
    });
    const template = await t.call('GET', `${API}/alert-templates/templates/${created.body.templateId}`, { token: w.tokens.orgUser });
    expect(template.status).toBe(200);
    expect(template.body.data).toMatchObject({ name: 'Hot', builtIn: false, conditions: CONDITIONS });
    // With a template, the name defaults to the template's and targets to the whole organization.
    const fromTemplate = await call('POST', '', { templateId: CPU_HIGH });
    expect(fromTemplate.status, fromTemplate.text).toBe(201);
    expect(fromTemplate.body).toMatchObject({ name: 'CPU High', templateId: CPU_HIGH, targets: { type: 'org', ids: [w.orgA1.id] }, targetType: 'org' });
    expect((await call('POST', '', { templateId: CPU_HIGH, targets: { type: 'group', ids: ['x'] } })).status).toBe(400);
  });

  it('05-wire 4.1 GET lists newest first in {data, pagination} with enabled|isActive; GET /:id; 404 `Alert rule not found`', async () => {
    const a = await call('POST', '', { templateId: CPU_HIGH, name: 'A' });
    await new Promise((resolve) => setTimeout(resolve, 5)); // distinct createdAt
    const b = await call('POST', '', { templateId: CPU_HIGH, name: 'B', enabled: false });
    const list = await call('GET', '');
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((r: { name: string }) => r.name)).toEqual(['B', 'A']);
    expect(list.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    expect((await call('GET', '?isActive=false')).body.data.map((r: { id: string }) => r.id)).toEqual([b.body.id]);
    expect((await call('GET', '?enabled=true')).body.data.map((r: { id: string }) => r.id)).toEqual([a.body.id]);
    expect((await call('GET', `/${a.body.id}`)).body).toMatchObject({ id: a.body.id, name: 'A' });
    const missing = await call('GET', '/00000000-0000-4000-8000-000000000099');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('Alert rule not found');
    // Another organization's rule is not found either.
    const other = await t.call('GET', `${API}/alerts/rules/${a.body.id}`, { token: w.tokens.bAdmin });
    expect(other.status).toBe(404);
  });

  it('05-wire 4.1 PUT is partial; an empty body is 400 `No updates provided`', async () => {
    const rule = await call('POST', '', { templateId: CPU_HIGH, name: 'A' });
    const empty = await call('PUT', `/${rule.body.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No updates provided');
    const put = await call('PUT', `/${rule.body.id}`, { autoResolve: false, targets: { type: 'site', ids: [w.siteA1a.id] } });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toMatchObject({ name: 'A', autoResolve: false, targets: { type: 'site', ids: [w.siteA1a.id] }, targetType: 'site' });
    expect((await call('PUT', '/00000000-0000-4000-8000-000000000099', { name: 'x' })).body.error).toBe('Alert rule not found');
  });

  it('05-wire 4.1 DELETE answers {success:true}; a rule with an open alert is 409 with activeAlerts', async () => {
    const rule = await call('POST', '', { name: 'Hot', severity: 'high', conditions: CONDITIONS, targets: { type: 'device', ids: [agent.deviceId] } });
    await reportSeries(t, agent, 'cpu.usage', 95, Date.now(), Date.now());
    expect(t.services.alertEvaluator.runRecent(new Date())).toHaveLength(1);
    const refused = await call('DELETE', `/${rule.body.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'Cannot delete rule with active alerts', activeAlerts: 1 });
    const other = await call('POST', '', { templateId: CPU_HIGH, name: 'Quiet' });
    const deleted = await call('DELETE', `/${other.body.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ success: true });
    expect((await call('GET', `/${other.body.id}`)).status).toBe(404);
  });

  it('05-wire 4.1 POST /:id/test checks the rule against the device’s current samples and creates nothing; another organization’s device is 404', async () => {
    const rule = await call('POST', '', { name: 'Hot', severity: 'high', conditions: CONDITIONS, targets: { type: 'device', ids: [agent.deviceId] } });
    const quiet = await call('POST', `/${rule.body.id}/test`, { deviceId: agent.deviceId });
    expect(quiet.status, quiet.text).toBe(200);
    expect(quiet.body).toMatchObject({
      rule: { id: rule.body.id, name: 'Hot', severity: 'high' },
      device: { id: agent.deviceId, hostname: 'app-1', osType: 'linux' },
      targetMatch: true,
      conditionResults: [{ condition: CONDITIONS, result: false, reason: 'cpu.usage > 80 for 0 min: no samples in the window' }],
      wouldTrigger: false,
    });
    await reportSeries(t, agent, 'cpu.usage', 95, Date.now(), Date.now());
    const hot = await call('POST', `/${rule.body.id}/test`, { deviceId: agent.deviceId });
    expect(hot.body).toMatchObject({ targetMatch: true, conditionResults: [{ result: true }], wouldTrigger: true });
    const alerts = await t.call('GET', `${API}/alerts`, { token: w.tokens.orgUser });
    expect(alerts.body.data).toEqual([]);
    const foreign = await enrollAgent(t, w.tokens.system, w.orgB1.id, 'elsewhere');
    const refused = await call('POST', `/${rule.body.id}/test`, { deviceId: foreign.deviceId });
    expect(refused.status).toBe(404);
    expect(refused.body.error).toBe('Device not found or belongs to different organization');
  });
});
