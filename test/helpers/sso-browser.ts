/** A cookie jar as a request's Cookie header. Cookies are per host, whatever the port, as browsers keep them. */
export function cookieHeader(jar: ReadonlyMap<string, string>): string {
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

/** A browser stand-in: follows redirects with a cookie jar (`jar`: kept for the caller's later requests), signs
 * `accountId` in on the provider's development login and consent forms, and stops at the first redirect to
 * `stopAt` (returned). */
export async function signInAt(startUrl: string, accountId: string, stopAt: string, jar = new Map<string, string>()): Promise<string> {
  let url = startUrl;
  let method: 'GET' | 'POST' = 'GET';
  let body: string | undefined;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(stopAt)) return url;
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: {
        cookie: cookieHeader(jar),
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

