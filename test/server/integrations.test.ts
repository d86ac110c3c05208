import { eq } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';
import { useReceiverWorld } from '../helpers/world.js';
import { buildApp } from '../../src/server/app.js';
import { loadConfig } from '../../src/server/config.js';
import { auditLogs, integrationSettings } from '../../src/server/db/schema/index.js';
import { maskConfig, unmask } from '../../src/server/modules/integrations/config.js';
import type { Receiver, Responder } from '../helpers/https-receiver.js';
import { seedOrgRole, seedUser, type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1';
const ENV = { SVC_OUTBOUND_ALLOW: '127.0.0.1/32', SVC_JOB_POLL_MS: '10' };
const HOOK_SECRET = 'T000/B000/hook-secret-part';

const waiting = { timeout: 10_000, interval: 20 };

describe('integrations (02 §4.4, legacy /integrations/psa of §2.8)', () => {
  let t: TestApp;
  let w: World;
  const world = useReceiverWorld(ENV);
  const setup = async (respond?: Responder, options: { mfa?: boolean } = {}): Promise<Receiver> => {
    let receiver: Receiver;
    ({ t, w, receiver } = await world.setup(respond, options));
    return receiver;
  };
  const orgA1 = () => `?orgId=${w.orgA1.id}`;
  const rowOf = (kind: string) =>
    t.db
      .select()
      .from(integrationSettings)
      .all()
      .find((r) => r.kind === kind && r.orgId === w.orgA1.id);

  it('02§4.4 a chat provider is saved in the database with its webhook URL sealed, and read back masked', async () => {
    const r = await setup();
    const empty = await t.call('GET', `${API}/integrations/communication${orgA1()}`, { token: w.tokens.aAdmin });
    expect(empty.status).toBe(404);
    expect(empty.body.error).toBe('Communication settings not found');

    const url = `${r.url}/services/${HOOK_SECRET}`;
    const saved = await t.call('POST', `${API}/integrations/slack${orgA1()}`, {
      token: w.tokens.aAdmin,
      body: { webhookUrl: url, channel: '#ops', username: 'svc', notifyOn: ['critical', 'high'] },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.success).toBe(true);
    expect(saved.body.data.slack).toMatchObject({ webhookUrl: `${r.url}/********`, channel: '#ops', username: 'svc', notifyOn: ['critical', 'high'] });
    expect(saved.text).not.toContain(HOOK_SECRET);

    const read = await t.call('GET', `${API}/integrations/communication${orgA1()}`, { token: w.tokens.orgUser });
    expect(read.status).toBe(200);
    expect(read.body.data.slack.webhookUrl).toBe(`${r.url}/********`);
    expect(read.text).not.toContain(HOOK_SECRET);

    const row = rowOf('slack');
    expect(row?.configEnc).toMatch(/^v1\./);
    expect(`${row?.configEnc} ${JSON.stringify(row?.config)}`).not.toContain(HOOK_SECRET);

    // Not process memory: a second server process on the same data dir reads the same settings.
    const second = await buildApp(loadConfig({ ...ENV, SVC_DATA_DIR: t.dataDir, SVC_LOG_LEVEL: 'silent' }), { logger: false, firstStart: false });
    world.alsoClose({ close: () => second.app.close() });
    const again = await second.app.inject({ method: 'GET', url: `${API}/integrations/communication${orgA1()}`, headers: { authorization: `Bearer ${w.tokens.aAdmin}` } });
    expect(JSON.parse(again.body).data.slack.channel).toBe('#ops');
  });

  it.each([
    ['slack', 'Slack', (b: Record<string, unknown>) => expect(b).toMatchObject({ channel: '#ops', username: 'svc', text: expect.stringContaining('Slack') })],
    ['teams', 'Microsoft Teams', (b: Record<string, unknown>) => expect(b).toMatchObject({ '@type': 'MessageCard', text: expect.stringContaining('Microsoft Teams') })],
    ['discord', 'Discord', (b: Record<string, unknown>) => expect(b).toMatchObject({ username: 'svc', content: expect.stringContaining('Discord') })],
  ])('02§4.4 POST /integrations/%s with test:true saves, then POSTs a test notification to the webhook URL', async (provider, label, check) => {
    const r = await setup();
    t.worker.start();
    const res = await t.call('POST', `${API}/integrations/${provider}${orgA1()}`, {
      token: w.tokens.aAdmin,
      body: { webhookUrl: `${r.url}/hook/${HOOK_SECRET}`, channel: '#ops', username: 'svc', test: true },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, message: `${label} test notification queued.` });
    const [got] = await r.waitFor(1);
    expect(got?.method).toBe('POST');
    expect(got?.path).toBe(`/hook/${HOOK_SECRET}`);
    expect(got?.headers['content-type']).toBe('application/json');
    check(JSON.parse(got?.body ?? '{}'));
    await vi.waitFor(() => expect(rowOf(provider)?.lastTestStatus).toBe('succeeded'), waiting);
    const read = await t.call('GET', `${API}/integrations/communication${orgA1()}`, { token: w.tokens.aAdmin });
    expect(read.body.data[provider]).toMatchObject({ lastTestStatus: 'succeeded', lastTestError: null });
  });

  it('02§4.4 a chat test the receiver refuses is recorded as failed with its reason; test:true alone re-tests the stored settings', async () => {
    const r = await setup((_req, res) => {
      res.statusCode = 404;
      res.end('no_such_hook');
    });
    t.worker.start();
    await t.call('POST', `${API}/integrations/discord${orgA1()}`, { token: w.tokens.aAdmin, body: { webhookUrl: `${r.url}/x` } });
    const res = await t.call('POST', `${API}/integrations/discord${orgA1()}`, { token: w.tokens.aAdmin, body: { test: true } });
    expect(res.body).toEqual({ success: true, message: 'Discord test notification queued.' });
    await vi.waitFor(() => expect(rowOf('discord')?.lastTestStatus).toBe('failed'), waiting);
    expect(rowOf('discord')?.lastTestError).toBe('Discord test notification failed: HTTP 404: no_such_hook');
    expect(r.received).toHaveLength(1);
    const none = await t.call('POST', `${API}/integrations/teams${orgA1()}`, { token: w.tokens.aAdmin, body: { test: true } });
    expect(none.status).toBe(404);
  });

  it.each([
    ['an array', [1, 2], 'Body must be a JSON object'],
    ['a string', 'text', 'Body must be a JSON object'],
    ['over 16384 bytes', { webhookUrl: 'https://127.0.0.1/x', pad: 'x'.repeat(16_400) }, 'payload exceeds 16384 bytes'],
    ['of 65 keys', Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])), 'Body may have at most 64 keys'],
    ['without webhookUrl', { channel: '#ops' }, 'webhookUrl is required'],
    ['with an http: webhookUrl', { webhookUrl: 'http://hooks.example.com/x' }, 'webhookUrl rejected: URL must use HTTPS'],
    ['with a private webhookUrl', { webhookUrl: 'https://10.1.2.3/x' }, 'webhookUrl rejected: URL host is not allowed: 10.1.2.3 is in a blocked range (private)'],
    ['with notifyOn not a list', { webhookUrl: 'https://127.0.0.1/x', notifyOn: 'critical' }, 'notifyOn must be an array of strings'],
  ])('02§4.4 a chat body %s is refused with 400', async (_what, body, message) => {
    await setup();
    const res = await t.call('POST', `${API}/integrations/slack${orgA1()}`, {
      token: w.tokens.aAdmin,
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe(message);
  });

  it('02§4.4 organization context: org callers their own, partners a given or only organization, system callers must name one', async () => {
    const r = await setup();
    const body = { webhookUrl: `${r.url}/x` };
    const onlyOrg = await t.call('POST', `${API}/integrations/slack`, { token: w.tokens.aSelAdmin, body });
    expect(onlyOrg.status, onlyOrg.text).toBe(200);
    const own = await t.call('GET', `${API}/integrations/communication`, { token: w.tokens.orgUser });
    expect(own.body.data.slack.webhookUrl).toBe(`${r.url}/********`);
    const other = await t.call('GET', `${API}/integrations/communication?orgId=${w.orgA2.id}`, { token: w.tokens.orgUser });
    expect([other.status, other.body.error]).toEqual([403, 'Access to this organization denied']);
    const partnerMany = await t.call('GET', `${API}/integrations/communication`, { token: w.tokens.aAdmin });
    expect([partnerMany.status, partnerMany.body.error]).toEqual([400, 'orgId is required when partner has multiple organizations']);
    const partnerNone = await t.call('GET', `${API}/integrations/monitoring`, { token: w.tokens.aNone });
    expect([partnerNone.status, partnerNone.body.error]).toEqual([403, 'Organization context required']);
    const inBody = await t.call('PUT', `${API}/integrations/monitoring`, { token: w.tokens.system, body: { orgId: w.orgA2.id, metricsEnabled: true } });
    expect(inBody.status, inBody.text).toBe(200);
    expect(inBody.body.data).toEqual({ metricsEnabled: true });
    const system = await t.call('GET', `${API}/integrations/monitoring`, { token: w.tokens.system });
    expect([system.status, system.body.error]).toEqual([400, 'orgId is required']);
    const foreign = await t.call('GET', `${API}/integrations/monitoring?orgId=${w.orgA1.id}`, { token: w.tokens.bAdmin });
    expect(foreign.status).toBe(403);
  });

  it('02§4.4 reads need organizations:read, writes organizations:write and MFA', async () => {
    await setup(undefined, { mfa: false });
    const noMfa = await t.call('PUT', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin, body: { metricsEnabled: true } });
    expect(noMfa.status).toBe(403);
    const readOk = await t.call('GET', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin });
    expect([readOk.status, readOk.body]).toEqual([200, {}]);
    const roleId = seedOrgRole(t, w.orgA1.id, ['devices:read']);
    const viewer = await seedUser(t, { email: 'viewer@a1.test', org: { orgId: w.orgA1.id, roleId }, login: 'mint', mfa: true });
    const denied = await t.call('GET', `${API}/integrations/monitoring`, { token: viewer.token });
    expect(denied.status).toBe(403);
  });

  it('02§4.4 monitoring: PUT stores and masks the API key, a masked key sent back keeps it, test POSTs an event with it', async () => {
    const r = await setup();
    const put = await t.call('PUT', `${API}/integrations/monitoring${orgA1()}`, {
      token: w.tokens.aAdmin,
      body: { endpoint: `${r.url}/events`, apiKey: 'mon-key-123', metricsEnabled: true, forwardEvents: false },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ success: true, data: { endpoint: `${r.url}/events`, apiKey: '********', metricsEnabled: true, forwardEvents: false } });
    const got = await t.call('GET', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin });
    expect(got.body.apiKey).toBe('********');
    // Read, edit, send back: the masked key keeps the stored one.
    const edited = await t.call('PUT', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin, body: { ...got.body, forwardEvents: true } });
    expect(edited.body.data.forwardEvents).toBe(true);
    const test = await t.call('POST', `${API}/integrations/monitoring/test${orgA1()}`, { token: w.tokens.aAdmin });
    expect(test.body).toEqual({ success: true, message: 'Connection successful.' });
    const [req] = r.received;
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/events');
    expect(req?.headers.authorization).toBe('Bearer mon-key-123');
    expect(JSON.parse(req?.body ?? '{}')).toMatchObject({ type: 'integration.test', orgId: w.orgA1.id });
    expect(rowOf('monitoring')?.lastTestStatus).toBe('succeeded');
    const audit = t.db.select().from(auditLogs).where(eq(auditLogs.action, 'integration.test')).all();
    expect(audit).toHaveLength(1);
  });

  it('02§4.4 secrets under other names (headers, bearer, authorization, pass, cookie) are masked when read and never stored readable', async () => {
    const r = await setup();
    const secrets = { headers: { Authorization: 'Bearer h3ader-secret', 'X-Tenant': 'acme-t3nant' }, bearer: 'b3arer-secret', authorization: 'Basic 4uth-secret', pass: 'pa55-secret', cookie: 'sid=c00kie-secret' };
    const put = await t.call('PUT', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin, body: { endpoint: `${r.url}/events`, apiKey: 'mon-key-123', ...secrets } });
    expect(put.status, put.text).toBe(200);
    const got = await t.call('GET', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin });
    expect(got.body).toMatchObject({ headers: { Authorization: '********', 'X-Tenant': '********' }, bearer: '********', authorization: '********', pass: '********', cookie: '********' });
    const readable = JSON.stringify([put.body, got.body, rowOf('monitoring')?.config]);
    for (const secret of ['h3ader-secret', 'acme-t3nant', 'b3arer-secret', '4uth-secret', 'pa55-secret', 'c00kie-secret']) expect(readable).not.toContain(secret);
    // Read, edit, send back: the masked values keep the stored ones (headers as a whole object too).
    const edited = await t.call('PUT', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin, body: { ...got.body, forwardEvents: true } });
    expect(edited.status, edited.text).toBe(200);
    const stored = { endpoint: `${r.url}/events`, apiKey: 'mon-key-123', ...secrets };
    expect(unmask({ ...maskConfig(stored), forwardEvents: true }, stored)).toEqual({ ...stored, forwardEvents: true });
  });

  it('02§4.4 monitoring test: a refused key is success false with the reason; no settings is 404', async () => {
    const r = await setup((_req, res) => {
      res.statusCode = 401;
      res.end('bad key');
    });
    const none = await t.call('POST', `${API}/integrations/monitoring/test${orgA1()}`, { token: w.tokens.aAdmin });
    expect([none.status, none.body.error]).toEqual([404, 'Monitoring settings not found']);
    await t.call('PUT', `${API}/integrations/monitoring${orgA1()}`, { token: w.tokens.aAdmin, body: { endpoint: `${r.url}/e`, apiKey: 'wrong' } });
    const test = await t.call('POST', `${API}/integrations/monitoring/test${orgA1()}`, { token: w.tokens.aAdmin });
    expect(test.status).toBe(200);
    expect(test.body).toEqual({ success: false, message: 'Credentials rejected: HTTP 401: bad key' });
    expect(rowOf('monitoring')).toMatchObject({ lastTestStatus: 'failed', lastTestError: 'Credentials rejected: HTTP 401: bad key' });
  });

  it('02§4.4 ticketing: POST saves with its message, GET masks the key, test calls the API URL with it', async () => {
    const r = await setup();
    const none = await t.call('GET', `${API}/integrations/ticketing${orgA1()}`, { token: w.tokens.aAdmin });
    expect(none.body).toEqual({});
    const body = { provider: 'jira', apiUrl: `${r.url}/rest/api/2/myself`, apiKey: 'tick-key-9', projectKey: 'OPS', autoCreate: true };
    const saved = await t.call('POST', `${API}/integrations/ticketing${orgA1()}`, { token: w.tokens.aAdmin, body });
    expect(saved.body).toEqual({ success: true, message: 'Ticketing settings saved.', data: { ...body, apiKey: '********' } });
    const test = await t.call('POST', `${API}/integrations/ticketing/test${orgA1()}`, { token: w.tokens.aAdmin });
    expect(test.body).toEqual({ success: true, message: 'Connection successful. Credentials validated.' });
    expect(r.received[0]).toMatchObject({ method: 'GET', path: '/rest/api/2/myself' });
    expect(r.received[0]?.headers.authorization).toBe('Bearer tick-key-9');
  });

  it('02§2.8 legacy /integrations/psa: GET 404 until saved, POST replaces, PUT merges, test authenticates against the base URL', async () => {
    const r = await setup();
    const none = await t.call('GET', `${API}/integrations/psa${orgA1()}`, { token: w.tokens.aAdmin });
    expect([none.status, none.body.error]).toEqual([404, 'PSA settings not found']);
    const bad = await t.call('POST', `${API}/integrations/psa${orgA1()}`, { token: w.tokens.aAdmin, body: { provider: 'nope' } });
    expect(bad.status).toBe(400);
    const saved = await t.call('POST', `${API}/integrations/psa${orgA1()}`, {
      token: w.tokens.aAdmin,
      body: { provider: 'jira', baseUrl: `${r.url}/jira`, credentials: { email: 'ops@example.com', apiToken: 'jira-token-7' } },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.body.data).toEqual({ provider: 'jira', baseUrl: `${r.url}/jira`, credentials: { email: '********', apiToken: '********' } });
    expect(saved.text).not.toContain('jira-token-7');
    const put = await t.call('PUT', `${API}/integrations/psa${orgA1()}`, { token: w.tokens.aAdmin, body: { settings: { board: 'ops' } } });
    expect(put.body.data).toMatchObject({ provider: 'jira', settings: { board: 'ops' } });
    const read = await t.call('GET', `${API}/integrations/psa${orgA1()}`, { token: w.tokens.aAdmin });
    expect(read.body).toEqual({ success: true, data: put.body.data });
    const test = await t.call('POST', `${API}/integrations/psa/test${orgA1()}`, { token: w.tokens.aAdmin });
    expect(test.body).toEqual({ success: true, message: 'jira connection successful.' });
    expect(r.received[0]?.headers.authorization).toBe(`Basic ${Buffer.from('ops@example.com:jira-token-7').toString('base64')}`);
  });
});
