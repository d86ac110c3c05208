import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, adminToken, type CliUser, cliUser, E2E_TIMEOUT_MS, type E2eServer, filesUnder, login, startServer } from '../helpers/cli.js';

describe('e2e: sign-in, credentials and profiles (CLI.md "Connection and credentials")', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  const others: CliUser[] = [];
  const fresh = () => {
    const user = cliUser();
    others.push(user);
    return user;
  };
  /** A CLI user of its own, signed in as the administrator (profile "default"). */
  const signedIn = async () => {
    const user = fresh();
    const result = await login(user, server.url);
    if (result.exitCode !== 0) throw new Error(result.stderr);
    return user;
  };

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    for (const user of others) user.cleanup();
    await server?.stop();
  });

  // Each test has a CLI user (HOME) of its own. The ones that sign in run one after another: the password
  // change test changes the administrator's password for a moment.
  it.concurrent('CLI.md credentials: a missing --email with no terminal is exit 2 naming the flag, never a hang', async () => {
    const result = await fresh().run(['login', '--base-url', server.url, '--password-stdin'], { input: ADMIN.password });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--email');
    expect(result.stdout).toBe('');
  });

  it.concurrent('CLI.md exit codes: a wrong password is exit 3', async () => {
    const result = await login(fresh(), server.url, { email: ADMIN.email, password: 'not-the-password' });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/^Error: .*HTTP 401/m);
    expect(result.stdout).toBe('');
  });

  it.concurrent('CLI.md exit codes: not logged in is exit 3 with the hint to log in', async () => {
    const result = await fresh().run(['partners', 'list', '--base-url', server.url]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('svc login');
  });

  it.concurrent('CLI.md exit codes: with -o json the error is also a JSON object on stderr', async () => {
    const result = await fresh().run(['partners', 'list', '--base-url', server.url, '--output', 'json'], { env: { SVC_TOKEN: 'not-a-token' } });
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe('');
    const json = result.stderr.split('\n').find((line) => line.startsWith('{'));
    expect(JSON.parse(json ?? '{}')).toMatchObject({ error: { status: 401 } });
  });

  it.concurrent('CLI.md credentials: SVC_TOKEN works and nothing is read from or written to disk', async () => {
    const user = fresh();
    const token = await adminToken(server.url);
    const result = await user.run(['partners', 'list'], { env: { SVC_TOKEN: token, SVC_BASE_URL: server.url } });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toBeInstanceOf(Array);
    const who = await user.json(['whoami'], { env: { SVC_TOKEN: token, SVC_BASE_URL: server.url } });
    expect(who.credentials).toBe('environment (SVC_TOKEN)');
    expect(filesUnder(user.home)).toEqual([]);
  });

  it.concurrent('CLI.md credentials: a bad SVC_API_KEY is exit 3, and nothing is written to disk', async () => {
    const user = fresh();
    const result = await user.run(['orgs', 'list', '--accessible'], { env: { SVC_API_KEY: 'svc_not_a_key', SVC_BASE_URL: server.url } });
    expect(result.exitCode).toBe(3);
    expect(filesUnder(user.home)).toEqual([]);
  });

  it.concurrent('CLI.md exit codes: connection refused is exit 8', async () => {
    // Port 9 (discard) on loopback: nothing listens there.
    const result = await fresh().run(['partners', 'list', '--base-url', 'http://127.0.0.1:9', '--retries', '1'], { env: { SVC_TOKEN: 'x' } });
    expect(result.exitCode).toBe(8);
    expect(result.stderr).toMatch(/ECONNREFUSED|connect/i);
  });

  it('CLI.md credentials: login reads the password from stdin, saves a profile, and says so on stderr only', async () => {
    const admin = fresh();
    const result = await login(admin, server.url);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ profile: 'default', baseUrl: server.url, email: ADMIN.email, authKind: 'password', storage: 'file' });
    expect(result.stderr).toContain(`Logged in to ${server.url} as ${ADMIN.email}`);
    // No keychain here (no D-Bus session): the file fallback, owner-only, announced once.
    const credentials = path.join(admin.configDir, 'svc', 'credentials.json');
    expect(fs.statSync(credentials).mode & 0o777).toBe(0o600);
    expect(result.stderr.match(/No OS keychain available/g)).toHaveLength(1);
  });

  it.concurrent('CLI.md credentials: a refused login is exit 3, saves nothing and says nothing of where it would have', async () => {
    const user = fresh();
    const result = await login(user, server.url, { ...ADMIN, password: 'not-the-password' });
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain('INVALID_CREDENTIALS');
    expect(result.stderr).not.toMatch(/keychain|credentials in/i);
    expect(filesUnder(user.home)).toEqual([]);
  });

  it('CLI.md credentials: whoami says who is signed in and where the credentials live', async () => {
    const admin = await signedIn();
    const me = await admin.json(['whoami']);
    expect(me).toMatchObject({ email: ADMIN.email, scope: 'system', profile: 'default', baseUrl: server.url });
    expect(me.credentials).toBe(`file ${path.join(admin.configDir, 'svc', 'credentials.json')}`);
  });

  it('profiles: list, show, use and remove (remove refuses without --yes off a terminal)', async () => {
    const admin = await signedIn();
    const second = await login(admin, server.url, ADMIN, ['--profile', 'second']);
    expect(second.exitCode).toBe(0);
    const profiles = await admin.json(['profiles', 'list']);
    expect(profiles.map((p: { name: string; current: boolean }) => [p.name, p.current])).toEqual([
      ['default', true],
      ['second', false],
    ]);
    expect((await admin.run(['profiles', 'use', 'second'])).exitCode).toBe(0);
    expect(await admin.json(['profiles', 'show'])).toMatchObject({ name: 'second', source: 'current', baseUrl: server.url, email: ADMIN.email });
    expect((await admin.run(['profiles', 'use', 'nope'])).exitCode).toBe(2);
    const refused = await admin.run(['profiles', 'remove', 'second']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect((await admin.run(['profiles', 'remove', 'second', '--yes'])).exitCode).toBe(0);
    expect((await admin.json(['profiles', 'list'])).map((p: { name: string }) => p.name)).toEqual(['default']);
    // The removed profile was the selected one: commands fall back to "default".
    expect(await admin.json(['profiles', 'show'])).toMatchObject({ name: 'default', source: 'default' });
  });

  it('users me and users me update', async () => {
    const admin = await signedIn();
    expect(await admin.json(['users', 'me'])).toMatchObject({ email: ADMIN.email, scope: 'system' });
    const updated = await admin.json(['users', 'me', 'update', '--name', 'E2E Admin']);
    expect(updated.name).toBe('E2E Admin');
  });

  it('users me change-password: two lines on stdin, and the profile signs in again with the new password', async () => {
    const admin = await signedIn();
    const next = 'E2e-New-Passw0rd!';
    const refused = await admin.run(['users', 'me', 'change-password']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--passwords-stdin');
    const changed = await admin.run(['users', 'me', 'change-password', '--passwords-stdin'], { input: `${ADMIN.password}\n${next}\n` });
    expect(changed.exitCode).toBe(0);
    expect(changed.stderr).toContain('signed in again');
    expect((await admin.json(['whoami'])).email).toBe(ADMIN.email);
    // Put it back for the other tests.
    const back = await admin.run(['users', 'me', 'change-password', '--passwords-stdin'], { input: `${next}\n${ADMIN.password}\n` });
    expect(back.exitCode).toBe(0);
  });

  it('logout forgets the secrets; the next command is exit 3', async () => {
    const admin = await signedIn();
    const result = await admin.run(['logout']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    expect((await admin.run(['whoami'])).exitCode).toBe(3);
  });
});
