import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { createdAt, id, json, ref, singleUse, timestamps } from './columns.js';
import { roles, users } from './identity.js';
import { organizations } from './tenancy.js';

/** Claim names of the identity provider that fill the user's fields (01 §2.9 attributeMapping). */
export interface AttributeMapping {
  email: string;
  name: string;
  firstName?: string | undefined;
  lastName?: string | undefined;
  groups?: string | undefined;
}

/** 01 §2.9 SSO provider. The client secret is sealed with the server key (SecretBox) and never returned. */
export const ssoProviders = sqliteTable(
  'sso_providers',
  {
    id: id(),
    orgId: ref(() => organizations.id),
    name: text().notNull(),
    type: text({ enum: ['oidc', 'saml'] }).notNull(),
    preset: text(),
    issuer: text(),
    clientId: text(),
    clientSecretEnc: text(),
    scopes: text().notNull(),
    attributeMapping: json<AttributeMapping>().notNull(),
    autoProvision: integer({ mode: 'boolean' }).notNull().default(true),
    defaultRoleId: text().references(() => roles.id),
    allowedDomains: text(),
    enforceSso: integer({ mode: 'boolean' }).notNull().default(false),
    trustsIdpMfa: integer({ mode: 'boolean' }).notNull().default(false),
    status: text({ enum: ['inactive', 'testing', 'active'] }).notNull().default('inactive'),
    authorizationUrl: text(),
    tokenUrl: text(),
    userInfoUrl: text(),
    jwksUrl: text(),
    /** SAML (01 §5.11): the IdP's sign-in URL (HTTP-Redirect binding), its entity id (the assertions' Issuer)
     * and its signing certificate (PEM), against which every assertion's signature is checked. */
    ssoUrl: text(),
    idpEntityId: text(),
    idpCertificate: text(),
    createdBy: text(),
    ...timestamps(),
  },
  (t) => [index('sso_providers_org_idx').on(t.orgId)],
);

/** 01 §5.9: one sign-in in progress (state, nonce and PKCE verifier for OIDC; the AuthnRequest id for SAML),
 * usable once within 10 minutes (§8). */
export const ssoLoginStates = sqliteTable(
  'sso_login_states',
  {
    id: id(),
    providerId: ref(() => ssoProviders.id, { onDelete: 'cascade' }),
    /** SHA-256 of the state sent to the provider. */
    stateHash: text().notNull(),
    /** OIDC: the ID token's nonce. SAML: the ID of the AuthnRequest, which the response's InResponseTo must
     * name (the same role: the one value that binds the answer to this request). */
    nonce: text().notNull(),
    /** The PKCE code verifier, sealed (SAML: an empty string, sealed). */
    codeVerifierEnc: text().notNull(),
    /** Where the browser goes with `#ssoCode=` (the server's own page or a CLI's loopback address). */
    returnTo: text().notNull(),
    /** S256 challenge of the client that asked for the loopback redirect; the exchange must prove it. */
    clientChallenge: text(),
    ...singleUse(),
  },
  (t) => [uniqueIndex('sso_login_states_state_unique').on(t.stateHash)],
);

/** 01 §5.9: the single-use, short-lived code that carries a finished SSO sign-in to POST /sso/exchange. */
export const ssoExchangeCodes = sqliteTable(
  'sso_exchange_codes',
  {
    id: id(),
    codeHash: text().notNull(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    /** The issued token pair, sealed, handed out once. */
    tokensEnc: text().notNull(),
    clientChallenge: text(),
    ...singleUse(),
  },
  (t) => [uniqueIndex('sso_exchange_codes_code_unique').on(t.codeHash)],
);

/** 01 §2.9 identity link: one per user and provider. */
export const ssoIdentities = sqliteTable(
  'sso_identities',
  {
    id: id(),
    userId: ref(() => users.id, { onDelete: 'cascade' }),
    providerId: ref(() => ssoProviders.id, { onDelete: 'cascade' }),
    externalId: text().notNull(),
    email: text().notNull(),
    profile: json<Record<string, unknown>>().notNull(),
    /** The provider's tokens (access, refresh, id), sealed together. */
    tokensEnc: text(),
    tokenExpiresAt: text(),
    lastLoginAt: text(),
    ...timestamps(),
  },
  (t) => [
    uniqueIndex('sso_identities_provider_subject_unique').on(t.providerId, t.externalId),
    index('sso_identities_user_idx').on(t.userId),
  ],
);

/** SAML replay store (01 §5.11): the assertion and response ids already consumed, per provider, kept until
 * their NotOnOrAfter has passed (after which the time check refuses them anyway). */
export const ssoSamlReplays = sqliteTable(
  'sso_saml_replays',
  {
    id: id(),
    providerId: ref(() => ssoProviders.id, { onDelete: 'cascade' }),
    /** `assertion:<ID>` or `response:<ID>`. */
    messageId: text().notNull(),
    createdAt: createdAt(),
    expiresAt: text().notNull(),
  },
  (t) => [uniqueIndex('sso_saml_replays_message_unique').on(t.providerId, t.messageId), index('sso_saml_replays_expiry_idx').on(t.expiresAt)],
);
