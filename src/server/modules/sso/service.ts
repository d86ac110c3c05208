import { isDeepStrictEqual } from 'node:util';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type {
  SsoProviderCreateSchema,
  SsoProviderListQuerySchema,
  SsoProviderUpdateSchema,
} from '../../../contract/sso.js';
import { transaction, type Db } from '../../db/connection.js';
import { deleteById, insertRow, preparedQueries, rowById, rowQuery, updateRow } from '../../db/prepared.js';
import { ssoIdentities, ssoProviders } from '../../db/schema/index.js';
import { systemContext, type RequestContext } from '../../context.js';
import { badRequest, DomainError, fieldError, forbidden, notFound } from '../../errors.js';
import type { SecretBox } from '../../security/crypto.js';
import { recordAudit } from '../audit/recorder.js';
import type { Directory } from '../identity/directory.js';
import { revokeSessionsOf } from '../identity/sessions.js';
import type { RolesService } from '../roles/service.js';
import { requireOrgRow, type Organization } from '../tenancy/access.js';
import { describeOidcError, discover, type OidcEndpoints, type OidcTransport } from './oidc.js';
import { DEFAULT_MAPPING, DEFAULT_SCOPES, SSO_PRESETS, findPreset } from './presets.js';
import { normalizeCertificate, type IdentityProvider } from './saml.js';

/** An organization's providers, oldest first, prepared once per database. */
const providersOfOrg = preparedQueries((db) =>
  db.select().from(ssoProviders).where(eq(ssoProviders.orgId, sql.placeholder('orgId'))).orderBy(asc(ssoProviders.createdAt)).prepare(),
);

/** The statements of the providers' writes and sign-in lookups, prepared once per database. */
const providerQueries = preparedQueries((db) => ({
  /** A provider that provisions its users with the role `roleId`. */
  withDefaultRole: db.select({ id: ssoProviders.id }).from(ssoProviders).where(eq(ssoProviders.defaultRoleId, sql.placeholder('roleId'))).prepare(),
  /** The organization's active providers, least recently changed first (`orgId`). */
  activeOfOrg: rowQuery(db, ssoProviders, and(eq(ssoProviders.orgId, sql.placeholder('orgId')), eq(ssoProviders.status, 'active')), {
    orderBy: [asc(ssoProviders.updatedAt)],
  }),
  /** Deactivates the organization's active providers but `id` (`orgId`, `id`, `now`); their ids. */
  deactivateOthers: db
    .update(ssoProviders)
    .set({ status: 'inactive', updatedAt: sql`${sql.placeholder('now')}` })
    .where(and(eq(ssoProviders.orgId, sql.placeholder('orgId')), eq(ssoProviders.status, 'active'), ne(ssoProviders.id, sql.placeholder('id'))))
    .returning({ id: ssoProviders.id })
    .prepare(),
  /** Removes the identity links made at provider `providerId`. */
  unlinkAll: db.delete(ssoIdentities).where(eq(ssoIdentities.providerId, sql.placeholder('providerId'))).prepare(),
}));

export type SsoProviderRow = typeof ssoProviders.$inferSelect;

/** Whether any SSO provider provisions its users with the role (01 §2.9 defaultRoleId): the roles module refuses
 * to delete it (docs/api-notes.md "Roles and permissions"). */
export function isSsoDefaultRole(db: Db, roleId: string): boolean {
  return providerQueries(db).withDefaultRole.get({ roleId }) !== undefined;
}

type CreateBody = z.infer<typeof SsoProviderCreateSchema>;
type UpdateBody = z.infer<typeof SsoProviderUpdateSchema>;

const SYSTEM = systemContext().caller;

/** What decides who an identity provider may sign in as: changing any of them needs checkOrgRolesHeld. */
const TRUST_FIELDS = [
  'issuer',
  'clientId',
  'clientSecret',
  'authorizationUrl',
  'tokenUrl',
  'userInfoUrl',
  'jwksUrl',
  'ssoUrl',
  'idpEntityId',
  'idpCertificate',
  'allowedDomains',
  'attributeMapping',
] as const;
type TrustField = (typeof TRUST_FIELDS)[number];

const NO_ENDPOINTS = { authorizationUrl: null, tokenUrl: null, userInfoUrl: null, jwksUrl: null };

/** Logs a warning the operator should see (app.log.warn); modules know no Fastify. */
export type WarnLog = (details: Record<string, unknown>, message: string) => void;

/** The API view of a provider: every column but the secret, and whether one is stored (05 wire notes). */
export function providerView(row: SsoProviderRow) {
  const { clientSecretEnc, enforceSso, ...rest } = row;
  return { ...rest, enforceSSO: enforceSso, hasClientSecret: clientSecretEnc !== null };
}

/** A SAML provider's identity-provider settings, or 400 while one of them is missing. */
export function samlIdentityProvider(row: SsoProviderRow): IdentityProvider {
  if (!row.ssoUrl || !row.idpEntityId || !row.idpCertificate) {
    throw badRequest('The SAML provider needs ssoUrl, idpEntityId and idpCertificate', 'saml_config_incomplete');
  }
  return { ssoUrl: row.ssoUrl, entityId: row.idpEntityId, certificate: row.idpCertificate };
}

/** The certificate as PEM; 400 on the field when it is not an X.509 certificate. */
function certificateField(value: string | null | undefined): string | null | undefined {
  if (value === undefined || value === null) return value;
  try {
    return normalizeCertificate(value);
  } catch {
    throw fieldError('idpCertificate', 'Must be an X.509 certificate (PEM, or the base64 of its DER)');
  }
}

function isoNow(): string {
  return new Date().toISOString();
}

function endpointsOf(row: Pick<SsoProviderRow, 'authorizationUrl' | 'tokenUrl' | 'userInfoUrl' | 'jwksUrl'>) {
  return { authorizationUrl: row.authorizationUrl, tokenUrl: row.tokenUrl, userInfoUrl: row.userInfoUrl, jwksUrl: row.jwksUrl };
}

/**
 * SSO providers (01 §2.9, §3, §4.7): one organization's identity providers, at most one of them active. The
 * client secret is sealed with the server key and never leaves the server. Creating or re-pointing an OIDC
 * provider fetches the issuer's discovery document; a failure only logs a warning (01 §4.7).
 */
export class SsoProvidersService {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly roles: RolesService,
    private readonly directory: Directory,
    /** Shared with the login service; tests point it at a loopback provider. */
    readonly transport: OidcTransport,
    private readonly warn: WarnLog,
  ) {}

  presets() {
    return { data: [...SSO_PRESETS] };
  }

  list(ctx: RequestContext, query: z.infer<typeof SsoProviderListQuerySchema>) {
    const org = this.orgOf(ctx, query.orgId);
    const rows = providersOfOrg(this.db).all({ orgId: org.id });
    return { data: rows.map(providerView) };
  }

  get(ctx: RequestContext, id: string) {
    return { data: providerView(this.findVisible(ctx, id)) };
  }

  async create(ctx: RequestContext, body: CreateBody) {
    const org = this.orgOf(ctx, body.orgId);
    const preset = body.preset !== undefined ? findPreset(body.preset) : undefined;
    if (body.preset !== undefined && !preset) throw fieldError('preset', `Unknown preset; see GET /sso/presets`);
    if (preset && preset.type !== body.type) throw fieldError('preset', `Preset ${preset.id} is for ${preset.type} providers`);
    const autoProvision = body.autoProvision ?? true;
    const defaultRoleId = body.defaultRoleId ?? null;
    this.checkDefaultRole(org, autoProvision, defaultRoleId);
    this.checkGrantable(ctx, defaultRoleId);
    this.checkOrgRolesHeld(ctx, org);
    const issuer = body.issuer ?? null;
    const idpCertificate = certificateField(body.idpCertificate) ?? null;
    const discovered = body.type === 'oidc' && issuer ? await this.tryDiscovery(issuer, body.clientId ?? null, body.name) : null;
    return this.db.$client.transaction(() => {
      const row = insertRow(this.db, ssoProviders, {
        orgId: org.id,
        name: body.name,
        type: body.type,
        preset: preset?.id ?? null,
        issuer,
        clientId: body.clientId ?? null,
        clientSecretEnc: body.clientSecret ? this.box.seal(body.clientSecret) : null,
        scopes: body.scopes ?? preset?.scopes ?? DEFAULT_SCOPES,
        attributeMapping: body.attributeMapping ?? preset?.attributeMapping ?? { ...DEFAULT_MAPPING },
        autoProvision,
        defaultRoleId,
        allowedDomains: body.allowedDomains || null,
        enforceSso: body.enforceSSO ?? false,
        trustsIdpMfa: body.trustsIdpMfa ?? false,
        authorizationUrl: body.authorizationUrl ?? discovered?.authorizationUrl ?? null,
        tokenUrl: body.tokenUrl ?? discovered?.tokenUrl ?? null,
        userInfoUrl: body.userInfoUrl ?? discovered?.userInfoUrl ?? null,
        jwksUrl: body.jwksUrl ?? discovered?.jwksUrl ?? null,
        ssoUrl: body.ssoUrl ?? null,
        idpEntityId: body.idpEntityId ?? null,
        idpCertificate,
        createdBy: ctx.caller.userId,
      });
      this.audit(ctx, 'sso_provider.create', row, org, { type: row.type, preset: row.preset, issuer, discovered: discovered !== null });
      return { data: providerView(row) };
    })();
  }

  async update(ctx: RequestContext, id: string, body: UpdateBody) {
    const current = this.findVisible(ctx, id);
    const org = requireOrgRow(this.db, SYSTEM, current.orgId);
    if (current.type === 'oidc' && body.issuer === null) {
      throw badRequest('An OpenID Connect provider needs an issuer', 'oidc_issuer_required');
    }
    const autoProvision = body.autoProvision ?? current.autoProvision;
    const defaultRoleId = body.defaultRoleId !== undefined ? body.defaultRoleId : current.defaultRoleId;
    this.checkDefaultRole(org, autoProvision, defaultRoleId);
    if (defaultRoleId !== current.defaultRoleId) this.checkGrantable(ctx, defaultRoleId);
    const idpCertificate = certificateField(body.idpCertificate);
    const wanted = { ...body, idpCertificate, allowedDomains: body.allowedDomains === undefined ? undefined : body.allowedDomains || null };
    // A given secret counts as a change: the stored one is sealed, not compared.
    const changed = (field: TrustField) => wanted[field] !== undefined && (field === 'clientSecret' || !isDeepStrictEqual(wanted[field], current[field]));
    if (TRUST_FIELDS.some(changed)) this.checkOrgRolesHeld(ctx, org);
    const issuer = body.issuer !== undefined ? body.issuer : current.issuer;
    const clientId = body.clientId !== undefined ? body.clientId : current.clientId;
    const rediscover = current.type === 'oidc' && issuer !== null && body.issuer !== undefined && body.issuer !== current.issuer;
    const discovered = rediscover && issuer ? await this.tryDiscovery(issuer, clientId, current.name) : null;
    // A subject is unique only at its issuer (OIDC Core §5.7; a SAML NameID at its IdP): another identity provider
    // means the links made at the previous one no longer say who anyone is (01 §5.10).
    const unlink = current.type === 'oidc' ? changed('issuer') : changed('ssoUrl') || changed('idpEntityId') || changed('idpCertificate');
    const changes: Partial<typeof ssoProviders.$inferInsert> = {
      name: body.name,
      issuer: body.issuer,
      clientId: body.clientId,
      scopes: body.scopes,
      attributeMapping: body.attributeMapping,
      autoProvision: body.autoProvision,
      defaultRoleId: body.defaultRoleId,
      allowedDomains: wanted.allowedDomains,
      enforceSso: body.enforceSSO,
      trustsIdpMfa: body.trustsIdpMfa,
      ssoUrl: body.ssoUrl,
      idpEntityId: body.idpEntityId,
      idpCertificate,
      // Another issuer: its own endpoints, or none (the first sign-in discovers again), never the previous issuer's.
      ...(rediscover ? (discovered ?? NO_ENDPOINTS) : {}),
      ...(body.authorizationUrl !== undefined ? { authorizationUrl: body.authorizationUrl } : {}),
      ...(body.tokenUrl !== undefined ? { tokenUrl: body.tokenUrl } : {}),
      ...(body.userInfoUrl !== undefined ? { userInfoUrl: body.userInfoUrl } : {}),
      ...(body.jwksUrl !== undefined ? { jwksUrl: body.jwksUrl } : {}),
    };
    if (body.clientSecret !== undefined) changes.clientSecretEnc = body.clientSecret === null ? null : this.box.seal(body.clientSecret);
    return this.db.$client.transaction(() => {
      const row = updateRow(this.db, ssoProviders, id, { ...changes, updatedAt: isoNow() });
      // Deleted while the issuer was being discovered (outside the transaction).
      if (!row) throw notFound('Provider not found');
      const identityLinksRemoved = unlink ? providerQueries(this.db).unlinkAll.run({ providerId: id }).changes : 0;
      const sessionsEnded = this.endSessionsIfNowEnforced(current, row);
      const given = Object.keys(body).filter((k) => (body as Record<string, unknown>)[k] !== undefined);
      this.audit(ctx, 'sso_provider.update', row, org, { changes: given, rediscovered: discovered !== null, identityLinksRemoved, sessionsEnded });
      return { data: providerView(row) };
    })();
  }

  delete(ctx: RequestContext, id: string) {
    const current = this.findVisible(ctx, id);
    const org = requireOrgRow(this.db, SYSTEM, current.orgId);
    return this.db.$client.transaction(() => {
      // Identity links and sign-ins in progress go with it (ON DELETE CASCADE).
      deleteById(this.db, ssoProviders, id);
      this.audit(ctx, 'sso_provider.delete', current, org, { type: current.type });
      return { success: true as const };
    })();
  }

  /** 05 wire notes: OIDC only; the discovery document must be reachable and name the same issuer. */
  async test(ctx: RequestContext, id: string) {
    const row = this.findVisible(ctx, id);
    if (row.type !== 'oidc') throw badRequest('Only OIDC providers can be tested', 'SSO_TEST_UNSUPPORTED');
    if (!row.issuer) return { success: true as const, message: 'Provider configuration appears valid' };
    try {
      const { endpoints } = await discover(row.issuer, { clientId: row.clientId ?? 'svc', clientSecret: null }, this.transport);
      return {
        success: true as const,
        message: 'Provider configuration is valid',
        discovery: {
          issuer: endpoints.issuer,
          authorizationEndpoint: endpoints.authorizationUrl,
          tokenEndpoint: endpoints.tokenUrl,
          userInfoEndpoint: endpoints.userInfoUrl,
        },
      };
    } catch (err) {
      throw badRequest(`Discovery failed: ${describeOidcError(err)}`, 'oidc_discovery_failed', { success: false });
    }
  }

  /** 01 §3: inactive, testing or active; activating one deactivates the organization's other active one. */
  setStatus(ctx: RequestContext, id: string, status: SsoProviderRow['status']) {
    const current = this.findVisible(ctx, id);
    const org = requireOrgRow(this.db, SYSTEM, current.orgId);
    if (status === 'active' && current.status !== 'active') this.checkOrgRolesHeld(ctx, org);
    return this.db.$client.transaction(() => {
      const now = isoNow();
      const deactivated =
        status === 'active' ? providerQueries(this.db).deactivateOthers.all({ orgId: current.orgId, id, now }).map((r) => r.id) : [];
      const row = updateRow(this.db, ssoProviders, id, { status, updatedAt: now });
      if (!row) throw notFound('Provider not found');
      const sessionsEnded = this.endSessionsIfNowEnforced(current, row);
      this.audit(ctx, 'sso_provider.status', row, org, { from: current.status, to: status, deactivated, sessionsEnded });
      return { data: providerView(row) };
    })();
  }

  /**
   * 01 §5.12: when a provider starts enforcing SSO (active with enforceSSO, and it was not), the password sessions
   * of the users it binds (the organization-user records of its organization, as refusePasswordLogin) end: a
   * password session opened before must not outlive the rule. Their SSO sessions stay, and so do sessions opened
   * from one by MFA step-up; a session older than that record counts as a password one. Answers how many ended
   * (audited).
   */
  private endSessionsIfNowEnforced(before: SsoProviderRow, after: SsoProviderRow): number {
    const enforcing = (p: SsoProviderRow) => p.status === 'active' && p.enforceSso;
    if (!enforcing(after) || enforcing(before)) return 0;
    const bound = this.directory.members({ partnerIds: [], orgIds: [after.orgId] }).filter((m) => m.membership?.kind === 'organization' && !m.user.isSystemAdmin);
    return revokeSessionsOf(this.db, bound.map((m) => m.user.id), 'sso');
  }

  /** 01 §4.7 check (public): the active provider's name, type and enforcement; nothing for unknown orgs. */
  check(orgId: string) {
    const row = this.activeProviderOf(orgId);
    return row
      ? { ssoEnabled: true, provider: { name: row.name, type: row.type, enforceSSO: row.enforceSso } }
      : { ssoEnabled: false, provider: null };
  }

  /** The provider that serves an organization's logins (01 §3: only active ones, one per organization). */
  activeProviderOf(orgId: string): SsoProviderRow | undefined {
    let live = true;
    try {
      requireOrgRow(this.db, SYSTEM, orgId);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      live = false;
    }
    if (!live) return undefined;
    return providerQueries(this.db).activeOfOrg.get({ orgId });
  }

  /**
   * 01 §5.12: password sign-in is refused to the users of an organization whose active provider enforces
   * SSO. Only organization links count: system administrators and partner users are never locked out of the
   * platform by one customer's setting (docs/api-notes.md).
   */
  refusePasswordLogin(user: { id: string; isSystemAdmin: boolean }): void {
    if (user.isSystemAdmin) return;
    const membership = this.directory.membershipOf(user.id);
    if (membership?.kind !== 'organization') return;
    const provider = this.activeProviderOf(membership.orgId);
    if (!provider?.enforceSso) return;
    throw forbidden('This organization requires single sign-on (SSO); sign in through its identity provider', 'SSO_REQUIRED', {
      orgId: membership.orgId,
      provider: provider.name,
    });
  }

  findById(id: string): SsoProviderRow | undefined {
    return rowById(this.db, ssoProviders, id);
  }

  /** The client secret in the clear, for the token request. */
  clientSecretOf(row: SsoProviderRow): string | null {
    return row.clientSecretEnc ? this.box.open(row.clientSecretEnc) : null;
  }

  /** Stores what a late discovery found (a provider created while its issuer was unreachable). */
  recordDiscovery(id: string, endpoints: Omit<OidcEndpoints, 'issuer'>): void {
    transaction(this.db, (tx) => updateRow(tx, ssoProviders, id, { ...endpoints, updatedAt: isoNow() }));
  }

  private async tryDiscovery(issuer: string, clientId: string | null, name: string) {
    try {
      const { endpoints } = await discover(issuer, { clientId: clientId ?? 'svc', clientSecret: null }, this.transport);
      return endpointsOf(endpoints);
    } catch (err) {
      this.warn({ issuer, provider: name, reason: describeOidcError(err) }, 'OIDC discovery failed; the provider is saved without endpoints');
      return null;
    }
  }

  /** 01 §2.9: with autoProvision a default role is required, and it must be an organization role of the
   * provider's organization (built-in, the organization's own, or its partner's organization roles). */
  private checkDefaultRole(org: Organization, autoProvision: boolean, roleId: string | null): void {
    if (roleId === null) {
      if (autoProvision) throw fieldError('defaultRoleId', 'Required when autoProvision is on');
      return;
    }
    const role = this.roles.findVisible(SYSTEM, roleId);
    const fits =
      role !== undefined &&
      role.scope === 'organization' &&
      (role.orgId === org.id || (role.orgId === null && (role.partnerId === null || role.partnerId === org.partnerId)));
    if (!fits) throw fieldError('defaultRoleId', "Must be an organization role of the provider's organization");
  }

  /** A default role hands its permissions to everyone the provider provisions: the caller may name only a role
   * whose permissions it holds itself, as when it assigns a role (403 `PERMISSION_NOT_HELD`), or an `sso:admin`
   * holder could provision an identity of its own as an administrator. */
  private checkGrantable(ctx: RequestContext, roleId: string | null): void {
    if (roleId === null) return;
    this.requireRolesHeld(ctx, [roleId], 'Cannot provision users with a role whose permissions you do not hold');
  }

  /**
   * Whoever decides which identity provider vouches for an organization's users can sign in as any of them (01
   * §5.10 matches by e-mail): creating a provider, activating it or changing what it trusts (TRUST_FIELDS) needs
   * every permission of every role the organization's users hold — the check of checkGrantable, over those roles
   * (403 `PERMISSION_NOT_HELD` with `missing`), or an `sso:admin` holder could sign in as the Org Admin.
   */
  private checkOrgRolesHeld(ctx: RequestContext, org: Organization): void {
    if (ctx.caller.scope === 'system') return;
    const roleIds = new Set<string>();
    for (const { membership } of this.directory.members({ partnerIds: [], orgIds: [org.id] })) {
      if (membership?.kind === 'organization') roleIds.add(membership.roleId);
    }
    this.requireRolesHeld(ctx, roleIds, "Cannot change the sign-in of an organization whose users hold permissions you do not hold");
  }

  /** 403 `PERMISSION_NOT_HELD` with `missing` unless the caller holds every permission of the roles, as when it
   * assigns one (the system administrator holds them all). */
  private requireRolesHeld(ctx: RequestContext, roleIds: Iterable<string>, message: string): void {
    if (ctx.caller.scope === 'system') return;
    const missing = new Set([...roleIds].flatMap((roleId) => this.roles.permissionsBeyond(ctx.caller, roleId)));
    if (missing.size > 0) throw forbidden(message, 'PERMISSION_NOT_HELD', { missing: [...missing].sort() });
  }

  /** The organization a call is about: given, or the caller's own; 400 without one (05 wire notes). */
  private orgOf(ctx: RequestContext, orgId: string | undefined): Organization {
    const id = orgId ?? (ctx.caller.scope === 'organization' ? ctx.caller.orgId : null);
    if (!id) throw badRequest('Organization ID required', 'ORGANIZATION_ID_REQUIRED');
    return requireOrgRow(this.db, ctx.caller, id);
  }

  /** 05 wire notes: 404 `Provider not found`, 403 `Access denied` outside the caller's organizations. */
  private findVisible(ctx: RequestContext, id: string): SsoProviderRow {
    const row = rowById(this.db, ssoProviders, id);
    if (!row) throw notFound('Provider not found');
    try {
      requireOrgRow(this.db, ctx.caller, row.orgId);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      if (err.kind === 'not_found') throw notFound('Provider not found');
      throw forbidden('Access denied', 'ACCESS_DENIED');
    }
    return row;
  }

  private audit(ctx: RequestContext, action: string, row: SsoProviderRow, org: Organization, details: Record<string, unknown>): void {
    recordAudit(this.db, ctx, {
      action,
      resourceType: 'sso_provider',
      resourceId: row.id,
      resourceName: row.name,
      orgId: org.id,
      partnerId: org.partnerId,
      details,
    });
  }
}
