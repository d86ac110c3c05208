import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliUser, E2E_TIMEOUT_MS } from '../helpers/cli.js';
import { outboundTenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/https-receiver.js';

const HOOK_PATH = '/services/T0/B0/e2e-hook-secret';

describe('e2e: svc integrations (02 §4.4; CLI.md "Secrets")', { timeout: E2E_TIMEOUT_MS }, () => {
  const tenant = outboundTenant('integ');
  let receiver: Receiver;
  let admin: CliUser;
  let orgId: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    admin = tenant.admin;
    orgId = tenant.orgId;
  });
  afterAll(async () => {
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
