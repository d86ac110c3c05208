import { SignJWT, jwtVerify, errors } from 'jose';

export type TokenKind = 'access' | 'mfa_pending';

export interface AccessClaims {
  sub: string;
  sid: string;
  mfa: boolean;
  typ: 'access';
}

export interface MfaPendingClaims {
  sub: string;
  typ: 'mfa_pending';
}

const ISSUER = 'svc';

/** HS256 JWTs for access tokens (short-lived, bound to a session) and MFA temp tokens (5 minutes). */
export class TokenSigner {
  private readonly key: Uint8Array;
  constructor(secret: string) {
    this.key = new TextEncoder().encode(secret);
  }

  async sign(claims: AccessClaims | MfaPendingClaims, ttlSeconds: number): Promise<string> {
    const { sub, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .sign(this.key);
  }

  /** The claims of a valid token of the given kind, or null for anything else (expired, forged, wrong kind). */
  async verify<K extends TokenKind>(token: string, kind: K): Promise<(K extends 'access' ? AccessClaims : MfaPendingClaims) | null> {
    try {
      const { payload } = await jwtVerify(token, this.key, { issuer: ISSUER, algorithms: ['HS256'] });
      if (payload.typ !== kind || typeof payload.sub !== 'string') return null;
      return payload as unknown as K extends 'access' ? AccessClaims : MfaPendingClaims;
    } catch (err) {
      if (err instanceof errors.JOSEError) return null;
      throw err;
    }
  }
}
