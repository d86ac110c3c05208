import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnOnMfa } from '../helpers/fixtures.js';
import { ADMIN, BIN, E2E_TIMEOUT_MS, adminToken, cliUser, http, listeningUrl, type CliUser } from '../helpers/cli.js';
import { startIdp, type TestIdp } from '../helpers/oidc-provider.js';

const TLS = path.join(import.meta.dirname, '..', 'fixtures', 'tls');
const CA = path.join(TLS, 'self-signed-cert.pem');
const BROWSER = path.join(import.meta.dirname, '..', 'fixtures', 'sso-browser.sh');
const ORG_VIEWER = '00000000-0000-4000-8000-000000000006';

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

// The identity provider runs HTTPS with the fixture certificate, which the server and the browser trust
// through NODE_EXTRA_CA_CERTS: no check is turned off anywhere. The server needs a known port, because the
// callback address registered at the provider is its public URL.
describe('e2e: svc login --sso and svc sso (01 §4.7, §5.9)', { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  let idp: TestIdp;
  let server: ResultPromise;
  let url: string;
  let dataDir: string;
  let user: CliUser;
  let orgId: string;
  let providerId: string;
  let mfaToken: string;
  let partnerId: string;

  beforeAll(async () => {
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    idp = await startIdp(`${url}/api/v1/sso/callback`, {
      key: fs.readFileSync(path.join(TLS, 'self-signed-key.pem'), 'utf8'),
      cert: fs.readFileSync(CA, 'utf8'),
    });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-sso-'));
    server = execa('node', [BIN, 'server', 'start', '--port', String(port), '--host', '127.0.0.1'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: dataDir,
        SVC_DATA_DIR: path.join(dataDir, 'data'),
        SVC_ADMIN_EMAIL: ADMIN.email,
        SVC_ADMIN_PASSWORD: ADMIN.password,
        SVC_PUBLIC_URL: url,
        SVC_LOG_LEVEL: 'silent',
        NODE_EXTRA_CA_CERTS: CA,
        // The identity provider listens on loopback: let it through the server's outbound URL guard.
        SVC_OUTBOUND_ALLOW: '127.0.0.1/32',
      },
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      buffer: false,
    });
    await listeningUrl(server, 60_000);
    const { token } = await turnOnMfa(url, await adminToken(url));
    mfaToken = token;
    const partner = await http(url, 'POST', '/orgs/partners', { token, body: { name: 'SSO MSP', slug: 'sso-msp' } });
    const org = await http(url, 'POST', '/orgs/organizations', { token, body: { partnerId: partner.body.id, name: 'SSO Customer', slug: 'sso-customer' } });
    orgId = org.body.id as string;
    partnerId = partner.body.id as string;
    const created = await http(url, 'POST', '/sso/providers', {
      token,
      body: { orgId, name: 'Loopback IdP', type: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, defaultRoleId: ORG_VIEWER },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.tokenUrl).toBe(`${idp.issuer}/token`);
    providerId = created.body.data.id as string;
    await http(url, 'POST', `/sso/providers/${providerId}/status`, { token, body: { status: 'active' } });
    idp.accounts.set('dana-1', { email: 'dana@customer.test', name: 'Dana Scully' });
    user = cliUser();
  }, 180_000);
  afterAll(async () => {
    user?.cleanup();
    server?.kill('SIGTERM');
    await server;
    await idp?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('01§4.7 svc sso check needs no sign-in', async () => {
    const check = await user.json(['sso', 'check', orgId, '--base-url', url]);
    expect(check).toEqual({ ssoEnabled: true, name: 'Loopback IdP', type: 'oidc', enforceSSO: false });
  });

  it('01§5.9 svc login --sso: the browser signs in at the provider, the CLI receives the code on its loopback and stores the session', async () => {
    const log = path.join(user.home, 'browser.log');
    const result = await user.run(['login', '--sso', '--org-id', orgId, '--base-url', url, '-o', 'json'], {
      env: { BROWSER, SSO_TEST_ACCOUNT: 'dana-1', SSO_TEST_CALLBACK: `${url}/api/v1/sso/callback`, SSO_TEST_BROWSER_LOG: log, NODE_EXTRA_CA_CERTS: CA },
    });
    expect(result.exitCode, `${result.stderr}\n${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''}`).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ email: 'dana@customer.test', authKind: 'sso' });
    expect(result.stderr).toContain('/api/v1/sso/login/');
    const whoami = await user.json(['whoami']);
    expect(JSON.stringify(whoami)).toContain('dana@customer.test');
    const providers = await user.json(['sso', 'providers', 'list', '--org-id', orgId]);
    expect(providers).toEqual([expect.objectContaining({ id: providerId, status: 'active' })]);
    const presets = await user.json(['sso', 'presets']);
    expect(presets).toHaveLength(9);
  });

  it('01§5.9 without a terminal and without $BROWSER, svc login --sso refuses and names the alternatives', async () => {
    const result = await user.run(['login', '--sso', '--org-id', orgId, '--base-url', url]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--password-stdin');
    expect(result.stderr).toContain('--api-key-stdin');
  });

  it('01§4.7 svc sso providers create (secret from stdin) | update | status | test | delete', async () => {
    const org = await http(url, 'POST', '/orgs/organizations', { token: mfaToken, body: { partnerId, name: 'Second', slug: 'second' } });
    const env = { SVC_TOKEN: mfaToken, SVC_BASE_URL: url };
    const secret = 'cli-secret-never-echoed';
    const created = await user.run(
      ['sso', 'providers', 'create', '--org-id', org.body.id, '--name', 'CLI IdP', '--type', 'oidc', '--issuer', idp.issuer, '--client-id', 'cli', '--client-secret-stdin', '--default-role-id', ORG_VIEWER, '-o', 'json'],
      { env, input: secret },
    );
    expect(created.exitCode, created.stderr).toBe(0);
    const provider = JSON.parse(created.stdout);
    expect(provider).toMatchObject({ name: 'CLI IdP', status: 'inactive', hasClientSecret: true, tokenUrl: `${idp.issuer}/token` });
    expect(created.stdout + created.stderr).not.toContain(secret);
    const updated = await user.run(['sso', 'providers', 'update', provider.id, '--allowed-domains', 'customer.test', '--no-auto-provision', '-o', 'json'], { env });
    expect(updated.exitCode, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ allowedDomains: 'customer.test', autoProvision: false });
    const status = await user.run(['sso', 'providers', 'status', provider.id, 'testing', '-o', 'json'], { env });
    expect(JSON.parse(status.stdout)).toMatchObject({ status: 'testing' });
    const tested = await user.run(['sso', 'providers', 'test', provider.id, '-o', 'json'], { env });
    expect(tested.exitCode, tested.stderr).toBe(0);
    expect(JSON.parse(tested.stdout)).toMatchObject({ success: true, discovery: { issuer: idp.issuer } });
    const got = await user.run(['sso', 'providers', 'get', provider.id, '-o', 'json'], { env });
    expect(got.stdout).not.toContain(secret);
    const refused = await user.run(['sso', 'providers', 'delete', provider.id], { env });
    expect(refused.exitCode).toBe(2);
    const deleted = await user.run(['sso', 'providers', 'delete', provider.id, '--yes', '-o', 'json'], { env });
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect((await user.run(['sso', 'providers', 'get', provider.id], { env })).exitCode).toBe(5);
  });
});
