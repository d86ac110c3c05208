import { webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify, errors } from 'jose';

export type TokenKind = 'access' | 'mfa_pending';

export interface AccessClaims {
  sub: string;
  sid: string;
  mfa: boolean;
  typ: 'access';
}

/** The claims of a verified token, with its expiry (Unix seconds) as jose checked it. */
export type Verified<C> = C & { exp: number };

export interface MfaPendingClaims {
  sub: string;
  typ: 'mfa_pending';
}

const ISSUER = 'svc';

/** How many verified tokens a signer remembers (the oldest go first). */
export const VERIFIED_TOKENS_KEPT = 1024;

/** HS256 JWTs for access tokens (short-lived, bound to a session) and MFA temp tokens (5 minutes). */
export class TokenSigner {
  /**
   * Tokens whose signature and claims verified, by their text, until their exp: whether a text is a valid
   * signature under this signer's key never changes, and an HMAC verification through WebCrypto costs a session
   * request more than the rest of its authentication. Only verified tokens enter; expiry is checked on every use.
   * (Revocation is the session's business: verifyAccess checks the session row on each request.)
   */
  private readonly verified = new Map<string, Readonly<Verified<AccessClaims | MfaPendingClaims>>>();

  /** Imported once: handing jose the raw secret makes it import the key on every call (3x the verify time). */
  private readonly key: Promise<webcrypto.CryptoKey>;
  constructor(secret: string) {
    this.key = webcrypto.subtle.importKey(
      'raw',
      new TextEncoder().encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign', 'verify'],
    );
  }

  async sign(claims: AccessClaims | MfaPendingClaims, ttlSeconds: number): Promise<string> {
    const { sub, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(await this.key);
  }

  /** The claims of a valid token of the given kind, or null for anything else (expired, forged, wrong kind). */
  async verify<K extends TokenKind>(
    token: string,
    kind: K,
  ): Promise<Verified<K extends 'access' ? AccessClaims : MfaPendingClaims> | null> {
    type Claims = Verified<K extends 'access' ? AccessClaims : MfaPendingClaims>;
    const known = this.verified.get(token);
    if (known !== undefined) {
      // jose's own test: expired once the clock, in whole seconds, reaches exp.
      if (known.exp <= Math.floor(Date.now() / 1000)) {
        this.verified.delete(token);
        return null;
      }
      return known.typ === kind ? (known as unknown as Claims) : null;
    }
    try {
      const { payload } = await jwtVerify(token, await this.key, { issuer: ISSUER, algorithms: ['HS256'], requiredClaims: ['exp'] });
      if (payload.typ !== kind || typeof payload.sub !== 'string') return null;
      const claims = Object.freeze(payload) as unknown as Claims;
      if (this.verified.size >= VERIFIED_TOKENS_KEPT) this.verified.delete(this.verified.keys().next().value as string);
      this.verified.set(token, claims);
      return claims;
    } catch (err) {
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
  }
}
