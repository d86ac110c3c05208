import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, cliUser, type CliUser, E2E_TIMEOUT_MS, type E2eServer, http, login, startServer } from '../helpers/cli.js';
import { enableMfa } from '../helpers/mfa.js';
import { ROLES } from '../helpers/seed.js';

const PASSWORD = 'Linked-Passw0rd-1';

/**
 * Redeeming the server's single-use links from the CLI: `svc users accept-invite`, `svc login reset-password` and
 * `svc login forgot-password`. The link and the password come from stdin (or prompts), never from argv.
 */
describe('e2e: invitation and reset links on the command line (01 §4.4, §4.5; CLI.md "Scripting conveniences")', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let admin: CliUser;
  /** Someone on another machine: no profile, only the base URL. */
  let invitee: CliUser;
  let partnerId: string;

  async function invite(email: string): Promise<{ id: string; inviteUrl: string }> {
    return admin.json(['users', 'invite', '--partner-id', partnerId, '--email', email, '--name', 'Linked Person', '--role-id', ROLES.partnerViewer]);
  }

  const acceptInvite = (input: string | undefined, extra: string[] = []) =>
    invitee.run(['users', 'accept-invite', '--base-url', server.url, '-o', 'json', ...extra], input === undefined ? {} : { input });

  const signsIn = async (email: string, password: string) => (await login(cliUser(), server.url, { email, password })).exitCode;

  beforeAll(async () => {
    server = await startServer();
    admin = cliUser();
    invitee = cliUser();
    const token = await adminToken(server.url);
    partnerId = (await http(server.url, 'POST', '/orgs/partners', { token, body: { name: 'Link MSP', slug: 'links' } })).body.id;
    const signedIn = await login(admin, server.url);
    if (signedIn.exitCode !== 0) throw new Error(signedIn.stderr);
    await enableMfa(admin);
  });
  afterAll(async () => {
    admin?.cleanup();
    invitee?.cleanup();
    await server?.stop();
  });

  it('01§4.4 users accept-invite: the link and the password on stdin activate the account; the user then signs in', async () => {
    const { id, inviteUrl } = await invite('ada@links.test');
    const token = new URL(inviteUrl).searchParams.get('token') ?? '';
    // Started with --port 0: the link carries the port the server really listens on.
    expect(new URL(inviteUrl).origin).toBe(new URL(server.url).origin);
    const result = await acceptInvite(`${inviteUrl}\n${PASSWORD}\n`, ['--name', 'Ada Lovelace']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id, email: 'ada@links.test', name: 'Ada Lovelace' });
    expect(result.stderr).toContain('svc login --email ada@links.test');
    // Neither the token nor the password, nor the session the server opened, is printed.
    for (const secret of [token, PASSWORD, 'accessToken', 'refreshToken']) expect(result.stdout + result.stderr).not.toContain(secret);
    expect(await signsIn('ada@links.test', PASSWORD)).toBe(0);
  });

  it('01§4.4 the token alone works as well as the link; a used link is refused (exit 6) with the server\'s message', async () => {
    const { inviteUrl } = await invite('bob@links.test');
    const token = new URL(inviteUrl).searchParams.get('token') ?? '';
    expect((await acceptInvite(`${token}\n${PASSWORD}\n`)).exitCode).toBe(0);
    const again = await acceptInvite(`${inviteUrl}\n${PASSWORD}\n`);
    expect(again.exitCode).toBe(6);
    expect(again.stderr).toContain('Invalid or expired invitation (INVALID_INVITE_TOKEN, HTTP 400)');
  });

  it('01§4.5 a weak password is refused with the rule (exit 6), and the same link then takes a strong one', async () => {
    const { inviteUrl } = await invite('carol@links.test');
    const weak = await acceptInvite(`${inviteUrl}\nalllowercase1\n`);
    expect(weak.exitCode).toBe(6);
    expect(weak.stderr).toContain('Password must contain upper and lower case letters (WEAK_PASSWORD, HTTP 400)');
    expect((await acceptInvite(`${inviteUrl}\n${PASSWORD}\n`)).exitCode).toBe(0);
  });

  it('CLI.md: without a terminal, what is missing from stdin is named, exit 2, and nothing is sent', async () => {
    const nothing = await acceptInvite(undefined);
    expect(nothing.exitCode).toBe(2);
    expect(nothing.stderr).toContain('Missing the invitation link (the first line of standard input)');
    const { inviteUrl } = await invite('dave@links.test');
    const noPassword = await acceptInvite(`${inviteUrl}\n`);
    expect(noPassword.exitCode).toBe(2);
    expect(noPassword.stderr).toContain('Missing the new password (the second line of standard input)');
    expect(noPassword.stderr).not.toContain(inviteUrl);
    // The link is still unused: nothing reached the server.
    expect((await acceptInvite(`${inviteUrl}\n${PASSWORD}\n`)).exitCode).toBe(0);
  });

  it('--dry-run prints the request with the token and the password redacted', async () => {
    const result = await acceptInvite(`some-token\n${PASSWORD}\n`, ['--dry-run']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ dryRun: true, method: 'POST', body: { token: '[redacted]', password: '[redacted]' } });
    expect(result.stdout).not.toContain(PASSWORD);
  });

  it('01§4.5 login reset-password: a reset link and a new password on stdin; the old password stops working', async () => {
    const ada = await admin.json<{ id: string; email: string }[]>(['users', 'list', '--partner-id', partnerId]).then((list) => list.find((u) => u.email === 'ada@links.test'));
    const issued = await admin.json<{ resetUrl: string }>(['users', 'reset-password', ada?.id ?? '', '--yes']);
    const next = 'Reset-Passw0rd-22';
    const wrongPage = await invitee.run(['users', 'accept-invite', '--base-url', server.url], { input: `${issued.resetUrl}\n${next}\n` });
    expect(wrongPage.exitCode).toBe(2);
    expect(wrongPage.stderr).toContain('That is a password-reset link: use `svc login reset-password`');

    const reset = await invitee.run(['login', 'reset-password', '--base-url', server.url, '-o', 'json'], { input: `${issued.resetUrl}\n${next}\n` });
    expect(reset.exitCode, reset.stderr).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ success: true });
    expect(reset.stdout + reset.stderr).not.toContain(next);
    expect(await signsIn('ada@links.test', PASSWORD)).toBe(3);
    expect(await signsIn('ada@links.test', next)).toBe(0);
    const used = await invitee.run(['login', 'reset-password', '--base-url', server.url], { input: `${issued.resetUrl}\n${next}\n` });
    expect(used.exitCode).toBe(6);
    expect(used.stderr).toContain('INVALID_RESET_TOKEN');
  });

  it('01§4.5 login forgot-password answers the same whether or not the address has an account', async () => {
    const known = await invitee.run(['login', 'forgot-password', '--base-url', server.url, '--email', 'ada@links.test', '-o', 'json']);
    const unknown = await invitee.run(['login', 'forgot-password', '--base-url', server.url, '--email', 'nobody@links.test', '-o', 'json']);
    expect(known.exitCode, known.stderr).toBe(0);
    expect(JSON.parse(known.stdout)).toEqual(JSON.parse(unknown.stdout));
    const noEmail = await invitee.run(['login', 'forgot-password', '--base-url', server.url]);
    expect(noEmail.exitCode).toBe(2);
    expect(noEmail.stderr).toContain('Missing --email');
  });
});
