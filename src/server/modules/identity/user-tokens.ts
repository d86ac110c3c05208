import { and, eq, gt, isNull, sql } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { insertRow, preparedQueries } from '../../db/prepared.js';
import { userTokens } from '../../db/schema/index.js';
import { randomToken, sha256Hex } from '../../security/crypto.js';

export type UserTokenPurpose = 'invite' | 'password_reset';

/** The row of a token (`tokenHash`) of the purpose that is neither used nor expired at `now`. */
const isLive = () =>
  and(
    eq(userTokens.tokenHash, sql.placeholder('tokenHash')),
    eq(userTokens.purpose, sql.placeholder('purpose')),
    isNull(userTokens.usedAt),
    gt(userTokens.expiresAt, sql.placeholder('now')),
  );

/** The statements of the tokens, prepared once per database (db/prepared.ts). `usedAt` goes in as a bare
 * placeholder (`now`), bound as given: a plain text column. */
const tokenQueries = preparedQueries((db) => {
  const markUsed = () => db.update(userTokens).set({ usedAt: sql`${sql.placeholder('now')}` });
  const unusedOf = eq(userTokens.userId, sql.placeholder('userId'));
  return {
    consume: markUsed().where(isLive()).returning({ userId: userTokens.userId }).prepare(),
    peek: db.select({ userId: userTokens.userId }).from(userTokens).where(isLive()).prepare(),
    revokeAll: markUsed().where(and(unusedOf, isNull(userTokens.usedAt))).prepare(),
    revokeOfPurpose: markUsed()
      .where(and(unusedOf, isNull(userTokens.usedAt), eq(userTokens.purpose, sql.placeholder('purpose'))))
      .prepare(),
  };
});

/**
 * Single-use tokens sent in links (invitations, password resets). Only the SHA-256 of a token is stored;
 * issuing one for a user ends every earlier unused token of the same purpose, and using one marks it used by
 * the same statement that checks it, so it works once.
 */
export function issueUserToken(tx: Db, userId: string, purpose: UserTokenPurpose, ttlMs: number): { token: string; expiresAt: string } {
  const token = randomToken(32);
  const now = new Date();
  const nowIso = now.toISOString();
  tokenQueries(tx).revokeOfPurpose.run({ now: nowIso, userId, purpose });
  const expiresAt = new Date(now.getTime() + ttlMs).toISOString();
  insertRow(tx, userTokens, { userId, purpose, tokenHash: sha256Hex(token), expiresAt });
  return { token, expiresAt };
}

/** Consumes a live token of the purpose: the user id, or null when it is unknown, used or expired. */
export function consumeUserToken(tx: Db, token: string, purpose: UserTokenPurpose): string | null {
  const row = tokenQueries(tx).consume.get({ now: new Date().toISOString(), tokenHash: sha256Hex(token), purpose });
  return row?.userId ?? null;
}

/** The user a live token belongs to, without using it up (to check the request before consuming). */
export function peekUserToken(db: Db, token: string, purpose: UserTokenPurpose): string | null {
  const row = tokenQueries(db).peek.get({ now: new Date().toISOString(), tokenHash: sha256Hex(token), purpose });
  return row?.userId ?? null;
}

/** Ends every unused token of a user (of one purpose, or all). */
export function revokeUserTokens(tx: Db, userId: string, purpose?: UserTokenPurpose): void {
  const queries = tokenQueries(tx);
  const now = new Date().toISOString();
  if (purpose) queries.revokeOfPurpose.run({ now, userId, purpose });
  else queries.revokeAll.run({ now, userId });
}
