import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, type CliUser, E2E_TIMEOUT_MS, type E2eServer, http, startServer } from '../helpers/cli.js';
import { createTenant, enroll, invitePerson, ok, turnOnMfa } from '../helpers/fixtures.js';

const CPU_HIGH = '00000000-0000-4000-a000-000000000001';

describe('e2e: alerts through the CLI (02 §3, §4.1)', { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  let server: E2eServer;
  let token: string;
  const made: CliUser[] = [];
  beforeAll(async () => {
    server = await startServer();
    token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
  });
  afterAll(async () => {
    for (const user of made) user.cleanup();
    await server?.stop();
  });

  it('02§3 CPU above the threshold for the duration raises one alert, which the CLI lists and acknowledges', async () => {
    const tenant = await createTenant(server.url, token, 'alerts');
    const person = await invitePerson(server.url, token, tenant.partnerId);
    made.push(person.cli);
    const cli = person.cli;
    const rule = await cli.json(['alerts', 'rules', 'create', '--template-id', CPU_HIGH, '--name', 'CPU fleet', '--org-id', tenant.orgId]);
    expect(rule).toMatchObject({ templateName: 'CPU High', severity: 'high', cooldownMinutes: 15 });
    const templates = await cli.json(['alerts', 'templates', 'list', '--built-in']);
    expect(templates).toHaveLength(5);

    const key = await ok<{ key: string }>(http(server.url, 'POST', '/enrollment-keys', { token: person.token, body: { orgId: tenant.orgId, name: 'fleet' } }), 'enrollment key');
    const agent = await ok<{ agentId: string; authToken: string }>(enroll(server.url, key.key, 'e2e-web-1'), 'enroll');
    const now = Date.now();
    const samples = [];
    for (let at = now - 7 * 60_000; at <= now; at += 30_000) samples.push({ metric: 'cpu.usage', value: 97, timestamp: new Date(at).toISOString() });
    await ok(http(server.url, 'POST', `/agents/${agent.agentId}/metrics`, { token: agent.authToken, body: { samples } }), 'metrics');

    // The server's evaluator runs every 30 s: wait for its next run.
    let alerts: any[] = [];
    for (let i = 0; i < 40 && alerts.length === 0; i++) {
      alerts = await cli.json(['alerts', 'list', '--status', 'active']);
      if (alerts.length === 0) await new Promise((resolve) => setTimeout(resolve, 1500));
    }
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ severity: 'high', ruleId: rule.id, deviceHostname: 'e2e-web-1', status: 'active' });

    const acked = await cli.json(['alerts', 'ack', alerts[0].id]);
    expect(acked).toMatchObject({ id: alerts[0].id, status: 'acknowledged' });
    const again = await cli.run(['alerts', 'ack', alerts[0].id]);
    expect(again.exitCode).toBe(6);
    expect(again.stderr).toContain('Cannot acknowledge alert with status: acknowledged');
    const summary = await cli.json(['alerts', 'summary', '--org-id', tenant.orgId]);
    expect(summary.byStatus).toMatchObject({ acknowledged: 1, active: 0 });
  });
});
