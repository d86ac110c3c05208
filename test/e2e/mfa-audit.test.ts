import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, cliUser, type CliUser, E2E_TIMEOUT_MS, type E2eServer, login, startServer } from '../helpers/cli.js';

const STEP_MS = 30_000;

/** The code an authenticator shows `steps` periods from now. The server refuses a step it has accepted
 * before, so each use takes the next step (within its ±1-step window). */
function code(secret: string, steps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + steps * STEP_MS });
}

describe('e2e: the audit log and MFA (CLI.md "Errors and exit codes", 01 §4.5)', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let user: CliUser;

  beforeAll(async () => {
    server = await startServer();
    user = cliUser();
    const result = await login(user, server.url);
    if (result.exitCode !== 0) throw new Error(result.stderr);
    const partner = await user.run(['partners', 'create', '--name', 'Audited', '--slug', 'audited', '-q']);
    if (partner.exitCode !== 0) throw new Error(partner.stderr);
  });
  afterAll(async () => {
    user?.cleanup();
    await server?.stop();
  });

  it('audit list, search and get, with filters as flags', async () => {
    const [all, created, none] = await Promise.all([
      user.json(['audit', 'list', '--all']),
      user.json(['audit', 'list', '--action', 'partner.create']),
      user.json(['audit', 'list', '--from', '2999-01-01T00:00:00Z']),
    ]);
    expect(all.length).toBeGreaterThan(0);
    expect(none).toEqual([]);
    expect(created.map((e: { action: string; resourceName: string }) => [e.action, e.resourceName])).toEqual([['partner.create', 'Audited']]);
    const [hits, one] = await Promise.all([user.json(['audit', 'search', '--q', 'audited', '--user', ADMIN.email]), user.json(['audit', 'get', created[0].id])]);
    expect(hits.map((e: { id: string }) => e.id)).toContain(created[0].id);
    expect(one).toEqual(created[0]);
  });

  it('audit verify exits 0 while every chain is intact', async () => {
    const result = await user.run(['audit', 'verify', '--output', 'json']);
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout).valid).toBe(true);
  });

  it('CLI.md exit codes: audit export without MFA is exit 4 with the MFA hint', async () => {
    const result = await user.run(['audit', 'export']);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('MFA_REQUIRED');
    expect(result.stderr).toContain('svc mfa setup');
    expect(result.stdout).toBe('');
  });

  let secret = '';
  let recoveryCodes: string[] = [];

  it('mfa setup prints the secret, the otpauth URL and recovery codes, with the shown-once warning on stderr', async () => {
    const result = await user.run(['mfa', 'setup', '--output', 'json']);
    expect(result.exitCode).toBe(0);
    const setup = JSON.parse(result.stdout);
    expect(setup.otpAuthUrl).toMatch(/^otpauth:\/\/totp\//);
    expect(setup.recoveryCodes.length).toBeGreaterThan(0);
    expect(result.stderr).toMatch(/recovery codes are shown once/);
    secret = setup.secret;
    recoveryCodes = setup.recoveryCodes;
  });

  it('mfa enable stores the fresh MFA session in the profile: audit export works at once, CSV header first', async () => {
    expect(secret).not.toBe('');
    const enabled = await user.run(['mfa', 'enable', '--code', code(secret)]);
    expect(enabled.exitCode).toBe(0);
    expect(JSON.parse(enabled.stdout)).toMatchObject({ success: true, user: { mfaEnabled: true }, sessionStored: true });
    expect(enabled.stdout).not.toContain('accessToken');
    const exported = await user.run(['audit', 'export']);
    expect(exported.exitCode).toBe(0);
    const [header, ...rows] = exported.stdout.trimEnd().split('\n');
    expect(header?.split(',')).toEqual(expect.arrayContaining(['id', 'timestamp', 'action', 'checksum']));
    expect(rows.length).toBeGreaterThan(0);
  });

  it('audit export --out writes the file (JSON lines) and nothing to stdout', async () => {
    const file = path.join(user.home, 'audit.jsonl');
    const result = await user.run(['audit', 'export', '--format', 'jsonl', '--out', file, '--action', 'partner.create']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('');
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).action)).toEqual(['partner.create']);
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
  });

  it('mfa recovery-codes refuses without --yes off a terminal (exit 2)', async () => {
    const result = await user.run(['mfa', 'recovery-codes']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--yes');
  });

  it('after logout, login --otp CODE signs in with MFA and audit export still works', async () => {
    expect((await user.run(['logout'])).exitCode).toBe(0);
    const withoutCode = await login(user, server.url);
    expect(withoutCode.exitCode).toBe(2);
    expect(withoutCode.stderr).toContain('--otp');
    const signedIn = await login(user, server.url, ADMIN, ['--otp', code(secret, 1)]);
    expect(signedIn.exitCode).toBe(0);
    expect(signedIn.stderr).not.toContain('MFA is not enabled');
    const exported = await user.run(['audit', 'export']);
    expect(exported.exitCode).toBe(0);
    expect(exported.stdout.split('\n')[0]).toContain('checksum');
  });

  it('a recovery code also signs in, once', async () => {
    expect((await user.run(['logout'])).exitCode).toBe(0);
    const recovery = recoveryCodes[0] ?? '';
    expect((await login(user, server.url, ADMIN, ['--otp', recovery])).exitCode).toBe(0);
    expect((await user.run(['logout'])).exitCode).toBe(0);
    expect((await login(user, server.url, ADMIN, ['--otp', recovery])).exitCode).toBe(3);
  });

  it('audit verify exits 6 (invalid state) and names the chain when an entry was altered', async () => {
    // Tamper with the database behind the running server's back, as an intruder with file access would.
    const db = new Database(path.join(server.dataDir, 'svc.db'));
    try {
      db.prepare("UPDATE audit_logs SET action = 'tampered' WHERE action = 'partner.create'").run();
    } finally {
      db.close();
    }
    expect((await login(user, server.url, ADMIN, ['--otp', recoveryCodes[1] ?? ''])).exitCode).toBe(0);
    const result = await user.run(['audit', 'verify', '--output', 'json']);
    expect(result.exitCode).toBe(6);
    expect(JSON.parse(result.stdout).valid).toBe(false);
    expect(result.stderr).toMatch(/^Error: The audit log is not intact: 1 broken chain/m);
  });
});
