import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliUser, type CliUser, E2E_TIMEOUT_MS, type E2eServer, login, startServer } from '../helpers/cli.js';
import { totp } from '../helpers/mfa.js';

describe('e2e: svc mfa setup --quiet says one true thing about the recovery codes (01 §4.5)', { timeout: E2E_TIMEOUT_MS }, () => {
  let server: E2eServer;
  let user: CliUser;

  beforeAll(async () => {
    server = await startServer();
    user = cliUser();
    const signedIn = await login(user, server.url);
    if (signedIn.exitCode !== 0) throw new Error(signedIn.stderr);
  });
  afterAll(async () => {
    user?.cleanup();
    await server?.stop();
  });

  it('01§4.5 -q prints only the secret; stderr says the codes were not shown and how to replace them, and that advice works', async () => {
    const setup = await user.run(['mfa', 'setup', '-q']);
    expect(setup.exitCode, setup.stderr).toBe(0);
    expect(setup.stdout).toMatch(/^[A-Z2-7]+$/);
    expect(setup.stderr).toContain("this setup's recovery codes were not shown and cannot be retrieved");
    expect(setup.stderr).toContain('replace them with a new set with `svc mfa recovery-codes`');
    // Not also the warning for codes that were shown (they were not): one sentence about the codes, not two.
    expect(setup.stderr).not.toContain('store them somewhere safe now');
    expect(setup.stderr.match(/recovery codes/g)).toHaveLength(1);

    const secret = setup.stdout.trim();
    expect((await user.run(['mfa', 'enable', '--code', totp(secret)])).exitCode).toBe(0);
    // The next step: the code of the step just used is refused once used.
    const codes = await user.run(['mfa', 'recovery-codes', '--code', totp(secret, 1), '--yes', '-q']);
    expect(codes.exitCode, codes.stderr).toBe(0);
    expect(codes.stdout.trim().split('\n')).toHaveLength(10);
    expect(codes.stderr).toContain('The recovery codes are shown once and cannot be retrieved again');
  });

});
