import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, type CliUser, E2E_TIMEOUT_MS, type E2eServer, startServer } from '../helpers/cli.js';
import { createTenant, invitePerson, turnOnMfa } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';

const CA = fileURLToPath(new URL('../fixtures/tls/receiver-cert.pem', import.meta.url));
const HOOK_PATH = '/services/T0/B0/e2e-hook-secret';

describe('e2e: svc integrations (02 §4.4; CLI.md "Secrets")', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let receiver: Receiver;
  let admin: CliUser;
  let orgId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startServer({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32', SVC_JOB_POLL_MS: '50', NODE_EXTRA_CA_CERTS: CA });
    const token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
    const tenant = await createTenant(server.url, token, 'integ');
    orgId = tenant.orgId;
    admin = (await invitePerson(server.url, token, tenant.partnerId)).cli;
  }, 120_000);
  afterAll(async () => {
    admin?.cleanup();
    await server?.stop();
    await receiver?.close();
  });

  it('02§4.4 chat update reads the webhook URL from stdin only, tests it, and get shows it masked', async () => {
    const argv = await admin.run(['integrations', 'chat', 'update', 'slack', '--org-id', orgId, '--webhook-url', `${receiver.url}${HOOK_PATH}`]);
    expect(argv.exitCode).toBe(2);
    const saved = await admin.json(['integrations', 'chat', 'update', 'slack', '--org-id', orgId, '--webhook-url-stdin', '--channel', '#ops', '--notify-on', 'critical,high', '--test'], {
      input: `${receiver.url}${HOOK_PATH}`,
    });
    expect(saved).toEqual({ success: true, message: 'Slack test notification queued.' });
    const [got] = await receiver.waitFor(1);
    expect(got?.path).toBe(HOOK_PATH);
    expect(JSON.parse(got?.body ?? '{}')).toMatchObject({ channel: '#ops' });
    const shown = await admin.json(['integrations', 'chat', 'get', '--org-id', orgId]);
    expect(shown.slack).toMatchObject({ webhookUrl: `${receiver.url}/********`, channel: '#ops', notifyOn: ['critical', 'high'] });
    // A change without a new URL keeps the stored one.
    const renamed = await admin.json(['integrations', 'chat', 'update', 'slack', '--org-id', orgId, '--channel', '#alerts']);
    expect(renamed.data.slack).toMatchObject({ webhookUrl: `${receiver.url}/********`, channel: '#alerts' });
  });

  it('02§4.4 monitoring update takes the API key from stdin; test calls the endpoint with it', async () => {
    const updated = await admin.json(['integrations', 'monitoring', 'update', '--org-id', orgId, '--endpoint', `${receiver.url}/metrics`, '--api-key-stdin', '--metrics-enabled'], {
      input: 'e2e-monitoring-key',
    });
    expect(updated).toEqual({ endpoint: `${receiver.url}/metrics`, apiKey: '********', metricsEnabled: true });
    const before = receiver.received.length;
    expect(await admin.json(['integrations', 'monitoring', 'test', '--org-id', orgId])).toEqual({ success: true, message: 'Connection successful.' });
    expect(receiver.received[before]?.headers.authorization).toBe('Bearer e2e-monitoring-key');
  });
});
