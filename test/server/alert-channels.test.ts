import { asc, sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditLogs } from '../../src/server/db/schema/index.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';
import { seedOrg, seedPartner, seedUser, type SeededUser } from '../helpers/seed.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { startSmtp, type Inbox } from '../helpers/smtp.js';

let t: TestApp;
let admin: SeededUser;
let orgId: string;
let partnerId: string;
const open: Array<{ close(): Promise<void> }> = [];

async function setup(env: Record<string, string> = {}): Promise<void> {
  t = await createTestApp({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32', ...env });
  const partner = seedPartner(t, { name: 'P', slug: 'p' });
  partnerId = partner.id;
  orgId = seedOrg(t, partner.id, { name: 'Org One', slug: 'o' }).id;
  admin = await seedUser(t, { email: 'admin@o.test', org: { orgId }, login: 'mint', mfa: true });
}

async function receiver(respond?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(respond);
  open.push(r);
  return r;
}

const create = (body: Record<string, unknown>) => t.call('POST', '/api/v1/alerts/channels', { token: admin.token, body: { name: 'C', ...body } });
const test = (id: string) => t.call('POST', `/api/v1/alerts/channels/${id}/test`, { token: admin.token });

afterEach(async () => {
  for (const o of open.splice(0)) await o.close();
  await t.close();
});

describe('notification channels (02 §2.4, 05-wire-notes 4.1)', () => {
  beforeEach(() => setup());

  it('05-wire 4.1 create answers 201 with the row; list, get, update, delete', async () => {
    const created = await create({ type: 'email', config: { recipients: ['ops@example.com'] }, throttleMaxPerWindow: 10 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      orgId,
      name: 'C',
      type: 'email',
      enabled: true,
      config: { recipients: ['ops@example.com'] },
      lastTestedAt: null,
      lastTestStatus: null,
      throttleMaxPerWindow: 10,
      throttleWindowSeconds: 3600,
    });
    const id = created.body.id as string;
    const list = await t.call('GET', '/api/v1/alerts/channels?type=email&enabled=true', { token: admin.token });
    expect(list.body.data.map((c: { id: string }) => c.id)).toEqual([id]);
    expect(list.body.pagination).toEqual({ page: 1, limit: 50, total: 1 });
    expect((await t.call('GET', `/api/v1/alerts/channels/${id}`, { token: admin.token })).body.id).toBe(id);
    const updated = await t.call('PUT', `/api/v1/alerts/channels/${id}`, { token: admin.token, body: { enabled: false, name: 'Renamed' } });
    expect(updated.body).toMatchObject({ enabled: false, name: 'Renamed' });
    const empty = await t.call('PUT', `/api/v1/alerts/channels/${id}`, { token: admin.token, body: {} });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toBe('No updates provided');
    expect((await t.call('DELETE', `/api/v1/alerts/channels/${id}`, { token: admin.token })).body).toEqual({ success: true });
    const gone = await t.call('GET', `/api/v1/alerts/channels/${id}`, { token: admin.token });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('Notification channel not found');
  });

  it('01§6 channel and escalation policy changes are audited with their organization and its partner', async () => {
    const channel = await create({ type: 'email', config: { recipients: ['ops@example.com'] } });
    const policy = await t.call('POST', '/api/v1/alerts/policies', {
      token: admin.token,
      body: { name: 'Escalate', steps: [{ delayMinutes: 5, channelIds: [channel.body.id] }] },
    });
    expect(policy.status).toBe(201);
    await t.call('PUT', `/api/v1/alerts/policies/${policy.body.id}`, { token: admin.token, body: { name: 'Escalate 2' } });
    await t.call('DELETE', `/api/v1/alerts/policies/${policy.body.id}`, { token: admin.token });
    await t.call('DELETE', `/api/v1/alerts/channels/${channel.body.id}`, { token: admin.token });
    const entries = t.db.select().from(auditLogs).orderBy(asc(auditLogs.timestamp), sql`rowid`).all();
    const of = (type: string) => entries.filter((e) => e.resourceType === type);
    expect(of('alert_channel').map((e) => [e.action, e.resourceId, e.resourceName])).toEqual([
      ['alert_channel.create', channel.body.id, 'C'],
      ['alert_channel.delete', channel.body.id, 'C'],
    ]);
    expect(of('escalation_policy').map((e) => [e.action, e.resourceId, e.resourceName])).toEqual([
      ['escalation_policy.create', policy.body.id, 'Escalate'],
      ['escalation_policy.update', policy.body.id, 'Escalate 2'],
      ['escalation_policy.delete', policy.body.id, 'Escalate 2'],
    ]);
    for (const entry of [...of('alert_channel'), ...of('escalation_policy')]) expect(entry).toMatchObject({ orgId, partnerId });
  });

  it('05-wire 4.1 throttle bounds: throttleMaxPerWindow 1-10000 or null, throttleWindowSeconds 60-86400; name required', async () => {
    const email = { type: 'email', config: { to: 'a@b.co' } };
    expect((await create({ ...email, throttleMaxPerWindow: 0 })).status).toBe(400);
    expect((await create({ ...email, throttleMaxPerWindow: 10_001 })).status).toBe(400);
    expect((await create({ ...email, throttleWindowSeconds: 59 })).status).toBe(400);
    expect((await create({ ...email, throttleWindowSeconds: 86_401 })).status).toBe(400);
    expect((await create({ ...email, throttleMaxPerWindow: null })).status).toBe(201);
    expect((await t.call('POST', '/api/v1/alerts/channels', { token: admin.token, body: email })).status).toBe(400);
    expect((await create({ type: 'pushover', config: {} })).status).toBe(400);
  });

  it('02§2.4 every config error answers 400 "Invalid <type> channel configuration" with its message in details', async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['email', {}, 'Missing recipients field'],
      ['email', { recipients: ['ok@example.com', 'nope'] }, 'Invalid email address: nope'],
      ['slack', {}, 'slack webhookUrl must be a non-empty string'],
      ['teams', { webhookUrl: '' }, 'teams webhookUrl must be a non-empty string'],
      ['webhook', { url: 'http://example.com/hook' }, 'Missing or invalid URL'],
      ['webhook', { url: 'https://example.com', method: 'GET' }, 'Method must be POST, PUT, or PATCH'],
      ['webhook', { url: 'https://example.com', authType: 'digest' }, 'Invalid auth type. Must be one of: none, bearer, basic, api_key'],
      ['webhook', { url: 'https://example.com', authType: 'bearer' }, 'Bearer auth requires authToken'],
      ['webhook', { url: 'https://example.com', authType: 'basic', authUsername: 'u' }, 'Basic auth requires authUsername and authPassword'],
      ['webhook', { url: 'https://example.com', authType: 'api_key', apiKeyHeader: 'X-Key' }, 'API key auth requires apiKeyHeader and apiKeyValue'],
      ['webhook', { url: 'https://example.com', timeout: 999 }, 'Timeout must be between 1000 and 60000 milliseconds'],
      ['webhook', { url: 'https://example.com', timeout: 60_001 }, 'Timeout must be between 1000 and 60000 milliseconds'],
      ['webhook', { url: 'https://example.com', payloadTemplate: '{"a": ' }, 'Payload template is not valid JSON'],
      // What an HTTP request cannot carry would fail every send: refused up front, as for webhooks (02 §4.3).
      ['webhook', { url: 'https://example.com', headers: { 'X Team': 'a' } }, 'Header "X Team" must be a valid RFC token'],
      ['webhook', { url: 'https://example.com', headers: { 'X-Team': 'Zürich €' } }, 'Header "X-Team" can hold only Latin-1 characters'],
      ['webhook', { url: 'https://example.com', headers: { 'X-Team': 'a\r\nb' } }, 'Header "X-Team" cannot contain control characters'],
      ['webhook', { url: 'https://example.com', authType: 'api_key', apiKeyHeader: 'X Key', apiKeyValue: 'k' }, 'apiKeyHeader must be a valid RFC token'],
      ['webhook', { url: 'https://example.com', authType: 'bearer', authToken: 'tok€n' }, 'authToken can hold only Latin-1 characters'],
      ['pagerduty', {}, 'PagerDuty channel requires routingKey or integrationKey'],
      ['sms', { phoneNumbers: [] }, 'SMS channel phoneNumbers must be a non-empty array'],
      ['sms', { phoneNumbers: ['+15551234567', '555-1234'] }, 'Invalid E.164 phone number: 555-1234'],
    ];
    for (const [type, config, message] of cases) {
      const res = await create({ type, config });
      expect(res.status, `${type} ${JSON.stringify(config)}`).toBe(400);
      expect(res.body.error).toBe(`Invalid ${type} channel configuration`);
      expect(res.body.details).toContain(message);
    }
  });

  it('05-wire 4.1 secrets are stored encrypted, shown masked, and a masked value sent back keeps the stored secret', async () => {
    const r = await receiver();
    const created = await create({
      type: 'webhook',
      config: { url: `${r.url}/hook`, authType: 'bearer', authToken: 'tok-secret-1', headers: { 'X-Team': 'ops-secret' } },
    });
    expect(created.status).toBe(201);
    const masked = { redacted: true, hasSecret: true, masked: '********' };
    expect(created.body.config).toMatchObject({ url: masked, authToken: masked, authType: 'bearer', headers: { 'X-Team': masked } });
    const raw = t.db.$client.prepare('SELECT config_sealed FROM notification_channels WHERE id = ?').get(created.body.id) as { config_sealed: string };
    expect(raw.config_sealed).not.toContain('tok-secret-1');
    expect(raw.config_sealed).not.toContain(r.url);
    // The config read back, changed in one field and sent as it is: the masked secrets stay.
    const back = { ...created.body.config, authToken: '****', retryCount: 0 };
    const updated = await t.call('PUT', `/api/v1/alerts/channels/${created.body.id}`, { token: admin.token, body: { config: back } });
    expect(updated.status).toBe(200);
    const result = await test(created.body.id);
    expect(result.body.testResult.success).toBe(true);
    expect(r.received[0]?.headers.authorization).toBe('Bearer tok-secret-1');
    expect(r.received[0]?.headers['x-team']).toBe('ops-secret');
  });

  it('02§2.4 a chat channel posts `[SEVERITY] Alert Name: Summary` to its webhook URL; the test answers the wire shape', async () => {
    const r = await receiver();
    const created = await create({ type: 'slack', config: { webhookUrl: `${r.url}/services/T000/B000` } });
    const res = await test(created.body.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      channelId: created.body.id,
      channelName: 'C',
      channelType: 'slack',
      testMessage: { severity: 'info', source: 'manual_test' },
      testResult: { success: true, details: { statusCode: 200, webhookUrl: { redacted: true } } },
      testedBy: admin.id,
    });
    const got = r.received[0];
    expect(got?.path).toBe('/services/T000/B000');
    expect(got?.headers['user-agent']).toBe('Svc-RMM/1.0');
    expect(JSON.parse(got?.body ?? '')).toEqual({ text: `[INFO] ${res.body.testMessage.title}: ${res.body.testMessage.message}` });
    const after = await t.call('GET', `/api/v1/alerts/channels/${created.body.id}`, { token: admin.token });
    expect(after.body.lastTestStatus).toBe('success');
    expect(after.body.lastTestedAt).toBe(res.body.testedAt);
  });

  it('02§2.4 webhook: method, four auth types, custom headers and a payloadTemplate with {{dot.path}} variables', async () => {
    const r = await receiver();
    const auths = [
      [{ authType: 'none' }, undefined],
      [{ authType: 'bearer', authToken: 'b1' }, ['authorization', 'Bearer b1']],
      [{ authType: 'basic', authUsername: 'u', authPassword: 'p' }, ['authorization', `Basic ${Buffer.from('u:p').toString('base64')}`]],
      [{ authType: 'api_key', apiKeyHeader: 'X-Api-Key', apiKeyValue: 'k1' }, ['x-api-key', 'k1']],
    ] as const;
    for (const [auth, header] of auths) {
      const created = await create({
        type: 'webhook',
        config: {
          url: `${r.url}/h`,
          method: 'PUT',
          ...auth,
          payloadTemplate: '{"name":"{{alertName}}","sev":"{{severity}}","org":"Org {{orgName}}","src":"{{context.source}}","n":{{missing.path}}}',
        },
      });
      const res = await test(created.body.id);
      expect(res.body.testResult.success).toBe(true);
      const got = r.received.at(-1);
      expect(got?.method).toBe('PUT');
      if (header) expect(got?.headers[header[0]]).toBe(header[1]);
      expect(JSON.parse(got?.body ?? '')).toEqual({ name: 'Test notification', sev: 'info', org: 'Org Org One', src: 'manual_test', n: null });
    }
  });

  it('02§2.4 webhook default body: event, timestamp, alert, device, organization, context', async () => {
    const r = await receiver();
    const created = await create({ type: 'webhook', config: { url: `${r.url}/h` } });
    await test(created.body.id);
    const body = JSON.parse(r.received[0]?.body ?? '');
    expect(Object.keys(body).sort()).toEqual(['alert', 'context', 'device', 'event', 'organization', 'timestamp']);
    expect(Object.keys(body.alert).sort()).toEqual(['id', 'name', 'ruleId', 'ruleName', 'severity', 'summary', 'triggeredAt']);
    expect(body.organization).toEqual({ id: orgId, name: 'Org One' });
    expect(body.device).toEqual({ id: null, name: null });
    expect(r.received[0]?.method).toBe('POST');
    expect(r.received[0]?.headers['content-type']).toBe('application/json');
  });

  it('02§2.4 webhook retries a 500 (2^attempt s backoff) and does not retry a 404', async () => {
    const failing = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end('no');
    });
    const retried = await create({ type: 'webhook', config: { url: `${failing.url}/h`, retryCount: 1 } });
    const started = Date.now();
    const res = await test(retried.body.id);
    expect(res.status).toBe(200);
    expect(res.body.testResult).toMatchObject({ success: false, details: { statusCode: 500 } });
    expect(failing.received).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    const missing = await receiver((_req, res2) => {
      res2.statusCode = 404;
      res2.end();
    });
    const once = await create({ type: 'webhook', config: { url: `${missing.url}/h`, retryCount: 3 } });
    expect((await test(once.body.id)).body.testResult).toMatchObject({ success: false, details: { statusCode: 404 } });
    expect(missing.received).toHaveLength(1);
    expect((await t.call('GET', `/api/v1/alerts/channels/${once.body.id}`, { token: admin.token })).body.lastTestStatus).toBe('failed');
  });

  it('02§2.4 webhook: a receiver that does not answer within the timeout fails the send', async () => {
    const silent = await receiver(() => undefined);
    const created = await create({ type: 'webhook', config: { url: `${silent.url}/h`, timeout: 1000 } });
    const res = await test(created.body.id);
    expect(res.body.testResult.success).toBe(false);
    expect(res.body.testResult.message).toMatch(/Timeout after 1000ms/);
  });
});

describe('blocked targets (02 §2.4 URL safety)', () => {
  beforeEach(() => setup({ SVC_OUTBOUND_ALLOW: '' }));

  it('02§2.4 a webhook to a loopback or private address is refused by the URL guard and nothing is sent', async () => {
    const r = await receiver();
    for (const url of [`${r.url}/h`, 'https://10.0.0.5/h', 'https://printer.local/h']) {
      const created = await create({ type: 'webhook', config: { url, retryCount: 2 } });
      const res = await test(created.body.id);
      expect(res.status).toBe(200);
      expect(res.body.testResult.success).toBe(false);
      expect(res.body.testResult.message).toMatch(/^Outbound request blocked/);
    }
    expect(r.received).toHaveLength(0);
  });
});

describe('e-mail, incident and SMS channels (02 §2.4)', () => {
  let smtp: Inbox;

  it('02§2.4 e-mail without SMTP settings fails with "Email service not configured"', async () => {
    await setup();
    const created = await create({ type: 'email', config: { recipients: 'ops@example.com' } });
    const res = await test(created.body.id);
    expect(res.body.testResult).toEqual({ success: false, message: 'Email service not configured', details: { recipients: ['ops@example.com'] } });
  });

  it('02§2.4 e-mail goes over SMTP to every recipient', async () => {
    smtp = await startSmtp();
    open.push(smtp);
    await setup({ SVC_SMTP_URL: smtp.url });
    const created = await create({ type: 'email', config: { to: ['ops@example.com', 'noc@example.com'] } });
    const res = await test(created.body.id);
    expect(res.body.testResult).toMatchObject({ success: true, details: { recipients: ['ops@example.com', 'noc@example.com'] } });
    const mail = await smtp.next();
    expect(mail).toMatch(/^To: ops@example.com, noc@example.com/m);
    expect(mail).toMatch(/^Subject: \[INFO\] Test notification/m);
  });

  it('02§2.4 incident: events API v2 trigger with the defaults (source/component fixed label, group org, dedupKey)', async () => {
    const pd = await startReceiver((_req, res) => {
      res.statusCode = 202;
      res.end('{"status":"success"}');
    });
    open.push(pd);
    await setup({ SVC_PAGERDUTY_EVENTS_URL: `${pd.url}/v2/enqueue` });
    const created = await create({ type: 'pagerduty', config: { integrationKey: 'R0UT1NG' } });
    const res = await test(created.body.id);
    expect(res.body.testResult).toMatchObject({ success: true, details: { statusCode: 202 } });
    const body = JSON.parse(pd.received[0]?.body ?? '');
    expect(pd.received[0]?.path).toBe('/v2/enqueue');
    expect(body).toMatchObject({
      routing_key: 'R0UT1NG',
      event_action: 'trigger',
      dedup_key: res.body.testResult.details.dedupKey,
      payload: { severity: 'info', source: 'svc', component: 'svc', group: 'Org One' },
    });
    const custom = await create({ type: 'pagerduty', config: { routingKey: 'K', severity: 'critical', source: 'src', dedupKey: 'dk', class: 'disk' } });
    await test(custom.body.id);
    expect(JSON.parse(pd.received[1]?.body ?? '')).toMatchObject({ dedup_key: 'dk', payload: { severity: 'critical', source: 'src', class: 'disk' } });
  });

  it('02§2.4 SMS without provider settings fails with "SMS service not configured"', async () => {
    await setup();
    const created = await create({ type: 'sms', config: { phoneNumbers: ['+15551230001'] } });
    const res = await test(created.body.id);
    expect(res.body.testResult).toMatchObject({ success: false, message: 'SMS service not configured' });
  });

  it('02§2.4 SMS through the Twilio Messages API: form POST with basic auth per recipient, sentCount, failedCount, per-recipient errors', async () => {
    const twilio = await startReceiver((req, res) => {
      const to = new URLSearchParams(req.body).get('To');
      res.setHeader('content-type', 'application/json');
      if (to === '+15551230002') {
        res.statusCode = 400;
        res.end('{"code":21211,"message":"The \'To\' number is not a valid phone number.","status":400}');
        return;
      }
      res.statusCode = 201;
      res.end('{"sid":"SM1","status":"queued"}');
    });
    open.push(twilio);
    await setup({ SVC_TWILIO_API_URL: twilio.url, SVC_TWILIO_ACCOUNT_SID: 'AC123', SVC_TWILIO_AUTH_TOKEN: 'tw-token' });
    const created = await create({ type: 'sms', config: { phoneNumbers: ['+15551230001', '+15551230002'], from: '+15550000000' } });
    const res = await test(created.body.id);
    expect(res.body.testResult).toMatchObject({
      success: false,
      details: { phoneNumbers: ['+15551230001', '+15551230002'], sentCount: 1, failedCount: 1, errors: [{ phoneNumber: '+15551230002' }] },
    });
    const first = twilio.received[0];
    expect(first?.path).toBe('/2010-04-01/Accounts/AC123/Messages.json');
    expect(first?.headers.authorization).toBe(`Basic ${Buffer.from('AC123:tw-token').toString('base64')}`);
    expect(first?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    const form = new URLSearchParams(first?.body);
    expect(form.get('From')).toBe('+15550000000');
    expect(form.get('Body')).toBe('[INFO] Test notification (Org One): This is a test notification from svc. If you can read it, the channel works.');
  });
});
