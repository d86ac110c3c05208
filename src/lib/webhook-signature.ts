// 02 §5 webhook signatures, shared by the server's sender (modules/webhooks) and `svc webhooks verify`. It imports
// nothing of ours, so either side may use it.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** 02 §5: `sha256=` + hex HMAC-SHA256(secret, `<timestamp>.<raw body>`). */
export function signPayload(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** The X-Svc-Signature value: one signature per secret, comma-separated (two during a rotation's overlap). */
export function signatureHeader(secrets: readonly string[], timestamp: string, body: string): string {
  return secrets.map((secret) => signPayload(secret, timestamp, body)).join(',');
}

export type VerifyResult = { valid: true } | { valid: false; reason: string };

/** What a receiver does (02 §5.3): recompute, compare in constant time, refuse a timestamp outside the tolerance.
 * `signature` may hold several comma-separated `sha256=` values; one match is enough. */
export function verifySignature(input: {
  secret: string;
  body: string;
  signature: string;
  timestamp: string;
  toleranceSeconds: number;
  now?: number;
}): VerifyResult {
  const ts = Number(input.timestamp);
  if (!/^\d+$/.test(input.timestamp) || !Number.isSafeInteger(ts)) return { valid: false, reason: 'timestamp is not Unix milliseconds' };
  const skew = Math.abs((input.now ?? Date.now()) - ts);
  if (skew > input.toleranceSeconds * 1000) return { valid: false, reason: `timestamp is outside the tolerance of ${input.toleranceSeconds} s` };
  const expected = Buffer.from(signPayload(input.secret, input.timestamp, input.body));
  const candidates = input.signature.split(',').map((s) => Buffer.from(s.trim()));
  const match = candidates.some((c) => c.length === expected.length && timingSafeEqual(c, expected));
  return match ? { valid: true } : { valid: false, reason: 'signature does not match' };
}
