import type { z } from 'zod';
import type { RegisterPartnerSchema, RegisterSchema } from '../../../contract/auth.js';
import type { ServerConfig } from '../../config.js';
import type { Db } from '../../db/connection.js';
import { insertRow } from '../../db/prepared.js';
import { partnerUsers, rolePermissions, roles, users } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { DomainError, badRequest, conflict, forbidden, tooManyRequests } from '../../errors.js';
import { hashPassword, passwordProblem } from '../../security/passwords.js';
import { SlidingWindowLimiter } from '../../security/sliding-window.js';
import { recordAudit } from '../audit/recorder.js';
import type { TenancyService } from '../tenancy/service.js';
import type { AuthService, User } from './auth-service.js';
import type { IssuedTokens } from './sessions.js';

export type RegistrationKind = 'user' | 'partner';

const SLUG_MAX_LENGTH = 50;
const SLUG_MAX_ATTEMPTS = 100;
/** A company name with no letters or digits at all still gets a slug. */
const SLUG_FALLBACK = 'partner';

/** The answer for an e-mail that is already registered: the same status and no error (01 §4.6). */
export const REGISTRATION_RECEIVED = {
  success: true,
  message:
    'Registration received. If this e-mail address can be used, the account is ready; otherwise sign in or reset your password.',
} as const;

type Partner = ReturnType<TenancyService['createPartner']>;

export type RegistrationOutcome<T> = ({ created: true; user: User; tokens: IssuedTokens } & T) | { created: false };

/** 01 §4.6: lowercase, every run of non-alphanumerics one hyphen, trimmed of hyphens, at most 50 chars. */
export function slugBase(companyName: string): string {
  const slug = companyName
    // Letters with accents keep their base letter (Ünited → united) rather than becoming a hyphen.
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, SLUG_MAX_LENGTH)
    .replace(/^-+|-+$/g, '');
  return slug || SLUG_FALLBACK;
}

/** The n-th candidate: the base, then `base-2`, `base-3` …, shortening the base so it stays within 50. */
export function slugCandidate(base: string, attempt: number): string {
  if (attempt <= 1) return base;
  const suffix = `-${attempt}`;
  const head = base.slice(0, SLUG_MAX_LENGTH - suffix.length).replace(/-+$/, '');
  return `${head || SLUG_FALLBACK}${suffix}`;
}

/** Self-registration of standalone users and of partners with their first admin (01 §4.6, §5.8). */
export class RegistrationService {
  /** Registration attempts per client IP (01 §8). */
  readonly limiter = new SlidingWindowLimiter();

  constructor(
    private readonly db: Db,
    private readonly config: ServerConfig,
    private readonly auth: AuthService,
    private readonly tenancy: TenancyService,
  ) {}

  /**
   * The checks that come before the body is even read: the feature flag (01 §5.8), then the per-IP rate
   * limit (01 §4.6 "Order of checks"). Every attempt counts, whatever its body.
   */
  admit(kind: RegistrationKind, ip: string | null): void {
    if (!this.config.features.registration)
      throw forbidden('Registration is currently disabled', 'REGISTRATION_DISABLED');
    const t = this.config.throttle;
    const limit = kind === 'partner' ? t.registerPartnerPerIp : t.registerPerIp;
    const { allowed, retryAfterSeconds } = this.limiter.hit(
      `register:${kind}:${ip ?? ''}`,
      limit,
      t.registerWindowSeconds * 1000,
    );
    if (!allowed) throw tooManyRequests('Too many registration attempts', retryAfterSeconds, 'TOO_MANY_REGISTRATIONS');
  }

  /** Terms, then password strength; the password hash is computed for every request that gets this far,
   * so a taken e-mail is not told apart by timing. */
  private async checkInput(acceptTerms: boolean | undefined, password: string): Promise<string> {
    if (acceptTerms === false) throw badRequest('You must accept the terms of service', 'TERMS_NOT_ACCEPTED');
    const problem = passwordProblem(password);
    if (problem) throw badRequest(problem, 'WEAK_PASSWORD');
    return hashPassword(password);
  }

  private insertUser(email: string, name: string, passwordHash: string): User {
    return insertRow(this.db, users, { email, name, passwordHash, status: 'active' });
  }

  /** The new user as the actor of its own registration's audit entries. */
  private actorContext(ctx: RequestContext, user: User, partnerId: string | null): RequestContext {
    return {
      ...ctx,
      caller: {
        ...ctx.caller,
        kind: 'user',
        userId: user.id,
        email: user.email,
        name: user.name,
        scope: partnerId ? 'partner' : 'organization',
        partnerId,
        permissions: [],
      },
    };
  }

  /** POST /auth/register: a standalone active user, signed in at once. */
  async registerUser(ctx: RequestContext, body: z.infer<typeof RegisterSchema>): Promise<RegistrationOutcome<object>> {
    const passwordHash = await this.checkInput(body.acceptTerms, body.password);
    const email = body.email.trim().toLowerCase();
    const user = this.db.$client.transaction(() => {
      if (this.auth.findUserByEmail(email)) return null;
      const created = this.insertUser(email, body.name, passwordHash);
      recordAudit(this.db, this.actorContext(ctx, created, null), {
        action: 'user.create',
        resourceType: 'user',
        resourceId: created.id,
        resourceName: email,
        partnerId: null,
        details: { selfRegistration: true },
      });
      return created;
    })();
    if (!user) return { created: false };
    const tokens = await this.auth.startSession(this.auth.contextFor(user, ctx), user, false, 'password', {
      selfRegistration: true,
    });
    return { created: true, user, tokens };
  }

  /**
   * POST /auth/register-partner: in one transaction a pending msp partner on the free plan, its own Partner
   * Admin role (`*:*`), the active user and the partner-user link with orgAccess all; then a session.
   */
  async registerPartner(
    ctx: RequestContext,
    body: z.infer<typeof RegisterPartnerSchema>,
  ): Promise<RegistrationOutcome<{ partner: Partner }>> {
    const passwordHash = await this.checkInput(body.acceptTerms, body.password);
    const email = body.email.trim().toLowerCase();
    const created = this.db.$client.transaction(() => {
      if (this.auth.findUserByEmail(email)) return null;
      const user = this.insertUser(email, body.name, passwordHash);
      const partner = this.createPartnerWithFreeSlug(this.actorContext(ctx, user, null), body.companyName);
      const actor = this.actorContext(ctx, user, partner.id);
      const role = insertRow(this.db, roles, {
        partnerId: partner.id,
        name: 'Partner Admin',
        description: 'Everything in the partner',
        scope: 'partner',
        isSystem: true,
      });
      insertRow(this.db, rolePermissions, { roleId: role.id, resource: '*', action: '*' });
      insertRow(this.db, partnerUsers, { partnerId: partner.id, userId: user.id, roleId: role.id, orgAccess: 'all' });
      recordAudit(this.db, actor, {
        action: 'role.create',
        resourceType: 'role',
        resourceId: role.id,
        resourceName: role.name,
        partnerId: partner.id,
        details: { permissions: ['*:*'], system: true, selfRegistration: true },
      });
      recordAudit(this.db, actor, {
        action: 'user.create',
        resourceType: 'user',
        resourceId: user.id,
        resourceName: email,
        partnerId: partner.id,
        details: { selfRegistration: true, roleId: role.id, orgAccess: 'all' },
      });
      return { user, partner };
    })();
    if (!created) return { created: false };
    const tokens = await this.auth.startSession(this.auth.contextFor(created.user, ctx), created.user, false, 'password', {
      selfRegistration: true,
    });
    return { created: true, ...created, tokens };
  }

  /** Tries the slug and its numbered variants through the tenancy service, up to 100 attempts (01 §4.6). */
  private createPartnerWithFreeSlug(ctx: RequestContext, companyName: string): Partner {
    const base = slugBase(companyName);
    for (let attempt = 1; attempt <= SLUG_MAX_ATTEMPTS; attempt++) {
      try {
        return this.tenancy.createPartner(ctx, {
          name: companyName,
          slug: slugCandidate(base, attempt),
          type: 'msp',
          plan: 'free',
          status: 'pending',
        });
      } catch (err) {
        if (err instanceof DomainError && err.code === 'SLUG_TAKEN') continue;
        throw err;
      }
    }
    throw conflict('Could not find a free slug for this company name; choose another name', 'SLUG_UNAVAILABLE');
  }
}
