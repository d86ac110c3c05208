import type { ResponseHeaders } from './errors.js';

/**
 * The session cookies of a deployment that keeps the refresh token out of the response body (a hosted
 * deployment: issue 15 item 1). The names follow one pattern, `<prefix>_refresh_token` and `<prefix>_csrf_token`,
 * and the refresh call sends the CSRF cookie's value in `x-<prefix>-csrf`; the prefix is whatever the deployment
 * brands them with (`svc` on the bundled server), read from the cookies themselves, never assumed.
 */
export interface SessionCookies {
  prefix: string;
  refreshToken: string;
  /** Absent where the deployment sets no CSRF cookie (the bundled server: any header value is accepted). */
  csrfToken?: string | undefined;
}

const REFRESH_SUFFIX = '_refresh_token';
const CSRF_SUFFIX = '_csrf_token';

interface Cookie {
  name: string;
  value: string;
  maxAge?: number | undefined;
  expires?: Date | undefined;
}

/** A cookie the server asks the client to drop: empty, or with a Max-Age or Expires already past. */
function cleared(cookie: Cookie, now: number): boolean {
  return cookie.value === '' || (cookie.maxAge !== undefined && cookie.maxAge <= 0) || (cookie.expires !== undefined && cookie.expires.getTime() <= now);
}

/**
 * What a response's Set-Cookie headers do to the session cookies: `undefined` when they do not mention them,
 * `null` when they clear the refresh cookie (logout), else the new cookies (a CSRF cookie not re-sent keeps its
 * previous value).
 */
export async function sessionCookiesFrom(
  headers: ResponseHeaders,
  previous: SessionCookies | undefined,
  now: number = Date.now(),
): Promise<SessionCookies | null | undefined> {
  const raw = headers['set-cookie'];
  if (raw === undefined) return undefined;
  // Loaded only when a response sets a cookie: most commands never see one.
  const { parse } = await import('set-cookie-parser');
  const cookies: Cookie[] = parse(Array.isArray(raw) ? raw : [raw], { decodeValues: false });
  const refresh = cookies.find((c) => c.name.endsWith(REFRESH_SUFFIX) && c.name.length > REFRESH_SUFFIX.length);
  if (refresh === undefined) return undefined;
  if (cleared(refresh, now)) return null;
  const prefix = refresh.name.slice(0, -REFRESH_SUFFIX.length);
  const csrf = cookies.find((c) => c.name === `${prefix}${CSRF_SUFFIX}`);
  const csrfToken = csrf && !cleared(csrf, now) ? csrf.value : previous?.prefix === prefix ? previous.csrfToken : undefined;
  return { prefix, refreshToken: refresh.value, ...(csrfToken === undefined ? {} : { csrfToken }) };
}

/** The headers of a cookie refresh: both cookies, and the CSRF header carrying the CSRF cookie's value. */
export function refreshHeaders(cookies: SessionCookies): Record<string, string> {
  const pairs = [`${cookies.prefix}${REFRESH_SUFFIX}=${cookies.refreshToken}`];
  if (cookies.csrfToken !== undefined) pairs.push(`${cookies.prefix}${CSRF_SUFFIX}=${cookies.csrfToken}`);
  // Without a CSRF cookie the header's presence is the defence (the bundled server, 01 §4.5): any value.
  return { cookie: pairs.join('; '), [`x-${cookies.prefix}-csrf`]: cookies.csrfToken ?? '1' };
}

/** The stored form (one secret-store entry, JSON) read back; anything else is no cookies. */
export function parseStoredCookies(text: string | undefined): SessionCookies | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const { prefix, refreshToken, csrfToken } = value as Record<string, unknown>;
    if (typeof prefix !== 'string' || typeof refreshToken !== 'string') return undefined;
    return { prefix, refreshToken, ...(typeof csrfToken === 'string' ? { csrfToken } : {}) };
  } catch {
    return undefined;
  }
}
