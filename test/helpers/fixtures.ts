import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { adminToken, cliUser, type CliUser, E2E_TIMEOUT_MS, type E2eServer, http, login, startServer } from './cli.js';
import { totp } from './totp.js';

/**
 * What an e2e test sets up for itself, over plain HTTP (fast: no CLI process): its own tenant, its own people.
 * A test that makes its own never depends on what another test did, so it passes run alone (`-t`) or in any order.
 */

/** A name no other test of the run uses (slugs are unique server-wide). */
export function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** The body of a 2xx answer; anything else fails the setup with what the server said. */
export async function ok<T = any>(answer: Promise<{ status: number; body: any }>, what: string): Promise<T> {
  const res = await answer;
  if (res.status < 200 || res.status > 299) throw new Error(`${what} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body as T;
}

export interface Tenant {
  partnerId: string;
  orgId: string;
  siteId: string;
  slug: string;
}

/** A partner with one organization and one site, under fresh names, created with a system administrator's token. */
export async function createTenant(url: string, token: string, prefix = 'tenant'): Promise<Tenant> {
  const slug = unique(prefix);
  const partner = await ok(http(url, 'POST', '/orgs/partners', { token, body: { name: `${slug} MSP`, slug } }), 'create partner');
  const org = await ok(
    http(url, 'POST', '/orgs/organizations', { token, body: { partnerId: partner.id, name: `${slug} org`, slug: `${slug}-org` } }),
    'create organization',
  );
  const site = await ok(http(url, 'POST', '/orgs/sites', { token, body: { orgId: org.id, name: `${slug} HQ` } }), 'create site');
  return { partnerId: partner.id, orgId: org.id, siteId: site.id, slug };
}

/** MFA setup and enable over HTTP for the session's user: the new session (with MFA), the secret (whose code for
 * this period is now spent) and the recovery codes. */
export async function turnOnMfa(url: string, token: string): Promise<{ token: string; secret: string; recoveryCodes: string[] }> {
  const { secret, recoveryCodes } = await ok(http(url, 'POST', '/auth/mfa/setup', { token }), 'mfa setup');
  const enabled = await ok(http(url, 'POST', '/auth/mfa/enable', { token, body: { code: totp(secret) } }), 'mfa enable');
  return { token: enabled.tokens.accessToken, secret, recoveryCodes };
}

/** Invites `email` into a partner with a built-in role (Partner Admin by default); the answer carries inviteUrl. */
export async function invite(
  url: string,
  adminToken: string,
  partnerId: string,
  email: string,
  role = 'Partner Admin',
): Promise<{ id: string; inviteUrl: string }> {
  const roles = await ok<{ id: string; name: string }[] | { data: { id: string; name: string }[] }>(
    http(url, 'GET', '/roles', { token: adminToken }),
    'list roles',
  );
  const roleId = (Array.isArray(roles) ? roles : roles.data).find((r) => r.name === role)?.id;
  return ok(http(url, 'POST', '/users/invite', { token: adminToken, body: { partnerId, email, name: email.split('@')[0], roleId } }), 'invite');
}

export const PERSON_PASSWORD = 'Person-Passw0rd-1!';

export interface Person {
  id: string;
  email: string;
  password: string;
  /** The TOTP secret and unused recovery codes; empty with `mfa: false`. */
  secret: string;
  recoveryCodes: string[];
  /** An access token of a session with MFA (without, with `mfa: false`). */
  token: string;
  /** A CLI user whose environment carries that session (SVC_TOKEN, SVC_BASE_URL): nothing on disk. */
  cli: CliUser;
}

/**
 * Someone invited into a partner with a built-in role (Partner Admin by default), who accepts, signs in and turns
 * MFA on (unless `mfa: false`) — all over HTTP. `adminToken` is a system administrator's session.
 */
export async function invitePerson(
  url: string,
  adminToken: string,
  partnerId: string,
  options: { role?: string; email?: string; mfa?: boolean } = {},
): Promise<Person> {
  const email = options.email ?? `${unique('person')}@e2e.test`;
  const invited = await invite(url, adminToken, partnerId, email, options.role);
  const inviteToken = new URL(invited.inviteUrl).searchParams.get('token');
  await ok(http(url, 'POST', '/auth/accept-invite', { body: { token: inviteToken, password: PERSON_PASSWORD } }), 'accept invite');
  const signedIn = await ok(http(url, 'POST', '/auth/login', { body: { email, password: PERSON_PASSWORD } }), 'login');
  const plain: string = signedIn.tokens.accessToken;
  const person = { id: invited.id, email, password: PERSON_PASSWORD };
  if (options.mfa === false) {
    return { ...person, secret: '', recoveryCodes: [], token: plain, cli: cliUser({ SVC_TOKEN: plain, SVC_BASE_URL: url }) };
  }
  const mfa = await turnOnMfa(url, plain);
  return { ...person, ...mfa, cli: cliUser({ SVC_TOKEN: mfa.token, SVC_BASE_URL: url }) };
}

/** Enrolls a device as an agent does: plain HTTP with an enrollment key, no user credentials. */
export function enroll(url: string, enrollmentKey: string, hostname: string, osType = 'linux') {
  return http(url, 'POST', '/agents/enroll', {
    body: {
      enrollmentKey,
      hostname,
      osType,
      osVersion: osType === 'windows' ? '11' : 'Debian 12',
      architecture: 'x86_64',
      agentVersion: '1.0.0',
    },
  });
}

/**
 * The server an e2e file's tests share: started before the first test, stopped after the last, with a system
 * administrator's session with MFA over HTTP (`token`: inviting people takes one). The CLI users passed to `track`
 * are removed at the end. No test changes what it holds: each makes its own tenant.
 */
export function sharedServer(env: Record<string, string> = {}) {
  let server: E2eServer | undefined;
  let token = '';
  const made: CliUser[] = [];
  beforeAll(async () => {
    server = await startServer(env);
    token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
  }, E2E_TIMEOUT_MS);
  afterAll(async () => {
    for (const user of made) user.cleanup();
    await server?.stop();
  });
  return {
    get url(): string {
      if (!server) throw new Error('the shared server is not started yet (use it inside a test)');
      return server.url;
    },
    get token(): string {
      return token;
    },
    track<T extends CliUser>(user: T): T {
      made.push(user);
      return user;
    },
  };
}

/** The loopback receivers' test certificate: a server trusts it the one way it allows, NODE_EXTRA_CA_CERTS. */
export const RECEIVER_CA = fileURLToPath(new URL('../fixtures/tls/receiver-cert.pem', import.meta.url));

/**
 * An e2e file's server allowed to reach loopback HTTPS receivers (`SVC_OUTBOUND_ALLOW`, the receivers' CA, a fast
 * job poll), with a tenant of its own and its partner administrator as a CLI user with MFA.
 */
export function outboundTenant(prefix: string) {
  let server: E2eServer | undefined;
  let admin: CliUser | undefined;
  let orgId = '';
  beforeAll(async () => {
    server = await startServer({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32', SVC_JOB_POLL_MS: '50', NODE_EXTRA_CA_CERTS: RECEIVER_CA });
    const token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
    const tenant = await createTenant(server.url, token, prefix);
    orgId = tenant.orgId;
    admin = (await invitePerson(server.url, token, tenant.partnerId)).cli;
    // A first start for these settings builds its own template data dir: slow on a loaded machine.
  }, 120_000);
  afterAll(async () => {
    admin?.cleanup();
    await server?.stop();
  });
  return {
    get admin(): CliUser {
      if (!admin) throw new Error('the tenant is not set up yet (use it inside a test)');
      return admin;
    },
    get orgId(): string {
      return orgId;
    },
  };
}

/**
 * outboundTenant with a loopback peer of the file's own (an HTTPS receiver, a PSA stand-in): `start` runs before
 * the first test, the peer is closed after the last.
 */
export function outboundTenantWith<P extends { close(): Promise<void> }>(prefix: string, start: () => Promise<P>) {
  const tenant = outboundTenant(prefix);
  let peer: P | undefined;
  beforeAll(async () => {
    peer = await start();
  });
  afterAll(async () => {
    await peer?.close();
  });
  return {
    get admin(): CliUser {
      return tenant.admin;
    },
    get orgId(): string {
      return tenant.orgId;
    },
    get peer(): P {
      if (!peer) throw new Error('the peer is not started yet (use it inside a test)');
      return peer;
    },
  };
}

/**
 * An e2e file's server with one CLI user signed in with the system administrator's password (profile "default"),
 * started before the first test and removed after the last; `token` is a system administrator's session over HTTP.
 */
export function signedInServer() {
  let started: { server: E2eServer; user: CliUser; token: string } | undefined;
  beforeAll(async () => {
    const server = await startServer();
    const user = cliUser();
    started = { server, user, token: '' };
    const result = await login(user, server.url);
    if (result.exitCode !== 0) throw new Error(result.stderr);
    started.token = await adminToken(server.url);
  }, E2E_TIMEOUT_MS);
  afterAll(async () => {
    started?.user.cleanup();
    await started?.server.stop();
  });
  const current = () => {
    if (!started) throw new Error('the server is not started yet (use it inside a test)');
    return started;
  };
  return {
    get url(): string {
      return current().server.url;
    },
    get user(): CliUser {
      return current().user;
    },
    get token(): string {
      return current().token;
    },
  };
}
