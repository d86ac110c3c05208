import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, cliUser, type CliUser, E2E_TIMEOUT_MS, type E2eServer, http, startServer } from '../helpers/cli.js';
import { createTenant, enroll, ok, PERSON_PASSWORD, RECEIVER_CA, turnOnMfa, unique } from '../helpers/fixtures.js';
import { startReceiver, type Receiver, type ReceivedRequest } from '../helpers/https-receiver.js';
import { decodeQuotedPrintable, linkIn, startSmtp, tokenOf, type Inbox } from '../helpers/smtp.js';

/**
 * Issue 11 "Tests", end to end through the CLI against a real `svc server start`: a device's samples cross a
 * threshold for the duration → one alert → in-app notifications for the organization's people and none for a
 * partner user without access → a send on each enabled channel (SMTP, chat, webhook, incident and SMS stand-ins on
 * loopback) → the escalation step after its delay; acknowledging first cancels it; a server stopped and started
 * between trigger and escalation still escalates exactly once.
 *
 * Delays: SVC_ALERT_TIME_SCALE 0.25 makes an escalation minute 15 s (the step delay is whole minutes).
 */
const CPU_HIGH = '00000000-0000-4000-a000-000000000001';
const SCALE = 0.25;
const MINUTE_MS = 60_000 * SCALE;
const TWILIO_SID = 'AC0000e2e';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` every 500 ms until `done` holds of its value, for at most `timeoutMs`; the last value. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value) && Date.now() < deadline) {
    await sleep(500);
    value = await read();
  }
  return value;
}

describe('e2e: the alert pipeline through the CLI, with a server restart (issue 11, 02 §3, §6)', { timeout: E2E_TIMEOUT_MS * 4 }, () => {
  const made: CliUser[] = [];
  /** When each request reached the receiver. */
  const arrivedAt = new Map<ReceivedRequest, number>();
  let server: E2eServer, receiver: Receiver, smtp: Inbox, systemToken: string;

  beforeAll(async () => {
    receiver = await startReceiver((req, res) => {
      arrivedAt.set(req, Date.now());
      res.setHeader('content-type', 'application/json');
      // The SMS provider's Messages API answers 201 with the message; everyone else 200.
      res.statusCode = req.path.endsWith('/Messages.json') ? 201 : 200;
      res.end(req.path.endsWith('/Messages.json') ? '{"sid":"SM1","status":"queued"}' : '{"ok":true}');
    });
    smtp = await startSmtp();
    server = await startServer({
      SVC_OUTBOUND_ALLOW: '127.0.0.1/32',
      NODE_EXTRA_CA_CERTS: RECEIVER_CA,
      SVC_JOB_POLL_MS: '100',
      SVC_ALERT_TIME_SCALE: String(SCALE),
      SVC_SMTP_URL: smtp.url,
      SVC_PAGERDUTY_EVENTS_URL: `${receiver.url}/pagerduty/v2/enqueue`,
      SVC_TWILIO_API_URL: receiver.url,
      SVC_TWILIO_ACCOUNT_SID: TWILIO_SID,
      SVC_TWILIO_AUTH_TOKEN: 'twilio-e2e-token',
      SVC_TWILIO_FROM: '+15550000000',
    });
    systemToken = (await turnOnMfa(server.url, await adminToken(server.url))).token;
  }, 120_000);
  afterAll(async () => {
    for (const user of made) user.cleanup();
    await server?.stop();
    await receiver?.close();
    await smtp?.close();
  });

  /** What arrived about one device (its unique hostname is in every message): chat, webhook, incident, SMS, mail. */
  const arrivedFor = (hostname: string) => {
    const text = (r: ReceivedRequest) => (r.path.endsWith('/Messages.json') ? (new URLSearchParams(r.body).get('Body') ?? '') : r.body);
    const requests = receiver.received.filter((r) => text(r).includes(hostname));
    return {
      paths: requests.map((r) => r.path.replace(hostname, ':host').replace(/^\/2010-04-01\/Accounts\/[^/]+\//, '/:id/')).sort(),
      requests,
      mails: smtp.messages.filter((m) => decodeQuotedPrintable(m).includes(hostname)),
    };
  };

  /**
   * Someone invited over HTTP (the server mails the invitation: its link is read from the SMTP inbox) who accepts,
   * signs in, turns MFA on when `mfa` (the administrator's writes need it), and uses the CLI with that session.
   */
  async function person(role: string, body: Record<string, unknown>, mfa = false): Promise<{ cli: CliUser; token: string }> {
    const email = `${unique('person')}@e2e.test`;
    const roles = await ok<{ data: { id: string; name: string }[] }>(http(server.url, 'GET', '/roles?limit=100', { token: systemToken }), 'roles');
    const roleId = roles.data.find((r) => r.name === role)?.id;
    await ok(http(server.url, 'POST', '/users/invite', { token: systemToken, body: { email, name: 'Person', roleId, ...body } }), 'invite');
    const mail = await until(async () => smtp.messages.find((m) => m.includes(email)), (m) => m !== undefined, 10_000);
    const inviteToken = tokenOf(linkIn(mail ?? '', 'accept-invite'));
    await ok(http(server.url, 'POST', '/auth/accept-invite', { body: { token: inviteToken, password: PERSON_PASSWORD } }), 'accept invite');
    const session = await ok(http(server.url, 'POST', '/auth/login', { body: { email, password: PERSON_PASSWORD } }), 'login');
    const token: string = mfa ? (await turnOnMfa(server.url, session.tokens.accessToken)).token : session.tokens.accessToken;
    const cli = cliUser({ SVC_TOKEN: token, SVC_BASE_URL: server.url });
    made.push(cli);
    return { cli, token };
  }

  /**
   * A tenant of its own: a partner administrator (the CLI user who does everything), an organization user, a
   * partner user who reaches only another organization of the partner; every channel type enabled plus one
   * disabled; an escalation policy of one step (after `delayMinutes`) to the webhook channel; a CPU rule with a
   * 5-minute duration using it. All of it through the CLI but the people (invited over HTTP).
   */
  async function world(prefix: string, delayMinutes: number) {
    const tenant = await createTenant(server.url, systemToken, prefix);
    const admin = await person('Partner Admin', { partnerId: tenant.partnerId }, true);
    const other = await ok(
      http(server.url, 'POST', '/orgs/organizations', { token: systemToken, body: { partnerId: tenant.partnerId, name: `${tenant.slug} other`, slug: `${tenant.slug}-other` } }),
      'other organization',
    );
    const orgUser = (await person('Org Viewer', { orgId: tenant.orgId })).cli;
    const outsider = (await person('Partner Technician', { partnerId: tenant.partnerId, orgAccess: 'selected', orgIds: [other.id] })).cli;

    const hostname = unique(`${prefix}-host`);
    const channel = async (name: string, type: string, config: Record<string, unknown>) => {
      // Configs with secrets (webhook URLs, keys) go in a file, not on the command line.
      const file = path.join(admin.cli.home, `${name}.json`);
      fs.writeFileSync(file, JSON.stringify({ orgId: tenant.orgId, name, type, config }));
      return admin.cli.json<{ id: string }>(['alerts', 'channels', 'create', '--from-file', file]);
    };
    const channels = {
      email: await channel('mail', 'email', { recipients: ['oncall@example.com'] }),
      slack: await channel('chat a', 'slack', { webhookUrl: `${receiver.url}/slack/${hostname}` }),
      teams: await channel('chat b', 'teams', { webhookUrl: `${receiver.url}/teams/${hostname}` }),
      webhook: await channel('hook', 'webhook', { url: `${receiver.url}/hook/${hostname}` }),
      pagerduty: await channel('incident', 'pagerduty', { routingKey: 'R0UT1NG-e2e' }),
      sms: await channel('sms', 'sms', { phoneNumbers: ['+15551230001'] }),
    };
    const disabled = await channel('off', 'webhook', { url: `${receiver.url}/off/${hostname}` });
    expect((await admin.cli.json(['alerts', 'channels', 'update', disabled.id, '--no-enabled'])).enabled).toBe(false);
    const policy = await admin.cli.json([
      'alerts', 'policies', 'create', '--org-id', tenant.orgId, '--name', 'Escalate to the hook',
      '--steps', JSON.stringify([{ delayMinutes, channelIds: [channels.webhook.id] }]),
    ]);
    const rule = await admin.cli.json([
      'alerts', 'rules', 'create', '--org-id', tenant.orgId, '--template-id', CPU_HIGH, '--name', 'CPU hot',
      '--conditions', JSON.stringify({ metric: 'cpu.usage', operator: '>', threshold: 90, durationMinutes: 5 }),
      '--escalation-policy-id', policy.id,
    ]);
    expect(rule).toMatchObject({ escalationPolicyId: policy.id, severity: 'high' });

    const key = await ok<{ key: string }>(http(server.url, 'POST', '/enrollment-keys', { token: admin.token, body: { orgId: tenant.orgId, name: 'fleet' } }), 'enrollment key');
    const agent = await ok<{ agentId: string; authToken: string }>(enroll(server.url, key.key, hostname), 'enroll');
    return { tenant, admin: admin.cli, orgUser, outsider, hostname, agent, rule, channels };
  }

  type World = Awaited<ReturnType<typeof world>>;

  /** The agent reports CPU at `value` every 30 s over the last 6 minutes: the 5-minute condition holds (or not). */
  async function reportCpu(w: World, value: number) {
    const now = Date.now();
    const samples = [];
    for (let at = now - 6 * 60_000; at <= now; at += 30_000) samples.push({ metric: 'cpu.usage', value, timestamp: new Date(at).toISOString() });
    await ok(http(server.url, 'POST', `/agents/${w.agent.agentId}/metrics`, { token: w.agent.authToken, body: { samples } }), 'metrics');
  }

  /** The one active alert of the world's organization, as `svc alerts list` shows it (waiting for the evaluator). */
  async function raised(w: World) {
    const alerts = await until(() => w.admin.json<any[]>(['alerts', 'list', '--org-id', w.tenant.orgId]), (a) => a.length > 0, 30_000);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ ruleId: w.rule.id, status: 'active', severity: 'high', deviceHostname: w.hostname });
    return alerts[0] as { id: string; triggeredAt: string };
  }

  /** The first sends: one request on each enabled channel, none on the disabled one. */
  const FIRST_SENDS = ['/:id/Messages.json', '/hook/:host', '/pagerduty/v2/enqueue', '/slack/:host', '/teams/:host'];
  const sendsOf = (w: World) => arrivedFor(w.hostname);

  it('02§6 samples over the threshold for the duration: one alert, in-app notifications for the right people only, a send on each enabled channel, the escalation after its delay', async () => {
    const w = await world('flow', 1);
    await reportCpu(w, 97);
    const alert = await raised(w);

    // In-app, at once: the partner administrator and the organization user; not the partner user without access.
    for (const who of [w.admin, w.orgUser]) {
      const mine = await until(() => who.json<any[]>(['notifications', 'list']), (n) => n.length > 0, 10_000);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ type: 'alert', priority: 'high', title: `${w.hostname}: CPU hot`, read: false });
    }
    expect(await w.outsider.json(['notifications', 'list'])).toEqual([]);
    expect(await w.outsider.json(['notifications', 'count'])).toEqual({ count: 0 });

    // One send on each of the six enabled channels, the disabled one untouched; then the escalation step (1 minute,
    // scaled) sends to the webhook channel once more, as alert.escalated, not before its delay.
    const sends = await until(async () => sendsOf(w), (s) => s.paths.length >= 6 && s.mails.length >= 1, MINUTE_MS + 30_000);
    expect(sends.paths).toEqual([...FIRST_SENDS, '/hook/:host'].sort());
    expect(sends.mails).toHaveLength(1);
    const hooks = sends.requests.filter((r) => r.path.startsWith('/hook/')).map((r) => ({ event: JSON.parse(r.body).event, at: arrivedAt.get(r) ?? 0 }));
    expect(hooks.map((h) => h.event).sort()).toEqual(['alert.escalated', 'alert.triggered']);
    const escalatedAt = hooks.find((h) => h.event === 'alert.escalated')?.at ?? 0;
    expect(escalatedAt).toBeGreaterThanOrEqual(Date.parse(alert.triggeredAt) + MINUTE_MS);
    const detail = await w.admin.json(['alerts', 'get', alert.id]);
    expect(detail.notifications.map((n: { channelName: string; status: string }) => `${n.channelName}:${n.status}`).sort()).toEqual(
      ['chat a:sent', 'chat b:sent', 'hook:sent', 'hook:sent', 'incident:sent', 'mail:sent', 'sms:sent'],
    );
  });

  it('02§3 acknowledging the alert (svc alerts ack) before the delay cancels its escalation', async () => {
    const w = await world('ack', 2);
    await reportCpu(w, 97);
    const alert = await raised(w);
    expect((await w.admin.json(['alerts', 'ack', alert.id])).status).toBe('acknowledged');
    // Well past the step's due time (2 minutes, scaled): the webhook channel got the first send only.
    const due = Date.parse(alert.triggeredAt) + 2 * MINUTE_MS;
    await sleep(Math.max(0, due - Date.now()) + 5000);
    const sends = sendsOf(w);
    expect(sends.paths).toEqual(FIRST_SENDS);
    expect(sends.requests.some((r) => r.body.includes('alert.escalated'))).toBe(false);
    expect((await w.admin.json(['alerts', 'get', alert.id])).notifications).toHaveLength(6);
  });

  it('02§3 the server stopped and started between trigger and escalation: the escalation fires once, nothing is sent or notified twice', async () => {
    const w = await world('restart', 2);
    await reportCpu(w, 97);
    const alert = await raised(w);
    const first = await until(async () => sendsOf(w), (s) => s.paths.length >= 5 && s.mails.length >= 1, 15_000);
    expect(first.paths).toEqual(FIRST_SENDS);
    const due = Date.parse(alert.triggeredAt) + 2 * MINUTE_MS;
    expect(Date.now(), 'the server must stop before the escalation is due').toBeLessThan(due);

    // Down across the due time: the escalation job waits in the database and runs when the server is back.
    await server.restart(async () => {
      await sleep(Math.max(0, due - Date.now()) + 1000);
      expect(sendsOf(w).paths, 'nothing escalates while the server is down').toEqual(FIRST_SENDS);
    });

    const escalated = await until(async () => sendsOf(w), (s) => s.paths.length >= 6, 30_000);
    expect(escalated.paths).toEqual([...FIRST_SENDS, '/hook/:host'].sort());
    // Time for a doubled escalation or repeated first sends to show up: none does.
    await sleep(3000);
    const after = sendsOf(w);
    expect(after.paths).toEqual([...FIRST_SENDS, '/hook/:host'].sort());
    expect(after.requests.filter((r) => r.body.includes('"event":"alert.escalated"'))).toHaveLength(1);
    expect(after.mails).toHaveLength(1);
    expect(await w.orgUser.json(['notifications', 'count'])).toEqual({ count: 1 });
    const detail = await w.admin.json(['alerts', 'get', alert.id]);
    expect(detail.status).toBe('active');
    expect(detail.notifications.map((n: { channelName: string; status: string }) => `${n.channelName}:${n.status}`).sort()).toEqual(
      ['chat a:sent', 'chat b:sent', 'hook:sent', 'hook:sent', 'incident:sent', 'mail:sent', 'sms:sent'],
    );
    expect(await w.admin.json(['alerts', 'list', '--org-id', w.tenant.orgId])).toHaveLength(1);
  });
});
