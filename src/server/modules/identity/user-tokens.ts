import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { userTokens } from '../../db/schema/index.js';
import { randomToken, sha256Hex } from '../../security/crypto.js';

export type UserTokenPurpose = 'invite' | 'password_reset';

/**
 * Single-use tokens sent in links (invitations, password resets). Only the SHA-256 of a token is stored;
 * issuing one for a user ends every earlier unused token of the same purpose, and using one marks it used by
 * the same statement that checks it, so it works once.
 */
export function issueUserToken(tx: Db, userId: string, purpose: UserTokenPurpose, ttlMs: number): { token: string; expiresAt: string } {
  const token = randomToken(32);
  const now = new Date();
  const nowIso = now.toISOString();
  tx.update(userTokens)
    .set({ usedAt: nowIso })
    .where(and(eq(userTokens.userId, userId), eq(userTokens.purpose, purpose), isNull(userTokens.usedAt)))
    .run();
  const expiresAt = new Date(now.getTime() + ttlMs).toISOString();
  tx.insert(userTokens).values({ userId, purpose, tokenHash: sha256Hex(token), expiresAt }).run();
  return { token, expiresAt };
}

/** The row of a token of the purpose that is neither used nor expired at `nowIso`. */
function isLive(token: string, purpose: UserTokenPurpose, nowIso: string) {
  return and(
    eq(userTokens.tokenHash, sha256Hex(token)),
    eq(userTokens.purpose, purpose),
    isNull(userTokens.usedAt),
    gt(userTokens.expiresAt, nowIso),
  );
}

/** Consumes a live token of the purpose: the user id, or null when it is unknown, used or expired. */
export function consumeUserToken(tx: Db, token: string, purpose: UserTokenPurpose): string | null {
  const nowIso = new Date().toISOString();
  const row = tx
    .update(userTokens)
    .set({ usedAt: nowIso })
    .where(isLive(token, purpose, nowIso))
    .returning({ userId: userTokens.userId })
    .get();
  return row?.userId ?? null;
}

/** The user a live token belongs to, without using it up (to check the request before consuming). */
export function peekUserToken(db: Db, token: string, purpose: UserTokenPurpose): string | null {
  const nowIso = new Date().toISOString();
  const row = db
    .select({ userId: userTokens.userId })
    .from(userTokens)
    .where(isLive(token, purpose, nowIso))
    .get();
  return row?.userId ?? null;
}

/** Ends every unused token of a user (of one purpose, or all). */
export function revokeUserTokens(tx: Db, userId: string, purpose?: UserTokenPurpose): void {
  const conditions = [eq(userTokens.userId, userId), isNull(userTokens.usedAt)];
  if (purpose) conditions.push(eq(userTokens.purpose, purpose));
  tx.update(userTokens).set({ usedAt: new Date().toISOString() }).where(and(...conditions)).run();
}
