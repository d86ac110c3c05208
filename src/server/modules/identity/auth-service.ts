import type { z } from 'zod';
import type { MeUpdateSchema } from '../../../contract/auth.js';
import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { rowById, updateRow } from '../../db/prepared.js';
import { users } from '../../db/schema/index.js';
import type { Caller, RequestContext } from '../../context.js';
import { badRequest, notFound, tooManyRequests, unauthorized } from '../../errors.js';
import { countWrites } from '../../db/write-counter.js';
import { ReadCache } from '../../lib/read-cache.js';
import { hashPassword, passwordProblem, verifyPassword } from '../../security/passwords.js';
import { AttemptThrottle, type AttemptOutcome } from '../../security/attempt-throttle.js';
import { SlidingWindowLimiter } from '../../security/sliding-window.js';
import type { TokenSigner } from '../../security/tokens.js';
import { recordAudit } from '../audit/recorder.js';
import { publishEvent } from '../../jobs/queue.js';
import { CALLER_WRITES, resolveUserCaller, roleNames } from './caller-resolver.js';
import { userByEmail } from './directory.js';
import type { IssuedTokens, SessionService, SignInMethod } from './sessions.js';

export type User = typeof users.$inferSelect;

export const MFA_TEMP_TOKEN_TTL_SECONDS = 300;
const INVALID_CREDENTIALS = 'Invalid email or password';

export type LoginOutcome =
  | { mfaRequired: true; tempToken: string; mfaMethod: 'totp' | 'sms' }
  | { mfaRequired: false; user: User; tokens: IssuedTokens };

/** The row's lock (set by the fifth failure) still holds. */
const isLocked = (user: User): boolean => user.lockedUntil !== null && user.lockedUntil > new Date().toISOString();
const loginFailKey = (user: User): string => `login:fail:${user.id}`;

export function publicUser(user: User) {
  return { id: user.id, email: user.email, name: user.name, mfaEnabled: user.mfaEnabled };
}

/** Sign-in (01 §4.5, §5.7): password login with throttling and lockout, sessions, and the signed-in user. */
export class AuthService {
  readonly limiter = new SlidingWindowLimiter();
  /**
   * The callers of access tokens seen recently, kept while what they are made of is unchanged (lib/read-cache.ts,
   * with the write counter of CALLER_WRITES: the session, the user, its links, its partner and organization, its
   * role's chain and permissions) and never past the token's or the session's expiry: verifying the JWT and
   * resolving the session, the user, its link and its role's permissions cost a session request more than the
   * rest of most read routes, and every write of another table (a site, an alert) kept emptying it. A logout, a
   * revoked session, a disabled user, a changed role or link is a write of those tables, which empties it before
   * the next request; a commit by another process empties it from the next turn.
   */
  private readonly callers: ReadCache<{ caller: Caller; until: number }>;
  /** Password guesses per account (sign-in's lockout, the current-password check), each counted from when it
   * starts: guesses waiting for their hash together cannot all pass a limit that none of them has yet failed. */
  readonly passwordAttempts = new AttemptThrottle();
  /** A rule that may refuse password sign-in to a user whose password is right (01 §5.12 enforceSSO). */
  passwordLoginCheck: ((user: User) => void) | null = null;

  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly sessions: SessionService,
    private readonly signer: TokenSigner,
  ) {
    this.callers = new ReadCache(db.$client, 1024, Infinity, countWrites(db.$client, 'session_callers', CALLER_WRITES));
  }

  findUserByEmail(email: string): User | undefined {
    return userByEmail(this.db, email.trim().toLowerCase());
  }

  getUser(id: string): User {
    const user = rowById(this.db, users, id);
    if (!user) throw notFound('User not found');
    return user;
  }

  /** The request context of a user who has just proved who they are (for audit attribution). */
  contextFor(user: User, base: RequestContext): RequestContext {
    const resolved = resolveUserCaller(this.db, user.id, { sessionId: null, mfa: false });
    return resolved.ok ? { ...base, caller: resolved.caller } : base;
  }

  private throttle(key: string, limit: number, windowSeconds: number, message: string): void {
    const { allowed, retryAfterSeconds } = this.limiter.hit(key, limit, windowSeconds * 1000);
    if (!allowed) throw tooManyRequests(message, retryAfterSeconds, 'TOO_MANY_ATTEMPTS');
  }

  async login(ctx: RequestContext, emailInput: string, password: string): Promise<LoginOutcome> {
    const t = this.config.throttle;
    const email = emailInput.trim().toLowerCase();
    this.throttle(`login:ip:${ctx.ip ?? ''}`, t.loginPerIp, t.loginWindowSeconds, 'Too many login attempts');
    this.throttle(`login:ip-email:${ctx.ip ?? ''}:${email}`, t.loginPerEmail, t.loginWindowSeconds, 'Too many login attempts');

    // The lock is checked and this guess counted in the same turn, before the hash is awaited: hashes run one at a
    // time (a login may wait ~1.6 s), so a check against the row as it was before the wait would let a burst of
    // concurrent guesses through, none seeing the others' failures (04 wire notes "Sign-in").
    const user = this.findUserByEmail(email);
    // Locked by the row, or by the failures of the window plus the guesses still being checked (5 in 15 min).
    const attempt = user && !isLocked(user) ? this.passwordAttempts.reserve(loginFailKey(user), t.lockoutFailures, t.lockoutSeconds * 1000) : undefined;
    const locked = user !== undefined && !attempt?.allowed;
    // Settled in the same turn as the failure is recorded below (no await in between).
    const settle = (outcome: AttemptOutcome) => {
      if (attempt?.allowed) attempt.settle(outcome);
    };
    let passwordOk: boolean;
    try {
      // A locked account's password is not checked; a hash is spent all the same, so the answer tells nothing.
      passwordOk = await verifyPassword(password, locked ? null : user?.passwordHash);
    } catch (err) {
      settle('released');
      throw err;
    }
    if (!user) throw unauthorized(INVALID_CREDENTIALS, 'INVALID_CREDENTIALS');

    // Read again after the wait: the account may have been locked or disabled meanwhile.
    const current = rowById(this.db, users, user.id) ?? user;
    const userCtx = this.contextFor(current, ctx);
    if (locked || (passwordOk && isLocked(current))) {
      settle('released');
      this.recordFailure(userCtx, current, 'locked', false);
      throw unauthorized(INVALID_CREDENTIALS, 'INVALID_CREDENTIALS');
    }
    if (!passwordOk || current.status !== 'active') {
      settle('failed');
      this.recordFailure(userCtx, current, passwordOk ? `status ${current.status}` : 'bad password', true);
      throw unauthorized(INVALID_CREDENTIALS, 'INVALID_CREDENTIALS');
    }
    settle('succeeded');
    this.passwordLoginCheck?.(current);

    if (current.mfaEnabled && this.config.features.mfa) {
      const tempToken = await this.signer.sign({ sub: current.id, typ: 'mfa_pending' }, MFA_TEMP_TOKEN_TTL_SECONDS);
      return { mfaRequired: true, tempToken, mfaMethod: current.mfaMethod ?? 'totp' };
    }
    const tokens = await this.startSession(userCtx, current, false, 'password');
    return { mfaRequired: false, user: current, tokens };
  }

  /**
   * Five failures within the lockout window lock the account for the rest of it (04 wire notes). Attempts
   * refused because the account is locked are audited but not `counted`: they would keep the lock going past
   * the window.
   */
  private recordFailure(ctx: RequestContext, user: User, reason: string, counted: boolean): void {
    const t = this.config.throttle;
    const windowMs = t.lockoutSeconds * 1000;
    const failures = this.passwordAttempts.failures(loginFailKey(user), windowMs);
    this.db.$client.transaction(() => {
      if (counted && failures >= t.lockoutFailures && !isLocked(user)) {
        updateRow(this.db, users, user.id, { lockedUntil: new Date(Date.now() + windowMs).toISOString(), failedLoginCount: failures });
      }
      recordAudit(this.db, ctx, { action: 'user.login.failed', resourceType: 'user', resourceId: user.id, resourceName: user.email, orgId: ctx.caller.orgId, result: 'failure', details: { reason } });
    })();
  }

  /** Issues a session for a user who passed every factor, and records the login. `signIn`: how the first factor
   * was proved (SSO enforcement ends password sessions only). */
  async startSession(
    ctx: RequestContext,
    user: User,
    mfa: boolean,
    signIn: SignInMethod,
    details: Record<string, unknown> = {},
  ): Promise<IssuedTokens> {
    const tokens = await this.sessions.issue(user.id, mfa, { ip: ctx.ip, userAgent: ctx.userAgent, signInMethod: signIn });
    this.db.$client.transaction(() => {
      updateRow(this.db, users, user.id, { lastLoginAt: new Date().toISOString(), failedLoginCount: 0, lockedUntil: null });
      recordAudit(this.db, ctx, { action: 'user.login', resourceType: 'user', resourceId: user.id, resourceName: user.email, orgId: ctx.caller.orgId, details: { ...details, mfa } });
      // 02 §6: an organization's webhooks may subscribe to its users' sign-ins (a partner user's has no organization).
      publishEvent(this.db, 'user.login', { userId: user.id, email: user.email, orgId: ctx.caller.orgId, ...details, mfa }, ctx.caller.orgId);
    })();
    return tokens;
  }

  async refresh(ctx: RequestContext, refreshToken: string): Promise<IssuedTokens> {
    const issued = await this.sessions.refresh(refreshToken);
    const user = this.getUser(issued.userId);
    if (user.status !== 'active') {
      this.db.$client.transaction(() => this.sessions.revokeAllForUser(this.db, user.id))();
      throw unauthorized('Invalid or expired refresh token', 'INVALID_REFRESH_TOKEN');
    }
    void ctx;
    return issued;
  }

  logout(ctx: RequestContext): void {
    const userId = ctx.caller.userId;
    if (!userId) return;
    this.db.$client.transaction(() => {
      this.sessions.revokeAllForUser(this.db, userId);
      recordAudit(this.db, ctx, { action: 'user.logout', resourceType: 'user', resourceId: userId, resourceName: ctx.caller.email, orgId: ctx.caller.orgId });
      publishEvent(this.db, 'user.logout', { userId, email: ctx.caller.email, orgId: ctx.caller.orgId }, ctx.caller.orgId);
    })();
  }

  /**
   * The signed-in user's own password, proved again (change-password; MFA setup and enable when the client sends
   * it): 401 `Current password is incorrect`. Guessing it with a stolen session is throttled like login, and only
   * failures count.
   */
  async verifyCurrentPassword(user: User, currentPassword: string): Promise<void> {
    const t = this.config.throttle;
    const failKey = `password-change:fail:${user.id}`;
    const windowMs = t.loginWindowSeconds * 1000;
    // As in login: checked and counted before the hash is awaited, settled in the same turn it answers.
    const attempt = this.passwordAttempts.reserve(failKey, t.loginPerEmail, windowMs);
    if (!attempt.allowed) throw tooManyRequests('Too many password change attempts', attempt.retryAfterSeconds, 'TOO_MANY_ATTEMPTS');
    let ok: boolean;
    try {
      ok = await verifyPassword(currentPassword, user.passwordHash);
    } catch (err) {
      attempt.settle('released');
      throw err;
    }
    attempt.settle(ok ? 'succeeded' : 'failed');
    if (!ok) throw unauthorized('Current password is incorrect', 'INVALID_CURRENT_PASSWORD');
  }

  /**
   * 01 §4.5 change-password: the current password must verify (401), the new one must be strong (400) and
   * differ from it (400). The hash changes and every session of the account ends in one transaction.
   */
  async changePassword(ctx: RequestContext, currentPassword: string, newPassword: string): Promise<void> {
    const user = this.getUser(ctx.caller.userId ?? '');
    await this.verifyCurrentPassword(user, currentPassword);
    const problem = passwordProblem(newPassword);
    if (problem) throw badRequest(problem, 'WEAK_PASSWORD');
    if (newPassword === currentPassword) throw badRequest('New password must be different from the current password', 'PASSWORD_UNCHANGED');
    const passwordHash = await hashPassword(newPassword);
    this.db.$client.transaction(() => {
      const now = new Date().toISOString();
      updateRow(this.db, users, user.id, { passwordHash, passwordChangedAt: now, updatedAt: now });
      this.sessions.revokeAllForUser(this.db, user.id);
      recordAudit(this.db, ctx, { action: 'user.password.change', resourceType: 'user', resourceId: user.id, resourceName: user.email, orgId: ctx.caller.orgId, details: { sessionsRevoked: true } });
    })();
  }

  /** The user a second factor is being proved for: named by the login tempToken, or (a step-up) by the bearer
   * session, whose way of signing in the new session keeps. Refuses anything else with 401, and a password
   * login's second factor once the user's organization enforces SSO with 403. */
  async userForSecondFactor(
    tempToken: string | undefined,
    bearer: string | null,
  ): Promise<{ user: User; stepUp: boolean; signIn: SignInMethod }> {
    let userId: string;
    let stepUp = false;
    // Only a password login hands out a tempToken (SSO sessions get their MFA from the provider, 01 §5.11).
    let signIn: SignInMethod = 'password';
    if (tempToken !== undefined) {
      const claims = await this.signer.verify(tempToken, 'mfa_pending');
      if (!claims) throw unauthorized('Invalid or expired MFA token', 'INVALID_MFA_TOKEN');
      userId = claims.sub;
    } else {
      if (!bearer) throw unauthorized('Missing or invalid authorization header');
      const caller = await this.callerForAccessToken(bearer);
      if (!caller?.userId) throw unauthorized('Invalid or expired token', 'INVALID_TOKEN');
      userId = caller.userId;
      stepUp = true;
      signIn = this.signInMethodOf(caller);
    }
    const user = rowById(this.db, users, userId);
    if (!user || user.status !== 'active') throw unauthorized('Invalid or expired MFA token', 'INVALID_MFA_TOKEN');
    // A password login's second factor, proved after its organization began enforcing SSO: no password session
    // may start under the rule (01 §5.12), whenever the password was checked.
    if (!stepUp) this.passwordLoginCheck?.(user);
    return { user, stepUp, signIn };
  }

  /** How the caller's session was opened; a session older than that record counts as a password one. */
  signInMethodOf(caller: Caller): SignInMethod {
    return (caller.sessionId !== null ? this.sessions.signInMethodOf(caller.sessionId) : null) ?? 'password';
  }

  /** Resolves a bearer access token to its caller (the guard's session resolver). */
  async callerForAccessToken(token: string): Promise<Caller | null> {
    const kept = this.callers.lookup(token);
    if (kept && Date.now() < kept.until) return kept.caller;
    // Taken before the await: a write by another request meanwhile keeps this caller out of the cache.
    const stamp = this.callers.stamp();
    const session = await this.sessions.verifyAccess(token);
    if (!session) return null;
    const resolved = resolveUserCaller(this.db, session.userId, session);
    if (!resolved.ok) return null;
    return this.callers.store(token, { caller: resolved.caller, until: session.until }, stamp).caller;
  }

  me(ctx: RequestContext) {
    const user = this.getUser(ctx.caller.userId ?? '');
    const roleName = ctx.caller.roleId ? (roleNames(this.db, [ctx.caller.roleId]).get(ctx.caller.roleId) ?? null) : null;
    return {
      ...user,
      scope: ctx.caller.scope,
      partnerId: ctx.caller.partnerId,
      orgId: ctx.caller.orgId,
      roleId: ctx.caller.roleId,
      roleName,
      permissions: ctx.caller.permissions,
    };
  }

  updateMe(ctx: RequestContext, body: z.infer<typeof MeUpdateSchema>) {
    const userId = ctx.caller.userId ?? '';
    this.db.$client.transaction(() => {
      const changes = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
      updateRow(this.db, users, userId, { ...changes, updatedAt: new Date().toISOString() });
      recordAudit(this.db, ctx, { action: 'user.update', resourceType: 'user', resourceId: userId, resourceName: ctx.caller.email, orgId: ctx.caller.orgId, details: { changes: Object.keys(changes) } });
    })();
    return this.me(ctx);
  }
}
