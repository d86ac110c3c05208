import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS } from '../helpers/cli.js';
import { outboundTenantWith } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/https-receiver.js';

const HOOK_PATH = '/services/T0/B0/e2e-hook-secret';

describe('e2e: svc integrations (02 §4.4; CLI.md "Secrets")', { timeout: E2E_TIMEOUT_MS }, () => {
  const tenant = outboundTenantWith('integ', startReceiver);

  it('02§4.4 chat update reads the webhook URL from stdin only, tests it, and get shows it masked', async () => {
    const argv = await tenant.admin.run(['integrations', 'chat', 'update', 'slack', '--org-id', tenant.orgId, '--webhook-url', `${tenant.peer.url}${HOOK_PATH}`]);
    expect(argv.exitCode).toBe(2);
    const saved = await tenant.admin.json(['integrations', 'chat', 'update', 'slack', '--org-id', tenant.orgId, '--webhook-url-stdin', '--channel', '#ops', '--notify-on', 'critical,high', '--test'], {
      input: `${tenant.peer.url}${HOOK_PATH}`,
    });
    expect(saved).toEqual({ success: true, message: 'Slack test notification queued.' });
    const [got] = await tenant.peer.waitFor(1);
    expect(got?.path).toBe(HOOK_PATH);
    expect(JSON.parse(got?.body ?? '{}')).toMatchObject({ channel: '#ops' });
    const shown = await tenant.admin.json(['integrations', 'chat', 'get', '--org-id', tenant.orgId]);
    expect(shown.slack).toMatchObject({ webhookUrl: `${tenant.peer.url}/********`, channel: '#ops', notifyOn: ['critical', 'high'] });
    // A change without a new URL keeps the stored one.
    const renamed = await tenant.admin.json(['integrations', 'chat', 'update', 'slack', '--org-id', tenant.orgId, '--channel', '#alerts']);
    expect(renamed.data.slack).toMatchObject({ webhookUrl: `${tenant.peer.url}/********`, channel: '#alerts' });
  });

  it('02§4.4 monitoring update takes the API key from stdin; test calls the endpoint with it', async () => {
    const updated = await tenant.admin.json(['integrations', 'monitoring', 'update', '--org-id', tenant.orgId, '--endpoint', `${tenant.peer.url}/metrics`, '--api-key-stdin', '--metrics-enabled'], {
      input: 'e2e-monitoring-key',
    });
    expect(updated).toEqual({ endpoint: `${tenant.peer.url}/metrics`, apiKey: '********', metricsEnabled: true });
    const before = tenant.peer.received.length;
    expect(await tenant.admin.json(['integrations', 'monitoring', 'test', '--org-id', tenant.orgId])).toEqual({ success: true, message: 'Connection successful.' });
    expect(tenant.peer.received[before]?.headers.authorization).toBe('Bearer e2e-monitoring-key');
  });
});
