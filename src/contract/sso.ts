import { z } from 'zod';
import { createOne, deleteById, getById, updateById } from './builders.js';
import { IdParamsSchema as IdParams, NameSchema, SuccessSchema, TimestampSchema, UuidSchema, dataSchema, successWith } from './common.js';
import { endpoint } from './endpoint.js';

const OrgParams = z.object({ orgId: UuidSchema });

export const SsoProviderTypeSchema = z.enum(['oidc', 'saml']);
export const SsoProviderStatusSchema = z.enum(['inactive', 'testing', 'active']);

const ClaimName = z.string().trim().min(1).max(255);

/** 01 §2.9: IdP claim names for the user's fields; email and name required. */
export const AttributeMappingSchema = z.strictObject({
  email: ClaimName,
  name: ClaimName,
  firstName: ClaimName.optional(),
  lastName: ClaimName.optional(),
  groups: ClaimName.optional(),
});

const HttpUrl = z.url({ protocol: /^https?$/ }).max(2048);

/** The nine presets of 01 §2.9 (four OpenID Connect, five SAML). */
export const SsoPresetSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: SsoProviderTypeSchema,
  /** OIDC: the issuer with `{tenant}`-style placeholders to fill in. */
  issuerTemplate: z.string().optional(),
  /** SAML: the IdP sign-in URL with placeholders. */
  ssoUrlTemplate: z.string().optional(),
  /** SAML: the IdP entity id (the Issuer of its assertions) with placeholders. */
  entityIdTemplate: z.string().optional(),
  scopes: z.string().optional(),
  attributeMapping: AttributeMappingSchema,
});

/** The list shape of 04/05 wire notes. */
export const SsoProviderSummarySchema = z.object({
  id: UuidSchema,
  orgId: UuidSchema,
  name: z.string(),
  type: SsoProviderTypeSchema,
  status: SsoProviderStatusSchema,
  issuer: z.string().nullable(),
  autoProvision: z.boolean(),
  enforceSSO: z.boolean(),
  trustsIdpMfa: z.boolean(),
  createdAt: TimestampSchema,
});

/** Every column but the client secret, and whether one is stored (05 wire notes). */
export const SsoProviderSchema = SsoProviderSummarySchema.extend({
  preset: z.string().nullable(),
  clientId: z.string().nullable(),
  hasClientSecret: z.boolean(),
  scopes: z.string(),
  attributeMapping: AttributeMappingSchema,
  defaultRoleId: UuidSchema.nullable(),
  allowedDomains: z.string().nullable(),
  authorizationUrl: z.string().nullable(),
  tokenUrl: z.string().nullable(),
  userInfoUrl: z.string().nullable(),
  jwksUrl: z.string().nullable(),
  ssoUrl: z.string().nullable(),
  idpEntityId: z.string().nullable(),
  idpCertificate: z.string().nullable(),
  updatedAt: TimestampSchema,
});
export type SsoProvider = z.infer<typeof SsoProviderSchema>;

const providerFields = {
  name: NameSchema.describe('Name of the provider (1-255 characters)'),
  issuer: HttpUrl.nullable().optional().describe('OIDC issuer; its discovery document fills the endpoint URLs'),
  clientId: z.string().trim().min(1).max(512).nullable().optional().describe('OAuth client id at the provider'),
  clientSecret: z.string().min(1).max(4096).nullable().optional().describe('OAuth client secret; stored encrypted, never returned'),
  scopes: z.string().trim().min(1).max(1024).optional().describe("Space-separated scopes (default: the preset's, else `openid profile email`)"),
  attributeMapping: AttributeMappingSchema.optional().describe("IdP claim names {email, name, firstName?, lastName?, groups?} (default: the preset's, else email and name)"),
  autoProvision: z.boolean().optional().describe('Create unknown users at their first sign-in (default true)'),
  defaultRoleId: UuidSchema.nullable().optional().describe("Organization role of the provider's organization given to provisioned users; required with autoProvision"),
  allowedDomains: z.string().trim().max(2048).nullable().optional().describe('Comma-separated e-mail domains allowed to sign in; empty allows all'),
  enforceSSO: z.boolean().optional().describe("Refuse password sign-in to the organization's users (default false)"),
  trustsIdpMfa: z.boolean().optional().describe("Count the provider's multi-factor sign-in (amr) as MFA (default false)"),
  authorizationUrl: HttpUrl.nullable().optional().describe('Authorization endpoint (filled by discovery when an issuer is given)'),
  tokenUrl: HttpUrl.nullable().optional().describe('Token endpoint (filled by discovery)'),
  userInfoUrl: HttpUrl.nullable().optional().describe('User-info endpoint (filled by discovery)'),
  jwksUrl: HttpUrl.nullable().optional().describe('JWKS endpoint (filled by discovery)'),
  ssoUrl: HttpUrl.nullable().optional().describe("SAML: the identity provider's sign-in URL (HTTP-Redirect binding)"),
  idpEntityId: z.string().trim().min(1).max(1024).nullable().optional().describe("SAML: the identity provider's entity id, the Issuer its assertions must carry"),
  idpCertificate: z
    .string()
    .trim()
    .min(1)
    .max(16_384)
    .nullable()
    .optional()
    .describe("SAML: the identity provider's signing certificate (PEM, or its base64 body); every assertion's signature is checked against it"),
};

export const SsoProviderCreateSchema = z.strictObject({
  orgId: UuidSchema.optional().describe('Organization (inferred for organization users)'),
  type: SsoProviderTypeSchema.describe('oidc or saml'),
  preset: z.string().trim().min(1).max(64).optional().describe('Preset id (GET /sso/presets); pre-fills scopes and mapping'),
  ...providerFields,
});

export const SsoProviderUpdateSchema = z.strictObject({
  ...providerFields,
  name: providerFields.name.optional(),
});

export const SsoProviderListQuerySchema = z.object({
  orgId: UuidSchema.optional().describe('Organization (inferred for organization users)'),
});

export const SsoStatusBodySchema = z.strictObject({ status: SsoProviderStatusSchema.describe('inactive, testing or active') });

export const SsoTestResultSchema = successWith({
  message: z.string(),
  discovery: z
    .object({
      issuer: z.string(),
      authorizationEndpoint: z.string().nullable(),
      tokenEndpoint: z.string().nullable(),
      userInfoEndpoint: z.string().nullable(),
    })
    .optional(),
});

/** 01 §4.7 check: public, so it says only whether and how the organization signs in with SSO. */
export const SsoCheckSchema = z.object({
  ssoEnabled: z.boolean(),
  provider: z
    .object({
      name: z.string(),
      type: SsoProviderTypeSchema,
      enforceSSO: z.boolean(),
    })
    .nullable(),
});

export const SsoLoginQuerySchema = z.object({
  redirectUri: z
    .string()
    .max(2048)
    .optional()
    .describe('Where to send `#ssoCode=`: a loopback http address (a CLI) or this server; default the server'),
  codeChallenge: z
    .string()
    .regex(/^[A-Za-z0-9_-]{43}$/, 'expected a base64url SHA-256 (43 characters)')
    .optional()
    .describe('S256 challenge the exchange must answer with codeVerifier; required with a loopback redirectUri'),
});

export const SsoCallbackQuerySchema = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
  iss: z.string().max(2048).optional(),
});

export const SsoExchangeBodySchema = z.strictObject({
  code: z.string().min(1).max(256).describe('The ssoCode of the redirect'),
  codeVerifier: z.string().min(43).max(128).optional().describe('PKCE verifier of the codeChallenge given to /sso/login'),
});

export const SsoExchangeResponseSchema = z.object({
  accessToken: z.string(),
  refreshToken: z.string(),
  expiresInSeconds: z.number().int(),
  user: z.object({ id: UuidSchema, email: z.string(), name: z.string() }),
});

/** 01 §4.7 ACS: the IdP's HTTP-POST binding (a form post from the user's browser). */
export const SamlAcsBodySchema = z.object({
  SAMLResponse: z.string().min(1).max(512 * 1024).describe('The base64 SAML response'),
  RelayState: z.string().max(512).optional().describe('The relay state of the AuthnRequest (one sign-in in progress)'),
});

/** The largest ACS form post (a signed response with its certificate and attributes is a few KiB). */
export const SAML_ACS_BODY_LIMIT = 768 * 1024;

const READ = {} as const;
const WRITE = { permission: 'sso:admin', mfa: true, sessionOnly: true } as const;
const REDIRECT = { 302: { raw: true, contentTypes: ['text/plain'] } } as const;

/** 01 §4.7 single sign-on; list, get, update and delete paths from 04/05 wire notes. */
export const sso = {
  presets: endpoint({
    method: 'GET',
    path: '/sso/presets',
    responses: { 200: dataSchema(z.array(SsoPresetSchema)) },
    auth: READ,
    summary: 'The provider presets (four OpenID Connect, five SAML) with their scopes and attribute mappings',
  }),
  listProviders: endpoint({
    method: 'GET',
    path: '/sso/providers',
    query: SsoProviderListQuerySchema,
    responses: { 200: dataSchema(z.array(SsoProviderSummarySchema)) },
    auth: READ,
    summary: "List an organization's SSO providers",
  }),
  getProvider: getById('/sso/providers/:id', dataSchema(SsoProviderSchema), READ,
    'Get an SSO provider (the client secret is never returned, only hasClientSecret)'),
  createProvider: createOne('/sso/providers', SsoProviderCreateSchema, dataSchema(SsoProviderSchema), WRITE,
    'Create an SSO provider (inactive); an issuer is discovered, and a failed discovery only logs a warning'),
  updateProvider: updateById('/sso/providers/:id', SsoProviderUpdateSchema, dataSchema(SsoProviderSchema), WRITE,
    'Update an SSO provider; a changed issuer is discovered again'),
  deleteProvider: deleteById('/sso/providers/:id', SuccessSchema, WRITE,
    'Delete an SSO provider with its identity links and sign-ins in progress'),
  testProvider: endpoint({
    method: 'POST',
    path: '/sso/providers/:id/test',
    params: IdParams,
    responses: { 200: SsoTestResultSchema },
    auth: WRITE,
    summary: "Check that an OIDC provider's discovery document is reachable and valid",
  }),
  setProviderStatus: endpoint({
    method: 'POST',
    path: '/sso/providers/:id/status',
    params: IdParams,
    body: SsoStatusBodySchema,
    responses: { 200: dataSchema(SsoProviderSchema) },
    auth: WRITE,
    summary: 'Set a provider inactive, testing or active (one active provider per organization)',
  }),
  check: endpoint({
    method: 'GET',
    path: '/sso/check/:orgId',
    params: OrgParams,
    responses: { 200: SsoCheckSchema },
    auth: { public: true },
    summary: "Whether an organization signs in with SSO: the active provider's name, type and enforcement",
  }),
  login: endpoint({
    method: 'GET',
    path: '/sso/login/:orgId',
    params: OrgParams,
    query: SsoLoginQuerySchema,
    responses: REDIRECT,
    auth: { public: true },
    summary: "Start an SSO sign-in: redirects the browser to the organization's identity provider",
  }),
  callback: endpoint({
    method: 'GET',
    path: '/sso/callback',
    query: SsoCallbackQuerySchema,
    responses: REDIRECT,
    auth: { public: true },
    summary: 'Where the identity provider returns; redirects with `#ssoCode=` in the fragment',
  }),
  samlMetadata: endpoint({
    method: 'GET',
    path: '/sso/saml/metadata',
    responses: { 200: { raw: true, contentTypes: ['application/samlmetadata+xml'] } },
    auth: { public: true },
    summary: 'SAML service-provider metadata: entity id, the ACS URL (HTTP-POST), e-mail NameID, signed assertions wanted',
  }),
  samlAcs: endpoint({
    method: 'POST',
    path: '/sso/saml/acs',
    body: SamlAcsBodySchema,
    responses: REDIRECT,
    auth: { public: true },
    bodyLimit: SAML_ACS_BODY_LIMIT,
    summary: 'SAML assertion consumer service (form post): checks the signed assertion, then redirects with `#ssoCode=`',
  }),
  exchange: endpoint({
    method: 'POST',
    path: '/sso/exchange',
    body: SsoExchangeBodySchema,
    responses: { 200: SsoExchangeResponseSchema },
    auth: { public: true },
    summary: 'Exchange a single-use ssoCode (valid 60 seconds) for an access and refresh token',
  }),
} as const;
