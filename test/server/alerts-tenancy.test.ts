import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { alertRules, alerts } from '../../src/server/db/schema/index.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

// What one tenant (or a site-restricted user) must not reach through alerting and notifications.
const API = '/api/v1';
const CPU_HIGH = '00000000-0000-4000-a000-000000000001';
const MIN = 60_000;

describe('alerting and notifications: tenant and site boundaries (02 §2.3, §2.5, §4.1, §4.2)', () => {
  let t: TestApp, w: World;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  /** A channel of org B1 (made by B's partner admin) and one of org A1. */
  const channels = async () => {
    const email = (name: string, orgId: string, token: string) =>
      t.call('POST', `${API}/alerts/channels`, { token, body: { orgId, name, type: 'email', config: { recipients: ['oncall@example.test'] } } });
    const foreign = await email('Bravo on-call pager', w.orgB1.id, w.tokens.bAdmin);
    const own = await email('Alpha on-call', w.orgA1.id, w.tokens.orgUser);
    expect(foreign.status, foreign.text).toBe(201);
    expect(own.status, own.text).toBe(201);
    return { foreign: foreign.body.id as string, own: own.body.id as string };
  };
  const foreignPolicy = async (channelId: string) => {
    const res = await t.call('POST', `${API}/alerts/policies`, {
      token: w.tokens.bAdmin,
      body: { orgId: w.orgB1.id, name: 'Bravo escalation', steps: [{ delayMinutes: 5, channelIds: [channelId] }] },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  const createRule = (body: Record<string, unknown>) =>
    t.call('POST', `${API}/alert-templates/rules`, { token: w.tokens.orgUser, body: { templateId: CPU_HIGH, name: 'probe', ...body } });

  it("02§4.1 a rule refuses another organization's notification channel or escalation policy at create (400 naming the field)", async () => {
    const { foreign, own } = await channels();
    const refused = await createRule({ notificationChannelIds: [own, foreign] });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(refused.body.error).toBe(`notificationChannelIds: Unknown notification channel(s) of this organization: ${foreign}`);
    const policy = await createRule({ escalationPolicyId: await foreignPolicy(foreign) });
    expect(policy.status).toBe(400);
    expect(policy.body.error).toMatch(/^escalationPolicyId: /);
    // The legacy route creates through the same service.
    expect((await t.call('POST', `${API}/alerts/rules`, { token: w.tokens.orgUser, body: { templateId: CPU_HIGH, notificationChannelIds: [foreign] } })).status).toBe(400);
    expect(t.db.select().from(alertRules).all()).toEqual([]);
    const ok = await createRule({ notificationChannelIds: [own] });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.notificationChannelIds).toEqual([own]);
  });

  it("02§4.1 a rule refuses another organization's notification channel or escalation policy at update, and keeps its own", async () => {
    const { foreign, own } = await channels();
    const rule = await createRule({ notificationChannelIds: [own] });
    expect(rule.status, rule.text).toBe(201);
    const patch = (body: Record<string, unknown>) => t.call('PATCH', `${API}/alert-templates/rules/${rule.body.data.id}`, { token: w.tokens.orgUser, body });
    const refused = await patch({ notificationChannelIds: [foreign] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(`notificationChannelIds: Unknown notification channel(s) of this organization: ${foreign}`);
    expect((await patch({ escalationPolicyId: await foreignPolicy(foreign) })).status).toBe(400);
    expect(t.db.select().from(alertRules).get()).toMatchObject({ notificationChannelIds: [own], escalationPolicyId: null });
    // Other changes of a rule are not held back by the check.
    expect((await patch({ cooldownMinutes: 30 })).status).toBe(200);
  });

  it("02§4.1 the legacy rule view shows only channels of the rule's organization (GET /alerts/rules/:id)", async () => {
    const { foreign, own } = await channels();
    const rule = await createRule({ notificationChannelIds: [own] });
    expect(rule.status, rule.text).toBe(201);
    // A rule stored before channel ids were checked may name another tenant's channel.
    t.db.update(alertRules).set({ notificationChannelIds: [own, foreign] }).where(eq(alertRules.id, rule.body.data.id)).run();
    const got = await t.call('GET', `${API}/alerts/rules/${rule.body.data.id}`, { token: w.tokens.orgUser });
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain('Bravo on-call pager');
    expect(got.body.notificationChannels).toEqual([{ id: own, name: 'Alpha on-call', type: 'email' }]);
  });

  it('02§4.1 analyze by a site-restricted user returns no links involving alerts of sites it cannot see, and keeps the links others made', async () => {
    const device = randomUUID();
    const alert = (siteId: string, minutesAgo: number, deviceId = device) =>
      t.db
        .insert(alerts)
        .values({
          orgId: w.orgA1.id,
          siteId,
          severity: 'high',
          title: 'branch alert',
          message: 'm',
          ruleId: randomUUID(),
          deviceId,
          triggeredAt: new Date(Date.now() - minutesAgo * MIN).toISOString(),
        })
        .returning()
        .get();
    const hidden = [alert(w.siteA1b.id, 2), alert(w.siteA1b.id, 1)] as const; // siteUser sees only site A1a
    const otherDevice = randomUUID();
    const seen = [alert(w.siteA1a.id, 4, otherDevice), alert(w.siteA1a.id, 3, otherDevice)];
    const analyze = (token: string) => t.call('POST', `${API}/alert-templates/correlations/analyze`, { token, body: {} });
    const linksOf = (res: { body: { data: { links: { alertId: string; relatedAlertId: string; confidence: number }[] } } }) => res.body.data.links;
    // The organization's admin links both pairs.
    const stored = linksOf(await analyze(w.tokens.orgUser));
    expect(stored).toHaveLength(2);
    // The site user can neither list the hidden pair's link nor read its alerts …
    const listed = await t.call('GET', `${API}/alert-templates/correlations`, { token: w.tokens.siteUser });
    expect(listed.body.total).toBe(1);
    expect((await t.call('GET', `${API}/alerts/${hidden[0].id}`, { token: w.tokens.siteUser })).status).toBe(404);
    // … and analyze answers only the pair it sees.
    const res = await analyze(w.tokens.siteUser);
    expect(res.status).toBe(200);
    const ids = linksOf(res).flatMap((l) => [l.alertId, l.relatedAlertId]);
    for (const a of hidden) expect(ids).not.toContain(a.id);
    expect(ids.sort()).toEqual(seen.map((a) => a.id).sort());
    expect(JSON.stringify(res.body.data.groups)).not.toContain(hidden[0].id);
    // The links the admin made are still there, unchanged.
    const after = await t.call('GET', `${API}/alert-templates/correlations`, { token: w.tokens.orgUser });
    expect(after.body.total).toBe(2);
    const key = (l: { alertId: string; relatedAlertId: string; confidence: number }) => `${l.alertId}/${l.relatedAlertId}/${l.confidence}`;
    expect(after.body.data.map(key).sort()).toEqual(stored.map(key).sort());
  });

  it('01§2.6 a site-restricted user writes only rules aimed at its own sites, and no templates (403); organization-wide rules stay readable', async () => {
    const asSite = (method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: Record<string, unknown>) =>
      t.call(method, `${API}/alert-templates${url}`, { token: w.tokens.siteUser, ...(body ? { body } : {}) });
    const base = { templateId: CPU_HIGH, name: 'site rule' };
    expect((await asSite('POST', '/rules', base)).status).toBe(403); // the template's organization-wide targets
    expect((await asSite('POST', '/rules', { ...base, targets: { scope: 'organization' } })).status).toBe(403);
    expect((await asSite('POST', '/rules', { ...base, targets: { scope: 'site', siteIds: [w.siteA1b.id] } })).status).toBe(403);
    const mine = await asSite('POST', '/rules', { ...base, targets: { scope: 'site', siteIds: [w.siteA1a.id] } });
    expect(mine.status, mine.text).toBe(201);
    const ownId = mine.body.data.id as string;
    expect((await asSite('PATCH', `/rules/${ownId}`, { name: 'renamed' })).status).toBe(200);
    expect((await asSite('PATCH', `/rules/${ownId}`, { targets: { scope: 'organization' } })).status).toBe(403);
    const orgWide = await createRule({});
    expect(orgWide.status, orgWide.text).toBe(201);
    const orgWideId = orgWide.body.data.id as string;
    expect((await t.call('GET', `${API}/alert-templates/rules/${orgWideId}`, { token: w.tokens.siteUser })).status).toBe(200);
    expect((await asSite('PATCH', `/rules/${orgWideId}`, { name: 'mine now' })).status).toBe(403);
    expect((await asSite('POST', `/rules/${orgWideId}/toggle`, { enabled: false })).status).toBe(403);
    expect((await asSite('DELETE', `/rules/${orgWideId}`)).status).toBe(403);
    expect((await asSite('DELETE', `/rules/${ownId}`)).status).toBe(200);
    expect((await asSite('POST', '/templates', { name: 'Mine', severity: 'high' })).status).toBe(403);
  });

  it('02§2.5 marking read keeps the readAt of notifications that were already read (all: true and by ids); unread clears it', async () => {
    const uid = w.users.orgUser.id;
    t.services.inbox.deliver(
      t.db,
      [0, 1, 2].map((i) => ({ userId: uid, orgId: w.orgA1.id, type: 'alert' as const, priority: 'normal' as const, title: `t${i}`, message: 'm', link: null, metadata: {} })),
    );
    const list = async () => (await t.call('GET', `${API}/notifications`, { token: w.tokens.orgUser })).body.notifications as { id: string; readAt: string | null }[];
    const readAtOf = async (id: string) => (await list()).find((n) => n.id === id)?.readAt;
    const mark = async (body: Record<string, unknown>) => expect((await t.call('PATCH', `${API}/notifications/read`, { token: w.tokens.orgUser, body })).status).toBe(200);
    const [first, second, third] = (await list()).map((n) => n.id) as [string, string, string];
    await mark({ ids: [first] });
    const readAt = await readAtOf(first);
    expect(readAt).toBeTruthy();
    const tick = () => new Promise((resolve) => setTimeout(resolve, 20));
    await tick();
    await mark({ ids: [first, second] });
    expect(await readAtOf(first)).toBe(readAt);
    const secondAt = await readAtOf(second);
    expect(secondAt && secondAt > (readAt as string)).toBe(true);
    await tick();
    await mark({ all: true });
    expect(await readAtOf(first)).toBe(readAt);
    expect(await readAtOf(second)).toBe(secondAt);
    expect(await readAtOf(third)).toBeTruthy();
    await mark({ ids: [first], read: false });
    expect(await readAtOf(first)).toBeNull();
  });
});
