import { Secret, TOTP } from 'otpauth';

/** One TOTP period. */
export const STEP_MS = 30_000;

/** An authenticator app for a base32 secret, as the server provisions it (SHA1, 6 digits, 30 s). */
export function totpFor(secret: string): TOTP {
  return new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
}

/** The code an authenticator shows `steps` periods from now (Date.now, so faked dates count). The server
 * accepts each step once per user, so a second use by the same user takes the next step (within its ±1-step
 * window). */
export function totp(secret: string, steps = 0): string {
  return totpFor(secret).generate({ timestamp: Date.now() + steps * STEP_MS });
}
