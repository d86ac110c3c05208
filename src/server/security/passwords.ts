import { randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { DomainError } from '../errors.js';

// scrypt from Node's crypto (OpenSSL): memory-hard, no native addon to build. N=2^15, r=8, p=1 is the
// OWASP-recommended floor; the parameters are stored with each hash so they can be raised later.
const N = 2 ** 15;
const R = 8;
const P = 1;
const KEYLEN = 64;
const MAXMEM = 128 * N * R * 2;

/**
 * How many hashes run at once. Each takes 128·N·r bytes (32 MiB at N=2^15, r=8) outside the JS heap while it runs,
 * and libuv runs up to four at a time: four sign-ins or invitation acceptances at once added ~130 MB to the
 * server's RSS (the alert benchmark's 257 MB peak came from its set-up accepting invitations four at a time; two
 * at a time still peaked at 196.5 MB). One at a time keeps it at 32 MiB; the others wait their turn (a hash takes
 * ~50 ms on the target machine), which tells an attacker nothing about the account.
 */
export const MAX_CONCURRENT_HASHES = 1;
/**
 * How many hashes may wait for the slot (~50 ms each, so the last waits under two seconds). Past that a sign-in
 * burst is answered 503 with Retry-After instead of queueing without bound: every request in the queue holds a
 * connection and its memory, and a client that waited longer would have timed out anyway.
 */
export const MAX_WAITING_HASHES = 32;
let running = 0;
const waiting: (() => void)[] = [];

/** Hashes running and waiting now (for tests and diagnostics). */
export function hashLoad(): { running: number; waiting: number } {
  return { running, waiting: waiting.length };
}

async function scrypt(password: string, salt: Buffer, keylen: number, options: ScryptOptions): Promise<Buffer> {
  if (running < MAX_CONCURRENT_HASHES) running += 1;
  else if (waiting.length >= MAX_WAITING_HASHES) throw passwordChecksBusy();
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      scryptCb(password.normalize('NFKC'), salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key)));
    });
  } finally {
    // Hand the slot straight to the next waiter (running stays the same), or free it.
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

const passwordChecksBusy = () =>
  new DomainError('unavailable', 'Too many password checks in progress; try again shortly', 'BUSY', { retryAfterSeconds: 1 });

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  if (!stored) {
    // Spend the same time as a real check so a missing account is not told apart by timing.
    await hashPassword(password);
    return false;
  }
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 128 * Number(n) * Number(r) * 2,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

const COMMON = new Set(['password', 'password1', 'password123', '12345678', '123456789', 'qwerty123', 'letmein1', 'iloveyou', 'admin123', 'welcome1']);

/** Password strength (01 §4.5, §4.6): at least 8 characters, letters and digits, not a common password.
 * Returns the first problem, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < 8) return 'Password must be at least 8 characters';
  if (password.length > 256) return 'Password must be at most 256 characters';
  if (!/[A-Za-z]/.test(password)) return 'Password must contain a letter';
  if (!/[0-9]/.test(password)) return 'Password must contain a number';
  if (!/[a-z]/.test(password) || !/[A-Z]/.test(password)) return 'Password must contain upper and lower case letters';
  if (COMMON.has(password.toLowerCase())) return 'Password is too common';
  return null;
}
