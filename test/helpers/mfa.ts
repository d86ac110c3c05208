import type { CliUser } from './cli.js';
import { totp } from './totp.js';

export { totp };

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
