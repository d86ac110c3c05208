import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

export type SigningKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** An account the loopback identity provider signs in. */
export interface IdpAccount {
  email: string;
  name: string;
  emailVerified?: boolean;
}

export interface TestIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, IdpAccount>;
  /** The provider's own signing key (RS256), to re-sign altered ID tokens in rejection tests. */
  privateKey: SigningKey;
  kid: string;
  close(): Promise<void>;
}

/** A real OpenID provider (oidc-provider) on a loopback port, with its own keys and one confidential client
 * that must use PKCE. Accounts sign in through its development login form (`signInAt`). */
export async function startIdp(redirectUri: string): Promise<TestIdp> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-idp-key';
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, IdpAccount>();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'svc-test-client';
  const clientSecret = 'svc-test-client-secret-0123456789';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['svc-test-cookie-key'] },
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        async claims() {
          return { sub: id, email: account.email, email_verified: account.emailVerified ?? true, name: account.name };
        },
      };
    },
  });
  const callback = provider.callback();
  server.on('request', (req, res) => void callback(req, res));
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    privateKey,
    kid,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A browser stand-in: follows redirects with a cookie jar, signs `accountId` in on the provider's
 * development login and consent forms, and stops at the first redirect to `stopAt` (returned). */
export async function signInAt(startUrl: string, accountId: string, stopAt: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = startUrl;
  let method: 'GET' | 'POST' = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return url;
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: {
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair?.indexOf('=') ?? -1;
      if (pair && eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    const location = res.headers.get('location');
    if (location) {
      url = new URL(location, url).href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200 || !url.includes('/interaction/')) throw new Error(`unexpected ${res.status} at ${url}: ${html.slice(0, 300)}`);
    method = 'POST';
    body = html.includes('name="login"') ? new URLSearchParams({ prompt: 'login', login: accountId, password: 'x' }).toString() : new URLSearchParams({ prompt: 'consent' }).toString();
  }
  throw new Error('too many redirects');
}

/** Re-signs an ID token with the given key after changing its claims (a provider answering wrongly). */
export async function resign(idToken: string, key: SigningKey, kid: string, change: (claims: Record<string, unknown>) => void): Promise<string> {
  const claims = { ...decodeJwt(idToken) } as Record<string, unknown>;
  change(claims);
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
}
