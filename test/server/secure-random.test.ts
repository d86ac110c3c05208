import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { randomToken, secureRandomBytes } from '../../src/server/security/crypto.js';

/** security/crypto.ts secureRandomBytes: the system CSPRNG drawn 4 KiB at a time, each byte handed out once. */
describe('secure random bytes from a pool (security/crypto.ts)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    syncBuiltinESMExports();
  });

  it('01§2.2 keys and tokens: the sizes asked for, never two alike, across many refills of the pool', () => {
    const seen = new Set<string>();
    // 32-byte draws over ~16 refills of the 4 KiB pool, and odd sizes that end a pool part-way.
    for (let i = 0; i < 2_000; i++) {
      const size = [32, 24, 12, 7][i % 4] as number;
      const bytes = secureRandomBytes(size);
      expect(bytes.length).toBe(size);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(2_000);
    expect(randomToken()).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('draws from the system CSPRNG and hands out the bytes it drew, once, not what the pool held before', () => {
    const fill = vi.spyOn(crypto, 'randomFillSync');
    // The module's named import of node:crypto follows the spy.
    syncBuiltinESMExports();
    // Exhaust what the pool holds now, so the next draw refills it.
    let drawn = 0;
    while (fill.mock.calls.length === 0 && drawn < 8_192) {
      secureRandomBytes(32);
      drawn += 32;
    }
    expect(fill).toHaveBeenCalledTimes(1);
    const pool = fill.mock.calls[0]?.[0] as Buffer;
    const copy = Buffer.from(pool);
    const first = secureRandomBytes(32);
    // The call that refilled took the first 32 bytes; the next takes the 32 after them, as the CSPRNG left them.
    expect(first.equals(copy.subarray(32, 64))).toBe(true);
    expect(first.equals(Buffer.alloc(32))).toBe(false);
    // Both are zeroed in the pool once taken; the rest is untouched.
    expect(pool.subarray(0, 64).equals(Buffer.alloc(64))).toBe(true);
    expect(pool.subarray(64).equals(copy.subarray(64))).toBe(true);
  });

  it('a draw larger than an eighth of the pool goes to the CSPRNG directly', () => {
    const big = secureRandomBytes(4096);
    expect(big.length).toBe(4096);
    expect(big.equals(Buffer.alloc(4096))).toBe(false);
  });
});
