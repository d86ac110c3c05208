import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cliUser, E2E_TIMEOUT_MS, type CliUser } from '../helpers/cli.js';
import { DEVICE_ID, startHostedDouble, type HostedDouble } from '../helpers/hosted-double.js';

/** Issue 15 items 1-7: the CLI's main commands against a double of the hosted deployment. */
describe('svc against a hosted deployment (issue 15)', { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  let double: HostedDouble;
  let user: CliUser;

  beforeEach(async () => {
    double = await startHostedDouble();
    user = cliUser();
  });
  afterEach(async () => {
    user.cleanup();
    await double.close();
  });

  const signIn = async () => {
    const result = await user.run(['login', '--base-url', double.url, '--email', double.email, '--password-stdin', '--storage', 'file'], { input: double.password });
    expect(result.exitCode, result.stderr).toBe(0);
  };
  const credentials = () => JSON.parse(fs.readFileSync(path.join(user.configDir, 'svc', 'credentials.json'), 'utf8')) as Record<string, string>;

  it('issue 15 §1 login keeps the branded session cookies (0600 file), whoami works, and an expired token is refreshed through them', async () => {
    await signIn();
    const file = path.join(user.configDir, 'svc', 'credentials.json');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(credentials()['default:sessionCookies'] ?? '{}') as Record<string, string>;
    expect(stored.prefix).toBe('acme');
    expect(stored.refreshToken).toBeTruthy();
    expect(stored.csrfToken).toBeTruthy();
    expect(credentials()['default:refreshToken']).toBeUndefined();

    expect((await user.json(['whoami'])).email).toBe(double.email);
    double.expireAccessTokens();
    const me = await user.json(['whoami']);
    expect(me.email).toBe(double.email);
    expect(double.refreshes).toBe(1);
    // The rotated cookies were stored: a second expiry refreshes again.
    double.expireAccessTokens();
    expect((await user.json(['whoami'])).email).toBe(double.email);
    expect(double.refreshes).toBe(2);
  });

  it('issue 15 §2 mfa setup and enable send the password of --password-stdin; without it and without a terminal, exit 2 naming the flag', async () => {
    await signIn();
    const refused = await user.run(['mfa', 'setup', '-o', 'json']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--password-stdin');
    const wrong = await user.run(['mfa', 'setup', '--password-stdin', '-o', 'json'], { input: 'not-the-password' });
    expect(wrong.exitCode).toBe(3);
    const setup = await user.json(['mfa', 'setup', '--password-stdin'], { input: double.password });
    expect(setup.secret).toBeTruthy();
    const enabled = await user.json(['mfa', 'enable', '--code', '123456', '--password-stdin'], { input: double.password });
    expect(enabled.user.mfaEnabled).toBe(true);
    // The new session's cookies replaced the old: a refresh after expiry still works.
    double.expireAccessTokens();
    expect((await user.json(['whoami'])).mfaEnabled).toBe(true);
  });

  it('issue 15 §3 access-reviews create --due-date 2026-12-31 sends the start of that day in UTC', async () => {
    await signIn();
    const review = await user.json(['access-reviews', 'create', '--name', 'Q4', '--due-date', '2026-12-31']);
    expect(review.dueDate).toBe('2026-12-31T00:00:00.000Z');
    expect(double.reviews[0]?.dueDate).toBe('2026-12-31T00:00:00.000Z');
    const impossible = await user.run(['access-reviews', 'create', '--name', 'Q4', '--due-date', '2026-02-30']);
    expect(impossible.exitCode).toBe(2);
  });

  it('issue 15 §4 the get commands fall back to the list; a route the deployment lacks is told apart from a missing record', async () => {
    await signIn();
    const rule = await user.run(['pam', 'rules', 'get', '7d41a0c2-1b3d-4e5f-8a9b-0c1d2e3f4a5b', '-o', 'json']);
    expect(rule.exitCode, rule.stderr).toBe(0);
    expect(JSON.parse(rule.stdout).name).toBe('Allow installers');
    expect(rule.stderr).toContain('no route');
    const group = await user.json(['pam', 'signer-groups', 'get', '4e8b1c2d-3e4f-4a5b-8c9d-0e1f2a3b4c5d']);
    expect(group.name).toBe('Vendors');
    const request = await user.json(['pam', 'requests', 'get', '2a7c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e']);
    expect(request.status).toBe('pending');
    // A partner caller names the organization whose list is searched (a hosted list needs it from them).
    const orgId = '9c0d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f';
    expect((await user.json(['pam', 'signer-groups', 'get', '4e8b1c2d-3e4f-4a5b-8c9d-0e1f2a3b4c5d', '--org-id', orgId])).name).toBe('Vendors');
    expect((await user.json(['pam', 'requests', 'get', '2a7c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e', '--org-id', orgId])).status).toBe('pending');
    expect(double.urls).toContain(`GET /api/v1/pam/signer-groups?orgId=${orgId}`);
    expect(double.urls).toContain(`GET /api/v1/pam/elevation-requests?orgId=${orgId}&page=1&limit=100`);
    const missing = await user.run(['pam', 'rules', 'get', '00000000-0000-4000-8000-000000000000']);
    expect(missing.exitCode).toBe(5);
    const verify = await user.run(['audit', 'verify']);
    expect(verify.exitCode).toBe(5);
    expect(verify.stderr).toContain('ROUTE_NOT_FOUND');
    expect(verify.stderr).toContain('/api/v1/audit-logs/verify');
    expect(verify.stderr).toContain('older than this feature');
  });

  it('issue 15 §5 audit export --format jsonl converts the CSV-only answer, filters on the client and says it was capped (exit 9 unless --allow-incomplete)', async () => {
    await signIn();
    const out = path.join(user.home, 'audit.jsonl');
    const capped = await user.run(['audit', 'export', '--format', 'jsonl', '--action', 'site.create', '--out', out]);
    // CLI.md exit 9: a capped answer is an incomplete result; the rows written are kept.
    expect(capped.exitCode, capped.stderr).toBe(9);
    expect(fs.existsSync(out)).toBe(true);
    const result = await user.run(['audit', 'export', '--format', 'jsonl', '--action', 'site.create', '--out', out, '--force', '--allow-incomplete']);
    expect(result.exitCode, result.stderr).toBe(0);
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n');
    const rows = lines.map((line) => JSON.parse(line) as { action: string });
    expect(rows.length).toBeGreaterThan(3000);
    expect(rows.every((row) => row.action === 'site.create')).toBe(true);
    expect(result.stderr).toContain('converting');
    expect(result.stderr).toContain('capped at 10,000 rows');
    expect(result.stderr).toMatch(/outside the filters/);
  });

  it('05 4.3 software inventory of the current build (flat rows, not device entries) is shown as it is, in JSON and as a table; its moved uninstall route is named', async () => {
    await signIn();
    const one = await user.run(['software', 'inventory', 'get', DEVICE_ID, '-o', 'csv', '--columns', 'name,version']);
    expect(one.exitCode, one.stderr).toBe(0);
    expect(one.stdout.trim().split('\n')).toEqual(['name,version', '7-Zip,23.01']);
    const all = await user.run(['software', 'inventory', 'list', '-o', 'csv', '--columns', 'deviceId,name']);
    expect(all.exitCode, all.stderr).toBe(0);
    expect(all.stdout.trim().split('\n')).toEqual(['deviceId,name', `${DEVICE_ID},7-Zip`]);
    // The current build moved uninstall to a route whose body the notes do not show: svc says so and what works.
    const uninstall = await user.run(['software', 'inventory', 'uninstall', DEVICE_ID, '5f2e3d4c-1b0a-4f9e-8d7c-6b5a4f3e2d1c', '--requested-by', 'ops', '--yes']);
    expect(uninstall.exitCode).toBe(5);
    expect(uninstall.stdout).toBe('');
    expect(uninstall.stderr).toContain('ROUTE_NOT_FOUND');
    expect(uninstall.stderr).toContain('POST /devices/:id/software/uninstall');
    expect(uninstall.stderr).toContain('svc software deployments create --software-id <catalogId> --action uninstall');
  });

  it('issue 15 §6 a 401 to an API key hints that the deployment may not accept keys on that route', async () => {
    const env = { SVC_API_KEY: double.apiKey, SVC_BASE_URL: double.url };
    expect((await user.run(['whoami', '-o', 'json'], { env })).exitCode).toBe(0);
    const refused = await user.run(['users', 'me', '-o', 'json'], { env });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain('may not accept API keys on this route');
  });
});
