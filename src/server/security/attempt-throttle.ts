/** How an attempt ended: the secret did not match (it keeps counting), matched (the key starts again), or was
 * never checked (nothing was sent, the check could not run): it does not count. */
export type AttemptOutcome = 'failed' | 'succeeded' | 'released';

export type AttemptReservation =
  { allowed: false; retryAfterSeconds: number } | { allowed: true; settle(outcome: AttemptOutcome): void };

/** Every this many reservations, a sweep drops the keys whose attempts have all left their window. */
const SWEEP_EVERY = 1000;

/**
 * Throttled guesses of a secret whose check is awaited (a password hash waits its turn in the scrypt queue): the
 * attempt is counted when it starts, in the same turn as the limit check, so parallel guesses cannot all pass the
 * check before the first failure is recorded; each is settled once its check has answered. A failure keeps its
 * count until it leaves the window; a success clears the key (as a successful sign-in clears its failures); an
 * attempt whose secret was never checked is released. So at most `limit` guesses are ever checked in a window,
 * however many arrive at once. Counts are per process, like SlidingWindowLimiter's: a restart only loosens the
 * throttle briefly. Sign-in's lockout, the current-password check and PAM re-authentication use it.
 */
export class AttemptThrottle {
  /** Per key, its counted attempts (settled failures and attempts in flight), oldest first. */
  private readonly attempts = new Map<string, { at: number; failed: boolean }[]>();
  private reservations = 0;

  /** Counts an attempt on `key` now, unless `limit` attempts of the last `windowMs` already count. */
  reserve(key: string, limit: number, windowMs: number, now = Date.now()): AttemptReservation {
    const counted = this.recent(key, windowMs, now);
    if (counted.length >= limit) {
      const oldest = counted[0]?.at ?? now;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)) };
    }
    const attempt = { at: now, failed: false };
    counted.push(attempt);
    this.attempts.set(key, counted);
    if (++this.reservations % SWEEP_EVERY === 0) this.sweep(windowMs, now);
    let settled = false;
    return {
      allowed: true,
      settle: (outcome) => {
        if (settled) return;
        settled = true;
        if (outcome === 'succeeded') this.attempts.delete(key);
        else if (outcome === 'released') this.drop(key, attempt);
        else attempt.failed = true;
      },
    };
  }

  /** How many attempts on `key` count now (settled failures and attempts in flight). */
  count(key: string, windowMs: number, now = Date.now()): number {
    return this.recent(key, windowMs, now).length;
  }

  /** How many attempts on `key` failed within the window (attempts in flight left out). */
  failures(key: string, windowMs: number, now = Date.now()): number {
    return this.recent(key, windowMs, now).filter((a) => a.failed).length;
  }

  /** Forgets every attempt on `key` (a password reset starts the count again). */
  clear(key: string): void {
    this.attempts.delete(key);
  }

  private recent(key: string, windowMs: number, now: number): { at: number; failed: boolean }[] {
    return (this.attempts.get(key) ?? []).filter((a) => a.at > now - windowMs);
  }

  private drop(key: string, attempt: { at: number; failed: boolean }): void {
    const left = (this.attempts.get(key) ?? []).filter((a) => a !== attempt);
    if (left.length > 0) this.attempts.set(key, left);
    else this.attempts.delete(key);
  }

  private sweep(windowMs: number, now: number): void {
    for (const [key, list] of this.attempts) if (!list.some((a) => a.at > now - windowMs)) this.attempts.delete(key);
  }
}
