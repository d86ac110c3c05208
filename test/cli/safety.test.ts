import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliUser, E2E_TIMEOUT_MS, ROOT } from '../helpers/cli.js';

/**
 * CLI.md "Safety" and "Connection and credentials", checked on the built CLI with no server: credentials from the
 * environment and a base URL where nothing listens, so a command that sent a request would fail with exit 8, not
 * with the usage error (exit 2) these rules give before any request.
 */
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, { args: Record<string, { required?: boolean }>; flags: Record<string, { required?: boolean; type: string; options?: string[] }> }>;
};

/** CLI.md: "Destructive verbs (`delete`, `revoke`, `rotate`, `remove`, `complete`, `decommission`)". */
const DESTRUCTIVE = /^(delete|revoke|rotate|rotate-secret|remove|complete|decommission)$/;
const NOWHERE = 'http://127.0.0.1:9';

const user = cliUser({ SVC_TOKEN: 'not-a-real-token', SVC_BASE_URL: NOWHERE });
afterAll(() => user.cleanup());

/** A command line that names every required argument and flag with a placeholder value. */
function argvOf(id: string): string[] {
  const { args = {}, flags = {} } = manifest.commands[id] ?? {};
  const argv = [...id.split(':'), ...Object.keys(args).map(() => '0f3c0000-0000-7000-8000-000000000000')];
  for (const [name, flag] of Object.entries(flags)) {
    if (!flag.required) continue;
    argv.push(`--${name}`, ...(flag.type === 'boolean' ? [] : [flag.options?.[0] ?? 'x']));
  }
  return argv;
}

describe('CLI.md "Safety": destructive verbs refuse without a terminal and without --yes', { timeout: E2E_TIMEOUT_MS }, () => {
  // profiles remove deletes local state only, and with no such profile refuses for that first: test/e2e/auth.test.ts.
  const destructive = Object.keys(manifest.commands).filter((id) => id !== 'profiles:remove' && DESTRUCTIVE.test(id.split(':').at(-1) ?? ''));

  it('the list is found from the manifest (a new destructive command joins by its verb)', () => {
    expect(destructive).toEqual(expect.arrayContaining(['orgs:delete', 'api-keys:rotate', 'groups:remove', 'notifications:delete', 'webhooks:rotate-secret']));
  });

  it('each refuses with exit 2 before any request (stdin is no terminal)', async () => {
    const wrong: string[] = [];
    for (const id of destructive) {
      const result = await user.run(argvOf(id));
      if (result.exitCode !== 2 || !result.stderr.includes('Refusing without --yes'))
        wrong.push(`${id}: exit ${result.exitCode}: ${result.stderr.trim().split('\n')[0] ?? ''}`);
    }
    expect(wrong).toEqual([]);
  });

  it('a refused rotate-secret reads nothing of the secret piped to it', async () => {
    const result = await user.run(['webhooks', 'rotate-secret', '0f3c0000-0000-7000-8000-000000000000', '--secret-stdin'], { input: 'piped-secret' });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('Refusing without --yes');
    expect(result.stderr + result.stdout).not.toContain('piped-secret');
  });
});

describe('CLI.md "Safety": "Every mutating command accepts --yes, so scripts can pass it uniformly"', { timeout: E2E_TIMEOUT_MS }, () => {
  it('every command that sends a change (it offers --dry-run), every server operation but start and status, and logout', async () => {
    const mutating = Object.entries(manifest.commands)
      .filter(([id, command]) => 'dry-run' in command.flags || (id.startsWith('server:') && !['server:start', 'server:status'].includes(id)) || id === 'logout')
      .map(([id]) => id);
    expect(mutating).toEqual(expect.arrayContaining(['orgs:create', 'server:restore', 'logout']));
    expect(mutating.filter((id) => !('yes' in (manifest.commands[id]?.flags ?? {})))).toEqual([]);
    const logout = await user.run(['logout', '--yes']);
    expect(logout.exitCode, logout.stderr).toBe(0);
  });
});

describe('CLI.md "Connection and credentials": with SVC_API_KEY or SVC_TOKEN set, nothing is read from or written to disk', { timeout: E2E_TIMEOUT_MS }, () => {
  it.each(['SVC_API_KEY', 'SVC_TOKEN'])('svc login refuses while %s is set (exit 2), and writes no profile or secret', async (variable) => {
    const env = { SVC_TOKEN: '', SVC_API_KEY: '', [variable]: 'from-the-environment' };
    const result = await user.run(['login', '--api-key-stdin', '--storage', 'file'], { input: 'a-key-to-save', env });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain(`${variable} is set`);
    expect(fs.existsSync(path.join(user.configDir, 'svc'))).toBe(false);
  });
});

describe('CLI.md "Scripting conveniences": --dry-run prints the body with secrets redacted', { timeout: E2E_TIMEOUT_MS }, () => {
  const ORG = '0f3c0000-0000-7000-8000-000000000001';

  it('svc api: fields named like secrets are redacted, as are the credential headers', async () => {
    const result = await user.run(['api', 'POST', '/auth/login', '-f', 'email=a@b.test', '-f', 'password=hunter2-secret', '-H', 'X-Api-Key: header-secret', '-H', 'Idempotency-Key: shown', '--dry-run']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(/hunter2-secret|header-secret/);
    expect(JSON.parse(result.stdout)).toMatchObject({ body: { email: 'a@b.test', password: '[redacted]' }, headers: { 'x-api-key': '[redacted]', 'idempotency-key': 'shown' } });
  });

  it("a secret read from stdin is redacted wherever it lands; a custom header keeps its name and loses a credential's value", async () => {
    const webhook = await user.run(
      ['webhooks', 'create', '--org-id', ORG, '--name', 'n', '--url', 'https://example.test/hook', '--events', '*', '--secret-stdin', '--header', 'Authorization: Bearer header-token', '--header', 'X-Team: ops', '--dry-run'],
      { input: 'signing-secret-123456' },
    );
    expect(webhook.exitCode, webhook.stderr).toBe(0);
    expect(webhook.stdout).not.toMatch(/signing-secret-123456|header-token/);
    expect(JSON.parse(webhook.stdout).body.headers).toEqual([
      { key: 'Authorization', value: '[redacted]' },
      { key: 'X-Team', value: 'ops' },
    ]);

    const chat = await user.run(['integrations', 'chat', 'update', 'slack', '--org-id', ORG, '--webhook-url-stdin', '--dry-run'], { input: 'https://hooks.slack.test/services/T0/B0/SECRETXYZ' });
    expect(chat.exitCode, chat.stderr).toBe(0);
    expect(chat.stdout).not.toContain('SECRETXYZ');
    expect(chat.stdout).toContain('[redacted]');
    expect(JSON.parse(chat.stdout).url).toBe(`${NOWHERE}/api/v1/integrations/slack?orgId=${ORG}`);
    // Without the query's one value, no query at all (not a bare `?`).
    const own = await user.run(['integrations', 'chat', 'update', 'slack', '--webhook-url-stdin', '--dry-run'], { input: 'https://hooks.slack.test/x' });
    expect(own.exitCode, own.stderr).toBe(0);
    expect(JSON.parse(own.stdout).url).toBe(`${NOWHERE}/api/v1/integrations/slack`);
  });
});
