import { and, eq, isNull, sql } from 'drizzle-orm';
import type { ServerConfig } from '../../config.js';
import { transaction, type Db } from '../../db/connection.js';
import { insertRow, preparedQueries, updateRow } from '../../db/prepared.js';
import { mfaRecoveryCodes, users } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { DomainError, badRequest, forbidden, notFound, tooManyRequests, unauthorized } from '../../errors.js';
import type { SecretBox } from '../../security/crypto.js';
import { SlidingWindowLimiter } from '../../security/sliding-window.js';
import type { TokenSigner } from '../../security/tokens.js';
import { hashRecoveryCode, isTotpCode, newRecoveryCodes, newTotpEnrollment } from '../../security/totp.js';
import { recordAudit, type AuditEntry } from '../audit/recorder.js';
import type { TenancyService } from '../tenancy/service.js';
import type { AuthService, User } from './auth-service.js';
import type { IssuedTokens, SessionService } from './sessions.js';
import { TOTP_CODE_USED, checkTotp, type TotpCheck } from './totp-verifier.js';

const INVALID_CODE = 'Invalid MFA code';

export interface MfaSetupResult {
  secret: string;
  otpAuthUrl: string;
  qrCodeDataUrl: string;
  recoveryCodes: string[];
}

export interface MfaSessionResult {
  user: User;
  tokens: IssuedTokens;
}

/** Which credential proved the second factor. */
type ProvenBy = 'totp' | 'sms' | 'recovery_code';

/** Why a code was refused: the message and code of the error. */
interface Refusal {
  message: string;
  code: 'INVALID_MFA_CODE' | 'MFA_CODE_USED';
}
const INVALID: Refusal = { message: INVALID_CODE, code: 'INVALID_MFA_CODE' };
const USED: Refusal = { message: TOTP_CODE_USED, code: 'MFA_CODE_USED' };
const refusalOf = (check: Exclude<TotpCheck, 'accepted'>): Refusal => (check === 'used' ? USED : INVALID);

/** Checks (and uses up) an SMS sign-in code of a user (identity/sms-service.ts). */
export interface SmsLoginCodes {
  consume(userId: string, purpose: 'mfa_login', code: string): string | null;
}

/** The recovery-code statements, prepared once per database (db/prepared.ts). */
const recoveryCodeQueries = preparedQueries((db) => ({
  // usedAt goes in as a bare placeholder, bound as given (a plain text column).
  use: db
    .update(mfaRecoveryCodes)
    .set({ usedAt: sql`${sql.placeholder('now')}` })
    .where(
      and(
        eq(mfaRecoveryCodes.userId, sql.placeholder('userId')),
        eq(mfaRecoveryCodes.codeHash, sql.placeholder('codeHash')),
        isNull(mfaRecoveryCodes.usedAt),
      ),
    )
    .prepare(),
  deleteOfUser: db
    .delete(mfaRecoveryCodes)
    .where(eq(mfaRecoveryCodes.userId, sql.placeholder('userId')))
    .prepare(),
}));

/** Ends every recovery code of a user (MFA turned off). */
export function deleteRecoveryCodes(db: Db, userId: string): void {
  recoveryCodeQueries(db).deleteOfUser.run({ userId });
}

/** Replaces every recovery code of a user with these (stored hashed), in the caller's transaction. */
export function replaceRecoveryCodes(db: Db, userId: string, codes: readonly string[]): void {
  deleteRecoveryCodes(db, userId);
  for (const code of codes) insertRow(db, mfaRecoveryCodes, { userId, codeHash: hashRecoveryCode(code) });
}

/** An audit entry about a user's own sign-in factors: the user is the resource, in the caller's organization. */
function recordUserAudit(
  db: Db,
  ctx: RequestContext,
  user: Pick<User, 'id' | 'email'>,
  action: string,
  more: Pick<AuditEntry, 'details' | 'result'> = {},
): void {
  recordAudit(db, ctx, {
    action,
    resourceType: 'user',
    resourceId: user.id,
    resourceName: user.email,
    orgId: ctx.caller.orgId,
    ...more,
  });
}

/** The audit entry of a user turning MFA on, by authenticator app or by SMS (identity/sms-service.ts). */
export function recordMfaEnabled(db: Db, ctx: RequestContext, user: Pick<User, 'id' | 'email'>, method: 'totp' | 'sms'): void {
  recordUserAudit(db, ctx, user, 'user.mfa.enable', { details: { method } });
}

/** Multi-factor authentication (01 §4.5, §5.7): TOTP setup and enable, verify (sign-in and step-up) with a
 * TOTP code, an SMS code (for users whose method is sms) or a recovery code, disable and recovery codes,
 * with the verification throttle of the 04 wire notes. */
export class MfaService {
  /** Failed code checks, per user and per client IP. */
  readonly limiter = new SlidingWindowLimiter();

  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly box: SecretBox,
    private readonly signer: TokenSigner,
    private readonly auth: AuthService,
    private readonly sessions: SessionService,
    private readonly tenancy: TenancyService,
    private readonly smsCodes?: SmsLoginCodes,
  ) {}

  private requireFeature(): void {
    if (!this.config.features.mfa) throw badRequest('MFA is disabled on this server', 'MFA_DISABLED');
  }

  private currentUser(ctx: RequestContext): User {
    if (!ctx.caller.userId) throw unauthorized();
    return this.auth.getUser(ctx.caller.userId);
  }

  private requireEnabled(user: User): void {
    if (!user.mfaEnabled || (user.mfaMethod !== 'sms' && !user.mfaSecretEnc))
      throw badRequest('MFA is not enabled for this account', 'MFA_NOT_ENABLED');
  }

  // ---- throttle (04 wire notes: 5 / 5 min → 429 `Too many MFA attempts`) ----

  private throttleKeys(userId: string, ip: string | null): string[] {
    return [`mfa:user:${userId}`, `mfa:ip:${ip ?? ''}`];
  }

  /** Refuses a check while the user or the IP has used up its failures in the window. */
  private assertNotThrottled(userId: string, ip: string | null): void {
    const { mfaAttempts, mfaWindowSeconds } = this.config.throttle;
    const windowMs = mfaWindowSeconds * 1000;
    for (const key of this.throttleKeys(userId, ip)) {
      if (this.limiter.count(key, windowMs) < mfaAttempts) continue;
      // At the limit, hit() records nothing and answers with the time until the oldest failure expires.
      const { retryAfterSeconds } = this.limiter.hit(key, mfaAttempts, windowMs);
      throw tooManyRequests('Too many MFA attempts', retryAfterSeconds, 'TOO_MANY_MFA_ATTEMPTS');
    }
  }

  private recordFailedCheck(userId: string, ip: string | null): void {
    const windowMs = this.config.throttle.mfaWindowSeconds * 1000;
    for (const key of this.throttleKeys(userId, ip)) this.limiter.hit(key, Number.MAX_SAFE_INTEGER, windowMs);
  }

  // ---- code checks ----


  /** An unused recovery code of the user, marked used by the same statement (so it works once). */
  private consumeRecoveryCode(userId: string, code: string): boolean {
    const used = transaction(this.db, () => recoveryCodeQueries(this.db).use.run({ now: new Date().toISOString(), userId, codeHash: hashRecoveryCode(code) }));
    return used.changes > 0;
  }

  /** Checks a code against the user's active factor, throttled: what proved it, or why it was refused. */
  private prove(ctx: RequestContext, user: User, code: string, allowRecovery: boolean): ProvenBy | Refusal {
    this.requireEnabled(user);
    this.assertNotThrottled(user.id, ctx.ip);
    const proof = this.check(user, code, allowRecovery);
    if (typeof proof !== 'string') this.recordFailedCheck(user.id, ctx.ip);
    return proof;
  }

  private check(user: User, code: string, allowRecovery: boolean): ProvenBy | Refusal {
    if (isTotpCode(code)) {
      // Six digits are the code of the user's method: from the authenticator, or the last SMS sent.
      if (user.mfaMethod === 'sms') return this.smsCodes?.consume(user.id, 'mfa_login', code) ? 'sms' : INVALID;
      if (!user.mfaSecretEnc) return INVALID;
      const check = checkTotp(this.db, this.box, user.id, user.mfaSecretEnc, code);
      return check === 'accepted' ? 'totp' : refusalOf(check);
    }
    if (allowRecovery && this.consumeRecoveryCode(user.id, code)) return 'recovery_code';
    return INVALID;
  }

  // ---- endpoints ----

  /** POST /auth/mfa/setup: the password proved again when given (issue 15 item 2), then a pending secret (sealed) and fresh recovery codes; both shown once. */
  async setup(ctx: RequestContext, currentPassword?: string): Promise<MfaSetupResult> {
    this.requireFeature();
    const user = this.currentUser(ctx);
    if (user.mfaEnabled)
      throw badRequest('MFA is already enabled; disable it before setting it up again', 'MFA_ALREADY_ENABLED');
    if (currentPassword !== undefined) await this.auth.verifyCurrentPassword(user, currentPassword);
    const enrollment = await newTotpEnrollment(user.email);
    const recoveryCodes = newRecoveryCodes();
    this.db.$client.transaction(() => {
      updateRow(this.db, users, user.id, { mfaPendingSecretEnc: this.box.seal(enrollment.secret), updatedAt: new Date().toISOString() });
      replaceRecoveryCodes(this.db, user.id, recoveryCodes);
      recordUserAudit(this.db, ctx, user, 'user.mfa.setup', { details: { method: 'totp' } });
    })();
    return { ...enrollment, recoveryCodes };
  }

  /** POST /auth/mfa/enable: a code of the pending secret turns MFA on and opens a session with mfa true. */
  async enable(ctx: RequestContext, code: string, currentPassword?: string): Promise<MfaSessionResult> {
    this.requireFeature();
    const user = this.currentUser(ctx);
    if (user.mfaEnabled) throw badRequest('MFA is already enabled', 'MFA_ALREADY_ENABLED');
    const pending = user.mfaPendingSecretEnc;
    if (!pending) throw badRequest('MFA setup has not been started; call /auth/mfa/setup first', 'MFA_SETUP_REQUIRED');
    // Proved before the code, so a wrong password never uses up a code of the authenticator.
    if (currentPassword !== undefined) await this.auth.verifyCurrentPassword(user, currentPassword);
    this.assertNotThrottled(user.id, ctx.ip);
    const check = checkTotp(this.db, this.box, user.id, pending, code);
    if (check !== 'accepted') {
      this.recordFailedCheck(user.id, ctx.ip);
      const refusal = refusalOf(check);
      throw badRequest(refusal.message, refusal.code);
    }
    const enabled = this.db.$client.transaction(() => {
      const updated = updateRow(this.db, users, user.id, {
        mfaEnabled: true,
        mfaMethod: 'totp',
        mfaSecretEnc: pending,
        mfaPendingSecretEnc: null,
        updatedAt: new Date().toISOString(),
      });
      if (!updated) throw notFound('User not found');
      recordMfaEnabled(this.db, ctx, user, 'totp');
      return updated;
    })();
    const tokens = await this.sessions.issue(user.id, true, { ip: ctx.ip, userAgent: ctx.userAgent, signInMethod: this.auth.signInMethodOf(ctx.caller) });
    return { user: enabled, tokens };
  }

  /**
   * POST /auth/mfa/verify: with a tempToken from login, completes the sign-in; without one, the bearer
   * session's user steps up to a new session with mfa true. A TOTP code or an unused recovery code.
   */
  async verify(
    ctx: RequestContext,
    code: string,
    tempToken: string | undefined,
    bearer: string | null,
  ): Promise<MfaSessionResult> {
    const { user, stepUp, signIn } = await this.auth.userForSecondFactor(tempToken, bearer);

    const userCtx = this.auth.contextFor(user, ctx);
    const provenBy = this.prove(userCtx, user, code, true);
    if (typeof provenBy !== 'string') {
      this.db.$client.transaction(() => {
        recordUserAudit(this.db, userCtx, user, 'user.login.failed', {
          result: 'failure',
          details: { reason: provenBy === USED ? 'MFA code already used' : 'invalid MFA code', stepUp },
        });
      })();
      throw unauthorized(provenBy.message, provenBy.code);
    }
    const tokens = await this.auth.startSession(userCtx, user, true, signIn, { mfaMethod: provenBy, stepUp });
    return { user, tokens };
  }

  /** POST /auth/mfa/disable: refused (403) while the partner or organization requires MFA. */
  disable(ctx: RequestContext, code: string): void {
    const user = this.currentUser(ctx);
    this.requireEnabled(user);
    if (this.mfaEnforced(ctx))
      throw forbidden('MFA is required by your organization and cannot be disabled', 'MFA_ENFORCED');
    const proof = this.prove(ctx, user, code, true);
    if (typeof proof !== 'string') throw badRequest(proof.message, proof.code);
    this.db.$client.transaction(() => {
      updateRow(this.db, users, user.id, {
        mfaEnabled: false,
        mfaMethod: null,
        mfaSecretEnc: null,
        mfaPendingSecretEnc: null,
        updatedAt: new Date().toISOString(),
      });
      deleteRecoveryCodes(this.db, user.id);
      recordUserAudit(this.db, ctx, user, 'user.mfa.disable');
    })();
  }

  /** POST /auth/mfa/recovery-codes: replaces every recovery code with a new set. No code in the body (01 §4.5):
   * the route needs a session with MFA, the proof every "+ MFA" route takes. */
  regenerateRecoveryCodes(ctx: RequestContext): string[] {
    const user = this.currentUser(ctx);
    this.requireEnabled(user);
    const recoveryCodes = newRecoveryCodes();
    this.db.$client.transaction(() => {
      replaceRecoveryCodes(this.db, user.id, recoveryCodes);
      recordUserAudit(this.db, ctx, user, 'user.mfa.recovery_codes.regenerate', {
        details: { count: recoveryCodes.length },
      });
    })();
    return recoveryCodes;
  }

  /** `requireMfa: true` in the settings of the caller's partner or organization (01 §4.5 disable). */
  private mfaEnforced(ctx: RequestContext): boolean {
    const { partnerId, orgId } = ctx.caller;
    const required = (settings: Record<string, unknown> | undefined) => settings?.requireMfa === true;
    if (orgId && required(this.lookup(() => this.tenancy.requireOrgRow(ctx, orgId).settings))) return true;
    if (partnerId && required(this.lookup(() => this.tenancy.getPartner(partnerId).settings))) return true;
    return false;
  }

  /** A tenant that is gone (deleted, out of reach) has no settings to enforce. */
  private lookup<T>(read: () => T): T | undefined {
    try {
      return read();
    } catch (err) {
      if (err instanceof DomainError && err.isClientFault) return undefined;
      throw err;
    }
  }
}
