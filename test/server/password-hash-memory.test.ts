import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/server/errors.js';
import { hashLoad, hashPassword, MAX_CONCURRENT_HASHES, MAX_WAITING_HASHES, verifyPassword } from '../../src/server/security/passwords.js';

describe('password hashing memory (issue 11 benchmark: server RSS < 200 MB)', () => {
  it('runs at most MAX_CONCURRENT_HASHES scrypt hashes at once (32 MiB each); the others wait and all complete', { timeout: 120_000 }, async () => {
    expect(MAX_CONCURRENT_HASHES).toBe(1);
    const passwords = Array.from({ length: 4 }, (_, i) => `Passw0rd-${i}!`);
    const hashes = passwords.map((p) => hashPassword(p));
    // The slot is taken synchronously by the first call: one runs, three wait.
    expect(hashLoad()).toEqual({ running: 1, waiting: 3 });
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, hashLoad().running)), 1);
    try {
      const stored = await Promise.all(hashes);
      expect(await verifyPassword(passwords[3] ?? '', stored[3])).toBe(true);
      expect(await verifyPassword('wrong', stored[0])).toBe(false);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeLessThanOrEqual(MAX_CONCURRENT_HASHES);
    expect(hashLoad()).toEqual({ running: 0, waiting: 0 });
  });

  it('a failing hash frees its slot', { timeout: 60_000 }, async () => {
    const bad = hashPassword('x'.repeat(10)).then(() => verifyPassword('x', 'scrypt$3$8$1$c2FsdA$a2V5'));
    // N=3 is not a power of two: scrypt rejects; the slot must come back.
    await expect(bad).rejects.toThrow();
    expect(hashLoad()).toEqual({ running: 0, waiting: 0 });
  });

  it('a burst past MAX_WAITING_HASHES is refused at once as unavailable (503, Retry-After) and loses no queued hash', { timeout: 120_000 }, async () => {
    const queued = Array.from({ length: MAX_CONCURRENT_HASHES + MAX_WAITING_HASHES }, (_, i) => hashPassword(`Queued-${i}9`));
    expect(hashLoad()).toEqual({ running: MAX_CONCURRENT_HASHES, waiting: MAX_WAITING_HASHES });
    const refused = await hashPassword('One-too-many1').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ kind: 'unavailable', code: 'BUSY', retryAfterSeconds: 1 });
    const stored = await Promise.all(queued);
    expect(stored.every((hash) => hash.startsWith('scrypt$'))).toBe(true);
    expect(hashLoad()).toEqual({ running: 0, waiting: 0 });
    // Room again once the burst is through.
    expect(await verifyPassword('Queued-09', stored[0])).toBe(true);
  });
});
