import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { rowById, updateRow } from '../../db/prepared.js';
import { committed } from '../../db/group-commit.js';
import { users } from '../../db/schema/index.js';
import { publicBaseUrl, tokenLink } from '../../delivery/links.js';
import type { DeliveryLog, Mailer } from '../../delivery/mailer.js';
import { passwordResetMessage } from '../../delivery/messages.js';
import type { RequestContext } from '../../context.js';
import { DomainError, badRequest, forbidden, tooManyRequests } from '../../errors.js';
import { hashPassword, passwordProblem } from '../../security/passwords.js';
import { SlidingWindowLimiter } from '../../security/sliding-window.js';
import { recordAudit } from '../audit/recorder.js';
import type { AuthService, User } from './auth-service.js';
import type { Directory } from './directory.js';
import type { IssuedTokens, SessionService } from './sessions.js';
import { consumeUserToken, issueUserToken, peekUserToken, type UserTokenPurpose } from './user-tokens.js';

const INVALID_INVITE = 'Invalid or expired invitation';
const INVALID_RESET = 'Invalid or expired reset token';

/** The one answer of forgot-password, whether or not the address has an account (01 §4.5). */
export const FORGOT_PASSWORD_ANSWER = {
  success: true,
  message: 'If an account exists for this e-mail address, a password reset link has been sent to it.',
} as const;

/**
 * What users do with the links they are sent (01 §4.4, §4.5): accept an invitation (set the password,
 * activate, sign in), ask for a password reset, and reset the password with the link. Tokens are single-use
 * and stored hashed (identity/user-tokens.ts); they never reach a log.
 */
export class AccountService {
  /** Reset requests per client IP (429) and per e-mail address (silently dropped). */
  readonly limiter = new SlidingWindowLimiter();

  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly auth: AuthService,
    private readonly sessions: SessionService,
    private readonly directory: Directory,
    private readonly mailer: Mailer,
    private readonly log: DeliveryLog,
  ) {}

  private membershipScope(userId: string): { orgId: string | null; partnerId: string | null } {
    const membership = this.directory.membershipOf(userId);
    return {
      orgId: membership?.kind === 'organization' ? membership.orgId : null,
      partnerId: membership?.partnerId ?? null,
    };
  }

  /** Refuses a link whose token cannot be used (unknown, used or expired) with the error accepting or resetting
   * would give; the pages call it before showing a form nobody could submit. */
  checkLink(purpose: UserTokenPurpose, token: string): void {
    if (peekUserToken(this.db, token, purpose)) return;
    throw purpose === 'invite' ? badRequest(INVALID_INVITE, 'INVALID_INVITE_TOKEN') : badRequest(INVALID_RESET, 'INVALID_RESET_TOKEN');
  }

  /**
   * POST /auth/accept-invite: activates the account (activateInvitation), then signs the user in — with a
   * password, so only where password sign-in would be allowed: in an organization that enforces SSO (01 §5.12)
   * the account stays activated (its holder then signs in through the identity provider) and the answer is
   * 403 `SSO_REQUIRED` instead of a session.
   */
  async acceptInvite(ctx: RequestContext, token: string, password: string, name: string | undefined): Promise<{ user: User; tokens: IssuedTokens }> {
    const { user, userCtx } = await this.activate(ctx, token, password, name);
    const refusal = this.ssoRequired(user);
    if (refusal) throw forbidden(`Invitation accepted: ${user.email} is active. ${refusal.message}`, refusal.code, { ...refusal.extra, activated: true });
    const tokens = await this.auth.startSession(userCtx, user, false, 'password', { via: 'invitation' });
    return { user, tokens };
  }

  /** The refusal password sign-in would give this user (01 §5.12 enforceSSO), if any. */
  private ssoRequired(user: User): DomainError | undefined {
    try {
      this.auth.passwordLoginCheck?.(user);
      return undefined;
    } catch (err) {
      if (err instanceof DomainError && err.code === 'SSO_REQUIRED') return err;
      throw err;
    }
  }

  /** The invitation page: the same activation without a session (the page has no use for one). */
  async activateInvitation(ctx: RequestContext, token: string, password: string, name: string | undefined): Promise<User> {
    return (await this.activate(ctx, token, password, name)).user;
  }

  /** The password is checked before the token is used, so a weak one can be corrected with the same link;
   * then one transaction uses the token, sets the password and activates. */
  private async activate(ctx: RequestContext, token: string, password: string, name: string | undefined): Promise<{ user: User; userCtx: RequestContext }> {
    this.checkLink('invite', token);
    const problem = passwordProblem(password);
    if (problem) throw badRequest(problem, 'WEAK_PASSWORD');
    const passwordHash = await hashPassword(password);
    return this.db.$client.transaction(() => {
      const userId = consumeUserToken(this.db, token, 'invite');
      const current = userId ? rowById(this.db, users, userId) : undefined;
      if (!current || current.status !== 'invited') throw badRequest(INVALID_INVITE, 'INVALID_INVITE_TOKEN');
      const now = new Date().toISOString();
      const user = updateRow(this.db, users, current, {
        passwordHash,
        status: 'active',
        passwordChangedAt: now,
        updatedAt: now,
        ...(name !== undefined ? { name } : {}),
      });
      // The row was read in this transaction: it is there.
      if (!user) throw badRequest(INVALID_INVITE, 'INVALID_INVITE_TOKEN');
      const userCtx = this.auth.contextFor(user, ctx);
      recordAudit(this.db, userCtx, {
        action: 'user.invite.accept',
        resourceType: 'user',
        resourceId: user.id,
        resourceName: user.email,
        ...this.membershipScope(user.id),
      });
      return { user, userCtx };
    })();
  }

  /**
   * POST /auth/forgot-password: always the same answer. With a mail service and an active account, a reset
   * link valid for the configured time (1 hour) is mailed in the background, so the answer's timing does not
   * tell whether the account exists. Without a mail service nothing happens (docs/api-notes.md: an
   * administrator issues a link with POST /users/:id/reset-password instead).
   */
  forgotPassword(ctx: RequestContext, emailInput: string): typeof FORGOT_PASSWORD_ANSWER {
    const d = this.config.delivery;
    const windowMs = d.passwordResetWindowSeconds * 1000;
    const perIp = this.limiter.hit(`reset:ip:${ctx.ip ?? ''}`, d.passwordResetPerIp, windowMs);
    if (!perIp.allowed) throw tooManyRequests('Too many password reset requests', perIp.retryAfterSeconds, 'TOO_MANY_RESET_REQUESTS');
    const email = emailInput.trim().toLowerCase();
    if (!this.mailer.configured) return FORGOT_PASSWORD_ANSWER;
    const user = this.auth.findUserByEmail(email);
    if (!user || user.status !== 'active') return FORGOT_PASSWORD_ANSWER;
    // 01 §5.12: a password the user could not sign in with is no use; the answer stays the same.
    if (this.ssoRequired(user)) return FORGOT_PASSWORD_ANSWER;
    if (!this.limiter.hit(`reset:email:${email}`, d.passwordResetPerIp, windowMs).allowed) return FORGOT_PASSWORD_ANSWER;
    const token = this.db.$client.transaction(() => {
      const issued = issueUserToken(this.db, user.id, 'password_reset', this.config.links.passwordResetTtlMinutes * 60_000);
      recordAudit(this.db, this.auth.contextFor(user, ctx), {
        action: 'user.password.reset.request',
        resourceType: 'user',
        resourceId: user.id,
        resourceName: user.email,
        ...this.membershipScope(user.id),
      });
      return issued;
    })();
    const link = tokenLink(publicBaseUrl(this.config), 'reset-password', token.token);
    // Not awaited: the answer must not wait for (or reveal) the mail. Failures are logged by the mailer; the mail
    // waits for the token's commit (a failed one is answered 503 and mails nothing).
    committed(this.db.$client)
      .then(() => this.mailer.send(passwordResetMessage(user.email, { name: user.name, link, expiresAt: token.expiresAt })))
      .catch((err: unknown) => this.log.warn({ error: err instanceof Error ? err.message : String(err) }, 'password reset e-mail failed'));
    return FORGOT_PASSWORD_ANSWER;
  }

  /** POST /auth/reset-password: a strong new password; the token is used once; every session ends. */
  async resetPassword(ctx: RequestContext, token: string, password: string): Promise<void> {
    this.checkLink('password_reset', token);
    const problem = passwordProblem(password);
    if (problem) throw badRequest(problem, 'WEAK_PASSWORD');
    const passwordHash = await hashPassword(password);
    const userId = this.db.$client.transaction(() => {
      const userId = consumeUserToken(this.db, token, 'password_reset');
      const current = userId ? rowById(this.db, users, userId) : undefined;
      if (!current || current.status !== 'active') throw badRequest(INVALID_RESET, 'INVALID_RESET_TOKEN');
      const now = new Date().toISOString();
      updateRow(this.db, users, current, { passwordHash, passwordChangedAt: now, updatedAt: now, failedLoginCount: 0, lockedUntil: null });
      this.sessions.revokeAllForUser(this.db, current.id);
      recordAudit(this.db, this.auth.contextFor(current, ctx), {
        action: 'user.password.reset',
        resourceType: 'user',
        resourceId: current.id,
        resourceName: current.email,
        ...this.membershipScope(current.id),
        details: { sessionsRevoked: true },
      });
      return current.id;
    })();
    this.auth.passwordAttempts.clear(`login:fail:${userId}`);
  }
}
