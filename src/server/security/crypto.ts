import { createCipheriv, createDecipheriv, hash, randomBytes, randomFillSync, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../errors.js';

/** One-shot `crypto.hash` (Node 20.12+): no Hash object per call, about half the time of createHash for the
 * short texts hashed on every audited write and API-key lookup. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** How many random bytes secureRandomBytes draws from the system at once. */
const RANDOM_POOL_BYTES = 4096;
const randomPool = Buffer.allocUnsafeSlow(RANDOM_POOL_BYTES);
let randomPoolOffset = RANDOM_POOL_BYTES;

/**
 * SIZE bytes from the system's CSPRNG, as `crypto.randomBytes`, drawn from a pool filled 4 KiB at a time: each call
 * of randomBytes costs ~8 µs here (OpenSSL's RAND_bytes), paid by every key, token and IV a request makes; a pooled
 * draw is a copy (what Node's own randomUUID does). Each byte is handed out once, and zeroed in the pool as it goes.
 */
export function secureRandomBytes(size: number): Buffer {
  if (size > RANDOM_POOL_BYTES / 8) return randomBytes(size);
  if (randomPoolOffset + size > RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomPoolOffset = 0;
  }
  const bytes = Buffer.allocUnsafe(size);
  randomPool.copy(bytes, 0, randomPoolOffset, randomPoolOffset + size);
  randomPool.fill(0, randomPoolOffset, randomPoolOffset + size);
  randomPoolOffset += size;
  return bytes;
}

export function randomToken(bytes = 32): string {
  return secureRandomBytes(bytes).toString('base64url');
}

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** AES-256-GCM under the server's encryption key: `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export class SecretBox {
  private readonly key: Buffer;
  constructor(hexKey: string) {
    this.key = Buffer.from(hexKey, 'hex');
    if (this.key.length !== 32) throw new Error('encryption key must be 32 bytes');
  }

  seal(plaintext: string): string {
    const iv = secureRandomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join('.');
  }

  /** The plaintext; a value these keys cannot open (other server keys, a damaged row) is a 503
   * SERVER_KEYS_MISMATCH, never a 500: the server refuses to start with keys that do not belong to its database
   * (server-secrets.ts), so this is a single damaged value, or keys changed under a running server. */
  open(sealed: string): string {
    try {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('unrecognised sealed value');
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new DomainError(
        'unavailable',
        "A value stored on the server cannot be decrypted with the server's keys; ask its operator to check them",
        'SERVER_KEYS_MISMATCH',
      );
    }
  }
}
