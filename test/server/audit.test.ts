import { desc, eq } from 'drizzle-orm';
import type { InjectOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { auditLogs, partners } from '../../src/server/db/schema/index.js';
import { systemContext } from '../../src/server/context.js';
import { recordAudit } from '../../src/server/modules/audit/recorder.js';
import { AUDIT_EXPORT_COLUMNS } from '../../src/server/modules/audit/service.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { adminToken, seedWorld, systemAdminId, type World, type WorldCaller } from '../helpers/seed.js';

const API = '/api/v1';
const UA = 'svc-audit-test/1.0';

type AuditRow = typeof auditLogs.$inferSelect;

interface Sent {
  status: number;
  headers: Record<string, unknown>;
  body: any;
  text: string;
}

async function send(
  t: TestApp,
  token: string,
  method: InjectOptions['method'],
  url: string,
  options: { body?: unknown; headers?: Record<string, string>; remoteAddress?: string } = {},
): Promise<Sent> {
  return t.call(method, `${API}${url}`, { ...options, token, headers: { 'user-agent': UA, ...(options.headers ?? {}) } });
}

function rows(t: TestApp): AuditRow[] {
  return t.db.select().from(auditLogs).orderBy(auditLogs.timestamp).all();
}

function latest(t: TestApp): AuditRow | undefined {
  return t.db.select().from(auditLogs).orderBy(desc(auditLogs.timestamp), desc(auditLogs.seq)).limit(1).get();
}

/** RFC 4180: quoted fields, doubled quotes, line breaks inside quotes. */
const parseCsv = (text: string): string[][] => parse(text, { relax_column_count: true });

describe('platform audit log (03 §2.6, §4.4; 01 §6)', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  async function world(env: Record<string, string> = {}, mfa = false): Promise<World> {
    t = await createTestApp(env);
    return seedWorld(t, { mfa });
  }

  it('01§6 every tenancy mutation writes one entry with actor id and e-mail, action, resource id and name, result, user agent and IP', async () => {
    const w = await world();
    const as = (who: WorldCaller, method: InjectOptions['method'], url: string, body?: unknown) =>
      send(t, w.tokens[who], method, url, body === undefined ? {} : { body });
    const adminId = systemAdminId(t);
    const steps: {
      who: WorldCaller;
      run: () => Promise<Sent>;
      action: string;
      resource: () => { id: string; name: string };
    }[] = [];
    let partnerId = '';
    let orgId = '';
    let siteId = '';
    steps.push(
      {
        who: 'system',
        run: async () => {
          const r = await as('system', 'POST', '/orgs/partners', { name: 'Audited', slug: 'audited' });
          partnerId = r.body.id;
          return r;
        },
        action: 'partner.create',
        resource: () => ({ id: partnerId, name: 'Audited' }),
      },
      {
        who: 'system',
        run: () => as('system', 'PATCH', `/orgs/partners/${partnerId}`, { name: 'Audited Ltd' }),
        action: 'partner.update',
        resource: () => ({ id: partnerId, name: 'Audited Ltd' }),
      },
      {
        who: 'aAdmin',
        run: () => as('aAdmin', 'PATCH', '/orgs/partners/me', { billingEmail: 'billing@a.test' }),
        action: 'partner.update',
        resource: () => ({ id: w.partnerA.id, name: 'Partner A' }),
      },
      {
        who: 'aAdmin',
        run: async () => {
          const r = await as('aAdmin', 'POST', '/orgs/organizations', { name: 'Alpha Audit', slug: 'alpha-audit' });
          orgId = r.body.id;
          return r;
        },
        action: 'organization.create',
        resource: () => ({ id: orgId, name: 'Alpha Audit' }),
      },
      {
        who: 'aAdmin',
        run: () => as('aAdmin', 'PATCH', `/orgs/organizations/${orgId}`, { status: 'trial' }),
        action: 'organization.update',
        resource: () => ({ id: orgId, name: 'Alpha Audit' }),
      },
      {
        who: 'orgUser',
        run: async () => {
          const r = await as('orgUser', 'POST', '/orgs/sites', { orgId: w.orgA1.id, name: 'Audit Site' });
          siteId = r.body.id;
          return r;
        },
        action: 'site.create',
        resource: () => ({ id: siteId, name: 'Audit Site' }),
      },
      {
        who: 'orgUser',
        run: () => as('orgUser', 'PATCH', `/orgs/sites/${siteId}`, { timezone: 'Europe/Berlin' }),
        action: 'site.update',
        resource: () => ({ id: siteId, name: 'Audit Site' }),
      },
      {
        who: 'orgUser',
        run: () => as('orgUser', 'DELETE', `/orgs/sites/${siteId}`),
        action: 'site.delete',
        resource: () => ({ id: siteId, name: 'Audit Site' }),
      },
      {
        who: 'aAdmin',
        run: () => as('aAdmin', 'DELETE', `/orgs/organizations/${orgId}`),
        action: 'organization.delete',
        resource: () => ({ id: orgId, name: 'Alpha Audit' }),
      },
      {
        who: 'system',
        run: () => as('system', 'DELETE', `/orgs/partners/${partnerId}`),
        action: 'partner.delete',
        resource: () => ({ id: partnerId, name: 'Audited Ltd' }),
      },
    );
    for (const step of steps) {
      const before = rows(t).length;
      const res = await step.run();
      expect({ action: step.action, status: res.status }).toEqual({
        action: step.action,
        status: res.status < 300 ? res.status : 200,
      });
      const after = rows(t);
      expect({ action: step.action, added: after.length - before }).toEqual({ action: step.action, added: 1 });
      const entry = latest(t);
      const who = w.users[step.who];
      expect(entry).toMatchObject({
        action: step.action,
        actorType: 'user',
        actorId: step.who === 'system' ? adminId : who.id,
        actorEmail: step.who === 'system' ? 'admin@example.test' : who.email,
        resourceId: step.resource().id,
        resourceName: step.resource().name,
        result: 'success',
        errorMessage: null,
        userAgent: UA,
        ipAddress: '127.0.0.1',
      });
    }
    // The same entries through the API, newest first.
    const list = await as('system', 'GET', '/audit-logs/logs?limit=100');
    expect(list.body.data.slice(0, steps.length).map((e: AuditRow) => e.action)).toEqual(
      steps.map((s) => s.action).reverse(),
    );
  });

  it('01§6 the entry is written in the same transaction as the change: when the audit write fails, nothing changes', async () => {
    const w = await world();
    t.db.$client.exec(
      `CREATE TRIGGER audit_down BEFORE INSERT ON audit_logs BEGIN SELECT RAISE(ABORT, 'audit store unavailable'); END`,
    );
    const res = await send(t, w.tokens.system, 'POST', '/orgs/partners', { body: { name: 'Ghost', slug: 'ghost' } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: 'Internal Server Error' });
    expect(t.db.select().from(partners).where(eq(partners.slug, 'ghost')).all()).toEqual([]);
    const patch = await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA1.id}`, {
      body: { name: 'Renamed' },
    });
    expect(patch.status).toBe(500);
    t.db.$client.exec('DROP TRIGGER audit_down');
    expect((await send(t, w.tokens.aAdmin, 'GET', `/orgs/organizations/${w.orgA1.id}`)).body.name).toBe('Alpha One');
  });

  it('01§6 a failed mutation (409, 403, 400, 404) writes no success entry', async () => {
    const w = await world();
    const before = rows(t).length;
    expect(
      (await send(t, w.tokens.system, 'POST', '/orgs/partners', { body: { name: 'Dup', slug: 'partner-a' } })).status,
    ).toBe(409);
    expect(
      (await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgB1.id}`, { body: { name: 'x' } })).status,
    ).toBe(403);
    expect(
      (await send(t, w.tokens.aAdmin, 'POST', '/orgs/organizations', { body: { name: '', slug: 'x' } })).status,
    ).toBe(400);
    expect((await send(t, w.tokens.aAdmin, 'DELETE', `/orgs/sites/${w.orgA1.id}`)).status).toBe(404);
    expect((await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { body: {} })).status).toBe(
      400,
    );
    expect(rows(t).length).toBe(before);
  });

  describe('01§6 client IP from X-Forwarded-For / X-Real-IP only behind a trusted proxy (SVC_TRUSTED_PROXIES)', () => {
    async function ipOf(
      w: World,
      headers: Record<string, string>,
      remoteAddress?: string,
    ): Promise<AuditRow | undefined> {
      const res = await send(t, w.tokens.system, 'PATCH', `/orgs/partners/${w.partnerA.id}`, {
        body: { maxDevices: Math.floor(Math.random() * 1000) },
        headers,
        ...(remoteAddress ? { remoteAddress } : {}),
      });
      expect(res.status).toBe(200);
      return latest(t);
    }

    it('01§6 trusted socket: X-Forwarded-For (right-most untrusted hop), else X-Real-IP', async () => {
      const w = await world({ SVC_TRUSTED_PROXIES: '127.0.0.1, 10.0.0.0/8' });
      expect((await ipOf(w, { 'x-forwarded-for': '203.0.113.7' }))?.ipAddress).toBe('203.0.113.7');
      expect((await ipOf(w, { 'x-forwarded-for': '203.0.113.7, 10.1.1.1' }))?.ipAddress).toBe('203.0.113.7');
      expect((await ipOf(w, { 'x-forwarded-for': '203.0.113.7, 198.51.100.1' }))?.ipAddress).toBe('198.51.100.1');
      expect((await ipOf(w, { 'x-forwarded-for': '2001:db8::1' }))?.ipAddress).toBe('2001:db8::1');
      expect((await ipOf(w, { 'x-real-ip': '198.51.100.9' }))?.ipAddress).toBe('198.51.100.9');
      expect((await ipOf(w, { 'x-forwarded-for': '203.0.113.8' }, '10.20.30.40'))?.ipAddress).toBe('203.0.113.8');
      expect((await ipOf(w, {}))?.ipAddress).toBe('127.0.0.1');
      // A forwarded value that is not an address is not believed: the proxy's own address is recorded.
      const junk = await ipOf(w, { 'x-forwarded-for': 'not-an-ip' });
      expect(junk?.ipAddress).toBe('127.0.0.1');
    });

    it('01§6 untrusted socket: the headers are ignored and the socket address is recorded', async () => {
      const w = await world({ SVC_TRUSTED_PROXIES: '127.0.0.1' });
      expect(
        (await ipOf(w, { 'x-forwarded-for': '203.0.113.7', 'x-real-ip': '198.51.100.9' }, '192.0.2.50'))?.ipAddress,
      ).toBe('192.0.2.50');
      expect((await ipOf(w, { 'x-real-ip': '198.51.100.9' }, '192.0.2.51'))?.ipAddress).toBe('192.0.2.51');
    });

    it('01§6 no trusted proxy configured: the headers are always ignored', async () => {
      const w = await world();
      expect((await ipOf(w, { 'x-forwarded-for': '203.0.113.7' }))?.ipAddress).toBe('127.0.0.1');
      expect((await ipOf(w, { 'x-real-ip': '198.51.100.9' }))?.ipAddress).toBe('127.0.0.1');
    });
  });

  it('03§4.4 list and search filter by user, action, resource (case-insensitive), from, to and q, with paging', async () => {
    const w = await world();
    const as = (who: WorldCaller, url: string) => send(t, w.tokens[who], 'GET', url);
    await send(t, w.tokens.system, 'POST', '/orgs/partners', { body: { name: 'Éclair Services', slug: 'eclair' } });
    await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { body: { name: 'Alpha Prime' } });
    await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA2.id}`, { body: { status: 'trial' } });
    await send(t, w.tokens.orgUser, 'POST', '/orgs/sites', {
      body: { orgId: w.orgA1.id, name: 'Warehouse 100%_done' },
    });
    await send(t, w.tokens.bAdmin, 'PATCH', `/orgs/organizations/${w.orgB1.id}`, { body: { name: 'Bravo Prime' } });

    const actions = (res: Sent) => res.body.data.map((e: AuditRow) => `${e.action}:${e.resourceName}`).sort();
    expect(actions(await as('system', '/audit-logs/logs?user=A-ADMIN@A.TEST'))).toEqual([
      'organization.update:Alpha Prime',
      'organization.update:Alpha Two',
    ]);
    expect(actions(await as('system', `/audit-logs/logs?user=${w.users.bAdmin.id}`))).toEqual([
      'organization.update:Bravo Prime',
    ]);
    expect(actions(await as('system', '/audit-logs/logs?action=ORGANIZATION.UPD'))).toEqual([
      'organization.update:Alpha Prime',
      'organization.update:Alpha Two',
      'organization.update:Bravo Prime',
    ]);
    expect(actions(await as('system', '/audit-logs/logs?resource=SITE'))).toEqual(['site.create:Warehouse 100%_done']);
    expect(actions(await as('system', '/audit-logs/logs?resource=prime'))).toEqual([
      'organization.update:Alpha Prime',
      'organization.update:Bravo Prime',
    ]);
    expect(actions(await as('system', `/audit-logs/logs?resource=${w.orgA2.id}`))).toEqual([
      'organization.update:Alpha Two',
    ]);
    // LIKE wildcards in the needle are literal; non-ASCII text matches itself.
    expect(actions(await as('system', '/audit-logs/logs?resource=100%25_'))).toEqual([
      'site.create:Warehouse 100%_done',
    ]);
    expect(actions(await as('system', '/audit-logs/logs?resource=%25'))).toEqual(['site.create:Warehouse 100%_done']);
    expect(actions(await as('system', `/audit-logs/logs?resource=${encodeURIComponent('Éclair')}`))).toEqual([
      'partner.create:Éclair Services',
    ]);
    expect(actions(await as('system', '/audit-logs/search?q=warehouse'))).toEqual(['site.create:Warehouse 100%_done']);
    expect(actions(await as('system', '/audit-logs/search?q=alpha-admin-nobody'))).toEqual([]);
    expect(actions(await as('system', '/audit-logs/search?q=b-admin@B.test'))).toEqual([
      'organization.update:Bravo Prime',
    ]);
    // q also looks into details (organization.update records the changed fields).
    expect(actions(await as('system', '/audit-logs/search?q=status&action=organization'))).toEqual([
      'organization.update:Alpha Two',
    ]);

    // from/to: [from, to] over the entry time, both inclusive (05 "03 §2.6/§4.4").
    const all = rows(t);
    const stamps = ['2024-01-10T00:00:00.000Z', '2024-02-10T00:00:00.000Z', '2024-03-10T00:00:00.000Z'];
    const picked = all.slice(-3);
    picked.forEach((row, i) =>
      t.db.update(auditLogs).set({ timestamp: stamps[i] }).where(eq(auditLogs.id, row.id)).run(),
    );
    const inWindow = await as('system', '/audit-logs/logs?from=2024-02-01T00:00:00Z&to=2024-03-09T23:59:59.999Z');
    expect(inWindow.body.data.map((e: AuditRow) => e.id)).toEqual([picked[1]?.id]);
    const atTo = await as('system', '/audit-logs/logs?from=2024-02-10T00:00:00Z&to=2024-03-10T00:00:00Z');
    expect(atTo.body.data.map((e: AuditRow) => e.id)).toEqual([picked[2]?.id, picked[1]?.id]);
    const withOffset = await as(
      'system',
      `/audit-logs/logs?from=${encodeURIComponent('2024-01-10T01:00:00+01:00')}&to=2024-02-10T00:00:00.001Z`,
    );
    expect(withOffset.body.data.map((e: AuditRow) => e.id)).toEqual([picked[1]?.id, picked[0]?.id]);
    expect((await as('system', '/audit-logs/logs?from=yesterday')).status).toBe(400);

    // Paging: newest first, clamped like every list.
    const total = (await as('system', '/audit-logs/logs')).body.pagination.total;
    expect(total).toBe(all.length);
    const p1 = await as('system', '/audit-logs/logs?limit=2');
    const p2 = await as('system', '/audit-logs/logs?limit=2&page=2');
    expect(p1.body.pagination).toEqual({ page: 1, limit: 2, total, totalPages: Math.ceil(total / 2) });
    expect(p1.body.data).toHaveLength(2);
    expect(p2.body.data).toHaveLength(2);
    expect(new Set([...p1.body.data, ...p2.body.data].map((e: AuditRow) => e.id)).size).toBe(4);
    expect(p1.body.data[0].timestamp >= p1.body.data[1].timestamp).toBe(true);
    expect((await as('system', '/audit-logs/logs?limit=1000&page=abc')).body.pagination).toEqual({
      page: 1,
      limit: 100,
      total,
      totalPages: Math.ceil(total / 100),
    });
    expect((await as('system', '/audit-logs/search?q=prime&limit=0')).body.pagination).toEqual({
      page: 1,
      limit: 1,
      total: 2,
      totalPages: 2,
    });
  });

  it('03§2.6 visibility: partners see only their own entries, organization callers only their organization', async () => {
    const w = await world();
    await send(t, w.tokens.system, 'POST', '/orgs/organizations', {
      body: { name: 'Alpha Three', slug: 'alpha-three', partnerId: w.partnerA.id },
    });
    await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { body: { name: 'Alpha Prime' } });
    await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA2.id}`, { body: { name: 'Alpha Deux' } });
    await send(t, w.tokens.aAdmin, 'PATCH', '/orgs/partners/me', { body: { name: 'Partner A Ltd' } });
    await send(t, w.tokens.orgUser, 'POST', '/orgs/sites', { body: { orgId: w.orgA1.id, name: 'A1 Lab' } });
    await send(t, w.tokens.bAdmin, 'PATCH', `/orgs/organizations/${w.orgB1.id}`, { body: { name: 'Bravo Prime' } });
    await send(t, w.tokens.bAdmin, 'POST', '/orgs/sites', { body: { orgId: w.orgB1.id, name: 'B1 Lab' } });

    const names = async (who: WorldCaller, url = '/audit-logs/logs') => {
      const res = await send(t, w.tokens[who], 'GET', url);
      expect({ who, status: res.status }).toEqual({ who, status: 200 });
      return res.body.data.map((e: AuditRow) => e.resourceName).sort();
    };
    expect(await names('bAdmin')).toEqual(['B1 Lab', 'Bravo Prime']);
    expect(await names('aAdmin')).toEqual(['A1 Lab', 'Alpha Deux', 'Alpha Prime', 'Alpha Three', 'Partner A Ltd']);
    // Selected access: partner-level entries and the granted organization only.
    expect(await names('aSelAdmin')).toEqual(['A1 Lab', 'Alpha Prime', 'Partner A Ltd']);
    expect(await names('aNone')).toEqual(['Partner A Ltd']);
    expect(await names('orgUser')).toEqual(['A1 Lab', 'Alpha Prime']);
    expect(await names('bAdmin', '/audit-logs/search?q=alpha')).toEqual([]);
    expect(await names('bAdmin', `/audit-logs/logs?resource=${w.orgA1.id}`)).toEqual([]);
    expect((await names('system')).length).toBeGreaterThanOrEqual(7);
    // Without audit:read (Partner Technician) the route is closed.
    expect((await send(t, w.tokens.aTech, 'GET', '/audit-logs/logs')).status).toBe(403);

    // By id and by organization filter: other tenants' entries are absent or denied.
    const aEntry = rows(t).find((r) => r.resourceName === 'Alpha Prime');
    const bEntry = rows(t).find((r) => r.resourceName === 'Bravo Prime');
    expect((await send(t, w.tokens.bAdmin, 'GET', `/audit-logs/logs/${aEntry?.id}`)).status).toBe(404);
    expect((await send(t, w.tokens.orgUser, 'GET', `/audit-logs/logs/${bEntry?.id}`)).status).toBe(404);
    expect((await send(t, w.tokens.aAdmin, 'GET', `/audit-logs/logs/${aEntry?.id}`)).body.id).toBe(aEntry?.id);
    expect((await send(t, w.tokens.bAdmin, 'GET', `/audit-logs/logs?orgId=${w.orgA1.id}`)).body.error).toBe(
      'Access to this organization denied',
    );
    expect((await send(t, w.tokens.orgUser, 'GET', `/audit-logs/logs?orgId=${w.orgA2.id}`)).status).toBe(403);
    expect((await send(t, w.tokens.aSelAdmin, 'GET', `/audit-logs/verify?orgId=${w.orgA2.id}`)).status).toBe(403);
    // verify covers only the caller's chains.
    const chains = (await send(t, w.tokens.bAdmin, 'GET', '/audit-logs/verify')).body.chains.map(
      (c: { chain: string }) => c.chain,
    );
    expect(chains).toEqual([`o:${w.orgB1.id}`]);
  });

  it('03§2.6 GET /audit-logs/verify detects an edited row and a deleted middle row', async () => {
    const w = await world();
    for (let i = 0; i < 4; i++)
      await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { body: { name: `Alpha ${i}` } });
    // Text that SQLite cannot store as given (a lone surrogate) must not look like tampering.
    expect(
      (await send(t, w.tokens.system, 'POST', '/orgs/partners', { body: { name: 'Odd \ud800 name', slug: 'odd' } }))
        .status,
    ).toBe(201);
    await send(t, w.tokens.system, 'PATCH', `/orgs/partners/${w.partnerA.id}`, {
      body: { name: 'Partner A' },
      headers: { 'user-agent': 'ua\u00e9' },
    });
    // Other modules may pass request text straight through (here: a name cut in the middle of a pair).
    t.db.$client.transaction(() =>
      recordAudit(t.db, systemContext(), {
        action: 'test.raw',
        resourceType: 'test',
        resourceName: `x${'\ud83d\ude00'.slice(0, 1)}y`,
        errorMessage: '\udc00',
      }),
    )();
    const ok = await send(t, w.tokens.system, 'GET', '/audit-logs/verify');
    expect(ok.status).toBe(200);
    expect(ok.body.valid).toBe(true);
    expect(
      ok.body.chains.every((c: { valid: boolean; firstBroken: unknown }) => c.valid && c.firstBroken === null),
    ).toBe(true);

    const chain = `o:${w.orgA1.id}`;
    const entries = t.db.select().from(auditLogs).where(eq(auditLogs.chain, chain)).orderBy(auditLogs.seq).all();
    expect(entries).toHaveLength(4);
    const edited = entries[1];
    t.db.$client.prepare('UPDATE audit_logs SET details = ? WHERE id = ?').run('{"changes":["nothing"]}', edited?.id);
    const broken = await send(t, w.tokens.system, 'GET', '/audit-logs/verify');
    expect(broken.body.valid).toBe(false);
    const report = broken.body.chains.find((c: { chain: string }) => c.chain === chain);
    expect(report).toMatchObject({
      valid: false,
      firstBroken: { id: edited?.id, seq: 2, reason: 'checksum does not match the entry' },
    });
    // The other chains still verify.
    expect(
      broken.body.chains
        .filter((c: { chain: string; valid: boolean }) => c.chain !== chain)
        .every((c: { valid: boolean }) => c.valid),
    ).toBe(true);
    // The same through an organization-scoped caller.
    expect((await send(t, w.tokens.orgUser, 'GET', '/audit-logs/verify')).body).toMatchObject({
      valid: false,
      chains: [{ chain, firstBroken: { id: edited?.id } }],
    });

    // Restoring the row (same text as before) verifies again; deleting a middle row is detected.
    t.db.$client
      .prepare('UPDATE audit_logs SET details = ? WHERE id = ?')
      .run(JSON.stringify(edited?.details), edited?.id);
    expect((await send(t, w.tokens.system, 'GET', '/audit-logs/verify')).body.valid).toBe(true);
    t.db.$client.prepare('DELETE FROM audit_logs WHERE id = ?').run(entries[2]?.id);
    const gap = await send(t, w.tokens.system, 'GET', `/audit-logs/verify?orgId=${w.orgA1.id}`);
    expect(gap.body).toMatchObject({
      valid: false,
      chains: [{ chain, valid: false, firstBroken: { id: entries[3]?.id, seq: 4, reason: 'entry 3 is missing' } }],
    });

    // Editing a field other than details (the action) is detected too.
    const other = t.db.select().from(auditLogs).where(eq(auditLogs.resourceName, 'Partner A')).get();
    t.db.$client.prepare("UPDATE audit_logs SET action = 'partner.view' WHERE id = ?").run(other?.id);
    const report2 = (await send(t, w.tokens.system, 'GET', '/audit-logs/verify')).body.chains.find(
      (c: { chain: string }) => c.chain === other?.chain,
    );
    expect(report2.firstBroken.id).toBe(other?.id);
  });

  it('03§4.4 export: every matching entry once, oldest first, across read batches (1,000 and 1,001 rows; the header once)', async () => {
    const w = await world({}, true);
    const record = (count: number, action: string) =>
      t.db.$client.transaction(() => {
        for (let i = 0; i < count; i++)
          recordAudit(t.db, systemContext(), { action, resourceType: 'test', resourceName: `row ${i} "quoted", naïve €` });
      })();
    record(1000, 'test.batch_a');
    record(1001, 'test.batch_b');
    for (const [action, count] of [
      ['test.batch_a', 1000],
      ['test.batch_b', 1001],
    ] as const) {
      const expected = t.db.select().from(auditLogs).where(eq(auditLogs.action, action)).orderBy(auditLogs.timestamp, auditLogs.id).all();
      expect(expected).toHaveLength(count);
      const csv = await send(t, w.tokens.system, 'GET', `/audit-logs/export?action=${action}`);
      expect(csv.status).toBe(200);
      const [header, ...records] = parseCsv(csv.text);
      expect(header).toEqual([...AUDIT_EXPORT_COLUMNS]);
      expect(records.map((r) => r[AUDIT_EXPORT_COLUMNS.indexOf('id')])).toEqual(expected.map((r) => r.id));
      expect(records.every((r) => r[AUDIT_EXPORT_COLUMNS.indexOf('resourceName')]?.endsWith('"quoted", naïve €'))).toBe(true);
      const jsonl = await send(t, w.tokens.system, 'GET', `/audit-logs/export?format=jsonl&action=${action}`);
      const lines = jsonl.text.split('\n');
      expect(lines.pop()).toBe('');
      expect(lines.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(expected.map((r) => r.id));
    }
  });

  it('03§4.4 export: CSV (header, RFC 4180 quoting, formula neutralisation) and JSON lines; needs MFA and audit:export; is itself audited', async () => {
    const w = await world({}, true);
    const adminMfa = w.tokens.system;
    await send(t, adminMfa, 'POST', '/orgs/partners', {
      body: { name: '=HYPERLINK("http://evil.test","x")', slug: 'formula' },
    });
    await send(t, adminMfa, 'POST', '/orgs/partners', { body: { name: 'Acme, "Best"\nServices', slug: 'quoted' } });
    await send(t, adminMfa, 'POST', '/orgs/partners', { body: { name: '+1 Plus', slug: 'plus' } });

    const csv = await send(t, adminMfa, 'GET', '/audit-logs/export?action=partner.create');
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(String(csv.headers['content-disposition'])).toMatch(/^attachment; filename="audit-.+\.csv"$/);
    expect(csv.headers['cache-control']).toBe('no-store');
    expect(csv.text.split('\n')[0]).toBe(AUDIT_EXPORT_COLUMNS.join(','));
    expect(csv.text.endsWith('\n')).toBe(true);
    expect(csv.text).not.toContain('\r\n');
    expect(csv.text).toContain('"\'=HYPERLINK(""http://evil.test"",""x"")"');
    expect(csv.text).toContain('"Acme, ""Best""\nServices"');
    const table = parseCsv(csv.text);
    const [header, ...data] = table;
    expect(header).toEqual([...AUDIT_EXPORT_COLUMNS]);
    expect(data.every((r) => r.length === AUDIT_EXPORT_COLUMNS.length)).toBe(true);
    const col = (name: (typeof AUDIT_EXPORT_COLUMNS)[number]) => AUDIT_EXPORT_COLUMNS.indexOf(name);
    // Oldest first.
    expect(data.map((r) => r[col('resourceName')])).toEqual([
      '\'=HYPERLINK("http://evil.test","x")',
      'Acme, "Best"\nServices',
      "'+1 Plus",
    ]);
    expect(data.every((r) => r[col('action')] === 'partner.create')).toBe(true);
    expect(JSON.parse(data[0]?.[col('details')] ?? '')).toEqual({ slug: 'formula', plan: 'free', type: 'msp' });

    const jsonl = await send(t, adminMfa, 'GET', '/audit-logs/export?format=jsonl&resource=partner');
    expect(jsonl.status).toBe(200);
    expect(jsonl.headers['content-type']).toBe('application/x-ndjson');
    const lines = jsonl.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.action)).toEqual(['partner.create', 'partner.create', 'partner.create']);
    expect(Object.keys(lines[0] ?? {})).toEqual([...AUDIT_EXPORT_COLUMNS]);
    expect(lines[0].resourceName).toBe('=HYPERLINK("http://evil.test","x")');

    // Each export is audited, and the entry appears in exports made after it (and in its own).
    const exports = rows(t).filter((r) => r.action === 'audit_log.export');
    expect(exports).toHaveLength(2);
    expect(exports[0]).toMatchObject({
      actorId: systemAdminId(t),
      resourceType: 'audit_log',
      result: 'success',
      details: { format: 'csv', filter: { action: 'partner.create' } },
    });
    expect(exports[1]?.details).toEqual({ format: 'jsonl', filter: { resource: 'partner' } });
    const own = await send(t, adminMfa, 'GET', '/audit-logs/export?format=jsonl&action=audit_log.export');
    expect(own.text.trimEnd().split('\n')).toHaveLength(3);

    // A partner admin exports only its own partner's entries.
    await send(t, w.tokens.aAdmin, 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { body: { name: 'Alpha Prime' } });
    await send(t, w.tokens.bAdmin, 'PATCH', `/orgs/organizations/${w.orgB1.id}`, { body: { name: 'Bravo Prime' } });
    const partnerExport = await send(t, w.tokens.aAdmin, 'GET', '/audit-logs/export?format=jsonl');
    const partnerLines = partnerExport.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(partnerLines.every((l) => l.partnerId === w.partnerA.id)).toBe(true);
    expect(partnerLines.map((l) => l.resourceName)).toContain('Alpha Prime');

    // MFA and the audit:export permission are required.
    const noMfa = await send(t, await adminToken(t, { mfa: false }), 'GET', '/audit-logs/export');
    expect(noMfa).toMatchObject({ status: 403, body: { error: 'MFA required', code: 'MFA_REQUIRED' } });
    expect((await send(t, w.tokens.orgUser, 'GET', '/audit-logs/export')).status).toBe(403);
    expect((await send(t, adminMfa, 'GET', '/audit-logs/export?format=xml')).status).toBe(400);
    // A denied export is not recorded as one.
    const bMfa = w.tokens.bAdmin;
    expect((await send(t, bMfa, 'GET', `/audit-logs/export?orgId=${w.orgA1.id}`)).body.error).toBe(
      'Access to this organization denied',
    );
    expect(rows(t).filter((r) => r.action === 'audit_log.export')).toHaveLength(4);
  });
});
