import { Secret, TOTP } from 'otpauth';
import type { CliUser } from './cli.js';

const STEP_MS = 30_000;

/** The code an authenticator shows `steps` periods from now. The server accepts each step once per user, so a
 * second sign-in by the same user takes the next step (within its ±1-step window). */
export function totp(secret: string, steps = 0): string {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: Date.now() + steps * STEP_MS,
  });
}

/** `svc mfa setup` then `svc mfa enable --code`, as a person with an authenticator app: the profile then holds a
 * session with MFA. Returns the TOTP secret. */
export async function enableMfa(user: CliUser): Promise<string> {
  const setup = await user.run(['mfa', 'setup', '--output', 'json']);
  if (setup.exitCode !== 0) throw new Error(`mfa setup exited ${setup.exitCode}:\n${setup.stderr}`);
  const { secret } = JSON.parse(setup.stdout) as { secret: string };
  const enabled = await user.run(['mfa', 'enable', '--code', totp(secret)]);
  if (enabled.exitCode !== 0) throw new Error(`mfa enable exited ${enabled.exitCode}:\n${enabled.stderr}`);
  return secret;
}
