import type Database from 'better-sqlite3';

interface PendingUse {
  count: number;
  /** Unix milliseconds; written as an ISO string. */
  lastUsedAt: number;
}

/**
 * lastUsedAt and usageCount of API keys (01 §2.1, §5.2 "updated asynchronously"): counted in memory on the
 * request path and written in batches by `flush` (ApiKeysService runs it every second and when the server
 * closes, so a graceful shutdown loses nothing).
 */
export class ApiKeyUsage {
  private pending = new Map<string, PendingUse>();
  private readonly updateStmt: Database.Statement<[{ id: string; count: number; at: string }]>;

  constructor(private readonly sqlite: Database.Database) {
    this.updateStmt = sqlite.prepare(
      `UPDATE api_keys SET usage_count = usage_count + @count,
         last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < @at THEN @at ELSE last_used_at END
       WHERE id = @id`,
    );
  }

  /** Counts one use at `at` (Unix milliseconds). */
  record(keyId: string, at: number): void {
    const entry = this.pending.get(keyId);
    if (entry) {
      entry.count++;
      if (at > entry.lastUsedAt) entry.lastUsedAt = at;
    } else {
      this.pending.set(keyId, { count: 1, lastUsedAt: at });
    }
  }

  /** Drops the uses not yet written (rotation resets the statistics: 01 §4.1). */
  discard(keyId: string): void {
    this.pending.delete(keyId);
  }

  /** Writes what has been counted since the last flush; returns how many keys were updated. */
  flush(): number {
    if (this.pending.size === 0) return 0;
    const batch = this.pending;
    this.pending = new Map();
    try {
      this.sqlite.transaction(() => {
        for (const [id, use] of batch) this.updateStmt.run({ id, count: use.count, at: new Date(use.lastUsedAt).toISOString() });
      })();
    } catch (err) {
      // Keep the counts for the next attempt rather than lose them.
      for (const [id, use] of batch) {
        const later = this.pending.get(id);
        this.pending.set(id, later ? { count: later.count + use.count, lastUsedAt: later.lastUsedAt > use.lastUsedAt ? later.lastUsedAt : use.lastUsedAt } : use);
      }
      throw err;
    }
    return batch.size;
  }
}
