import { describe, expect, it } from 'vitest';
import { E2E_TIMEOUT_MS } from '../helpers/cli.js';
import { signedInServer } from '../helpers/fixtures.js';
import { totp } from '../helpers/mfa.js';

describe('e2e: svc mfa setup --quiet says one true thing about the recovery codes (01 §4.5)', { timeout: E2E_TIMEOUT_MS }, () => {
  const shared = signedInServer();

  it('01§4.5 -q prints only the secret; stderr says the codes were not shown and how to replace them, and that advice works', async () => {
    const setup = await shared.user.run(['mfa', 'setup', '-q']);
    expect(setup.exitCode, setup.stderr).toBe(0);
    expect(setup.stdout).toMatch(/^[A-Z2-7]+$/);
    expect(setup.stderr).toContain("this setup's recovery codes were not shown and cannot be retrieved");
    expect(setup.stderr).toContain('replace them with a new set with `svc mfa recovery-codes`');
    // Not also the warning for codes that were shown (they were not): one sentence about the codes, not two.
    expect(setup.stderr).not.toContain('store them somewhere safe now');
    expect(setup.stderr.match(/recovery codes/g)).toHaveLength(1);

    const secret = setup.stdout.trim();
    expect((await shared.user.run(['mfa', 'enable', '--code', totp(secret)])).exitCode).toBe(0);
    // No code: the profile's session from `mfa enable` has MFA, which is what the route needs (01 §4.5).
    const codes = await shared.user.run(['mfa', 'recovery-codes', '--yes', '-q']);
    expect(codes.exitCode, codes.stderr).toBe(0);
    expect(codes.stdout.trim().split('\n')).toHaveLength(10);
    expect(codes.stderr).toContain('The recovery codes are shown once and cannot be retrieved again');
  });

});
