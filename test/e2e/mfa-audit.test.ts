import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, adminToken, cliUser, type CliUser, E2E_TIMEOUT_MS, type E2eServer, login, startServer } from '../helpers/cli.js';
import { createTenant, invitePerson, type Person, turnOnMfa, unique } from '../helpers/fixtures.js';
import { totp } from '../helpers/totp.js';

describe('e2e: the audit log and MFA (CLI.md "Errors and exit codes", 01 §4.5)', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  /** The system administrator's profile, signed in with a password before MFA was on; no test changes it. */
  let admin: CliUser;
  let token: string;
  const made: CliUser[] = [];
  const track = (user: CliUser) => {
    made.push(user);
    return user;
  };
  /** A Partner Admin of a tenant of its own (MFA on unless `mfa: false`), and a CLI user without a profile yet. */
  const person = async (mfa = true): Promise<Person & { user: CliUser }> => {
    const tenant = await createTenant(server.url, token, 'audited');
    const p = await invitePerson(server.url, token, tenant.partnerId, { mfa });
    track(p.cli);
    return { ...p, user: track(cliUser()) };
  };
  const signIn = async (user: CliUser, p: Person, extra: string[] = []) => {
    const result = await login(user, server.url, { email: p.email, password: p.password }, extra);
    if (result.exitCode !== 0) throw new Error(result.stderr);
  };
  /** A partner created by the administrator through the CLI: one partner.create entry named `name`. */
  const auditedPartner = async (user: CliUser) => {
    const name = unique('Audited');
    const created = await user.run(['partners', 'create', '--name', name, '--slug', name.toLowerCase(), '-q']);
    if (created.exitCode !== 0) throw new Error(created.stderr);
    return name;
  };

  beforeAll(async () => {
    server = await startServer();
    admin = track(cliUser());
    const result = await login(admin, server.url);
    if (result.exitCode !== 0) throw new Error(result.stderr);
    // Inviting people takes a session with MFA; the profile's session above stays without.
    token = (await turnOnMfa(server.url, await adminToken(server.url))).token;
  });
  afterAll(async () => {
    for (const user of made) user.cleanup();
    await server?.stop();
  });

  it('audit list, search and get, with filters as flags', async () => {
    const name = await auditedPartner(admin);
    const [all, created, none] = await Promise.all([
      admin.json(['audit', 'list', '--all']),
      admin.json(['audit', 'list', '--action', 'partner.create', '--all']),
      admin.json(['audit', 'list', '--from', '2999-01-01T00:00:00Z']),
    ]);
    expect(all.length).toBeGreaterThan(0);
    expect(none).toEqual([]);
    const mine = created.filter((e: { resourceName: string }) => e.resourceName === name);
    expect(mine.map((e: { action: string; resourceName: string }) => [e.action, e.resourceName])).toEqual([['partner.create', name]]);
    expect(created.every((e: { action: string }) => e.action === 'partner.create')).toBe(true);
    const [hits, one] = await Promise.all([
      admin.json(['audit', 'search', '--q', name.toLowerCase(), '--user', ADMIN.email]),
      admin.json(['audit', 'get', mine[0].id]),
    ]);
    expect(hits.map((e: { id: string }) => e.id)).toContain(mine[0].id);
    expect(one).toEqual(mine[0]);
  });

  it('audit verify exits 0 while every chain is intact', async () => {
    await auditedPartner(admin);
    const result = await admin.run(['audit', 'verify', '--output', 'json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).valid).toBe(true);
  });

  it('CLI.md exit codes: audit export without MFA is exit 4 with the MFA hint', async () => {
    const result = await admin.run(['audit', 'export']);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('MFA_REQUIRED');
    expect(result.stderr).toContain('svc mfa setup');
    expect(result.stdout).toBe('');
  });

  it('mfa setup prints the secret, the otpauth URL and recovery codes, with the shown-once warning on stderr', async () => {
    const p = await person(false);
    await signIn(p.user, p);
    const result = await p.user.run(['mfa', 'setup', '--output', 'json']);
    expect(result.exitCode).toBe(0);
    const setup = JSON.parse(result.stdout);
    expect(setup.otpAuthUrl).toMatch(/^otpauth:\/\/totp\//);
    expect(setup.secret).toMatch(/^[A-Z2-7]+=*$/);
    expect(setup.recoveryCodes.length).toBeGreaterThan(0);
    expect(result.stderr).toMatch(/recovery codes are shown once/);
  });

  it('mfa enable stores the fresh MFA session in the profile: audit export works at once, CSV header first', async () => {
    const p = await person(false);
    await signIn(p.user, p);
    const setup = await p.user.run(['mfa', 'setup', '--output', 'json']);
    expect(setup.exitCode).toBe(0);
    const enabled = await p.user.run(['mfa', 'enable', '--code', totp(JSON.parse(setup.stdout).secret)]);
    expect(enabled.exitCode).toBe(0);
    expect(JSON.parse(enabled.stdout)).toMatchObject({ success: true, user: { mfaEnabled: true }, sessionStored: true });
    expect(enabled.stdout).not.toContain('accessToken');
    const exported = await p.user.run(['audit', 'export']);
    expect(exported.exitCode).toBe(0);
    const [header, ...rows] = exported.stdout.trimEnd().split('\n');
    expect(header?.split(',')).toEqual(expect.arrayContaining(['id', 'timestamp', 'action', 'checksum']));
    expect(rows.length).toBeGreaterThan(0);
  });

  it('audit export --out writes the file (JSON lines) and nothing to stdout', async () => {
    const p = await person();
    const file = path.join(p.cli.home, 'audit.jsonl');
    const result = await p.cli.run(['audit', 'export', '--format', 'jsonl', '--out', file, '--action', 'user.mfa.enable']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l)).filter((e) => e.resourceName === p.email).map((e) => e.action)).toEqual(['user.mfa.enable']);
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
  });

  it('03§4.4 audit export --user NAME keeps the rows the server matched by the actor\'s name (the actorName column)', async () => {
    const p = await person();
    const renamed = await p.cli.run(['users', 'me', 'update', '--name', 'Zelda Unusual-Name']);
    expect(renamed.exitCode, renamed.stderr).toBe(0);
    const result = await p.cli.run(['audit', 'export', '--format', 'jsonl', '--user', 'unusual-name']);
    expect(result.exitCode, result.stderr).toBe(0);
    const rows = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as { actorName: string; actorEmail: string });
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.actorName === 'Zelda Unusual-Name' && r.actorEmail === p.email)).toBe(true);
  });

  it('CLI.md audit export: an export no row matches still writes the CSV header (and only it)', async () => {
    const p = await person();
    const result = await p.cli.run(['audit', 'export', '--action', 'no.such.action']);
    expect(result.exitCode).toBe(0);
    // execa drops the final line end: stdout is the header line alone.
    expect(result.stdout).toMatch(/^id,timestamp,[^\n]*,checksum$/);
  });

  it('mfa recovery-codes refuses without --yes off a terminal (exit 2)', async () => {
    const result = await admin.run(['mfa', 'recovery-codes']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--yes');
  });

  it('login without --otp is exit 2 naming it when MFA is on; login --otp CODE signs in with MFA and audit export works', async () => {
    const p = await person();
    const withoutCode = await login(p.user, server.url, { email: p.email, password: p.password });
    expect(withoutCode.exitCode).toBe(2);
    expect(withoutCode.stderr).toContain('--otp');
    // The setup's enable took this period's code: the next one.
    const signedIn = await login(p.user, server.url, { email: p.email, password: p.password }, ['--otp', totp(p.secret, 1)]);
    expect(signedIn.exitCode).toBe(0);
    expect(signedIn.stderr).not.toContain('MFA is not enabled');
    const exported = await p.user.run(['audit', 'export']);
    expect(exported.exitCode).toBe(0);
    expect(exported.stdout.split('\n')[0]).toContain('checksum');
  });

  it('a recovery code also signs in, once', async () => {
    const p = await person();
    const recovery = p.recoveryCodes[0] ?? '';
    await signIn(p.user, p, ['--otp', recovery]);
    expect((await p.user.run(['logout'])).exitCode).toBe(0);
    expect((await login(p.user, server.url, { email: p.email, password: p.password }, ['--otp', recovery])).exitCode).toBe(3);
  });

  it('audit verify exits 6 (invalid state) and names the chain when an entry was altered', async () => {
    // A server of its own: the tampering breaks the log for anything that runs after.
    const tampered = await startServer();
    const user = track(cliUser());
    try {
      expect((await login(user, tampered.url)).exitCode).toBe(0);
      const name = await auditedPartner(user);
      // Tamper with the database behind the running server's back, as an intruder with file access would.
      const db = new Database(path.join(tampered.dataDir, 'svc.db'));
      try {
        db.prepare("UPDATE audit_logs SET action = 'tampered' WHERE resource_name = ?").run(name);
      } finally {
        db.close();
      }
      const result = await user.run(['audit', 'verify', '--output', 'json']);
      expect(result.exitCode).toBe(6);
      expect(JSON.parse(result.stdout).valid).toBe(false);
      expect(result.stderr).toMatch(/^Error: The audit log is not intact: 1 broken chain/m);
    } finally {
      await tampered.stop();
    }
  });
});
