import { describe, expect, it } from 'vitest';
import { cliUser, type CliUser, E2E_TIMEOUT_MS, filesUnder, http, type RunResult } from '../helpers/cli.js';
import { createTenant, enroll, invitePerson, ok, type Person, sharedServer, type Tenant } from '../helpers/fixtures.js';
import { totp } from '../helpers/totp.js';

const API_KEY = /^svc_[A-Za-z0-9_-]{32}$/;
const ENROLLMENT_KEY = /^[0-9a-f]{64}$/;

/** A `create -q` answer: exit 0, only the new key on stdout (returned), the shown-once warning on stderr. */
function shownOnce(created: RunResult, key: RegExp): string {
  expect(created.exitCode).toBe(0);
  expect(created.stdout).toMatch(key);
  expect(created.stderr).toContain('will not be shown again');
  return created.stdout.trim();
}

describe(
  'e2e: API keys, enrollment keys and devices (01 §4.1, §4.2; CLI.md "Output", "Safety")',
  { timeout: E2E_TIMEOUT_MS },
  () => {
    const shared = sharedServer();
    /** A CLI user with nothing on disk, for credentials from the environment. */
    const stranger = () => shared.track(cliUser());
    /** Each test's own tenant and its Partner Admin (MFA on), whose CLI carries the session in SVC_TOKEN. */
    const world = async (): Promise<Tenant & { person: Person; admin: CliUser }> => {
      const tenant = await createTenant(shared.url, shared.token, 'keys');
      const person = await invitePerson(shared.url, shared.token, tenant.partnerId);
      shared.track(person.cli);
      return { ...tenant, person, admin: person.cli };
    };
    /** An API key of the tenant's organization, created over HTTP. */
    const apiKey = async (w: Tenant & { person: Person }, scopes = ['sites:read']) => {
      const created = await ok<{ id: string; key: string }>(
        http(shared.url, 'POST', '/api-keys', { token: w.person.token, body: { orgId: w.orgId, name: 'CI pipeline', scopes } }),
        'create API key',
      );
      return { keyId: created.id, key: created.key };
    };
    const withKey = (apiKeyValue: string) => ({ env: { SVC_API_KEY: apiKeyValue, SVC_BASE_URL: shared.url } });

    it('01§4.1 api-keys create -q prints only the key; the shown-once warning goes to stderr', async () => {
      const { admin, orgId } = await world();
      const created = await admin.run(['api-keys', 'create', '--org-id', orgId, '--name', 'CI pipeline', '--scopes', 'sites:read', '--quiet']);
      expect(created.stderr).toContain('It will not be shown again');
      const key = shownOnce(created, API_KEY);
      const listed = await admin.json(['api-keys', 'list', '--org-id', orgId]);
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        name: 'CI pipeline',
        scopes: ['sites:read'],
        status: 'active',
        keyPrefix: key.slice(0, 12),
      });
      expect(JSON.stringify(listed)).not.toContain(key);
    });

    it('CLI.md credentials: SVC_API_KEY works for svc sites list, and nothing is written to disk', async () => {
      const w = await world();
      const { key } = await apiKey(w);
      const user = stranger();
      const sites = await user.run(['sites', 'list'], withKey(key));
      expect(sites.exitCode).toBe(0);
      expect(JSON.parse(sites.stdout).map((s: { id: string }) => s.id)).toEqual([w.siteId]);
      expect(filesUnder(user.home)).toEqual([]);
    });

    it('01§4.1 rotate --yes -q prints exactly one line, the new key; the old key is refused at once (exit 3)', async () => {
      const w = await world();
      const { keyId, key } = await apiKey(w);
      const rotated = await w.admin.run(['api-keys', 'rotate', keyId, '--yes', '-q']);
      expect(rotated.exitCode).toBe(0);
      // (execa drops the final newline.)
      const lines = rotated.stdout.split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(API_KEY);
      expect(lines[0]).not.toBe(key);
      expect(rotated.stderr).toContain('It will not be shown again');
      const [old, current] = await Promise.all([
        stranger().run(['sites', 'list'], withKey(key)),
        stranger().run(['sites', 'list'], withKey(lines[0] ?? '')),
      ]);
      expect(old.exitCode).toBe(3);
      expect(current.exitCode).toBe(0);
    });

    it('01§4.1 rotate -o json prints the whole answer: metadata, key and warning', async () => {
      const w = await world();
      const { keyId, key } = await apiKey(w);
      const result = await w.admin.run(['api-keys', 'rotate', keyId, '--yes', '--output', 'json']);
      expect(result.exitCode).toBe(0);
      const body = JSON.parse(result.stdout);
      expect(body).toMatchObject({
        id: keyId,
        orgId: w.orgId,
        name: 'CI pipeline',
        scopes: ['sites:read'],
        status: 'active',
        warning: expect.stringContaining('not be shown again'),
      });
      expect(body.key).toMatch(API_KEY);
      expect(body.key).not.toBe(key);
    });

    it('CLI.md safety: rotate and revoke refuse without --yes off a terminal (exit 2), and change nothing', async () => {
      const w = await world();
      const { keyId, key } = await apiKey(w);
      const [rotate, revoke] = await Promise.all([
        w.admin.run(['api-keys', 'rotate', keyId]),
        w.admin.run(['api-keys', 'revoke', keyId]),
      ]);
      for (const result of [rotate, revoke]) {
        expect(result.exitCode).toBe(2);
        expect(result.stderr).toContain('--yes');
        expect(result.stdout).toBe('');
      }
      expect((await stranger().run(['sites', 'list'], withKey(key))).exitCode).toBe(0);
    });

    it('01§4.1 update, get, --dry-run create, and key management refused to an API key (exit 4)', async () => {
      const w = await world();
      const { admin, orgId } = w;
      const { keyId, key } = await apiKey(w);
      const updated = await admin.json([
        'api-keys',
        'update',
        keyId,
        '--name',
        'CI (prod)',
        '--scopes',
        'sites:read,devices:read',
        '--rate-limit',
        '5000',
      ]);
      expect(updated).toMatchObject({ name: 'CI (prod)', scopes: ['sites:read', 'devices:read'], rateLimit: 5000 });
      expect(await admin.json(['api-keys', 'get', keyId])).toMatchObject(updated);
      const dry = await admin.json(['api-keys', 'create', '--org-id', orgId, '--name', 'dry', '--dry-run']);
      expect(dry).toMatchObject({
        dryRun: true,
        method: 'POST',
        url: `${shared.url}/api/v1/api-keys`,
        body: { orgId, name: 'dry' },
      });
      expect(await admin.json(['api-keys', 'list', '--org-id', orgId])).toHaveLength(1);
      const bad = await admin.run([
        'api-keys',
        'create',
        '--org-id',
        orgId,
        '--name',
        'x',
        '--scopes',
        'Not A Scope',
        '--dry-run',
      ]);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain('--scopes');
      const byKey = await stranger().run(['api-keys', 'list'], withKey(key));
      expect(byKey.exitCode).toBe(4);
      expect(byKey.stderr).toContain('SESSION_REQUIRED');
    });

    it('README "Rotating keys in CI": sign in with SVC_BASE_URL only, rotate with SVC_TOKEN, nothing on disk', async () => {
      const w = await world();
      const { keyId } = await apiKey(w);
      const ci = stranger();
      const env = { SVC_BASE_URL: shared.url };
      const signIn = await ci.run(['api', 'POST', '/auth/login', '--input', '-'], {
        env,
        input: JSON.stringify({ email: w.person.email, password: w.person.password }),
      });
      expect(signIn.exitCode).toBe(0);
      const { tempToken } = JSON.parse(signIn.stdout);
      // The setup's MFA enable took this period's code: the next one.
      const verified = await ci.run(['api', 'POST', '/auth/mfa/verify', '--input', '-'], {
        env,
        input: JSON.stringify({ tempToken, code: totp(w.person.secret, 1) }),
      });
      expect(verified.exitCode).toBe(0);
      const sessionToken: string = JSON.parse(verified.stdout).tokens.accessToken;
      const rotated = await ci.run(['api-keys', 'rotate', keyId, '--yes', '-q'], {
        env: { ...env, SVC_TOKEN: sessionToken },
      });
      expect(rotated.exitCode).toBe(0);
      expect(rotated.stdout).toMatch(API_KEY);
      expect(filesUnder(ci.home)).toEqual([]);
    });

    it('01§4.1 revoke --yes: the key stops working (exit 3) and shows as revoked; -q prints its id', async () => {
      const w = await world();
      const { keyId, key } = await apiKey(w);
      const revoked = await w.admin.run(['api-keys', 'revoke', keyId, '--yes', '-q']);
      expect(revoked.exitCode).toBe(0);
      expect(revoked.stdout).toBe(keyId);
      expect((await stranger().run(['sites', 'list'], withKey(key))).exitCode).toBe(3);
      expect(await w.admin.json(['api-keys', 'list', '--status', 'revoked'])).toMatchObject([
        { id: keyId, status: 'revoked' },
      ]);
    });

    it('01§4.2 enrollment key → an agent enrolls over HTTP → devices list shows it → decommission --yes', async () => {
      const { admin, orgId, siteId } = await world();
      const rollout = ['--org-id', orgId, '--site-id', siteId, '--name', 'rollout', '--max-usage', '5', '--ttl-minutes', '30'];
      const enrollmentKey = shownOnce(await admin.run(['enrollment-keys', 'create', ...rollout, '-q']), ENROLLMENT_KEY);

      const enrolled = await enroll(shared.url, enrollmentKey, 'web-01');
      expect(enrolled.status).toBe(201);
      const deviceId: string = enrolled.body.deviceId;

      const [devices, one, table] = await Promise.all([
        admin.json(['devices', 'list', '--org-id', orgId]),
        admin.json(['devices', 'get', deviceId]),
        admin.run(['devices', 'list', '--search', 'web', '--output', 'table']),
      ]);
      expect(devices).toMatchObject([{ id: deviceId, hostname: 'web-01', orgId, siteId, status: 'online' }]);
      // 05 wire notes "4.7": the detail is the list row with the full hardware, interfaces, metrics and names.
      const { hardware: _summary, ...row } = devices[0];
      expect(one).toMatchObject({ ...row, networkInterfaces: [], recentMetrics: [], groups: [], siteName: expect.any(String), orgName: expect.any(String) });
      expect(table.stdout.split('\n')[0]?.split(/\s+/)).toEqual([
        'id',
        'hostname',
        'orgId',
        'siteId',
        'osType',
        'status',
        'agentVersion',
        'lastSeenAt',
      ]);

      const refused = await admin.run(['devices', 'decommission', deviceId]);
      expect(refused.exitCode).toBe(2);
      const decommissioned = await admin.run(['devices', 'decommission', deviceId, '--yes', '--output', 'json']);
      expect(decommissioned.exitCode).toBe(0);
      expect(JSON.parse(decommissioned.stdout)).toMatchObject({
        success: true,
        device: { id: deviceId, status: 'decommissioned' },
      });
      expect(await admin.json(['devices', 'list', '--status', 'decommissioned'])).toMatchObject([{ id: deviceId }]);
      const again = await admin.run(['devices', 'decommission', deviceId, '--yes']);
      expect(again.exitCode).toBe(6);
    });

    it('01§4.2 enrollment-keys list (--expired), get, rotate -q (old key refused), delete', async () => {
      const { admin, orgId } = await world();
      const created = await admin.json([
        'enrollment-keys',
        'create',
        '--org-id',
        orgId,
        '--name',
        'short-lived',
        '--max-usage',
        '3',
      ]);
      expect(created.key).toMatch(ENROLLMENT_KEY);
      const [live, expired, got] = await Promise.all([
        admin.json(['enrollment-keys', 'list', '--org-id', orgId, '--expired', 'false']),
        admin.json(['enrollment-keys', 'list', '--org-id', orgId, '--expired', 'true']),
        admin.json(['enrollment-keys', 'get', created.id]),
      ]);
      expect(live.map((k: { id: string }) => k.id)).toContain(created.id);
      expect(expired).toEqual([]);
      expect(got).not.toHaveProperty('key');
      expect(got).toMatchObject({ id: created.id, name: 'short-lived', maxUsage: 3 });
      const badFilter = await admin.run(['enrollment-keys', 'list', '--expired', 'maybe']);
      expect(badFilter.exitCode).toBe(2);

      expect((await admin.run(['enrollment-keys', 'rotate', created.id])).exitCode).toBe(2);
      const rotated = await admin.run(['enrollment-keys', 'rotate', created.id, '--ttl-minutes', '60', '--yes', '-q']);
      expect(rotated.exitCode).toBe(0);
      expect(rotated.stdout).toMatch(ENROLLMENT_KEY);
      const newKey = rotated.stdout.trim();
      expect(newKey).not.toBe(created.key);
      expect((await enroll(shared.url, created.key, 'old-key')).status).toBeGreaterThanOrEqual(400);
      expect((await enroll(shared.url, newKey, 'db-01')).status).toBe(201);

      expect((await admin.run(['enrollment-keys', 'delete', created.id])).exitCode).toBe(2);
      expect((await admin.run(['enrollment-keys', 'delete', created.id, '--yes'])).exitCode).toBe(0);
      expect((await admin.run(['enrollment-keys', 'get', created.id])).exitCode).toBe(5);
    });
  },
);
