import type Database from 'better-sqlite3';

export const WINDOW_MS = 3600_000;

/** The answer for one request: admitted or not, and the X-RateLimit-* values (01 §5.6, 04 wire notes). */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** max(0, limit − entries in the window including this request). */
  remaining: number;
  /** Unix seconds: the oldest entry of the window plus one hour. */
  reset: number;
  /** Seconds until a request would be admitted again (only when refused). */
  retryAfter: number;
}

/** Admission times of one key, ascending, as a queue (head index instead of shifting the array). */
class SlidingLog {
  private times: number[];
  private head = 0;
  constructor(times: number[]) {
    this.times = times;
  }

  get size(): number {
    return this.times.length - this.head;
  }

  at(index: number): number | undefined {
    return this.times[this.head + index];
  }

  newest(): number | undefined {
    return this.times[this.times.length - 1];
  }

  prune(cutoff: number): void {
    while (this.head < this.times.length && (this.times[this.head] ?? Infinity) <= cutoff) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  push(at: number): void {
    this.times.push(at);
  }
}

/**
 * The exact sliding one-hour window of every API key (01 §5.2, §5.6): an in-memory log per key, loaded from
 * `api_key_hits` on the key's first use after start. Check and record happen in one synchronous step (no
 * `await` between them), so concurrent requests cannot both take the last slot. Admitted requests are
 * queued and appended to the table by `flush` (every second and when the server closes), keeping the
 * write off the request path; a graceful restart rebuilds exactly the same window from the table (a crash
 * could forget at most the last second of admissions). One server process per database is assumed.
 */
export class ApiKeyRateLimiter {
  private readonly logs = new Map<string, SlidingLog>();
  private readonly loadStmt: Database.Statement<[string, number], { at: number }>;
  private readonly insertStmt: Database.Statement<[string, string]>;
  private readonly pruneStmt: Database.Statement<[number]>;
  /** Admission times not yet written, by key: plain number arrays, no object per request. */
  private unwritten = new Map<string, number[]>();

  constructor(private readonly sqlite: Database.Database) {
    this.loadStmt = sqlite.prepare('SELECT at FROM api_key_hits WHERE key_id = ? AND at > ? ORDER BY at');
    // One statement per key and flush: the times travel as one JSON array (a row-by-row loop costs several
    // times more, and the flush holds the event loop while it runs).
    this.insertStmt = sqlite.prepare('INSERT INTO api_key_hits (key_id, at) SELECT ?, value FROM json_each(?)');
    this.pruneStmt = sqlite.prepare('DELETE FROM api_key_hits WHERE at <= ?');
  }

  private logOf(keyId: string, now: number): SlidingLog {
    let log = this.logs.get(keyId);
    if (!log) {
      log = new SlidingLog(this.loadStmt.all(keyId, now - WINDOW_MS).map((r) => r.at));
      this.logs.set(keyId, log);
    }
    log.prune(now - WINDOW_MS);
    return log;
  }

  /** Admits the request and records it, or refuses it (refusals are not recorded: a client that keeps
   * retrying is admitted again as soon as the window has room). */
  hit(keyId: string, limit: number, now = Date.now()): RateDecision {
    const log = this.logOf(keyId, now);
    if (log.size >= limit) {
      // The window has room again once enough of its oldest entries have aged out.
      const freesAt = (log.at(log.size - limit) ?? now) + WINDOW_MS;
      const oldest = log.at(0) ?? now;
      return {
        allowed: false,
        limit,
        remaining: 0,
        reset: Math.ceil((oldest + WINDOW_MS) / 1000),
        retryAfter: Math.max(1, Math.ceil((freesAt - now) / 1000)),
      };
    }
    const pending = this.unwritten.get(keyId);
    if (pending) pending.push(now);
    else this.unwritten.set(keyId, [now]);
    log.push(now);
    const oldest = log.at(0) ?? now;
    return { allowed: true, limit, remaining: Math.max(0, limit - log.size), reset: Math.ceil((oldest + WINDOW_MS) / 1000), retryAfter: 0 };
  }

  /** Appends the admissions queued since the last flush to the table; returns how many. */
  flush(): number {
    if (this.unwritten.size === 0) return 0;
    const batch = this.unwritten;
    this.unwritten = new Map();
    let written = 0;
    try {
      this.sqlite.transaction(() => {
        for (const [keyId, times] of batch) written += this.insertStmt.run(keyId, JSON.stringify(times)).changes;
      })();
    } catch (err) {
      // Keep them, in order, ahead of anything admitted since, for the next attempt.
      for (const [keyId, later] of this.unwritten) batch.set(keyId, [...(batch.get(keyId) ?? []), ...later]);
      this.unwritten = batch;
      throw err;
    }
    return written;
  }

  /** Forgets entries older than the window, in the table and in memory (periodic job). */
  prune(now = Date.now()): number {
    const removed = this.pruneStmt.run(now - WINDOW_MS).changes;
    for (const [keyId, log] of this.logs) {
      const newest = log.newest();
      if (newest === undefined || newest <= now - WINDOW_MS) this.logs.delete(keyId);
    }
    return removed;
  }
}
