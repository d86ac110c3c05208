import { createHash } from 'node:crypto';
import { and, eq, gt, isNull, lte, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { SamlAcsBodySchema, SsoCallbackQuerySchema, SsoExchangeBodySchema, SsoLoginQuerySchema } from '../../../contract/sso.js';
import { transaction, type Db } from '../../db/connection.js';
import { newId } from '../../db/ids.js';
import { insertRow, preparedQueries, rowQuery, updateRow } from '../../db/prepared.js';
import { ssoExchangeCodes, ssoIdentities, ssoLoginStates, ssoSamlReplays, type AttributeMapping } from '../../db/schema/index.js';
import type { RequestContext } from '../../context.js';
import { publicBaseUrl } from '../../delivery/links.js';
import type { ServerConfig } from '../../config.js';
import { DomainError, badRequest, forbidden, notFound, unauthorized } from '../../errors.js';
import { randomToken, safeEqual, sha256Hex, type SecretBox } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import type { AuthService, User } from '../identity/auth-service.js';
import type { Directory } from '../identity/directory.js';
import type { IssuedTokens } from '../identity/sessions.js';
import { configure, describeOidcError, discover, finishLogin, startLogin, type LoginResult } from './oidc.js';
import { SamlRejection, authnRequest, metadata, serviceProvider, verifyResponse, type ServiceProvider, type VerifiedAssertion } from './saml.js';
import { samlIdentityProvider, type SsoProviderRow, type SsoProvidersService, type WarnLog } from './service.js';

/** 01 §8: an SSO sign-in in progress lives 10 minutes. */
export const SSO_STATE_TTL_MS = 10 * 60_000;
/** The ssoCode of the final redirect is good for one exchange within a minute. */
export const SSO_CODE_TTL_MS = 60_000;

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
const INVALID_STATE = () => badRequest('Invalid or expired SSO state', 'SSO_INVALID_STATE');

/** The statements of a sign-in (states, exchange codes, SAML replays, identity links), prepared once per database. */
const loginQueries = preparedQueries((db) => ({
  /** The sign-in in progress whose state hashes to `stateHash`. */
  stateByHash: rowQuery(db, ssoLoginStates, eq(ssoLoginStates.stateHash, sql.placeholder('stateHash'))),
  /** Marks sign-in `id` used at `now` unless it was used or has expired. */
  takeState: db
    .update(ssoLoginStates)
    .set({ usedAt: sql`${sql.placeholder('now')}` })
    .where(and(eq(ssoLoginStates.id, sql.placeholder('id')), isNull(ssoLoginStates.usedAt), gt(ssoLoginStates.expiresAt, sql.placeholder('now'))))
    .prepare(),
  /** Removes the sign-ins expired by `now`. */
  purgeStates: db.delete(ssoLoginStates).where(lte(ssoLoginStates.expiresAt, sql.placeholder('now'))).prepare(),
  /** The exchange code that hashes to `codeHash`. */
  codeByHash: rowQuery(db, ssoExchangeCodes, eq(ssoExchangeCodes.codeHash, sql.placeholder('codeHash'))),
  /** Marks code `id` used at `now` unless it was used or has expired. */
  takeCode: db
    .update(ssoExchangeCodes)
    .set({ usedAt: sql`${sql.placeholder('now')}` })
    .where(and(eq(ssoExchangeCodes.id, sql.placeholder('id')), isNull(ssoExchangeCodes.usedAt), gt(ssoExchangeCodes.expiresAt, sql.placeholder('now'))))
    .prepare(),
  /** Removes the exchange codes expired by `now`. */
  purgeCodes: db.delete(ssoExchangeCodes).where(lte(ssoExchangeCodes.expiresAt, sql.placeholder('now'))).prepare(),
  /** Removes the SAML message ids whose NotOnOrAfter has passed by `now`. */
  purgeReplays: db.delete(ssoSamlReplays).where(lte(ssoSamlReplays.expiresAt, sql.placeholder('now'))).prepare(),
  /** Remembers a SAML message id of a provider; nothing (0 changes) when it is there already. Every column is
   * text: plain placeholders. */
  rememberReplay: db
    .insert(ssoSamlReplays)
    .values({
      id: sql.placeholder('id'),
      providerId: sql.placeholder('providerId'),
      messageId: sql.placeholder('messageId'),
      createdAt: sql.placeholder('createdAt'),
      expiresAt: sql.placeholder('expiresAt'),
    })
    .onConflictDoNothing()
    .prepare(),
  /** The identity link of provider `providerId` for subject `externalId`. */
  linkBySubject: rowQuery(db, ssoIdentities, and(eq(ssoIdentities.providerId, sql.placeholder('providerId')), eq(ssoIdentities.externalId, sql.placeholder('externalId')))),
  /** The id of the identity link of provider `providerId` for user `userId`. */
  linkOfUser: db
    .select({ id: ssoIdentities.id })
    .from(ssoIdentities)
    .where(and(eq(ssoIdentities.providerId, sql.placeholder('providerId')), eq(ssoIdentities.userId, sql.placeholder('userId'))))
    .prepare(),
}));

/** What the browser that starts an OIDC sign-in keeps in a cookie: a digest of the state, never the state. */
const browserBindingOf = (state: string) => sha256Hex(`sso-browser:${state}`);

/** Where a finished sign-in is sent: the server's own origin (fragment), or a CLI's loopback listener (query,
 * bound to the client's PKCE challenge) — never anywhere else (docs/api-notes.md). */
interface ReturnTarget {
  url: string;
  loopback: boolean;
}

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

function claimString(claims: Record<string, unknown>, name: string | undefined): string | null {
  if (!name) return null;
  const value = claims[name];
  if (typeof value === 'string' && value.trim() !== '') return value.trim();
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return null;
}

/** 01 §2.9 attribute mapping: the IdP claims named by the provider's mapping, as the user's fields. */
export function mapAttributes(claims: Record<string, unknown>, mapping: AttributeMapping) {
  const email = claimString(claims, mapping.email)?.toLowerCase() ?? null;
  const firstName = claimString(claims, mapping.firstName);
  const lastName = claimString(claims, mapping.lastName);
  const joined = [firstName, lastName].filter(Boolean).join(' ');
  const name = claimString(claims, mapping.name) ?? (joined || email);
  const rawGroups = mapping.groups ? claims[mapping.groups] : undefined;
  const groups = Array.isArray(rawGroups) ? rawGroups.filter((g): g is string => typeof g === 'string') : [];
  return { email, name, firstName, lastName, groups };
}

/** 01 §2.9 allowedDomains: comma-separated, case-insensitive; empty allows every domain. */
export function domainAllowed(email: string, allowedDomains: string | null): boolean {
  const allowed = (allowedDomains ?? '')
    .split(',')
    .map((d) => d.trim().toLowerCase().replace(/^@/, ''))
    .filter(Boolean);
  if (allowed.length === 0) return true;
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  return allowed.includes(domain);
}

/**
 * OpenID Connect sign-in (01 §5.9, §5.10): the redirect to the organization's active provider, the callback
 * (state, code exchange with PKCE, ID token and user info checked by openid-client), the account mapping, a
 * session like any other sign-in, and the single-use ssoCode that hands the tokens to the browser or CLI.
 */
export class SsoLoginService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly config: ServerConfig,
    private readonly providers: SsoProvidersService,
    private readonly auth: AuthService,
    private readonly directory: Directory,
    private readonly warn: WarnLog,
  ) {}

  private callbackUrl(): string {
    return `${publicBaseUrl(this.config)}/api/v1/sso/callback`;
  }

  /** GET /sso/login/:orgId: stores the sign-in in progress for 10 minutes and answers the IdP URL — OIDC:
   * state, nonce and PKCE verifier; SAML: the relay state and the AuthnRequest id. `browserBinding` is what the
   * starting browser keeps (an OIDC sign-in only: see `callback`). */
  async begin(ctx: RequestContext, orgId: string, query: z.infer<typeof SsoLoginQuerySchema>): Promise<{ url: string; browserBinding: string | null }> {
    const target = this.returnTarget(query.redirectUri);
    if (target.loopback && !query.codeChallenge) {
      throw badRequest('A loopback redirectUri needs a codeChallenge', 'SSO_CODE_CHALLENGE_REQUIRED');
    }
    const provider = this.providers.activeProviderOf(orgId);
    if (!provider) throw notFound('No active SSO provider for this organization', 'SSO_NOT_CONFIGURED');
    let start: { url: string; state: string; nonce: string; codeVerifier: string };
    if (provider.type === 'saml') {
      const state = randomToken(32);
      const request = await authnRequest(samlIdentityProvider(provider), this.serviceProvider(), state);
      start = { url: request.url, state, nonce: request.requestId, codeVerifier: '' };
    } else {
      const oidc = await startLogin(await this.clientFor(provider), this.callbackUrl(), provider.scopes);
      start = { ...oidc, url: oidc.url.href };
    }
    const now = Date.now();
    this.db.$client.transaction(() => {
      loginQueries(this.db).purgeStates.run({ now: new Date(now).toISOString() });
      insertRow(this.db, ssoLoginStates, {
        providerId: provider.id,
        stateHash: sha256Hex(start.state),
        nonce: start.nonce,
        codeVerifierEnc: this.box.seal(start.codeVerifier),
        returnTo: target.url,
        clientChallenge: query.codeChallenge ?? null,
        createdAt: new Date(now).toISOString(),
        expiresAt: new Date(now + SSO_STATE_TTL_MS).toISOString(),
      });
    })();
    void ctx;
    return { url: start.url, browserBinding: provider.type === 'oidc' ? browserBindingOf(start.state) : null };
  }

  /**
   * GET /sso/callback (OIDC): the code exchange and ID token checks of §5.9, then the sign-in. The callback must
   * come to the browser that started the sign-in (its `browserBinding` cookie): a callback URL someone else's
   * sign-in produced, opened in a victim's browser, would sign the victim in as that someone (login CSRF).
   */
  async callback(ctx: RequestContext, query: z.infer<typeof SsoCallbackQuerySchema>, browserBinding: string | undefined): Promise<string> {
    if (!query.state || browserBinding === undefined || !safeEqual(browserBinding, browserBindingOf(query.state))) {
      throw badRequest('This sign-in was not started in this browser: start it again', 'SSO_STATE_MISMATCH');
    }
    const stored = this.takeState(query.state);
    return this.finish(ctx, stored, 'oidc', async (provider) => {
      if (query.error) {
        throw forbidden(`The identity provider refused the sign-in: ${query.error_description ?? query.error}`, 'SSO_PROVIDER_ERROR');
      }
      return this.exchangeWithProvider(provider, query, stored);
    });
  }

  /**
   * POST /sso/saml/acs (01 §4.7, §5.11): the relay state names the sign-in in progress (taken once); the
   * response must answer its AuthnRequest, carry one assertion signed by the provider's certificate, from its
   * entity id, for this service provider, within its time conditions, never seen before. Then the same sign-in
   * as OIDC.
   */
  async samlAcs(ctx: RequestContext, body: z.infer<typeof SamlAcsBodySchema>): Promise<string> {
    const stored = this.takeState(body.RelayState);
    return this.finish(ctx, stored, 'saml', async (provider) => {
      const pending = { requestId: stored.nonce, issuedAt: stored.createdAt, ttlMs: SSO_STATE_TTL_MS };
      let assertion: VerifiedAssertion;
      try {
        assertion = await verifyResponse(samlIdentityProvider(provider), this.serviceProvider(), body.SAMLResponse, pending, provider.attributeMapping.email);
      } catch (err) {
        if (!(err instanceof SamlRejection)) throw err;
        throw forbidden(`The SAML response was refused: ${err.message}`, 'SSO_ASSERTION_REJECTED');
      }
      this.consumeAssertion(provider.id, assertion);
      return { claims: assertion.claims, subject: assertion.subject, amr: [], accessToken: null, refreshToken: null, idToken: null, expiresAt: null };
    });
  }

  /** GET /sso/saml/metadata: this server as a SAML service provider. */
  samlMetadata(): Promise<string> {
    return metadata(this.serviceProvider());
  }

  /** The sign-in in progress a state names, taken once: unknown, used or expired → 400 before anything else. */
  private takeState(state: string | undefined): typeof ssoLoginStates.$inferSelect {
    if (!state) throw INVALID_STATE();
    const nowIso = new Date().toISOString();
    const queries = loginQueries(this.db);
    const stored = queries.stateByHash.get({ stateHash: sha256Hex(state) });
    if (!stored) throw INVALID_STATE();
    const taken = transaction(this.db, () => queries.takeState.run({ id: stored.id, now: nowIso }));
    if (taken.changes !== 1) throw INVALID_STATE();
    return stored;
  }

  /**
   * Once the state is accepted, every refusal goes back to where the sign-in started, as `ssoError`, so the
   * browser or CLI can say why; success sends the ssoCode.
   */
  private async finish(
    ctx: RequestContext,
    stored: typeof ssoLoginStates.$inferSelect,
    type: SsoProviderRow['type'],
    verify: (provider: SsoProviderRow) => Promise<LoginResult>,
  ): Promise<string> {
    const target: ReturnTarget = { url: stored.returnTo, loopback: stored.clientChallenge !== null };
    try {
      const provider = this.providers.activeProviderOf(this.providerOrg(stored.providerId));
      if (!provider || provider.id !== stored.providerId) throw forbidden('The SSO provider is no longer active', 'SSO_PROVIDER_INACTIVE');
      if (provider.type !== type) throw forbidden(`This sign-in was started for a ${provider.type.toUpperCase()} provider`, 'SSO_PROVIDER_MISMATCH');
      const { user, tokens } = await this.signIn(ctx, provider, await verify(provider));
      const code = randomToken(32);
      insertRow(this.db, ssoExchangeCodes, {
        codeHash: sha256Hex(code),
        userId: user.id,
        tokensEnc: this.box.seal(JSON.stringify(tokens)),
        clientChallenge: stored.clientChallenge,
        expiresAt: new Date(Date.now() + SSO_CODE_TTL_MS).toISOString(),
      });
      return this.redirectWith(target, { ssoCode: code });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.warn({ providerId: stored.providerId, code: err.code, reason: err.message }, 'SSO sign-in refused');
      return this.redirectWith(target, { ssoError: err.code ?? 'SSO_FAILED', ssoErrorDescription: err.message });
    }
  }

  /** SAML replay store: an assertion id is accepted once per provider, remembered until its NotOnOrAfter. */
  private consumeAssertion(providerId: string, assertion: VerifiedAssertion): void {
    const nowIso = new Date().toISOString();
    this.db.$client.transaction(() => {
      const queries = loginQueries(this.db);
      queries.purgeReplays.run({ now: nowIso });
      // id and createdAt as their columns' defaults would make them.
      const inserted = queries.rememberReplay.run({
        id: newId(),
        providerId,
        messageId: `assertion:${assertion.assertionId}`,
        createdAt: new Date().toISOString(),
        expiresAt: assertion.notOnOrAfter,
      });
      if (inserted.changes !== 1) throw forbidden('The SAML response was refused: this assertion was already used', 'SSO_ASSERTION_REPLAYED');
    })();
  }

  private serviceProvider(): ServiceProvider {
    return serviceProvider(publicBaseUrl(this.config));
  }

  /** POST /sso/exchange: one use, within SSO_CODE_TTL_MS; a code for a CLI needs its PKCE verifier. */
  exchange(ctx: RequestContext, body: z.infer<typeof SsoExchangeBodySchema>) {
    const nowIso = new Date().toISOString();
    const invalid = () => unauthorized('Invalid or expired SSO code', 'INVALID_SSO_CODE');
    const queries = loginQueries(this.db);
    const row = queries.codeByHash.get({ codeHash: sha256Hex(body.code) });
    if (!row) throw invalid();
    const taken = transaction(this.db, () => {
      const result = queries.takeCode.run({ id: row.id, now: nowIso });
      queries.purgeCodes.run({ now: nowIso });
      return result;
    });
    if (taken.changes !== 1) throw invalid();
    if (row.clientChallenge !== null && !(body.codeVerifier && safeEqual(s256(body.codeVerifier), row.clientChallenge))) throw invalid();
    const tokens = JSON.parse(this.box.open(row.tokensEnc)) as IssuedTokens;
    const user = this.auth.getUser(row.userId);
    void ctx;
    return {
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresInSeconds: tokens.expiresInSeconds,
      user: { id: user.id, email: user.email, name: user.name },
    };
  }

  private providerOrg(providerId: string): string {
    const row = this.providers.findById(providerId);
    return row?.orgId ?? '';
  }

  /** The client configuration: the stored endpoints, or discovery when creation could not reach the issuer. */
  private async clientFor(provider: SsoProviderRow) {
    if (!provider.issuer || !provider.clientId) {
      throw badRequest('The SSO provider needs an issuer and a client id', 'oidc_issuer_required');
    }
    const settings = { clientId: provider.clientId, clientSecret: this.providers.clientSecretOf(provider) };
    const transport = this.providers.transport;
    if (provider.authorizationUrl && provider.tokenUrl && provider.jwksUrl) {
      return configure(
        { issuer: provider.issuer, authorizationUrl: provider.authorizationUrl, tokenUrl: provider.tokenUrl, userInfoUrl: provider.userInfoUrl, jwksUrl: provider.jwksUrl },
        settings,
        transport,
      );
    }
    try {
      const { config, endpoints } = await discover(provider.issuer, settings, transport);
      this.providers.recordDiscovery(provider.id, endpoints);
      return config;
    } catch (err) {
      throw new DomainError('upstream_failed', `OIDC discovery failed: ${describeOidcError(err)}`, 'oidc_discovery_failed');
    }
  }

  private async exchangeWithProvider(
    provider: SsoProviderRow,
    query: z.infer<typeof SsoCallbackQuerySchema>,
    stored: typeof ssoLoginStates.$inferSelect,
  ): Promise<LoginResult> {
    const client = await this.clientFor(provider);
    const current = new URL(this.callbackUrl());
    for (const [key, value] of Object.entries(query)) if (typeof value === 'string') current.searchParams.set(key, value);
    try {
      return await finishLogin(client, current, { state: query.state ?? '', nonce: stored.nonce, codeVerifier: this.box.open(stored.codeVerifierEnc) });
    } catch (err) {
      throw forbidden(`The identity provider's answer was refused: ${describeOidcError(err)}`, 'SSO_TOKEN_REJECTED');
    }
  }

  /** 01 §5.10 account mapping, then a session (as any sign-in, with the login audited). */
  private async signIn(ctx: RequestContext, provider: SsoProviderRow, result: LoginResult): Promise<{ user: User; tokens: IssuedTokens }> {
    const attrs = mapAttributes(result.claims, provider.attributeMapping);
    if (!attrs.email) throw forbidden('The identity provider sent no e-mail address', 'SSO_EMAIL_MISSING');
    if (result.claims.email_verified === false) throw forbidden('The identity provider has not verified this e-mail address', 'SSO_EMAIL_UNVERIFIED');
    if (!domainAllowed(attrs.email, provider.allowedDomains)) {
      throw forbidden('This e-mail domain may not sign in with this provider', 'SSO_DOMAIN_NOT_ALLOWED');
    }
    const sealedTokens =
      result.accessToken === null ? null : this.box.seal(JSON.stringify({ accessToken: result.accessToken, refreshToken: result.refreshToken, idToken: result.idToken }));
    const profile = { name: attrs.name, firstName: attrs.firstName, lastName: attrs.lastName, groups: attrs.groups };
    const now = new Date().toISOString();
    const queries = loginQueries(this.db);
    const user = this.db.$client.transaction(() => {
      const linked = queries.linkBySubject.get({ providerId: provider.id, externalId: result.subject });
      let found: User | undefined = linked ? this.auth.getUser(linked.userId) : this.auth.findUserByEmail(attrs.email ?? '');
      let provisioned = false;
      if (!found) {
        if (!provider.autoProvision || !provider.defaultRoleId) throw notFound('User not found; ask an administrator for access', 'USER_NOT_FOUND');
        found = this.directory.provisionOrganizationUser(this.db, {
          email: attrs.email ?? '',
          name: (attrs.name ?? attrs.email ?? '').slice(0, 255),
          orgId: provider.orgId,
          roleId: provider.defaultRoleId,
        });
        provisioned = true;
      }
      if (found.status !== 'active') throw forbidden('This account is not active', 'USER_INACTIVE');
      const membership = this.directory.membershipOf(found.id);
      if (membership?.kind !== 'organization' || membership.orgId !== provider.orgId) {
        throw forbidden('No access to the organization of this SSO provider', 'SSO_NO_ORG_ACCESS');
      }
      const values = { email: attrs.email ?? '', profile, tokensEnc: sealedTokens, tokenExpiresAt: result.expiresAt, lastLoginAt: now, updatedAt: now };
      // 01 §2.9/§5.10: one link per user and provider. A user found by e-mail who is already linked to this provider
      // under another subject (the IdP re-created the account) has that link updated to the new subject.
      const link = linked ?? queries.linkOfUser.get({ providerId: provider.id, userId: found.id });
      if (link) updateRow(this.db, ssoIdentities, link.id, { ...values, userId: found.id, externalId: result.subject });
      else insertRow(this.db, ssoIdentities, { ...values, userId: found.id, providerId: provider.id, externalId: result.subject });
      if (provisioned) {
        recordAudit(this.db, this.auth.contextFor(found, ctx), {
          action: 'user.provision',
          resourceType: 'user',
          resourceId: found.id,
          resourceName: found.email,
          orgId: provider.orgId,
          details: { via: 'sso', providerId: provider.id, roleId: provider.defaultRoleId },
        });
      }
      return found;
    })();
    // Only an OIDC ID token's `amr` counts (result.amr); a SAML assertion has none, whatever its attributes say.
    const mfa = provider.trustsIdpMfa && result.amr.some((m) => m === 'mfa' || m === 'otp' || m === 'hwk' || m === 'swk');
    const tokens = await this.auth.startSession(this.auth.contextFor(user, ctx), user, mfa, 'sso', { method: 'sso', providerId: provider.id });
    return { user, tokens };
  }

  private returnTarget(redirectUri: string | undefined): ReturnTarget {
    const base = publicBaseUrl(this.config);
    if (redirectUri === undefined) return { url: `${base}/`, loopback: false };
    let url: URL;
    try {
      url = new URL(redirectUri);
    } catch {
      throw badRequest('redirectUri is not a URL', 'SSO_INVALID_REDIRECT');
    }
    if (url.username || url.password || url.hash) throw badRequest('redirectUri may carry no credentials or fragment', 'SSO_INVALID_REDIRECT');
    if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return { url: url.href, loopback: true };
    if (url.origin === new URL(base).origin) return { url: url.href, loopback: false };
    throw badRequest('redirectUri must be this server or a loopback address (http://127.0.0.1:PORT/…)', 'SSO_INVALID_REDIRECT');
  }

  /** Loopback listeners read the query (a fragment never reaches a server); browsers get the fragment. */
  private redirectWith(target: ReturnTarget, values: Record<string, string>): string {
    const params = new URLSearchParams(values).toString();
    if (target.loopback) {
      const url = new URL(target.url);
      for (const [k, v] of Object.entries(values)) url.searchParams.set(k, v);
      return url.href;
    }
    return `${target.url}#${params}`;
  }
}
