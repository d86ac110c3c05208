import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, BIN, E2E_TIMEOUT_MS, type E2eServer, http, startServer } from '../helpers/cli.js';
import { createTenant, enroll, invitePerson, ok, turnOnMfa } from '../helpers/fixtures.js';

const CPU_HIGH = '00000000-0000-4000-a000-000000000001';

describe('e2e: svc alerts watch (issue 11 CLI)', { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  let server: E2eServer;
  let token: string;
  beforeAll(async () => {
    server = await startServer();
    token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('CLI.md watch -o jsonl prints a line per new and changed alert as it happens; Ctrl-C ends it with exit 130', async () => {
    const tenant = await createTenant(server.url, token, 'watch');
    const person = await invitePerson(server.url, token, tenant.partnerId);
    try {
      const rule = await ok<{ data: { id: string } }>(
        http(server.url, 'POST', '/alert-templates/rules', {
          token: person.token,
          body: { templateId: CPU_HIGH, name: 'CPU now', orgId: tenant.orgId, conditions: { metric: 'cpu.usage', operator: '>', threshold: 90, durationMinutes: 0 } },
        }),
        'rule',
      );
      const key = await ok<{ key: string }>(http(server.url, 'POST', '/enrollment-keys', { token: person.token, body: { orgId: tenant.orgId, name: 'watch' } }), 'enrollment key');
      const agent = await ok<{ agentId: string; authToken: string }>(enroll(server.url, key.key, 'e2e-watch-1'), 'enroll');

      const watch = execa('node', [BIN, 'alerts', 'watch', '-o', 'jsonl', '--interval', '1'], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', HOME: person.cli.home, XDG_CONFIG_HOME: person.cli.configDir, CI: '1', SVC_TOKEN: person.token, SVC_BASE_URL: server.url },
        extendEnv: false,
        reject: false,
        stdin: 'ignore',
        cwd: person.cli.home,
        timeout: 60_000,
      });
      const lines: any[] = [];
      let buffered = '';
      watch.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const parts = buffered.split('\n');
        buffered = parts.pop() ?? '';
        for (const line of parts) if (line.trim()) lines.push(JSON.parse(line));
      });
      const waitFor = async (what: string, test: () => boolean) => {
        for (let i = 0; i < 100 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 200));
        expect(test(), what).toBe(true);
      };
      // Let the watch take its starting point before anything happens.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      await ok(http(server.url, 'POST', `/agents/${agent.agentId}/metrics`, { token: agent.authToken, body: { samples: [{ metric: 'cpu.usage', value: 98 }] } }), 'metrics');
      await waitFor('a line for the new alert', () => lines.some((l) => l.status === 'active'));
      const raised = lines.find((l) => l.status === 'active');
      expect(raised).toMatchObject({ ruleId: rule.data.id, severity: 'high', deviceHostname: 'e2e-watch-1', title: 'e2e-watch-1: CPU now' });

      await ok(http(server.url, 'POST', `/alerts/${raised.id}/acknowledge`, { token: person.token }), 'acknowledge');
      await waitFor('a line for the acknowledgement', () => lines.some((l) => l.id === raised.id && l.status === 'acknowledged'));
      // One line per change: the new alert once, the acknowledgement once.
      expect(lines.map((l) => `${l.id}:${l.status}`)).toEqual([`${raised.id}:active`, `${raised.id}:acknowledged`]);

      watch.kill('SIGINT');
      const result = await watch;
      expect(result.exitCode).toBe(130);
    } finally {
      person.cli.cleanup();
    }
  });
});
