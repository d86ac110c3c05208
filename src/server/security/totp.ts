import { Secret, TOTP } from 'otpauth';
import { secureRandomBytes, sha256Hex } from './crypto.js';

/** RFC 6238 parameters every authenticator app understands: SHA-1, 6 digits, 30-second steps. */
export const TOTP_ISSUER = 'svc';
export const TOTP_PERIOD_SECONDS = 30;
const TOTP_DIGITS = 6;
const TOTP_ALGORITHM = 'SHA1';
/** Codes from one step before or after the current one are accepted (clock drift). */
const TOTP_WINDOW = 1;
/** 160-bit secrets, the size RFC 4226 recommends for HMAC-SHA-1. */
const SECRET_BYTES = 20;

export const RECOVERY_CODE_COUNT = 10;
// Crockford base32 without the look-alikes I, L, O, U: easy to read off paper and type back.
const RECOVERY_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RECOVERY_GROUPS = 4;
const RECOVERY_GROUP_LENGTH = 4;

export interface TotpEnrollment {
  /** Base32, as typed into an authenticator by hand. */
  secret: string;
  otpAuthUrl: string;
  qrCodeDataUrl: string;
}

function totpOf(secretBase32: string, label = ''): TOTP {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label,
    algorithm: TOTP_ALGORITHM,
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: Secret.fromBase32(secretBase32),
  });
}

/** A new TOTP secret with its `otpauth://` URL (issuer svc, label the e-mail) and a QR code of that URL. */
export async function newTotpEnrollment(label: string): Promise<TotpEnrollment> {
  const secret = new Secret({ size: SECRET_BYTES }).base32;
  const otpAuthUrl = totpOf(secret, label).toString();
  // qrcode is loaded on first use: only MFA set-up draws one.
  const { default: QRCode } = await import('qrcode');
  const qrCodeDataUrl = await QRCode.toDataURL(otpAuthUrl, { errorCorrectionLevel: 'M' });
  return { secret, otpAuthUrl, qrCodeDataUrl };
}

export function isTotpCode(code: string): boolean {
  return /^\d{6}$/.test(code);
}

/** The time step a code belongs to when it is valid within ±1 step of now, else null. The caller refuses a
 * step it has already accepted, so a code cannot be replayed while it is still valid. */
export function totpStep(secretBase32: string, code: string, now = Date.now()): number | null {
  if (!isTotpCode(code)) return null;
  const totp = totpOf(secretBase32);
  const delta = totp.validate({ token: code, timestamp: now, window: TOTP_WINDOW });
  if (delta === null) return null;
  return totp.counter({ timestamp: now }) + delta;
}

/** Ten single-use recovery codes of 80 random bits each, shown as `XXXX-XXXX-XXXX-XXXX`. */
export function newRecoveryCodes(count = RECOVERY_CODE_COUNT): string[] {
  const codes: string[] = [];
  for (let i = 0; i < count; i++) {
    const bytes = secureRandomBytes(RECOVERY_GROUPS * RECOVERY_GROUP_LENGTH);
    // 256 is a multiple of 32, so `byte % 32` is uniform.
    const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length] ?? '0').join('');
    const groups: string[] = [];
    for (let g = 0; g < RECOVERY_GROUPS; g++)
      groups.push(chars.slice(g * RECOVERY_GROUP_LENGTH, (g + 1) * RECOVERY_GROUP_LENGTH));
    codes.push(groups.join('-'));
  }
  return codes;
}

/** Recovery codes are compared case-insensitively and without separators or spaces. */
export function normalizeRecoveryCode(code: string): string {
  return code.replace(/[\s-]/g, '').toUpperCase();
}

/** SHA-256 is enough for 80-bit random codes: they cannot be guessed from the hash. */
export function hashRecoveryCode(code: string): string {
  return sha256Hex(`svc-recovery:${normalizeRecoveryCode(code)}`);
}
