import { and, eq, lt, or } from 'drizzle-orm';
import { transaction, type Db } from '../db/connection.js';
import { idempotencyKeys } from '../db/schema/index.js';
import { sha256Hex, type SecretBox } from '../security/crypto.js';
import { stableStringify } from '../lib/stable-json.js';
import type { IdempotencyWrapper } from './bind.js';
import { DomainError, badRequest, conflict, unprocessable } from '../errors.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
const PENDING = 0;
/** A record still pending after this long belongs to a request that never finished (the process stopped
 * between claiming the key and storing the answer); a retry takes it over instead of a 24-hour 409. */
export const IDEMPOTENCY_PENDING_STALE_MS = 5 * 60 * 1000;

/** Idempotency-Key on creating POSTs: the same key and body from the same caller within 24 hours replays the
 * first response without creating again; the same key with another body is 422. The stored response is sealed
 * with the server key: a replayed create may carry a secret shown once (a new API key). */
export function createIdempotency(db: Db, box: SecretBox): IdempotencyWrapper {
  return async (request, _reply, ctx, run) => {
    const key = String(request.headers['idempotency-key']);
    if (key.length < 1 || key.length > 255) throw badRequest('Idempotency-Key must be 1-255 characters');
    const who = ctx.caller.apiKeyId ?? ctx.caller.userId ?? 'anonymous';
    const scopeKey = sha256Hex(`${who}\n${request.method}\n${request.routeOptions.url ?? request.url}\n${key}`);
    const requestHash = sha256Hex(stableStringify(request.body ?? null));
    const cutoff = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
    const staleCutoff = new Date(Date.now() - IDEMPOTENCY_PENDING_STALE_MS).toISOString();

    const existing = db.$client.transaction(() => {
      const expired = or(
        lt(idempotencyKeys.createdAt, cutoff),
        and(eq(idempotencyKeys.status, PENDING), lt(idempotencyKeys.createdAt, staleCutoff)),
      );
      db.delete(idempotencyKeys)
        .where(and(eq(idempotencyKeys.scopeKey, scopeKey), expired))
        .run();
      const found = db.select().from(idempotencyKeys).where(eq(idempotencyKeys.scopeKey, scopeKey)).get();
      if (!found) db.insert(idempotencyKeys).values({ scopeKey, requestHash, status: PENDING, body: '' }).run();
      return found;
    })();
    if (existing) {
      if (existing.requestHash !== requestHash) {
        throw unprocessable('Idempotency-Key was already used with a different request body', 'IDEMPOTENCY_KEY_REUSED');
      }
      if (existing.status === PENDING)
        throw conflict('A request with this Idempotency-Key is still in progress', 'IDEMPOTENCY_IN_PROGRESS');
      return { status: existing.status, body: JSON.parse(box.open(existing.body)) as unknown, replayed: true };
    }
    try {
      const outcome = await run();
      const body = box.seal(JSON.stringify(outcome.body ?? null));
      transaction(db, (tx) =>
        tx.update(idempotencyKeys).set({ status: outcome.status, body }).where(eq(idempotencyKeys.scopeKey, scopeKey)).run(),
      );
      return { ...outcome, replayed: false };
    } catch (err) {
      // A failed attempt leaves nothing behind: the client may retry with the same key.
      transaction(db, (tx) => tx.delete(idempotencyKeys).where(eq(idempotencyKeys.scopeKey, scopeKey)).run());
      throw err instanceof DomainError || err instanceof Error ? err : new Error(String(err));
    }
  };
}

/** Forgets replay records older than 24 hours (run by a periodic job). */
export function purgeIdempotencyKeys(db: Db): number {
  const cutoff = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
  return db.delete(idempotencyKeys).where(lt(idempotencyKeys.createdAt, cutoff)).run().changes;
}
