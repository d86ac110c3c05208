import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN,
  adminToken,
  cliUser,
  type CliUser,
  E2E_TIMEOUT_MS,
  type E2eServer,
  filesUnder,
  http,
  login,
  startServer,
} from '../helpers/cli.js';
import { enableMfa, totp } from '../helpers/mfa.js';

const API_KEY = /^svc_[A-Za-z0-9_-]{32}$/;
const ENROLLMENT_KEY = /^[0-9a-f]{64}$/;

/** Enrolls a device as an agent does: plain HTTP with the enrollment key, no user credentials. */
async function enroll(url: string, enrollmentKey: string, hostname: string) {
  return http(url, 'POST', '/agents/enroll', {
    body: {
      enrollmentKey,
      hostname,
      osType: 'linux',
      osVersion: 'Debian 12',
      architecture: 'x86_64',
      agentVersion: '1.0.0',
    },
  });
}

describe(
  'e2e: API keys, enrollment keys and devices (01 §4.1, §4.2; CLI.md "Output", "Safety")',
  { timeout: E2E_TIMEOUT_MS },
  () => {
    let server: E2eServer;
    let admin: CliUser;
    let orgId: string;
    let siteId: string;
    let totpSecret: string;
    const fresh: CliUser[] = [];
    /** A CLI user with nothing on disk, for credentials from the environment. */
    const stranger = () => {
      const user = cliUser();
      fresh.push(user);
      return user;
    };

    beforeAll(async () => {
      server = await startServer();
      admin = cliUser();
      // Tenants are seeded over HTTP (not what is under test), before MFA makes the plain password sign-in a two-step one.
      const token = await adminToken(server.url);
      const partner = await http(server.url, 'POST', '/orgs/partners', {
        token,
        body: { name: 'Keys MSP', slug: 'keys' },
      });
      const org = await http(server.url, 'POST', '/orgs/organizations', {
        token,
        body: { partnerId: partner.body.id, name: 'Keyed', slug: 'keyed' },
      });
      const site = await http(server.url, 'POST', '/orgs/sites', { token, body: { orgId: org.body.id, name: 'HQ' } });
      orgId = org.body.id;
      siteId = site.body.id;
      const signedIn = await login(admin, server.url);
      if (signedIn.exitCode !== 0) throw new Error(signedIn.stderr);
      totpSecret = await enableMfa(admin);
    });
    afterAll(async () => {
      for (const user of fresh) user.cleanup();
      admin?.cleanup();
      await server?.stop();
    });

    let keyId = '';
    let key = '';

    it('01§4.1 api-keys create -q prints only the key; the shown-once warning goes to stderr', async () => {
      const created = await admin.run([
        'api-keys',
        'create',
        '--org-id',
        orgId,
        '--name',
        'CI pipeline',
        '--scopes',
        'sites:read',
        '--quiet',
      ]);
      expect(created.exitCode).toBe(0);
      expect(created.stdout).toMatch(API_KEY);
      expect(created.stderr).toContain('It will not be shown again');
      key = created.stdout.trim();
      const listed = await admin.json(['api-keys', 'list', '--org-id', orgId]);
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        name: 'CI pipeline',
        scopes: ['sites:read'],
        status: 'active',
        keyPrefix: key.slice(0, 12),
      });
      expect(JSON.stringify(listed)).not.toContain(key);
      keyId = listed[0].id;
    });

    it('CLI.md credentials: SVC_API_KEY works for svc sites list, and nothing is written to disk', async () => {
      const user = stranger();
      const sites = await user.run(['sites', 'list'], { env: { SVC_API_KEY: key, SVC_BASE_URL: server.url } });
      expect(sites.exitCode).toBe(0);
      expect(JSON.parse(sites.stdout).map((s: { id: string }) => s.id)).toEqual([siteId]);
      expect(filesUnder(user.home)).toEqual([]);
    });

    it('01§4.1 rotate --yes -q prints exactly one line, the new key; the old key is refused at once (exit 3)', async () => {
      const rotated = await admin.run(['api-keys', 'rotate', keyId, '--yes', '-q']);
      expect(rotated.exitCode).toBe(0);
      // (execa drops the final newline.)
      const lines = rotated.stdout.split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(API_KEY);
      expect(lines[0]).not.toBe(key);
      expect(rotated.stderr).toContain('It will not be shown again');
      const env = (apiKey: string) => ({ env: { SVC_API_KEY: apiKey, SVC_BASE_URL: server.url } });
      const [old, current] = await Promise.all([
        stranger().run(['sites', 'list'], env(key)),
        stranger().run(['sites', 'list'], env(lines[0] ?? '')),
      ]);
      expect(old.exitCode).toBe(3);
      expect(current.exitCode).toBe(0);
      key = lines[0] ?? '';
    });

    it('01§4.1 rotate -o json prints the whole answer: metadata, key and warning', async () => {
      const result = await admin.run(['api-keys', 'rotate', keyId, '--yes', '--output', 'json']);
      expect(result.exitCode).toBe(0);
      const body = JSON.parse(result.stdout);
      expect(body).toMatchObject({
        id: keyId,
        orgId,
        name: 'CI pipeline',
        scopes: ['sites:read'],
        status: 'active',
        warning: expect.stringContaining('not be shown again'),
      });
      expect(body.key).toMatch(API_KEY);
      key = body.key;
    });

    it('CLI.md safety: rotate and revoke refuse without --yes off a terminal (exit 2), and change nothing', async () => {
      const [rotate, revoke] = await Promise.all([
        admin.run(['api-keys', 'rotate', keyId]),
        admin.run(['api-keys', 'revoke', keyId]),
      ]);
      for (const result of [rotate, revoke]) {
        expect(result.exitCode).toBe(2);
        expect(result.stderr).toContain('--yes');
        expect(result.stdout).toBe('');
      }
      expect(
        (await stranger().run(['sites', 'list'], { env: { SVC_API_KEY: key, SVC_BASE_URL: server.url } })).exitCode,
      ).toBe(0);
    });

    it('01§4.1 update, get, --dry-run create, and key management refused to an API key (exit 4)', async () => {
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
      // Usage counters move when other tests of this file use the key concurrently: compare the rest.
      const { lastUsedAt: _l, usageCount: _u, ...stable } = updated;
      expect(await admin.json(['api-keys', 'get', keyId])).toMatchObject(stable);
      const dry = await admin.json(['api-keys', 'create', '--org-id', orgId, '--name', 'dry', '--dry-run']);
      expect(dry).toMatchObject({
        dryRun: true,
        method: 'POST',
        url: `${server.url}/api/v1/api-keys`,
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
      const byKey = await stranger().run(['api-keys', 'list'], { env: { SVC_API_KEY: key, SVC_BASE_URL: server.url } });
      expect(byKey.exitCode).toBe(4);
      expect(byKey.stderr).toContain('SESSION_REQUIRED');
    });

    it('README "Rotating keys in CI": sign in with SVC_BASE_URL only, rotate with SVC_TOKEN, nothing on disk', async () => {
      const ci = stranger();
      const env = { SVC_BASE_URL: server.url };
      const signIn = await ci.run(['api', 'POST', '/auth/login', '--input', '-'], {
        env,
        input: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }),
      });
      expect(signIn.exitCode).toBe(0);
      const { tempToken } = JSON.parse(signIn.stdout);
      const verified = await ci.run(['api', 'POST', '/auth/mfa/verify', '--input', '-'], {
        env,
        input: JSON.stringify({ tempToken, code: totp(totpSecret, 1) }),
      });
      expect(verified.exitCode).toBe(0);
      const token: string = JSON.parse(verified.stdout).tokens.accessToken;
      const rotated = await ci.run(['api-keys', 'rotate', keyId, '--yes', '-q'], { env: { ...env, SVC_TOKEN: token } });
      expect(rotated.exitCode).toBe(0);
      expect(rotated.stdout).toMatch(API_KEY);
      expect(filesUnder(ci.home)).toEqual([]);
      key = rotated.stdout.trim();
    });

    it('01§4.1 revoke --yes: the key stops working (exit 3) and shows as revoked; -q prints its id', async () => {
      const revoked = await admin.run(['api-keys', 'revoke', keyId, '--yes', '-q']);
      expect(revoked.exitCode).toBe(0);
      expect(revoked.stdout).toBe(keyId);
      expect(
        (await stranger().run(['sites', 'list'], { env: { SVC_API_KEY: key, SVC_BASE_URL: server.url } })).exitCode,
      ).toBe(3);
      expect(await admin.json(['api-keys', 'list', '--status', 'revoked'])).toMatchObject([
        { id: keyId, status: 'revoked' },
      ]);
    });

    it('01§4.2 enrollment key → an agent enrolls over HTTP → devices list shows it → decommission --yes', async () => {
      const created = await admin.run([
        'enrollment-keys',
        'create',
        '--org-id',
        orgId,
        '--site-id',
        siteId,
        '--name',
        'rollout',
        '--max-usage',
        '5',
        '--ttl-minutes',
        '30',
        '-q',
      ]);
      expect(created.exitCode).toBe(0);
      expect(created.stdout).toMatch(ENROLLMENT_KEY);
      expect(created.stderr).toContain('will not be shown again');
      const enrollmentKey = created.stdout.trim();

      const enrolled = await enroll(server.url, enrollmentKey, 'web-01');
      expect(enrolled.status).toBe(201);
      const deviceId: string = enrolled.body.deviceId;

      const [devices, one, table] = await Promise.all([
        admin.json(['devices', 'list', '--org-id', orgId]),
        admin.json(['devices', 'get', deviceId]),
        admin.run(['devices', 'list', '--search', 'web', '--output', 'table']),
      ]);
      expect(devices).toMatchObject([{ id: deviceId, hostname: 'web-01', orgId, siteId, status: 'online' }]);
      expect(one).toEqual(devices[0]);
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
      expect((await enroll(server.url, created.key, 'old-key')).status).toBeGreaterThanOrEqual(400);
      expect((await enroll(server.url, newKey, 'db-01')).status).toBe(201);

      expect((await admin.run(['enrollment-keys', 'delete', created.id])).exitCode).toBe(2);
      expect((await admin.run(['enrollment-keys', 'delete', created.id, '--yes'])).exitCode).toBe(0);
      expect((await admin.run(['enrollment-keys', 'get', created.id])).exitCode).toBe(5);
    });
  },
);
