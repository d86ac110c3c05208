import { createHmac, randomInt } from 'node:crypto';
import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { ServerConfig } from '../../config.js';
import { transaction, type Db } from '../../db/connection.js';
import { committed } from '../../db/group-commit.js';
import { deleteById, insertRow, preparedQueries, rowQuery, updateRow } from '../../db/prepared.js';
import { smsCodes, users } from '../../db/schema/index.js';
import { smsCodeText } from '../../delivery/messages.js';
import type { SmsSender } from '../../delivery/sms.js';
import type { RequestContext } from '../../context.js';
import { badRequest, forbidden, tooManyRequests, unauthorized } from '../../errors.js';
import { safeEqual } from '../../security/crypto.js';
import { SlidingWindowLimiter } from '../../security/sliding-window.js';
import type { TokenSigner } from '../../security/tokens.js';
import { newRecoveryCodes } from '../../security/totp.js';
import { recordAudit } from '../audit/recorder.js';
import type { AuthService, User } from './auth-service.js';
import { recordMfaEnabled, replaceRecoveryCodes } from './mfa-service.js';

export type SmsCodePurpose = 'phone_verify' | 'mfa_login';

const INVALID_CODE = 'Invalid or expired verification code';

/** The live codes of a user and purpose (not yet used), prepared once per database (db/prepared.ts): issuing
 * ends them, checking reads the latest. */
const codeQueries = preparedQueries((db) => {
  const live = and(eq(smsCodes.userId, sql.placeholder('userId')), eq(smsCodes.purpose, sql.placeholder('purpose')), isNull(smsCodes.consumedAt));
  return {
    deleteLive: db.delete(smsCodes).where(live).prepare(),
    live: rowQuery(db, smsCodes, live, { orderBy: [desc(smsCodes.createdAt)] }),
  };
});

/**
 * Phone verification and SMS sign-in codes (01 §4.5, §5.7). A code is six random digits, stored as an HMAC
 * under a server key (a plain hash of a six-digit number would be reversed at once), valid for the
 * configured time (10 minutes) and dead after the configured number of wrong guesses (5). Issuing a code
 * ends the earlier ones of the same purpose. Codes go out through the SMS gateway and are never logged.
 */
export class SmsService {
  /** Codes sent per user, so nobody can use the gateway to flood a phone. */
  readonly limiter = new SlidingWindowLimiter();

  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly sms: SmsSender,
    private readonly auth: AuthService,
    private readonly signer: TokenSigner,
    private readonly hmacKey: string,
  ) {}

  private codeHash(userId: string, purpose: SmsCodePurpose, code: string): string {
    return createHmac('sha256', this.hmacKey).update(`svc-sms-code\n${purpose}\n${userId}\n${code}`).digest('hex');
  }

  private throttleSends(userId: string): void {
    const d = this.config.delivery;
    const { allowed, retryAfterSeconds } = this.limiter.hit(`sms:${userId}`, d.smsPerUser, d.smsWindowSeconds * 1000);
    if (!allowed) throw tooManyRequests('Too many SMS codes requested', retryAfterSeconds, 'TOO_MANY_SMS');
  }

  /** Stores a new code (ending earlier ones) and sends it; if sending fails the code is withdrawn. */
  private async issueAndSend(user: User, purpose: SmsCodePurpose, phoneNumber: string): Promise<number> {
    this.sms.assertConfigured();
    this.throttleSends(user.id);
    const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
    const ttl = this.config.sms.codeTtlSeconds;
    const row = this.db.$client.transaction(() => {
      codeQueries(this.db).deleteLive.run({ userId: user.id, purpose });
      return insertRow(this.db, smsCodes, {
        userId: user.id,
        purpose,
        phoneNumber,
        codeHash: this.codeHash(user.id, purpose, code),
        expiresAt: new Date(Date.now() + ttl * 1000).toISOString(),
      });
    })();
    // The code is sent once it is stored for good (a failed commit answers 503 and sends nothing).
    await committed(this.db.$client);
    try {
      await this.sms.send(phoneNumber, smsCodeText(purpose, code, ttl));
    } catch (err) {
      transaction(this.db, (tx) => deleteById(tx, smsCodes, row.id));
      throw err;
    }
    return ttl;
  }

  /**
   * Checks a code against the user's latest live code of the purpose. A match uses it up; a miss counts
   * against it. Returns the phone number the code went to, or null.
   */
  consume(userId: string, purpose: SmsCodePurpose, code: string): string | null {
    return this.db.$client.transaction(() => {
      const row = codeQueries(this.db).live.get({ userId, purpose });
      if (!row || row.expiresAt <= new Date().toISOString() || row.attempts >= this.config.sms.codeAttempts) return null;
      if (!safeEqual(row.codeHash, this.codeHash(userId, purpose, code))) {
        updateRow(this.db, smsCodes, row, { attempts: row.attempts + 1 });
        return null;
      }
      updateRow(this.db, smsCodes, row, { consumedAt: new Date().toISOString() });
      return row.phoneNumber;
    })();
  }

  private currentUser(ctx: RequestContext): User {
    if (!ctx.caller.userId) throw unauthorized();
    return this.auth.getUser(ctx.caller.userId);
  }

  /**
   * While SMS is the user's second factor (01 §5.7), the phone is that factor: re-pointing it takes a session that
   * proved it (`mfa` claim; `mfa/sms/send` + `mfa/verify` step up), as TOTP cannot be set up again nor MFA
   * disabled without a code. Otherwise a stolen password-only session could move the factor to its own phone.
   * 403 `MFA_REQUIRED`, the answer of every MFA-gated route.
   */
  private assertMayChangePhone(ctx: RequestContext, user: User): void {
    if (user.mfaEnabled && user.mfaMethod === 'sms' && this.config.features.mfa && !ctx.caller.mfa) {
      throw forbidden('MFA required', 'MFA_REQUIRED');
    }
  }

  /** POST /auth/phone/verify: a code to the number; it becomes the user's once confirmed. */
  async verifyPhone(ctx: RequestContext, phoneNumber: string) {
    const user = this.currentUser(ctx);
    this.assertMayChangePhone(ctx, user);
    const expiresInSeconds = await this.issueAndSend(user, 'phone_verify', phoneNumber);
    return { success: true as const, message: 'Verification code sent', expiresInSeconds };
  }

  /** POST /auth/phone/confirm: the code proves the phone; the number is stored as verified. */
  confirmPhone(ctx: RequestContext, code: string) {
    const user = this.currentUser(ctx);
    // Checked here too: a code sent before SMS MFA was enabled must not re-point it afterwards.
    this.assertMayChangePhone(ctx, user);
    const phoneNumber = this.consume(user.id, 'phone_verify', code);
    if (!phoneNumber) throw badRequest(INVALID_CODE, 'INVALID_VERIFICATION_CODE');
    this.db.$client.transaction(() => {
      updateRow(this.db, users, user.id, { phoneNumber, phoneVerified: true, updatedAt: new Date().toISOString() });
      recordAudit(this.db, ctx, {
        action: 'user.phone.verify',
        resourceType: 'user',
        resourceId: user.id,
        resourceName: user.email,
        orgId: ctx.caller.orgId,
        details: { phoneSuffix: phoneNumber.slice(-4) },
      });
    })();
    return { success: true as const, phoneNumber, phoneVerified: true as const };
  }

  /** POST /auth/mfa/sms/send: a sign-in code for an SMS-MFA user, named by the login tempToken or (to step
   * up) by the bearer session. */
  async sendLoginCode(tempToken: string | undefined, bearer: string | null) {
    const { user } = await this.auth.userForSecondFactor(tempToken, bearer);
    if (!user.mfaEnabled || user.mfaMethod !== 'sms' || !user.phoneVerified || !user.phoneNumber) {
      throw badRequest('SMS MFA is not enabled for this account', 'SMS_MFA_NOT_ENABLED');
    }
    const expiresInSeconds = await this.issueAndSend(user, 'mfa_login', user.phoneNumber);
    return { success: true as const, message: 'Sign-in code sent', expiresInSeconds };
  }

  /** POST /auth/mfa/sms/enable: SMS becomes the second factor (the phone must be verified); recovery codes
   * are replaced and shown once. */
  enableSmsMfa(ctx: RequestContext) {
    if (!this.config.features.mfa) throw badRequest('MFA is disabled on this server', 'MFA_DISABLED');
    const user = this.currentUser(ctx);
    if (user.mfaEnabled) throw badRequest('MFA is already enabled', 'MFA_ALREADY_ENABLED');
    if (!user.phoneVerified || !user.phoneNumber) {
      throw badRequest('A verified phone number is required: POST /auth/phone/verify, then /auth/phone/confirm', 'PHONE_NOT_VERIFIED');
    }
    this.sms.assertConfigured();
    const recoveryCodes = newRecoveryCodes();
    this.db.$client.transaction(() => {
      updateRow(this.db, users, user.id, { mfaEnabled: true, mfaMethod: 'sms', mfaSecretEnc: null, mfaPendingSecretEnc: null, updatedAt: new Date().toISOString() });
      replaceRecoveryCodes(this.db, user.id, recoveryCodes);
      recordMfaEnabled(this.db, ctx, user, 'sms');
    })();
    return { success: true as const, mfaMethod: 'sms' as const, recoveryCodes };
  }
}
