import http from 'node:http';
import https from 'node:https';
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
 * that must use PKCE, over https when given a key and certificate. Accounts sign in through its development
 * login form (`signInAt` of sso-browser.ts). */
export async function startIdp(redirectUri: string, tls?: { key: string; cert: string }): Promise<TestIdp> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-idp-key';
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, IdpAccount>();
  const server = tls ? https.createServer(tls) : http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

/** Re-signs an ID token with the given key after changing its claims (a provider answering wrongly). */
export async function resign(idToken: string, key: SigningKey, kid: string, change: (claims: Record<string, unknown>) => void): Promise<string> {
  const claims = { ...decodeJwt(idToken) } as Record<string, unknown>;
  change(claims);
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).sign(key);
}
