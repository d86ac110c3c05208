import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { auditLogs, jobs, psaConnections, psaTicketMappings } from '../../src/server/db/schema/index.js';
import { OutboundClient } from '../../src/server/delivery/outbound.js';
import { DomainError } from '../../src/server/errors.js';
import { publishEvent } from '../../src/server/jobs/queue.js';
import { CredentialVault } from '../../src/server/modules/psa/connections.js';
import { STANDIN_SETTINGS, startPsaStandIn, type PsaStandIn, type StandInProvider } from '../helpers/psa-standin.js';
import { seedWorld, type World } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const API = '/api/v1';
const ENV = { SVC_OUTBOUND_ALLOW: '127.0.0.1/32' };
const PROVIDERS: StandInProvider[] = ['servicenow', 'jira', 'connectwise', 'autotask', 'freshservice', 'zendesk'];

describe('PSA connections (02 §2.8, §3, §4.4, §7)', () => {
  let t: TestApp;
  let w: World;
  const standIns: PsaStandIn[] = [];
  afterEach(async () => {
    await t?.close();
    await Promise.all(standIns.splice(0).map((s) => s.close()));
  });

  const setup = async () => {
    t = await createTestApp(ENV);
    w = await seedWorld(t, { mfa: true });
  };
  const standIn = async (provider: StandInProvider) => {
    const s = await startPsaStandIn(provider);
    standIns.push(s);
    return s;
  };
  const as = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    t.call(method, `${API}${url}`, { token, ...(body !== undefined ? { body } : {}) });
  const create = async (body: Record<string, unknown>, token = w.tokens.aAdmin) => {
    const res = await as(token, 'POST', '/psa/connections', { orgId: w.orgA1.id, name: 'psa', ...body });
    expect(res.status, res.text).toBe(201);
    return res.body as { id: string };
  };
  /** A connection to a stand-in that opens tickets for alerts of severity high and above. */
  const ticketing = async (s: PsaStandIn, settings: Record<string, unknown> = {}) =>
    create({ provider: s.provider, credentials: s.credentials, settings: { ...STANDIN_SETTINGS[s.provider], autoCreateTickets: true, ...settings } });
  const connection = (id: string) => t.db.select().from(psaConnections).where(eq(psaConnections.id, id)).get();
  const mappings = (connectionId: string) => t.db.select().from(psaTicketMappings).where(eq(psaTicketMappings.connectionId, connectionId)).all();
  const alertEvent = (type: string, overrides: Record<string, unknown> = {}) => {
    const payload = {
      alertId: randomUUID(),
      orgId: w.orgA1.id,
      ruleId: 'rule-1',
      ruleName: 'Disk rule',
      deviceId: 'device-1',
      deviceName: 'web-01',
      severity: 'critical',
      status: 'active',
      title: 'Disk Space Low',
      message: 'disk.freePercent 4 < 10',
      context: {},
      triggeredAt: new Date().toISOString(),
      notificationChannelIds: null,
      escalationPolicyId: null,
      actorUserId: null,
      ...overrides,
    };
    t.db.$client.transaction(() => publishEvent(t.db, type, payload, payload.orgId))();
    return payload;
  };
  /** Runs the worker until nothing is due (bounded). */
  const drain = async () => {
    for (let i = 0; i < 10; i++) if ((await t.worker.tick()) === 0) return;
  };

  it('02§2.8 create answers the connection without credentials (hasCredentials); they are sealed with AES-256-GCM at rest', async () => {
    await setup();
    const res = await as(w.tokens.aAdmin, 'POST', '/psa/connections', {
      orgId: w.orgA1.id,
      provider: 'zendesk',
      name: 'Helpdesk',
      credentials: { baseUrl: 'https://127.0.0.1:9', email: 'a@b.test', apiToken: 'zd-very-secret' },
      settings: { autoCreateTickets: false, custom: 'kept' },
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      orgId: w.orgA1.id,
      provider: 'zendesk',
      name: 'Helpdesk',
      status: 'active',
      enabled: true,
      settings: { autoCreateTickets: false, custom: 'kept' },
      hasCredentials: true,
      lastTestedAt: null,
      lastSyncedAt: null,
      lastSyncStatus: null,
    });
    expect(res.body).not.toHaveProperty('credentials');
    expect(res.text).not.toContain('zd-very-secret');
    const row = connection(res.body.id);
    expect(row?.credentialsEnc).toMatch(/^v1\./);
    expect(row?.credentialsEnc).not.toContain('zd-very-secret');
    const got = await as(w.tokens.aAdmin, 'GET', `/psa/connections/${res.body.id}`);
    expect(got.body.data).toMatchObject({ id: res.body.id, hasCredentials: true });
    expect(got.text).not.toContain('zd-very-secret');
  });

  it('02§7 without a server key, credentials are refused with "Failed to encrypt credentials"', () => {
    const vault = new CredentialVault(null, new OutboundClient({ allow: [] }));
    expect(vault.seal(undefined)).toBeNull();
    let caught: unknown;
    try {
      vault.seal({ apiKey: 'x' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DomainError);
    expect((caught as DomainError).message).toBe('Failed to encrypt credentials');
    expect((caught as DomainError).isClientFault).toBe(false);
  });

  it.each([
    ['an unknown provider', { provider: 'psa_1' }, 'provider'],
    ['an empty name', { provider: 'jira', name: '' }, 'name'],
    ['a name of 256 characters', { provider: 'jira', name: 'x'.repeat(256) }, 'name'],
    ['credentials over 64 KB', { provider: 'jira', credentials: { blob: 'x'.repeat(70_000) } }, 'credentials exceeds 65536 bytes'],
    ['settings over 64 KB', { provider: 'jira', settings: { blob: 'x'.repeat(70_000) } }, 'settings exceeds 65536 bytes'],
    ['an unknown minSeverity', { provider: 'jira', settings: { minSeverity: 'urgent' } }, 'settings.minSeverity'],
    ['autoCreateTickets without the jira projectKey', { provider: 'jira', settings: { autoCreateTickets: true } }, 'jira needs settings.projectKey when autoCreateTickets is true'],
    ['a private baseUrl', { provider: 'jira', credentials: { baseUrl: 'https://10.1.2.3' } }, 'credentials.baseUrl rejected: '],
    ['an http baseUrl', { provider: 'jira', credentials: { baseUrl: 'http://example.com' } }, 'credentials.baseUrl rejected: '],
  ])('02§2.8 02§4.4 create refuses %s (400)', async (_label, body, message) => {
    await setup();
    const res = await as(w.tokens.aAdmin, 'POST', '/psa/connections', { orgId: w.orgA1.id, name: 'psa', ...body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toContain(message);
  });

  it('02§4.4 list is paged, newest update first, filtered by orgId and provider; out-of-scope connections answer 403 Access denied, unknown 404', async () => {
    await setup();
    const a = await create({ provider: 'jira', name: 'first' });
    const b = await create({ provider: 'zendesk', name: 'second' });
    await create({ provider: 'jira', name: 'other org', orgId: w.orgA2.id });
    await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${a.id}`, { name: 'first renamed' });
    const list = await as(w.tokens.aAdmin, 'GET', `/psa/connections?orgId=${w.orgA1.id}`);
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([a.id, b.id]);
    expect(list.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    const jira = await as(w.tokens.aAdmin, 'GET', '/psa/connections?provider=jira&limit=1');
    expect(jira.body.pagination).toEqual({ page: 1, limit: 1, total: 2 });
    expect((await as(w.tokens.aAdmin, 'GET', '/psa/connections?limit=500')).body.pagination.limit).toBe(100);
    expect((await as(w.tokens.bAdmin, 'GET', '/psa/connections')).body.pagination.total).toBe(0);
    const denied = await as(w.tokens.bAdmin, 'GET', `/psa/connections/${a.id}`);
    expect([denied.status, denied.body.error]).toEqual([403, 'Access denied']);
    const missing = await as(w.tokens.aAdmin, 'GET', `/psa/connections/${randomUUID()}`);
    expect([missing.status, missing.body.error]).toEqual([404, 'PSA connection not found']);
    expect((await as(w.tokens.orgUser, 'GET', `/psa/connections/${b.id}`)).status).toBe(200);
  });

  it('02§4.4 writes need organizations:write with MFA; reads organizations:read', async () => {
    t = await createTestApp(ENV);
    w = await seedWorld(t, { mfa: false });
    const res = await as(w.tokens.aAdmin, 'POST', '/psa/connections', { orgId: w.orgA1.id, provider: 'jira', name: 'x' });
    expect(res.status).toBe(403);
    expect((await as(w.tokens.aAdmin, 'GET', '/psa/connections')).status).toBe(200);
  });

  it('02§4.4 PATCH: empty refused, credentials replaced atomically as a whole, settings and enabled changed', async () => {
    await setup();
    const s = await standIn('freshservice');
    const conn = await create({ provider: 'freshservice', credentials: { ...s.credentials, apiKey: 'wrong-key' } });
    const empty = await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${conn.id}`, {});
    expect([empty.status, empty.body.error]).toEqual([400, 'No updates provided']);
    expect((await as(w.tokens.aAdmin, 'POST', `/psa/connections/${conn.id}/test`)).body.success).toBe(false);
    const before = connection(conn.id)?.credentialsEnc;
    const res = await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${conn.id}`, { credentials: s.credentials, settings: { requesterEmail: 'noc@example.com' }, enabled: false });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ enabled: false, settings: { requesterEmail: 'noc@example.com' }, hasCredentials: true });
    expect(connection(conn.id)?.credentialsEnc).not.toBe(before);
    expect((await as(w.tokens.aAdmin, 'POST', `/psa/connections/${conn.id}/test`)).body).toEqual({ success: true, message: 'Credentials verified' });
  });

  it('02§4.4 test without stored credentials is 400 "PSA connection has no usable credentials"; missing fields are named', async () => {
    await setup();
    const none = await create({ provider: 'servicenow' });
    const res = await as(w.tokens.aAdmin, 'POST', `/psa/connections/${none.id}/test`);
    expect([res.status, res.body.error]).toEqual([400, 'PSA connection has no usable credentials']);
    const partial = await create({ provider: 'connectwise', credentials: { baseUrl: 'https://127.0.0.1:9', companyId: 'acme' } });
    const gaps = await as(w.tokens.aAdmin, 'POST', `/psa/connections/${partial.id}/test`);
    expect([gaps.status, gaps.body.error]).toEqual([400, 'connectwise connection is missing required credential field(s): publicKey, privateKey']);
    const jira = await create({ provider: 'jira', credentials: { baseUrl: 'https://127.0.0.1:9', email: 'a@b.test' } });
    expect((await as(w.tokens.aAdmin, 'POST', `/psa/connections/${jira.id}/test`)).body.error).toBe('jira connection is missing required credential field(s): apiToken');
  });

  it.each(PROVIDERS)('02§4.4 test of %s makes an authenticated call to its stand-in and records lastTestedAt and verified|failed (audit psa.connection.test)', async (provider) => {
    await setup();
    const s = await standIn(provider);
    const good = await create({ provider, credentials: s.credentials });
    const ok = await as(w.tokens.aAdmin, 'POST', `/psa/connections/${good.id}/test`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.success).toBe(true);
    expect(ok.body.message).toMatch(/^Credentials verified/);
    const got = (await as(w.tokens.aAdmin, 'GET', `/psa/connections/${good.id}`)).body.data;
    expect(got.testStatus).toBe('verified');
    expect(Date.parse(got.lastTestedAt)).toBeGreaterThan(Date.now() - 10_000);
    // The stand-in saw the provider's own authentication; wrong credentials are refused by it.
    expect(s.received.length).toBe(1);
    const wrong = Object.fromEntries(Object.entries(s.credentials).map(([k, v]) => [k, k === 'baseUrl' ? v : `${v}-wrong`]));
    const bad = await create({ provider, credentials: wrong });
    const failed = await as(w.tokens.aAdmin, 'POST', `/psa/connections/${bad.id}/test`);
    expect(failed.body).toEqual({ success: false, error: `${provider} rejected the credentials (HTTP 401)` });
    expect(connection(bad.id)?.syncSettings).toMatchObject({ testStatus: 'failed' });
    const audits = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'psa.connection.test')).all();
    expect(audits.map((a) => a.result).sort()).toEqual(['failure', 'success']);
  });

  it.each(PROVIDERS)(
    '02§2.8 issue 12: an alert opens a %s ticket, a new alert of the same rule and device appends a note instead, resolution appends a note, sync pulls the closed state',
    async (provider) => {
      await setup();
      const s = await standIn(provider);
      const conn = await ticketing(s);
      const first = alertEvent('alert.triggered');
      await drain();
      expect(s.tickets.size).toBe(1);
      const [ticket] = [...s.tickets.values()];
      expect(ticket?.title).toBe('[CRITICAL] Disk Space Low');
      expect(ticket?.description).toContain('disk.freePercent 4 < 10');
      expect(ticket?.description).toContain('Device: web-01 (device-1)');
      const [mapping] = mappings(conn.id);
      expect(mapping).toMatchObject({ alertId: first.alertId, deviceId: 'device-1', externalTicketId: ticket?.id, open: true });

      // Replayed, the same event opens nothing more; a new alert of the same rule and device joins the ticket.
      const again = alertEvent('alert.triggered');
      await drain();
      expect(s.tickets.size).toBe(1);
      expect(ticket?.notes).toHaveLength(1);
      expect(ticket?.notes[0]).toContain('The alert triggered again');
      expect(mappings(conn.id)).toHaveLength(1);
      expect(mappings(conn.id)[0]?.alertId).toBe(again.alertId);

      alertEvent('alert.resolved', { alertId: again.alertId, status: 'resolved', resolutionNote: 'disk cleaned' });
      await drain();
      expect(ticket?.notes[1]).toBe('The alert was resolved: Disk Space Low\n\ndisk cleaned');

      // 02§3 PSA sync: queued → running → completed, the provider's state pulled into the mapping.
      s.closeTicket(ticket?.id ?? '');
      const sync = await as(w.tokens.aAdmin, 'POST', `/psa/connections/${conn.id}/sync`);
      expect(sync.status).toBe(202);
      expect(sync.body).toMatchObject({ id: conn.id, provider, status: 'queued' });
      expect(connection(conn.id)?.lastSyncStatus).toBe('queued');
      await drain();
      expect(connection(conn.id)).toMatchObject({ lastSyncStatus: 'completed', lastSyncError: null });
      expect(mappings(conn.id)[0]?.open).toBe(false);
      const tickets = await as(w.tokens.aAdmin, 'GET', `/psa/connections/${conn.id}/tickets`);
      expect(tickets.body.data).toHaveLength(1);
      expect(tickets.body.data[0]).toMatchObject({ psaId: conn.id, raw: { externalTicketId: ticket?.id, alertId: again.alertId, deviceId: 'device-1' } });
      expect(typeof tickets.body.data[0].syncedAt).toBe('string');

      // A closed ticket is not appended to: the next alert opens a new one.
      alertEvent('alert.triggered');
      await drain();
      expect(s.tickets.size).toBe(2);
    },
  );

  it('02§2.8 auto-create follows the ticketing settings: autoCreateTickets, minSeverity (default high), enabled, status paused', async () => {
    await setup();
    const s = await standIn('zendesk');
    const off = await create({ provider: 'zendesk', credentials: s.credentials, name: 'off' });
    const low = await ticketing(s, { minSeverity: 'low' });
    const byDefault = await ticketing(s);
    const disabled = await ticketing(s);
    await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${disabled.id}`, { enabled: false });
    const paused = await ticketing(s);
    expect((await as(w.tokens.aAdmin, 'POST', `/psa/connections/${paused.id}/status`, { status: 'paused' })).body).toEqual({ success: true, status: 'paused' });
    alertEvent('alert.triggered', { severity: 'medium' });
    alertEvent('alert.triggered', { severity: 'high', ruleId: 'rule-2' });
    alertEvent('alert.triggered', { severity: 'critical', orgId: w.orgA2.id });
    await drain();
    expect(mappings(off.id)).toHaveLength(0);
    expect(mappings(low.id)).toHaveLength(2);
    expect(mappings(byDefault.id)).toHaveLength(1);
    expect(mappings(disabled.id)).toHaveLength(0);
    expect(mappings(paused.id)).toHaveLength(0);
    const all = await as(w.tokens.aAdmin, 'GET', '/psa/tickets');
    expect(all.body.pagination.total).toBe(3);
    expect((await as(w.tokens.bAdmin, 'GET', '/psa/tickets')).body.pagination.total).toBe(0);
    expect((await as(w.tokens.aAdmin, 'GET', `/psa/tickets?orgId=${w.orgA2.id}`)).body.pagination.total).toBe(0);
  });

  it('issue 12: an alert event makes a PSA job only where a connection of its organization would act', async () => {
    await setup();
    const s = await standIn('zendesk');
    await create({ provider: 'zendesk', credentials: s.credentials, name: 'no auto-create' });
    const high = await ticketing(s);
    await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${high.id}`, { enabled: false });
    alertEvent('alert.triggered', { severity: 'critical' });
    alertEvent('alert.resolved');
    alertEvent('alert.triggered', { severity: 'critical', orgId: w.orgA2.id });
    alertEvent('alert.resolved', { orgId: w.orgA2.id });
    await drain();
    const made = () => t.db.select({ type: jobs.type, payload: jobs.payload }).from(jobs).all().filter((j) => j.type.startsWith('psa.alert-'));
    // orgA1: no enabled connection opens tickets, but one is enabled (a note may have a ticket to go to); orgA2: none.
    expect(made().map((j) => [j.type, j.payload.orgId])).toEqual([['psa.alert-note', w.orgA1.id]]);
    await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${high.id}`, { enabled: true });
    alertEvent('alert.triggered', { severity: 'medium' });
    alertEvent('alert.triggered', { severity: 'high', ruleId: 'rule-2' });
    await drain();
    expect(made().filter((j) => j.type === 'psa.alert-ticket').map((j) => j.payload.severity)).toEqual(['high']);
    expect(mappings(high.id)).toHaveLength(1);
  });

  it('02§3 a ticket the provider refuses fails the job (retried later) and leaves an audit failure; nothing is mapped', async () => {
    await setup();
    const s = await standIn('jira');
    const conn = await ticketing(s, { projectKey: 'OPS' });
    await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${conn.id}`, { credentials: { ...s.credentials, apiToken: 'revoked' } });
    alertEvent('alert.triggered');
    await drain();
    expect(mappings(conn.id)).toHaveLength(0);
    const job = t.db.select().from(jobs).where(eq(jobs.type, 'psa.alert-ticket')).get();
    expect(job).toMatchObject({ status: 'pending', attempts: 1 });
    expect(job?.lastError).toContain('jira rejected the credentials (HTTP 401)');
    const audit = t.db.select().from(auditLogs).where(and(eq(auditLogs.action, 'psa.ticket.create'), eq(auditLogs.result, 'failure'))).get();
    expect(audit?.errorMessage).toBe('jira rejected the credentials (HTTP 401)');
  });

  it('02§3 a sync whose credentials are refused ends failed with lastSyncError', async () => {
    await setup();
    const s = await standIn('servicenow');
    const conn = await ticketing(s);
    alertEvent('alert.triggered');
    await drain();
    expect(mappings(conn.id)).toHaveLength(1);
    await as(w.tokens.aAdmin, 'PATCH', `/psa/connections/${conn.id}`, { credentials: { ...s.credentials, password: 'changed' } });
    await as(w.tokens.aAdmin, 'POST', `/psa/connections/${conn.id}/sync`);
    await drain();
    expect(connection(conn.id)).toMatchObject({ lastSyncStatus: 'failed' });
    expect(connection(conn.id)?.lastSyncError).toContain('servicenow rejected the credentials (HTTP 401)');
    const got = (await as(w.tokens.aAdmin, 'GET', `/psa/connections/${conn.id}`)).body.data;
    expect(got).toMatchObject({ lastSyncStatus: 'failed', lastSyncError: expect.stringContaining('HTTP 401') });
  });

  it('02§4.4 sync and test without credentials are 400; status takes active, paused, error only', async () => {
    await setup();
    const conn = await create({ provider: 'autotask' });
    expect((await as(w.tokens.aAdmin, 'POST', `/psa/connections/${conn.id}/sync`)).body.error).toBe('PSA connection has no usable credentials');
    expect((await as(w.tokens.aAdmin, 'POST', `/psa/connections/${conn.id}/status`, { status: 'broken' })).status).toBe(400);
    expect((await as(w.tokens.aAdmin, 'POST', `/psa/connections/${conn.id}/status`, { status: 'error' })).body).toEqual({ success: true, status: 'error' });
    expect((await as(w.tokens.aAdmin, 'GET', `/psa/connections/${conn.id}`)).body.data.status).toBe('error');
  });

  it('02§4.4 DELETE removes the credentials and the ticket mappings irrecoverably', async () => {
    await setup();
    const s = await standIn('zendesk');
    const conn = await ticketing(s);
    alertEvent('alert.triggered');
    await drain();
    expect(mappings(conn.id)).toHaveLength(1);
    expect((await as(w.tokens.aAdmin, 'DELETE', `/psa/connections/${conn.id}`)).body).toEqual({ success: true });
    expect(connection(conn.id)).toBeUndefined();
    expect(mappings(conn.id)).toHaveLength(0);
    expect((await as(w.tokens.aAdmin, 'GET', `/psa/connections/${conn.id}`)).status).toBe(404);
    expect((await as(w.tokens.aAdmin, 'GET', '/psa/tickets')).body.pagination.total).toBe(0);
  });
});
