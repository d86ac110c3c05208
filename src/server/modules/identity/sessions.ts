import { and, eq, gt, isNull, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/connection.js';
import { committed } from '../../db/group-commit.js';
import { inJson, insertRow, preparedQueries, rowById, updateRow } from '../../db/prepared.js';
import { refreshTokens, sessions } from '../../db/schema/index.js';
import { unauthorized } from '../../errors.js';
import { randomToken, sha256Hex } from '../../security/crypto.js';
import type { TokenSigner } from '../../security/tokens.js';

/** How a session was opened (sessions.signInMethod). */
export type SignInMethod = 'password' | 'sso';

/** The statements of revokeSessionsOf, prepared once per database (db/prepared.ts): the live sessions of the users
 * of a JSON array, all of them or all but those opened one way (`except`). */
const revokeQueries = preparedQueries((db) => {
  const revoke = (kept?: SQL) =>
    db
      .update(sessions)
      .set({ revokedAt: sql`${sql.placeholder('now')}` })
      .where(and(inJson(sessions.userId, 'userIds'), isNull(sessions.revokedAt), kept))
      .prepare();
  return {
    all: revoke(),
    allExcept: revoke(or(isNull(sessions.signInMethod), ne(sessions.signInMethod, sql.placeholder('except')))),
  };
});

/** Ends every live session of these users, in the caller's transaction (for other modules too: SSO
 * enforcement); answers how many ended. `except` keeps the sessions opened that way (SSO enforcement keeps SSO
 * sessions; a session whose method is unknown, older than the column, is never kept). */
export function revokeSessionsOf(tx: Db, userIds: readonly string[], except?: SignInMethod): number {
  if (userIds.length === 0) return 0;
  const values = { now: new Date().toISOString(), userIds: JSON.stringify(userIds) };
  const revoke = revokeQueries(tx);
  return (except === undefined ? revoke.all.run(values) : revoke.allExcept.run({ ...values, except })).changes;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  expiresInSeconds: number;
  sessionId: string;
}

/** A live session named by a valid access token; `until` is when either ends (ms since the epoch). */
export interface AccessSession {
  userId: string;
  sessionId: string;
  mfa: boolean;
  until: number;
}

/** A refresh token by its hash, with its session: prepared once per database (db/prepared.ts). */
const refreshTokenQuery = preparedQueries((db) =>
  db
    .select({ token: refreshTokens, session: sessions })
    .from(refreshTokens)
    .innerJoin(sessions, eq(sessions.id, refreshTokens.sessionId))
    .where(eq(refreshTokens.tokenHash, sql.placeholder('tokenHash')))
    .prepare(),
);

/** The session lookup of every session-authenticated request, prepared once per database (db/prepared.ts). */
const liveSessionQuery = preparedQueries((db) =>
  db
    .select({ id: sessions.id, expiresAt: sessions.expiresAt })
    .from(sessions)
    .where(
      and(
        eq(sessions.id, sql.placeholder('sid')),
        eq(sessions.userId, sql.placeholder('sub')),
        isNull(sessions.revokedAt),
        gt(sessions.expiresAt, sql.placeholder('now')),
      ),
    )
    .prepare(),
);

export interface SessionSettings {
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
}

/** Sessions, access tokens bound to them, and rotating refresh tokens (01 §4.5). */
export class SessionService {
  constructor(
    private readonly db: Db,
    private readonly signer: TokenSigner,
    private readonly settings: SessionSettings,
  ) {}

  async issue(
    userId: string,
    mfa: boolean,
    meta: { ip: string | null; userAgent: string | null; signInMethod: SignInMethod },
  ): Promise<IssuedTokens> {
    const now = Date.now();
    const refreshToken = randomToken(32);
    const session = this.db.$client.transaction(() => {
      const created = insertRow(this.db, sessions, {
        userId,
        mfa,
        signInMethod: meta.signInMethod,
        ipAddress: meta.ip,
        userAgent: meta.userAgent?.slice(0, 512) ?? null,
        expiresAt: new Date(now + this.settings.refreshTtlSeconds * 1000).toISOString(),
      });
      insertRow(this.db, refreshTokens, {
        sessionId: created.id,
        tokenHash: sha256Hex(refreshToken),
        expiresAt: created.expiresAt,
      });
      return created;
    })();
    return { ...(await this.accessFor(userId, session.id, mfa)), refreshToken, sessionId: session.id };
  }

  /** Called in the turn of the session's write: the tokens are handed out only once that write is committed
   * (signing awaits, so the answer would otherwise leave after the group had ended, whether it committed or not;
   * a failed commit is 503 COMMIT_FAILED and no token names a session that is not there). */
  private async accessFor(userId: string, sessionId: string, mfa: boolean) {
    const written = committed(this.db.$client);
    const accessToken = await this.signer.sign({ sub: userId, sid: sessionId, mfa, typ: 'access' }, this.settings.accessTtlSeconds);
    await written;
    return { accessToken, expiresInSeconds: this.settings.accessTtlSeconds };
  }

  /** Rotates a refresh token: the presented one is revoked and a successor issued. Presenting an already
   * revoked token ends the whole session (it was stolen or replayed). */
  async refresh(presented: string): Promise<IssuedTokens & { userId: string }> {
    const nowIso = new Date().toISOString();
    const next = randomToken(32);
    const outcome = this.db.$client.transaction(() => {
      const row = refreshTokenQuery(this.db).get({ tokenHash: sha256Hex(presented) });
      if (!row) return null;
      if (row.token.revokedAt) {
        updateRow(this.db, sessions, row.session, { revokedAt: nowIso });
        return null;
      }
      if (row.session.revokedAt || row.token.expiresAt <= nowIso || row.session.expiresAt <= nowIso) return null;
      updateRow(this.db, refreshTokens, row.token, { revokedAt: nowIso });
      insertRow(this.db, refreshTokens, { sessionId: row.session.id, tokenHash: sha256Hex(next), expiresAt: row.session.expiresAt });
      return row.session;
    })();
    if (!outcome) throw unauthorized('Invalid or expired refresh token', 'INVALID_REFRESH_TOKEN');
    const access = await this.accessFor(outcome.userId, outcome.id, outcome.mfa);
    return { ...access, refreshToken: next, sessionId: outcome.id, userId: outcome.userId };
  }

  /** The session named by a valid access token, if it is still live, with when the token or the session
   * expires, whichever comes first. */
  async verifyAccess(token: string): Promise<AccessSession | null> {
    const claims = await this.signer.verify(token, 'access');
    if (!claims) return null;
    const now = new Date();
    const live = liveSessionQuery(this.db).get({ sid: claims.sid, sub: claims.sub, now: now.toISOString() });
    if (!live) return null;
    // jose refuses a token once the clock, in whole seconds, reaches its exp.
    const until = Math.min(claims.exp * 1000, Date.parse(live.expiresAt));
    return { userId: claims.sub, sessionId: claims.sid, mfa: claims.mfa, until };
  }

  /** How the session was opened; null when it is older than that record (or not found). */
  signInMethodOf(sessionId: string): SignInMethod | null {
    return rowById(this.db, sessions, sessionId)?.signInMethod ?? null;
  }

  /** Ends every session of a user at once (logout, password change, disabling the account). */
  revokeAllForUser(tx: Db, userId: string): void {
    revokeSessionsOf(tx, [userId]);
  }
}
