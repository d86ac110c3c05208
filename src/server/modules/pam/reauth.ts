import type { ServerConfig } from '../../config.js';
import type { RequestContext } from '../../context.js';
import type { Db } from '../../db/connection.js';
import { DomainError, tooManyRequests, unauthorized } from '../../errors.js';
import type { SecretBox } from '../../security/crypto.js';
import { AttemptThrottle, type AttemptOutcome } from '../../security/attempt-throttle.js';
import { verifyPassword } from '../../security/passwords.js';
import type { AuthService } from '../identity/auth-service.js';
import { TOTP_CODE_USED, checkTotp } from '../identity/totp-verifier.js';
import type { TenancyService } from '../tenancy/service.js';
import { liveOrg } from './rules-service.js';

/** How sure an approval is of who made it (01 §4.9): re-entered factor and step-up policy. */
export class ApprovalAssurance {
  private readonly reauthAttempts = new AttemptThrottle();

  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly box: SecretBox,
    private readonly auth: AuthService,
    private readonly tenancy: TenancyService,
  ) {}

  /** The re-entered factor of a critical-tier approval: the account password, or for accounts without one a
   * TOTP code. Missing or wrong → 401 reauth_required; failures are throttled like sign-in. The attempt is counted
   * before the factor is checked (the password hash is awaited: parallel guesses must not all pass the limit
   * before the first failure is recorded), then settled: a failure keeps counting, a success clears the count, a
   * factor that was not sent (or could not be checked) does not count. */
  async reauthenticate(
    ctx: RequestContext,
    body: { reauthPassword?: string | undefined; reauthMfaCode?: string | undefined },
  ): Promise<void> {
    const userId = ctx.caller.userId;
    const user = userId ? this.auth.getUser(userId) : null;
    const factor = user?.passwordHash ? 'password' : 'mfa_code';
    const required = (message: string) => unauthorized(message, 'reauth_required', { factor });
    if (!user) throw required('Re-authentication required for a critical-tier approval');
    const t = this.config.throttle;
    const attempt = this.reauthAttempts.reserve(`pam-reauth:${user.id}`, t.loginPerEmail, t.loginWindowSeconds * 1000);
    if (!attempt.allowed) {
      const message = 'Too many re-authentication attempts';
      throw tooManyRequests(message, attempt.retryAfterSeconds, 'TOO_MANY_REAUTH_ATTEMPTS');
    }
    let outcome: AttemptOutcome = 'released';
    let failure = 'Re-authentication failed';
    try {
      if (user.passwordHash) {
        if (body.reauthPassword === undefined)
          throw required('Re-authentication required for a critical-tier approval: send reauthPassword');
        outcome = (await verifyPassword(body.reauthPassword, user.passwordHash)) ? 'succeeded' : 'failed';
      } else {
        if (body.reauthMfaCode === undefined)
          throw required('Re-authentication required for a critical-tier approval: send reauthMfaCode');
        const check =
          user.mfaEnabled && user.mfaMethod !== 'sms' && user.mfaSecretEnc
            ? checkTotp(this.db, this.box, user.id, user.mfaSecretEnc, body.reauthMfaCode)
            : 'invalid';
        outcome = check === 'accepted' ? 'succeeded' : 'failed';
        if (check === 'used') failure = TOTP_CODE_USED;
      }
    } finally {
      attempt.settle(outcome);
    }
    if (outcome !== 'succeeded') throw required(failure);
  }

  /** Step-up policy: `pamStepUpRequired: true` in the settings of the organization or of its partner makes a
   * plain session approval under-assured (403); a deny is never blocked. */
  stepUpRequired(orgId: string): boolean {
    const org = liveOrg(this.db, orgId);
    if (!org) return false;
    if (org.settings.pamStepUpRequired === true) return true;
    try {
      return this.tenancy.getPartner(org.partnerId).settings.pamStepUpRequired === true;
    } catch (err) {
      if (err instanceof DomainError) return false;
      throw err;
    }
  }
}
