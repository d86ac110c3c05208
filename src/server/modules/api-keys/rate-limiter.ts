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

/** The admissions of one key within one second, as written to `api_key_hit_seconds`. */
interface SecondOfHits {
  second: number;
  hits: number;
  firstAt: number;
  lastAt: number;
}

/**
 * The exact sliding one-hour window of every API key (01 §5.2, §5.6): an in-memory log per key, loaded from
 * `api_key_hit_seconds` on the key's first use after start. Check and record happen in one synchronous step (no
 * `await` between them), so concurrent requests cannot both take the last slot. Admissions are counted per key
 * and second and written by `flush` (every second and when the server closes), off the request path: one row per
 * key and second however busy the key (a row per request held the event loop ~1 µs a row to write and as much to
 * prune: 7 ms a second at 7,000 requests a second, and half a second a minute for the prune). A graceful restart
 * rebuilds the window with each second's first admission exact and the others at its last (never earlier than
 * they were, so a restart never admits more; a crash could forget at most the last second of admissions). One
 * server process per database is assumed.
 */
export class ApiKeyRateLimiter {
  private readonly logs = new Map<string, SlidingLog>();
  private readonly loadStmt: Database.Statement<[string, number], { hits: number; firstAt: number; lastAt: number }>;
  private readonly upsertStmt: Database.Statement<[string, number, number, number, number]>;
  private readonly pruneStmt: Database.Statement<[number]>;
  /** Admissions not yet written, by key, one entry per second they fell in (in the order they came). */
  private unwritten = new Map<string, SecondOfHits[]>();

  constructor(private readonly sqlite: Database.Database) {
    this.loadStmt = sqlite.prepare(
      'SELECT hits, first_at AS firstAt, last_at AS lastAt FROM api_key_hit_seconds WHERE key_id = ? AND last_at > ? ORDER BY second',
    );
    this.upsertStmt = sqlite.prepare(
      `INSERT INTO api_key_hit_seconds (key_id, second, hits, first_at, last_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (key_id, second) DO UPDATE SET hits = hits + excluded.hits,
         first_at = min(first_at, excluded.first_at), last_at = max(last_at, excluded.last_at)`,
    );
    this.pruneStmt = sqlite.prepare('DELETE FROM api_key_hit_seconds WHERE last_at <= ?');
  }

  private logOf(keyId: string, now: number): SlidingLog {
    let log = this.logs.get(keyId);
    if (!log) {
      const cutoff = now - WINDOW_MS;
      const times: number[] = [];
      for (const { hits, firstAt, lastAt } of this.loadStmt.all(keyId, cutoff)) {
        if (firstAt > cutoff) times.push(firstAt);
        for (let i = 1; i < hits; i++) times.push(lastAt);
      }
      log = new SlidingLog(times);
      this.logs.set(keyId, log);
    }
    log.prune(now - WINDOW_MS);
    return log;
  }

  /** Counts one admission of the key for the next flush. */
  private count(keyId: string, now: number): void {
    const second = Math.floor(now / 1000);
    const pending = this.unwritten.get(keyId);
    const current = pending?.[pending.length - 1];
    if (current && current.second === second) {
      current.hits++;
      current.firstAt = Math.min(current.firstAt, now);
      current.lastAt = Math.max(current.lastAt, now);
      return;
    }
    const entry = { second, hits: 1, firstAt: now, lastAt: now };
    if (pending) pending.push(entry);
    else this.unwritten.set(keyId, [entry]);
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
    this.count(keyId, now);
    log.push(now);
    const oldest = log.at(0) ?? now;
    return { allowed: true, limit, remaining: Math.max(0, limit - log.size), reset: Math.ceil((oldest + WINDOW_MS) / 1000), retryAfter: 0 };
  }

  /** Writes the admissions counted since the last flush to the table; returns how many. */
  flush(): number {
    if (this.unwritten.size === 0) return 0;
    const batch = this.unwritten;
    this.unwritten = new Map();
    let written = 0;
    try {
      this.sqlite.transaction(() => {
        for (const [keyId, seconds] of batch) {
          for (const { second, hits, firstAt, lastAt } of seconds) {
            this.upsertStmt.run(keyId, second, hits, firstAt, lastAt);
            written += hits;
          }
        }
      })();
    } catch (err) {
      // Keep them, ahead of anything admitted since, for the next attempt (a second written twice adds up).
      for (const [keyId, later] of this.unwritten) batch.set(keyId, [...(batch.get(keyId) ?? []), ...later]);
      this.unwritten = batch;
      throw err;
    }
    return written;
  }

  /** Forgets entries older than the window, in the table and in memory (periodic job); returns how many rows
   * (seconds of one key) it removed. */
  prune(now = Date.now()): number {
    const removed = this.pruneStmt.run(now - WINDOW_MS).changes;
    for (const [keyId, log] of this.logs) {
      const newest = log.newest();
      if (newest === undefined || newest <= now - WINDOW_MS) this.logs.delete(keyId);
    }
    return removed;
  }
}
