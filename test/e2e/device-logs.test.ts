import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, cliUser, E2E_TIMEOUT_MS, httpCaller, startServer, type CliUser, type E2eServer } from '../helpers/cli.js';
import { createTenant, turnOnMfa } from '../helpers/fixtures.js';
import { SimulatedAgent } from '../helpers/simulated-agent.js';

describe('e2e: svc devices diagnostic-logs and event-logs against a real server (03 §4.4, CLI.md)', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let cli: CliUser;
  let agent: SimulatedAgent;

  beforeAll(async () => {
    server = await startServer();
    const token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
    cli = cliUser({ SVC_TOKEN: token, SVC_BASE_URL: server.url });
    const { orgId } = await createTenant(server.url, token, 'logs');
    agent = await SimulatedAgent.enroll(httpCaller(server.url), token, orgId, { hostname: 'e2e-logs' });
    const logs = Array.from({ length: 5 }, (_, i) => ({
      timestamp: `2026-01-01T00:00:0${i}Z`,
      level: i % 2 === 0 ? 'info' : 'error',
      component: i < 3 ? 'heartbeat' : 'patching',
      message: `entry ${i}`,
    }));
    expect((await agent.sendLogs(logs)).status).toBe(201);
    const events = [
      { timestamp: '2026-01-01T00:00:00Z', level: 'error', category: 'system', source: 'disk', eventId: '7', message: 'bad block' },
      { timestamp: '2026-01-01T00:00:01Z', level: 'critical', category: 'security', source: 'auth', eventId: '4625', message: 'logon failure' },
      { timestamp: '2026-01-01T00:00:02Z', level: 'info', category: 'system', source: 'disk', eventId: '8', message: 'healthy' },
    ];
    expect((await agent.sendEvents(events)).body).toMatchObject({ success: true, count: 3 });
  }, E2E_TIMEOUT_MS);
  afterAll(async () => {
    cli.cleanup();
    await server.stop();
  });

  it('03§4.4 svc devices diagnostic-logs lists newest first with --level/--component filters; --all follows every page', async () => {
    const errors = await cli.json<{ message: string; level: string }[]>(['devices', 'diagnostic-logs', agent.deviceId, '--level', 'error']);
    expect(errors.map((l) => l.message)).toEqual(['entry 3', 'entry 1']);
    const patching = await cli.json<{ message: string }[]>(['devices', 'diagnostic-logs', agent.deviceId, '--component', 'patching', '--search', 'ENTRY 4']);
    expect(patching.map((l) => l.message)).toEqual(['entry 4']);
    const all = await cli.run(['devices', 'diagnostic-logs', agent.deviceId, '--all', '--limit', '2', '-o', 'jsonl']);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(all.stdout.trim().split('\n').map((line) => (JSON.parse(line) as { message: string }).message)).toEqual(['entry 4', 'entry 3', 'entry 2', 'entry 1', 'entry 0']);
    const bad = await cli.run(['devices', 'diagnostic-logs', agent.deviceId, '--since', 'soon']);
    expect(bad.exitCode).toBe(2); // VALIDATION_ERROR: the input itself (CLI.md exit codes)
    expect(bad.stderr).toContain('Invalid since date');
  });

  it('03§4.4 svc devices event-logs lists newest first with --category/--source filters, as CSV with --columns', async () => {
    const disk = await cli.json<{ message: string; eventId: string }[]>(['devices', 'event-logs', agent.deviceId, '--category', 'system', '--source', 'disk']);
    expect(disk.map((e) => e.message)).toEqual(['healthy', 'bad block']);
    const csv = await cli.run(['devices', 'event-logs', agent.deviceId, '--all', '-o', 'csv', '--columns', 'eventId,level']);
    expect(csv.exitCode, csv.stderr).toBe(0);
    expect(csv.stdout.trim().split('\n')).toEqual(['eventId,level', '8,info', '4625,critical', '7,error']);
    const missing = await cli.run(['devices', 'event-logs', '00000000-0000-4000-8000-000000000000']);
    expect(missing.exitCode).toBe(5);
  });
});
