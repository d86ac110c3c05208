/** An in-memory sliding-log limiter for sign-in throttling (04 wire notes "Sign-in"). Counts are per
 * process and start empty after a restart, which only ever loosens a throttle briefly. */
export class SlidingWindowLimiter {
  private readonly hits = new Map<string, number[]>();
  private sweeps = 0;

  /** Records a hit and says whether it is within `limit` per `windowMs`. */
  hit(key: string, limit: number, windowMs: number, now = Date.now()): { allowed: boolean; retryAfterSeconds: number } {
    const recent = this.recent(key, windowMs, now);
    if (recent.length >= limit) {
      const oldest = recent[0] ?? now;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((oldest + windowMs - now) / 1000)) };
    }
    recent.push(now);
    this.hits.set(key, recent);
    if (++this.sweeps % 1000 === 0) this.sweep(now, windowMs);
    return { allowed: true, retryAfterSeconds: 0 };
  }

  count(key: string, windowMs: number, now = Date.now()): number {
    return this.recent(key, windowMs, now).length;
  }

  reset(key: string): void {
    this.hits.delete(key);
  }

  private recent(key: string, windowMs: number, now: number): number[] {
    return (this.hits.get(key) ?? []).filter((t) => t > now - windowMs);
  }

  private sweep(now: number, windowMs: number): void {
    for (const [key, times] of this.hits) if (!times.some((t) => t > now - windowMs)) this.hits.delete(key);
  }
}
