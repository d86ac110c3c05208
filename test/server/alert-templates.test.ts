import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { auditLogs } from '../../src/server/db/schema/index.js';
import { ROLES, seedUser, type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1/alert-templates';
const CPU_HIGH = '00000000-0000-4000-a000-000000000001';

describe('alert templates and rules (02 §2.1, §2.2, §4.1, §7)', () => {
  let t: TestApp, w: World;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  const newTemplate = async (body: Record<string, unknown> = {}, token = w.tokens.orgUser) => {
    const res = await t.call('POST', `${API}/templates`, { token, body: { name: 'Custom CPU', severity: 'low', ...body } });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  const newRule = async (body: Record<string, unknown> = {}, token = w.tokens.orgUser) => {
    const res = await t.call('POST', `${API}/rules`, { token, body: { templateId: CPU_HIGH, name: 'CPU on A1', ...body } });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  const actions = () => t.db.select({ action: auditLogs.action }).from(auditLogs).all().map((r) => r.action);

  it('02§2.1 the five built-in templates exactly as the table, read-only, visible to every organization', async () => {
    for (const token of [w.tokens.orgUser, w.tokens.bAdmin, w.tokens.system]) {
      const res = await t.call('GET', `${API}/templates/built-in`, { token });
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(5);
      const rows = Object.fromEntries(res.body.data.map((d: any) => [d.name, [d.category, d.severity, d.conditions, d.defaultCooldownMinutes, d.builtIn]]));
      expect(rows).toEqual({
        'CPU High': ['Performance', 'high', { metric: 'cpu.usage', operator: '>', threshold: 90, durationMinutes: 5 }, 15, true],
        'Disk Space Low': ['Capacity', 'high', { metric: 'disk.freePercent', operator: '<', threshold: 10, durationMinutes: 10 }, 30, true],
        'Service Stopped': ['Availability', 'critical', { metric: 'service.status', operator: 'equals', threshold: 'stopped', durationMinutes: 1 }, 5, true],
        'Memory Pressure': ['Performance', 'medium', { metric: 'memory.availablePercent', operator: '<', threshold: 15, durationMinutes: 5 }, 15, true],
        'Network Latency High': ['Network', 'medium', { metric: 'network.latencyMs', operator: '>', threshold: 200, durationMinutes: 3 }, 10, true],
      });
    }
  });

  it('02§4.1 built-in templates are read-only (403 with the exact messages)', async () => {
    const patch = await t.call('PATCH', `${API}/templates/${CPU_HIGH}`, { token: w.tokens.system, body: { name: 'Mine' } });
    expect(patch.status).toBe(403);
    expect(patch.body.error).toBe('Built-in templates cannot be modified');
    const del = await t.call('DELETE', `${API}/templates/${CPU_HIGH}`, { token: w.tokens.system });
    expect(del.status).toBe(403);
    expect(del.body.error).toBe('Built-in templates cannot be deleted');
  });

  it('02§2.1 a custom template gets the defaults (Custom, {}, organization scope, 15 min), trimmed name, and an audit entry', async () => {
    const tpl = await newTemplate({ name: '  Padded  ' });
    expect(tpl).toMatchObject({ name: 'Padded', category: 'Custom', conditions: {}, targets: { scope: 'organization' }, defaultCooldownMinutes: 15, builtIn: false, orgId: w.orgA1.id });
    expect(tpl.titleTemplate).toBe('{{deviceName}}: Padded');
    expect(actions()).toContain('alert_template.create');
    const get = await t.call('GET', `${API}/templates/${tpl.id}`, { token: w.tokens.orgUser });
    expect(get.body.data.id).toBe(tpl.id);
    const other = await t.call('GET', `${API}/templates/${tpl.id}`, { token: w.tokens.bAdmin });
    expect(other.status).toBe(404);
    expect(other.body.error).toBe('Template not found');
  });

  it('02§7 template bounds: name, severity, cooldown 0-10080, category 1-100 (400)', async () => {
    const bad = [
      { severity: 'low' },
      { name: 'x' },
      { name: 'x', severity: 'urgent' },
      { name: '   ', severity: 'low' },
      { name: 'x'.repeat(256), severity: 'low' },
      { name: 'x', severity: 'low', defaultCooldownMinutes: 10_081 },
      { name: 'x', severity: 'low', defaultCooldownMinutes: -1 },
      { name: 'x', severity: 'low', category: '' },
      { name: 'x', severity: 'low', category: 'c'.repeat(101) },
    ];
    for (const body of bad) {
      const res = await t.call('POST', `${API}/templates`, { token: w.tokens.orgUser, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    await newTemplate({ defaultCooldownMinutes: 10_080, category: 'c'.repeat(100) });
    await newTemplate({ defaultCooldownMinutes: 0 });
  });

  it('02§7 an empty PATCH is 400 No updates provided; a partial one changes only its fields', async () => {
    const tpl = await newTemplate();
    const empty = await t.call('PATCH', `${API}/templates/${tpl.id}`, { token: w.tokens.orgUser, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No updates provided');
    const res = await t.call('PATCH', `${API}/templates/${tpl.id}`, { token: w.tokens.orgUser, body: { severity: 'critical' } });
    expect(res.body.data).toMatchObject({ severity: 'critical', name: 'Custom CPU' });
    expect(actions()).toContain('alert_template.update');
  });

  it('02§4.1 template list: built-ins first then by name, filters severity, search, builtIn, paging (flat envelope)', async () => {
    await newTemplate({ name: 'Alpha custom', severity: 'high' });
    const all = await t.call('GET', `${API}/templates?limit=100`, { token: w.tokens.orgUser });
    expect(all.body.total).toBe(6);
    expect(all.body.data.slice(0, 5).every((d: any) => d.builtIn)).toBe(true);
    expect(all.body.data[5].name).toBe('Alpha custom');
    expect(Object.keys(all.body).sort()).toEqual(['data', 'limit', 'page', 'total']);
    const high = await t.call('GET', `${API}/templates?severity=high`, { token: w.tokens.orgUser });
    expect(high.body.data.map((d: any) => d.name)).toEqual(['CPU High', 'Disk Space Low', 'Alpha custom']);
    const search = await t.call('GET', `${API}/templates?search=disk`, { token: w.tokens.orgUser });
    expect(search.body.data.map((d: any) => d.name)).toEqual(['Disk Space Low']);
    const custom = await t.call('GET', `${API}/templates?builtIn=false`, { token: w.tokens.orgUser });
    expect(custom.body.data.map((d: any) => d.name)).toEqual(['Alpha custom']);
    const page2 = await t.call('GET', `${API}/templates?limit=2&page=2`, { token: w.tokens.orgUser });
    expect(page2.body).toMatchObject({ page: 2, limit: 2, total: 6 });
    expect(page2.body.data).toHaveLength(2);
    const otherPartner = await t.call('GET', `${API}/templates`, { token: w.tokens.bAdmin });
    expect(otherPartner.body.total).toBe(5);
  });

  it('02§4.1 writes need alerts:write and MFA', async () => {
    const viewer = await seedUser(t, { email: 'viewer@a1.test', org: { orgId: w.orgA1.id, roleId: ROLES.orgViewer }, login: 'mint', mfa: true });
    const denied = await t.call('POST', `${API}/templates`, { token: viewer.token, body: { name: 'x', severity: 'low' } });
    expect(denied.status).toBe(403);
    expect(denied.body.error).not.toMatch(/organization/i);
    const noMfa = await seedWorldToken();
    const res = await t.call('POST', `${API}/templates`, { token: noMfa, body: { name: 'x', severity: 'low' } });
    expect(res.status).toBe(403);
  });
  async function seedWorldToken(): Promise<string> {
    const { mintToken } = await import('../helpers/seed.js');
    return mintToken(t, w.users.orgUser.id, { mfa: false });
  }

  it('02§2.2 a rule inherits severity, targets, conditions and cooldown from its template', async () => {
    const rule = await newRule();
    expect(rule).toMatchObject({
      templateId: CPU_HIGH,
      templateName: 'CPU High',
      severity: 'high',
      enabled: true,
      isActive: true,
      targets: { scope: 'organization' },
      conditions: { metric: 'cpu.usage', operator: '>', threshold: 90, durationMinutes: 5 },
      cooldownMinutes: 15,
      orgId: w.orgA1.id,
      targetType: 'organization',
      targetId: w.orgA1.id,
      notificationChannelIds: null,
      escalationPolicyId: null,
    });
    const own = await newRule({ severity: 'low', cooldownMinutes: 0, targets: { scope: 'site', siteIds: [w.siteA1a.id] }, conditions: { metric: 'cpu.usage', operator: '>=', threshold: 50 } });
    expect(own).toMatchObject({ severity: 'low', cooldownMinutes: 0, targetType: 'site', targetId: w.siteA1a.id, conditions: { threshold: 50 } });
    expect(actions()).toContain('alert_rule.create');
  });

  it('02§7 a rule with an unknown template is 404 Template not found; a template of another organization too', async () => {
    const res = await t.call('POST', `${API}/rules`, { token: w.tokens.orgUser, body: { templateId: '11111111-1111-4111-8111-111111111111', name: 'x' } });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('Template not found');
    const foreign = await newTemplate({}, w.tokens.bAdmin);
    const res2 = await t.call('POST', `${API}/rules`, { token: w.tokens.orgUser, body: { templateId: foreign.id, name: 'x' } });
    expect(res2.status).toBe(404);
  });

  it('05 Org resolution: system needs orgId, a multi-org partner needs orgId, an org caller cannot name another org', async () => {
    const sys = await t.call('POST', `${API}/rules`, { token: w.tokens.system, body: { templateId: CPU_HIGH, name: 'x' } });
    expect(sys.status).toBe(400);
    expect(sys.body.error).toBe('orgId is required');
    const partner = await t.call('POST', `${API}/rules`, { token: w.tokens.aAdmin, body: { templateId: CPU_HIGH, name: 'x' } });
    expect(partner.status).toBe(400);
    expect(partner.body.error).toBe('orgId is required when partner has multiple organizations');
    const single = await t.call('POST', `${API}/rules`, { token: w.tokens.aSelAdmin, body: { templateId: CPU_HIGH, name: 'x' } });
    expect(single.status).toBe(201);
    expect(single.body.data.orgId).toBe(w.orgA1.id);
    const cross = await t.call('POST', `${API}/rules`, { token: w.tokens.orgUser, body: { templateId: CPU_HIGH, name: 'x', orgId: w.orgB1.id } });
    expect(cross.status).toBe(403);
    expect(cross.body.error).toBe('Access to this organization denied');
  });

  it('02§4.1 rule list filters: enabled, severity, templateId, targetType, targetValue, search, paging', async () => {
    const a = await newRule({ name: 'Org wide' });
    const b = await newRule({ name: 'Site HQ', targets: { scope: 'site', siteIds: [w.siteA1a.id] }, severity: 'low' });
    const c = await newRule({ name: 'Tagged', targets: { scope: 'tag', tags: ['db'] }, enabled: false });
    const q = async (qs: string) => (await t.call('GET', `${API}/rules?${qs}`, { token: w.tokens.orgUser })).body.data.map((r: any) => r.id).sort();
    expect(await q('')).toEqual([a.id, b.id, c.id].sort());
    expect(await q('enabled=false')).toEqual([c.id]);
    expect(await q('enabled=true')).toEqual([a.id, b.id].sort());
    expect(await q('severity=low')).toEqual([b.id]);
    expect(await q(`templateId=${CPU_HIGH}`)).toHaveLength(3);
    expect(await q('targetType=tag')).toEqual([c.id]);
    expect(await q(`targetValue=${w.siteA1a.id}`)).toEqual([b.id]);
    expect(await q('targetValue=db')).toEqual([c.id]);
    expect(await q(`targetValue=${w.orgA1.id}`)).toEqual([a.id]);
    expect(await q('search=site')).toEqual([b.id]);
    const page = await t.call('GET', `${API}/rules?limit=1&page=3`, { token: w.tokens.orgUser });
    expect(page.body).toMatchObject({ page: 3, limit: 1, total: 3 });
    const other = await t.call('GET', `${API}/rules`, { token: w.tokens.bAdmin });
    expect(other.body.total).toBe(0);
  });

  it('02§4.1 rule get, PATCH (partial, empty 400), toggle and DELETE, each audited; unknown is 404 Rule not found', async () => {
    const rule = await newRule();
    expect((await t.call('GET', `${API}/rules/${rule.id}`, { token: w.tokens.orgUser })).body.data.id).toBe(rule.id);
    const empty = await t.call('PATCH', `${API}/rules/${rule.id}`, { token: w.tokens.orgUser, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No updates provided');
    // Override channels must be channels of the rule's organization.
    const channel = await t.call('POST', '/api/v1/alerts/channels', { token: w.tokens.orgUser, body: { name: 'On call', type: 'email', config: { recipients: ['oncall@a1.test'] } } });
    expect(channel.status, channel.text).toBe(201);
    const patched = await t.call('PATCH', `${API}/rules/${rule.id}`, { token: w.tokens.orgUser, body: { cooldownMinutes: 60, notificationChannelIds: [channel.body.id] } });
    expect(patched.body.data).toMatchObject({ cooldownMinutes: 60, severity: 'high', notificationChannelIds: [channel.body.id] });
    const off = await t.call('POST', `${API}/rules/${rule.id}/toggle`, { token: w.tokens.orgUser, body: { enabled: false } });
    expect(off.body.data).toMatchObject({ enabled: false, isActive: false });
    const bad = await t.call('POST', `${API}/rules/${rule.id}/toggle`, { token: w.tokens.orgUser, body: {} });
    expect(bad.status).toBe(400);
    const foreign = await t.call('GET', `${API}/rules/${rule.id}`, { token: w.tokens.bAdmin });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('Rule not found');
    const del = await t.call('DELETE', `${API}/rules/${rule.id}`, { token: w.tokens.orgUser });
    expect(del.body).toEqual({ data: { id: rule.id, deleted: true } });
    expect((await t.call('GET', `${API}/rules/${rule.id}`, { token: w.tokens.orgUser })).status).toBe(404);
    expect(actions().filter((a) => a.startsWith('alert_rule.'))).toEqual(['alert_rule.create', 'alert_rule.update', 'alert_rule.toggle', 'alert_rule.delete']);
    // 03§2.6: each entry is the rule's organization's, and so its partner's (who sees it).
    const owners = t.db.select({ action: auditLogs.action, orgId: auditLogs.orgId, partnerId: auditLogs.partnerId }).from(auditLogs).all();
    for (const entry of owners.filter((e) => e.action.startsWith('alert_rule.'))) {
      expect(entry).toEqual({ action: entry.action, orgId: w.orgA1.id, partnerId: w.partnerA.id });
    }
  });

  it('02§7 rule bounds: name 1-255, cooldown 0-10080, targets shape; a template in use cannot be deleted (409)', async () => {
    for (const body of [{ name: '' }, { cooldownMinutes: 10_081 }, { targets: { scope: 'site' } }, { targets: { scope: 'planet' } }, { conditions: { operator: '!=' } }]) {
      const res = await t.call('POST', `${API}/rules`, { token: w.tokens.orgUser, body: { templateId: CPU_HIGH, name: 'x', ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const foreignSite = await t.call('POST', `${API}/rules`, { token: w.tokens.orgUser, body: { templateId: CPU_HIGH, name: 'x', targets: { scope: 'site', siteIds: [w.siteB1a.id] } } });
    expect(foreignSite.status).toBe(400);
    const tpl = await newTemplate();
    await newRule({ templateId: tpl.id });
    const del = await t.call('DELETE', `${API}/templates/${tpl.id}`, { token: w.tokens.orgUser });
    expect(del.status).toBe(409);
    const unused = await newTemplate({ name: 'unused' });
    const ok = await t.call('DELETE', `${API}/templates/${unused.id}`, { token: w.tokens.orgUser });
    expect(ok.body).toEqual({ data: { id: unused.id, deleted: true } });
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'alert_template.delete')).all()).toHaveLength(1);
  });
});
