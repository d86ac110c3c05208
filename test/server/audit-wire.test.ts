import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditCategoryOf } from '../../src/contract/audit.js';
import { auditLogs, users } from '../../src/server/db/schema/index.js';
import { systemContext } from '../../src/server/context.js';
import { recordAudit } from '../../src/server/modules/audit/recorder.js';
import { AUDIT_EXPORT_COLUMNS, REPORT_ROWS } from '../../src/server/modules/audit/service.js';
import { useWorld } from '../helpers/world.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1';

/** The platform audit log as the deployed service answers it (05 "03 §2.6/§4.4 Platform audit log"). */
describe('platform audit log, wire shape (03 §2.6, §4.4; 05 "03 §2.6/§4.4")', () => {
  let t: TestApp, w: World;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  const get = (token: string, url: string) => t.call('GET', `${API}${url}`, { token });
  /** One organization.update entry in org A1 made by partner A's admin; returns its row. */
  const renameA1 = async (name = 'Alpha Prime') => {
    const res = await t.call('PATCH', `${API}/orgs/organizations/${w.orgA1.id}`, { token: w.tokens.aAdmin, body: { name } });
    expect(res.status, res.text).toBe(200);
    const row = t.db.select().from(auditLogs).where(eq(auditLogs.resourceName, name)).get();
    if (!row) throw new Error(`no audit entry names ${name}`);
    return row;
  };
  const createSiteA1 = async () => {
    const site = await t.call('POST', `${API}/orgs/sites`, { token: w.tokens.orgUser, body: { orgId: w.orgA1.id, name: 'A1 Lab' } });
    expect(site.status, site.text).toBe(201);
  };
  /** Entries written by the system, in one transaction. */
  const record = (entries: { action: string; orgId?: string; resourceName?: string }[]) =>
    t.db.$client.transaction(() => {
      for (const e of entries) recordAudit(t.db, systemContext(), { resourceType: 'test', ...e });
    })();
  /** Entries of org A1, one per action. */
  const inA1 = (...actions: string[]) => actions.map((action) => ({ action, orgId: w.orgA1.id }));
  const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((e) => e.id);
  const actions = (res: { body: { data: { action: string }[] } }) => res.body.data.map((e) => e.action);

  it('03§4.4 (wire) list `to` is inclusive: an entry stamped exactly at `to` is listed, one after it is not', async () => {
    const row = await renameA1();
    t.db.update(auditLogs).set({ timestamp: '2024-03-10T00:00:00.000Z' }).where(eq(auditLogs.id, row.id)).run();
    const res = await get(w.tokens.system, '/audit-logs/logs?from=2024-03-01T00:00:00Z&to=2024-03-10T00:00:00Z');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([row.id]);
    expect(ids(await get(w.tokens.system, '/audit-logs/search?q=alpha&to=2024-03-10T00:00:00Z'))).toEqual([row.id]);
    expect(ids(await get(w.tokens.system, '/audit-logs/logs?from=2024-03-01T00:00:00Z&to=2024-03-09T23:59:59.999Z'))).toEqual([]);
  });

  it('03§4.4 (wire) GET /audit-logs/logs/:id of an unknown entry is 404 `Audit log not found`', async () => {
    const res = await get(w.tokens.system, '/audit-logs/logs/0b6f4c1e-9d1a-4c59-8a8e-3f4b1c2d3e4f');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('Audit log not found');
  });

  it('03§4.4 (wire) search answers {data, query, pagination} with the query echoed', async () => {
    await renameA1();
    const res = await get(w.tokens.system, '/audit-logs/search?q=alpha');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'pagination', 'query']);
    expect(res.body.data.length).toBeGreaterThan(0);
    expect(res.body.query).toBe('alpha');
  });

  it('03§4.4 (wire) list and search pagination carry totalPages = ceil(total/limit)', async () => {
    await renameA1('Alpha 1');
    await renameA1('Alpha 2');
    await renameA1('Alpha 3');
    const res = await get(w.tokens.aAdmin, '/audit-logs/logs?limit=2');
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    expect((await get(w.tokens.aAdmin, '/audit-logs/search?q=alpha&limit=3')).body.pagination).toEqual({ page: 1, limit: 3, total: 3, totalPages: 1 });
    expect((await get(w.tokens.aAdmin, '/audit-logs/logs?action=nothing')).body.pagination).toEqual({ page: 1, limit: 50, total: 0, totalPages: 0 });
  });

  it('03§4.4 (wire) excludeActions (csv) leaves those actions out of the list, the search and the export', async () => {
    await renameA1();
    await createSiteA1();
    const res = await get(w.tokens.aAdmin, '/audit-logs/logs?excludeActions=organization.update,user.login');
    expect(res.status).toBe(200);
    expect(actions(res)).toEqual(['site.create']);
    expect(actions(await get(w.tokens.aAdmin, '/audit-logs/search?q=e&excludeActions=site.create'))).toEqual(['organization.update']);
    // Exact names, not substrings.
    expect(actions(await get(w.tokens.aAdmin, '/audit-logs/logs?excludeActions=site')).sort()).toEqual(['organization.update', 'site.create']);
    const csv = await get(w.tokens.system, `/audit-logs/export?orgId=${w.orgA1.id}&excludeActions=site.create,audit_log.export&columns=action`);
    expect(csv.text.trimEnd().split('\n')).toEqual(['action', 'organization.update']);
  });

  it('03§4.4 (wire) skipCount=true answers total and totalPages -1, with the page itself', async () => {
    await renameA1();
    const res = await get(w.tokens.aAdmin, '/audit-logs/logs?skipCount=true');
    expect(res.status).toBe(200);
    expect(res.body.pagination).toEqual({ page: 1, limit: 50, total: -1, totalPages: -1 });
    expect(actions(res)).toEqual(['organization.update']);
    expect((await get(w.tokens.aAdmin, '/audit-logs/search?q=alpha&skipCount=true')).body.pagination.total).toBe(-1);
    expect((await get(w.tokens.aAdmin, '/audit-logs/logs?skipCount=false')).body.pagination.total).toBe(1);
  });

  it("03§4.4 the `user` filter matches the actor's user name, case-insensitively (wire: ILIKE actorEmail or user name)", async () => {
    t.db.update(users).set({ name: 'Quentin Example' }).where(eq(users.id, w.users.aAdmin.id)).run();
    const row = await renameA1();
    const res = await get(w.tokens.system, '/audit-logs/logs?user=quentin');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([row.id]);
    expect(ids(await get(w.tokens.system, '/audit-logs/search?q=alpha&user=EXAMPLE'))).toEqual([row.id]);
    expect(ids(await get(w.tokens.system, '/audit-logs/logs?user=nobody-of-that-name'))).toEqual([]);
  });

  it("05 (03 §4.4) export: an actorName column holds the acting user's name, so a row the `user` filter kept by name shows why", async () => {
    t.db.update(users).set({ name: 'Quentin Example' }).where(eq(users.id, w.users.aAdmin.id)).run();
    const row = await renameA1();
    record(inA1('system.thing'));
    const csv = await get(w.tokens.system, `/audit-logs/export?orgId=${w.orgA1.id}&columns=id,actorName,actorEmail`);
    expect(csv.status, csv.text).toBe(200);
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toBe('id,actorName,actorEmail');
    expect(lines).toContain(`${row.id},Quentin Example,${w.users.aAdmin.email}`);
    // Not a user: no name.
    expect(lines.some((l) => /^[^,]+,,$/.test(l))).toBe(true);
    const byName = await get(w.tokens.system, `/audit-logs/export?user=quentin&format=jsonl`);
    expect(byName.text.trim().split('\n').map((l) => (JSON.parse(l) as { actorName: string }).actorName)).toEqual(['Quentin Example']);
  });

  it('03§2.6 entries carry their action category on list, search and get (organization.* → organization, site.* → system)', async () => {
    const row = await renameA1();
    await createSiteA1();
    const res = await get(w.tokens.aAdmin, '/audit-logs/logs');
    expect(res.status).toBe(200);
    const byAction = Object.fromEntries(res.body.data.map((e: { action: string; category?: string }) => [e.action, e.category]));
    expect(byAction).toEqual({ 'organization.update': 'organization', 'site.create': 'system' });
    expect((await get(w.tokens.aAdmin, '/audit-logs/search?q=lab')).body.data[0].category).toBe('system');
    expect((await get(w.tokens.aAdmin, `/audit-logs/logs/${row.id}`)).body.category).toBe('organization');
  });

  it('03§2.6 action categories by prefix, everything else system', () => {
    const cases: Record<string, string> = {
      'user.login': 'authentication',
      'user.login.failed': 'authentication',
      'user.logout': 'authentication',
      'user.permission.change': 'authentication',
      'user.create': 'system',
      'device.create': 'device',
      'script.execute': 'automation',
      'policy.update': 'policy',
      'automation.policy.evaluate': 'policy',
      'automation.schedule': 'system',
      'alert.acknowledge': 'alert',
      'data.export': 'compliance',
      'organization.update': 'organization',
      'audit_log.export': 'system',
      '': 'system',
    };
    expect(Object.fromEntries(Object.keys(cases).map((a) => [a, auditCategoryOf(a)]))).toEqual(cases);
  });

  it("03§2.6/§5 a partner with access to an organization sees that organization's entries written by a system admin or the system", async () => {
    // The system administrator changes org A1's monitoring settings (integrations/service.ts records orgId only).
    const put = await t.call('PUT', `${API}/integrations/monitoring?orgId=${w.orgA1.id}`, { token: w.tokens.system, body: { metricsEnabled: true } });
    expect(put.status, put.text).toBe(200);
    expect((await get(w.tokens.orgUser, '/audit-logs/logs?action=integration.update')).body.data).toHaveLength(1);
    expect((await get(w.tokens.aAdmin, '/audit-logs/logs?action=integration.update')).body.data).toHaveLength(1);
    expect((await get(w.tokens.bAdmin, '/audit-logs/logs?action=integration.update')).body.data).toHaveLength(0);
    // webhooks/delivery.ts writes webhook.auto_failed like this: system context, the webhook's organization.
    record([{ action: 'webhook.auto_failed', resourceName: 'A1 hook', orgId: w.orgA1.id }]);
    expect((await get(w.tokens.orgUser, '/audit-logs/logs?action=webhook.auto_failed')).body.data).toHaveLength(1);
    const byOrg = await get(w.tokens.aAdmin, `/audit-logs/logs?orgId=${w.orgA1.id}&action=webhook.auto_failed`);
    expect(byOrg.status).toBe(200);
    expect(byOrg.body.data).toHaveLength(1);
    // The entry is the organization's partner's, in the organization's chain; an organization-less one stays the platform's.
    const row = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'webhook.auto_failed')).get();
    expect(row).toMatchObject({ partnerId: w.partnerA.id, orgId: w.orgA1.id, chain: `o:${w.orgA1.id}` });
    record([{ action: 'test.platform' }]);
    expect(t.db.select().from(auditLogs).where(eq(auditLogs.action, 'test.platform')).get()).toMatchObject({ partnerId: null, chain: 'platform' });
    expect((await get(w.tokens.system, '/audit-logs/verify')).body.valid).toBe(true);
  });

  describe('03§4.4 (wire) reports and stats', () => {
    it('03§4.4 (wire) security-events counts the §2.6 security actions in from..to, newest first', async () => {
      record([
        ...inA1('user.login', 'user.login.failed', 'user.login.failed', 'user.permission.change', 'policy.update', 'device.create'),
        { action: 'user.login.failed', orgId: w.orgB1.id },
      ]);
      const sec = await get(w.tokens.aAdmin, '/audit-logs/reports/security-events');
      expect(sec.status, sec.text).toBe(200);
      expect(sec.body).toMatchObject({
        totalEvents: 5,
        loginAttempts: 3,
        failedLogins: 2,
        permissionChanges: 1,
        byAction: [
          { action: 'user.login.failed', count: 2 },
          { action: 'policy.update', count: 1 },
          { action: 'user.login', count: 1 },
          { action: 'user.permission.change', count: 1 },
        ],
      });
      expect(sec.body.recentEvents.map((e: { action: string }) => e.action)).toEqual([
        'policy.update',
        'user.permission.change',
        'user.login.failed',
        'user.login.failed',
        'user.login',
      ]);
      expect(sec.body.recentEvents[0].category).toBe('policy');
      // The system sees both partners'; a window after everything holds nothing.
      expect((await get(w.tokens.system, '/audit-logs/reports/security-events')).body.failedLogins).toBe(3);
      expect((await get(w.tokens.system, '/audit-logs/reports/security-events?from=2999-01-01T00:00:00Z')).body.totalEvents).toBe(0);
    });

    it('03§4.4 (wire) compliance counts data access, data changes and exports among the §2.6 compliance actions', async () => {
      record(inA1('data.access', 'data.export', 'device.create', 'organization.update', 'script.execute', 'user.login'));
      const res = await get(w.tokens.orgUser, '/audit-logs/reports/compliance');
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ totalEvents: 5, dataAccess: 1, dataChanges: 2, exports: 1 });
      expect(res.body.byAction).toHaveLength(5);
      expect(res.body.recentEvents).toHaveLength(5);
    });

    it('03§4.4 (wire) user-activity and stats group the entries by actor and category', async () => {
      t.db.update(users).set({ name: 'Alice Admin' }).where(eq(users.id, w.users.aAdmin.id)).run();
      await renameA1('Alpha 1');
      await renameA1('Alpha 2');
      await createSiteA1();
      const act = await get(w.tokens.aAdmin, '/audit-logs/reports/user-activity');
      expect(act.status, act.text).toBe(200);
      expect(act.body).toMatchObject({ totalUsers: 2, totalEvents: 3 });
      expect(act.body.actionsPerUser[0]).toMatchObject({ userId: w.users.aAdmin.id, userName: 'Alice Admin', actionCount: 2 });
      expect(act.body.actionsPerUser[0].userEmail).toContain('@');
      expect(act.body.topUsers).toEqual(act.body.actionsPerUser);
      expect(act.body.recentActivity.map((e: { action: string }) => e.action)).toEqual(['site.create', 'organization.update', 'organization.update']);

      const stats = await get(w.tokens.aAdmin, '/audit-logs/stats?from=2020-01-01T00:00:00Z');
      expect(stats.status, stats.text).toBe(200);
      expect(stats.body).toMatchObject({
        totalEvents: 3,
        byCategory: [
          { category: 'organization', count: 2 },
          { category: 'system', count: 1 },
        ],
        range: { from: '2020-01-01T00:00:00.000Z', to: null },
      });
      expect(stats.body.byUser[0]).toEqual({ userId: w.users.aAdmin.id, userName: 'Alice Admin', actionCount: 2 });
    });

    it('03§4.4 (wire) reports follow the list: audit:read, the same reach, orgId access-checked; at most 5,000 entries', async () => {
      await renameA1();
      for (const path of ['reports/user-activity', 'reports/security-events', 'reports/compliance', 'stats']) {
        expect((await get(w.tokens.aTech, `/audit-logs/${path}`)).status).toBe(403);
        expect((await get(w.tokens.bAdmin, `/audit-logs/${path}?orgId=${w.orgA1.id}`)).body.error).toBe('Access to this organization denied');
        expect((await get(w.tokens.system, `/audit-logs/${path}?from=yesterday`)).status).toBe(400);
      }
      expect((await get(w.tokens.bAdmin, '/audit-logs/stats')).body.totalEvents).toBe(0);
      expect((await get(w.tokens.aAdmin, `/audit-logs/stats?orgId=${w.orgA1.id}`)).body.totalEvents).toBe(1);
      record(Array.from({ length: REPORT_ROWS + 1 }, () => ({ action: 'test.bulk', orgId: w.orgA1.id })));
      expect((await get(w.tokens.aAdmin, '/audit-logs/stats')).body.totalEvents).toBe(REPORT_ROWS);
    });
  });

  describe('03§4.4 (wire) export', () => {
    it('03§4.4 (wire) export: a cell starting with a line feed gets the apostrophe prefix like = + - @ tab CR', async () => {
      record([{ action: 'test.lf', resourceName: '\n=cmd|calc' }]);
      const res = await get(w.tokens.system, '/audit-logs/export?action=test.lf');
      expect(res.status).toBe(200);
      expect(res.text).toContain(`"'\n=cmd|calc"`);
      // Never capped, and says so (CLI.md exit 9 is for a capped answer only).
      expect(res.headers['x-truncated']).toBe('false');
    });

    it('03§4.4 (wire) export honours columns=a,b (in that order, category among them); unknown names are 400 naming them', async () => {
      await renameA1();
      const res = await get(w.tokens.system, '/audit-logs/export?columns=action,id,category&action=organization.update');
      expect(res.status, res.text).toBe(200);
      const [header, line] = res.text.split('\n');
      expect(header).toBe('action,id,category');
      expect(line).toMatch(/^organization\.update,[0-9a-f-]{36},organization$/);
      const jsonl = await get(w.tokens.system, '/audit-logs/export?format=jsonl&columns=id,action&action=organization.update');
      expect(Object.keys(JSON.parse(jsonl.text.split('\n')[0] ?? '{}'))).toEqual(['id', 'action']);
      const bad = await get(w.tokens.system, '/audit-logs/export?columns=id,nope,secret');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain('nope, secret');
      // The default set is unchanged: every known column but category.
      expect((await get(w.tokens.system, '/audit-logs/export?action=organization.update')).text.split('\n')[0]).toBe(AUDIT_EXPORT_COLUMNS.join(','));
      expect(AUDIT_EXPORT_COLUMNS).not.toContain('category');
    });

    it('03§4.4 (wire) export: includeDetails=false leaves the details column out; userId keeps one actor exactly', async () => {
      await renameA1();
      await createSiteA1();
      const noDetails = await get(w.tokens.system, '/audit-logs/export?includeDetails=false');
      expect(noDetails.text.split('\n')[0]).toBe(AUDIT_EXPORT_COLUMNS.filter((c) => c !== 'details').join(','));
      expect((await get(w.tokens.system, '/audit-logs/export?includeDetails=true')).text.split('\n')[0]).toBe(AUDIT_EXPORT_COLUMNS.join(','));
      expect((await get(w.tokens.system, '/audit-logs/export?columns=id,details&includeDetails=false')).text.split('\n')[0]).toBe('id');
      const byUser = await get(w.tokens.system, `/audit-logs/export?userId=${w.users.orgUser.id}&columns=action`);
      expect(byUser.text.trimEnd().split('\n')).toEqual(['action', 'site.create']);
      // Exact: part of the id matches nothing.
      const part = await get(w.tokens.system, `/audit-logs/export?userId=${w.users.orgUser.id.slice(0, 8)}&columns=action`);
      expect(part.text.trimEnd().split('\n')).toEqual(['action']);
    });
  });
});
