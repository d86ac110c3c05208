import * as client from 'openid-client';

/**
 * How the server reaches identity providers. Every request (discovery, token, user info, JWKS) goes through
 * `fetch`, so the server's one URL-safety guard (`services.outbound.fetch`, app.ts) is plugged in here and
 * nowhere else. `allowHttp` admits plain-http issuers (loopback test providers); production keeps
 * it off, so issuers must be HTTPS.
 */
export interface OidcTransport {
  fetch: client.CustomFetch;
  allowHttp: boolean;
}


/** Seconds any one request to an identity provider may take. */
const REQUEST_TIMEOUT_SECONDS = 10;

export interface OidcEndpoints {
  issuer: string;
  authorizationUrl: string | null;
  tokenUrl: string | null;
  userInfoUrl: string | null;
  jwksUrl: string | null;
}

export interface OidcClientSettings {
  clientId: string;
  clientSecret: string | null;
}

function options(transport: OidcTransport): client.DiscoveryRequestOptions {
  return {
    [client.customFetch]: transport.fetch,
    timeout: REQUEST_TIMEOUT_SECONDS,
    ...(transport.allowHttp ? { execute: [client.allowInsecureRequests] } : {}),
  };
}

function applyTransport(config: client.Configuration, transport: OidcTransport): client.Configuration {
  config[client.customFetch] = transport.fetch;
  config.timeout = REQUEST_TIMEOUT_SECONDS;
  if (transport.allowHttp) client.allowInsecureRequests(config);
  // ID tokens are verified against the provider's JWKS even though they come over the back channel.
  client.enableNonRepudiationChecks(config);
  return config;
}

/** Fetches and validates the issuer's discovery document (the issuer in it must match). */
export async function discover(issuer: string, settings: OidcClientSettings, transport: OidcTransport): Promise<{ config: client.Configuration; endpoints: OidcEndpoints }> {
  const config = await client.discovery(new URL(issuer), settings.clientId, settings.clientSecret ?? undefined, undefined, options(transport));
  const meta = config.serverMetadata();
  return {
    config: applyTransport(config, transport),
    endpoints: {
      issuer: meta.issuer,
      authorizationUrl: meta.authorization_endpoint ?? null,
      tokenUrl: meta.token_endpoint ?? null,
      userInfoUrl: meta.userinfo_endpoint ?? null,
      jwksUrl: meta.jwks_uri ?? null,
    },
  };
}

/** A client configuration from endpoints already known (stored at creation by discovery). */
export function configure(endpoints: OidcEndpoints, settings: OidcClientSettings, transport: OidcTransport): client.Configuration {
  const server: client.ServerMetadata = {
    issuer: endpoints.issuer,
    ...(endpoints.authorizationUrl ? { authorization_endpoint: endpoints.authorizationUrl } : {}),
    ...(endpoints.tokenUrl ? { token_endpoint: endpoints.tokenUrl } : {}),
    ...(endpoints.userInfoUrl ? { userinfo_endpoint: endpoints.userInfoUrl } : {}),
    ...(endpoints.jwksUrl ? { jwks_uri: endpoints.jwksUrl } : {}),
  };
  return applyTransport(new client.Configuration(server, settings.clientId, settings.clientSecret ?? undefined), transport);
}

export interface LoginStart {
  url: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** 01 §5.9: a fresh state, nonce and PKCE S256 pair, and the authorization URL carrying them. */
export async function startLogin(config: client.Configuration, redirectUri: string, scopes: string): Promise<LoginStart> {
  const state = client.randomState();
  const nonce = client.randomNonce();
  const codeVerifier = client.randomPKCECodeVerifier();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: scopes,
    response_type: 'code',
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
  return { url, state, nonce, codeVerifier };
}

export interface LoginResult {
  claims: Record<string, unknown>;
  subject: string;
  /** The authentication methods of the ID token's `amr` (01 §5.11 trustsIdpMfa), never taken from the user info
   * or from SAML attributes (docs/api-notes.md): empty when there are none. */
  amr: string[];
  /** The provider's tokens, kept sealed on the identity link (null for SAML, which has none). */
  accessToken: string | null;
  refreshToken: string | null;
  idToken: string | null;
  expiresAt: string | null;
}

/**
 * 01 §5.9: the code exchange (with the PKCE verifier), the ID token checks (signature from the JWKS, issuer,
 * audience, expiry, nonce) and the user info, merged over the ID token's claims.
 */
export async function finishLogin(
  config: client.Configuration,
  callbackUrl: URL,
  checks: { state: string; nonce: string; codeVerifier: string },
): Promise<LoginResult> {
  const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier: checks.codeVerifier,
    expectedState: checks.state,
    expectedNonce: checks.nonce,
    idTokenExpected: true,
  });
  const idClaims = tokens.claims();
  if (!idClaims) throw new Error('the provider returned no ID token');
  let userInfo: Record<string, unknown> = {};
  if (config.serverMetadata().userinfo_endpoint) {
    userInfo = { ...(await client.fetchUserInfo(config, tokens.access_token, idClaims.sub)) };
  }
  const expiresIn = tokens.expiresIn();
  return {
    claims: { ...idClaims, ...userInfo },
    subject: idClaims.sub,
    amr: Array.isArray(idClaims.amr) ? idClaims.amr.filter((m): m is string => typeof m === 'string') : [],
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
    idToken: tokens.id_token ?? null,
    expiresAt: expiresIn !== undefined ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
  };
}

/** A short, safe description of why the provider exchange failed (logged and put in the error details). */
export function describeOidcError(err: unknown): string {
  if (err instanceof client.ClientError) return `${err.code ?? 'client_error'}: ${err.message}${describeCause(err.cause)}`;
  if (err instanceof Error && 'error' in err && typeof err.error === 'string') return `${err.error}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** oauth4webapi puts the failed claim (nonce, aud, exp, iss) or the underlying error in `cause`. */
function describeCause(cause: unknown): string {
  if (cause instanceof Error) return ` (${cause.message})`;
  if (typeof cause !== 'object' || cause === null) return '';
  const fields = cause as Record<string, unknown>;
  if (typeof fields.claim === 'string') return ` (claim ${fields.claim})`;
  if (typeof fields.error === 'string') return ` (${fields.error}${typeof fields.error_description === 'string' ? `: ${fields.error_description}` : ''})`;
  return '';
}
