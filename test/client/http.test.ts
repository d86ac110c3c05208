import type { ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ApiError,
  HttpClient,
  NetworkError,
  buildQuery,
  retryAfterMs,
  type AuthProvider,
  type RetryInfo,
} from '../../src/client/index.js';
import {
  JSON_HEADERS,
  hangUp,
  header,
  refusingUrl,
  stall,
  until,
  useHarness,
  type Responder,
} from './helpers.js';

const setup = useHarness();
// Registered after useHarness's hook, so it runs before it: timers and mocks are restored before the close.
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('query building', () => {
  it('repeats array keys, skips undefined and null, stringifies booleans, numbers and dates', () => {
    expect(
      buildQuery({
        page: 2,
        active: false,
        tag: ['a', 'b c'],
        skip: undefined,
        none: null,
        since: new Date('2024-01-02T03:04:05.000Z'),
      }),
    ).toBe('?page=2&active=false&tag=a&tag=b+c&since=2024-01-02T03%3A04%3A05.000Z');
    expect(buildQuery({})).toBe('');
    expect(buildQuery(undefined)).toBe('');
  });

  it('joins base path, request path and query, appending to a query already in the path', () => {
    const client = new HttpClient({ baseUrl: 'https://rmm.example.com/prefix/' });
    expect(client.resolvePath('/api/v1/orgs/sites', { orgId: 'x', page: 1 })).toBe(
      '/prefix/api/v1/orgs/sites?orgId=x&page=1',
    );
    expect(client.resolvePath('/api/v1/x?a=1', { b: true })).toBe('/prefix/api/v1/x?a=1&b=true');
    expect(client.resolvePath('health')).toBe('/prefix/health');
  });
});

describe('HttpClient.request', () => {
  it('sends method, path, query, JSON body and default headers; parses a JSON answer', async () => {
    const { server, client, calls } = await setup({
      userAgent: 'svc/9.9.9',
      auth: { headers: () => Promise.resolve({ Authorization: 'Bearer t1' }) },
    });
    server
      .intercept({ path: '/api/v1/things?status=active&tag=a&tag=b', method: 'POST' })
      .reply(201, { id: 1 }, { headers: JSON_HEADERS });

    const res = await client.request({
      method: 'POST',
      path: '/api/v1/things',
      query: { status: 'active', tag: ['a', 'b'], missing: undefined },
      body: { name: 'n' },
      headers: { 'X-Trace': 'abc' },
    });

    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: 1 });
    const log = calls()[0];
    expect(log?.method).toBe('POST');
    expect(log?.path).toBe('/api/v1/things?status=active&tag=a&tag=b');
    expect(log?.body).toBe('{"name":"n"}');
    expect(header(log, 'authorization')).toBe('Bearer t1');
    expect(header(log, 'content-type')).toBe('application/json');
    expect(header(log, 'accept')).toBe('application/json');
    expect(header(log, 'user-agent')).toBe('svc/9.9.9');
    expect(header(log, 'x-trace')).toBe('abc');
    expect(header(log, 'idempotency-key')).toBeUndefined();
  });

  it('issue 9 item 7: a success that is not JSON (a web server at a wrong base URL) is an unexpected response naming the URL and content type', async () => {
    const { server, client } = await setup();
    server.intercept({ path: '/page' }).reply(200, '<html>hello</html>', { headers: { 'content-type': 'text/html' } });
    const error = await client.request({ method: 'GET', path: '/page' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'UnexpectedResponseError', status: 200 });
    expect((error as Error).message).toBe(`unexpected response from ${server.url}/page (HTTP 200, content-type text/html)`);
  });

  it('returns undefined for empty answers, and the unread stream with raw: true', async () => {
    const { server, client } = await setup();
    server.intercept({ path: '/empty', method: 'DELETE' }).reply(204, '');
    server
      .intercept({ path: '/export.csv' })
      .reply(200, 'a,b\n1,2\n', { headers: { 'content-type': 'text/csv', 'x-row-count': '1' } });

    expect((await client.request({ method: 'DELETE', path: '/empty' })).body).toBeUndefined();
    const raw = await client.request({ method: 'GET', path: '/export.csv', raw: true });
    expect(raw.headers['x-row-count']).toBe('1');
    expect(await raw.body.text()).toBe('a,b\n1,2\n');
  });

  it('asks for gzip on JSON requests and inflates the answer (errors too); a raw request takes the body as it is', async () => {
    const { server, client, calls } = await setup();
    const list = { data: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}` })) };
    const gzipped = (status: number, body: unknown) => (_req: unknown, res: ServerResponse) =>
      res.writeHead(status, { ...JSON_HEADERS, 'content-encoding': 'gzip' }).end(gzipSync(JSON.stringify(body)));
    server.intercept({ path: '/list' }).respond(gzipped(200, list));
    server.intercept({ path: '/refused', method: 'POST' }).respond(gzipped(409, { error: 'Already there', code: 'CONFLICT' }));
    server.intercept({ path: '/export.csv' }).reply(200, 'a\n1\n', { headers: { 'content-type': 'text/csv' } });

    expect((await client.request({ method: 'GET', path: '/list' })).body).toEqual(list);
    const error = await client.request({ method: 'POST', path: '/refused', body: {} }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'ApiError', status: 409, code: 'CONFLICT', message: 'Already there' });
    const raw = await client.request({ method: 'GET', path: '/export.csv', raw: true });
    expect(await raw.body.text()).toBe('a\n1\n');
    expect(calls().map((call) => header(call, 'accept-encoding'))).toEqual(['gzip', 'gzip', undefined]);
  });

  it('turns the JSON error body into ApiError with status, code, details and headers', async () => {
    const { server, client } = await setup();
    server
      .intercept({ path: '/api/v1/orgs/partners', method: 'POST' })
      .reply(
        400,
        { error: 'Validation failed', code: 'VALIDATION_ERROR', details: [{ path: ['slug'], message: 'bad' }] },
        { headers: { ...JSON_HEADERS, 'x-request-id': 'r1' } },
      );

    const error = await client
      .request({ method: 'POST', path: '/api/v1/orgs/partners', body: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
      message: 'Validation failed',
      details: [{ path: ['slug'], message: 'bad' }],
      headers: { 'x-request-id': 'r1' },
    });
  });

  it('falls back to "HTTP <status>" when the error body is not JSON', async () => {
    const { server, client } = await setup();
    server
      .intercept({ path: '/x', method: 'POST' })
      .reply(502, '<html>Bad gateway</html>', { headers: { 'content-type': 'text/html' } });

    const error = await client.request({ method: 'POST', path: '/x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 502, message: 'HTTP 502', body: '<html>Bad gateway</html>' });
    expect((error as ApiError).code).toBeUndefined();
  });
});

describe('retries (CLI.md "Retries")', () => {
  it('retries a GET on 503 and returns the later success', async () => {
    const retries: RetryInfo[] = [];
    const { server, client, calls } = await setup({ onRetry: (info) => retries.push(info) });
    server.intercept({ path: '/r' }).reply(503, { error: 'busy' }, { headers: JSON_HEADERS });
    server.intercept({ path: '/r' }).reply(502, 'bad gateway');
    server.intercept({ path: '/r' }).reply(200, { ok: true }, { headers: JSON_HEADERS });

    const res = await client.request({ method: 'GET', path: '/r' });
    expect(res.body).toEqual({ ok: true });
    expect(calls()).toHaveLength(3);
    expect(retries.map((r) => [r.attempt, r.status, r.maxAttempts])).toEqual([
      [1, 503, 3],
      [2, 502, 3],
    ]);
  });

  it('gives up after `retries` tries in all and throws the last ApiError', async () => {
    const { server, client, calls } = await setup({ retries: 2 });
    server
      .intercept({ path: '/r', method: 'PUT' })
      .reply(504, { error: 'timeout', code: 'GATEWAY_TIMEOUT' }, { headers: JSON_HEADERS })
      .times(2);

    await expect(client.request({ method: 'PUT', path: '/r', body: {} })).rejects.toMatchObject({
      status: 504,
      code: 'GATEWAY_TIMEOUT',
    });
    expect(calls()).toHaveLength(2);
  });

  it('never retries a POST without an idempotency key', async () => {
    const { server, client, calls } = await setup();
    server.intercept({ path: '/create', method: 'POST' }).reply(503, { error: 'busy' }, { headers: JSON_HEADERS });

    await expect(client.request({ method: 'POST', path: '/create', body: { a: 1 } })).rejects.toMatchObject({
      status: 503,
    });
    expect(calls()).toHaveLength(1);
  });

  it('never retries a PATCH on a connection reset without an idempotency key', async () => {
    const { server, client, calls } = await setup();
    server.intercept({ path: '/u', method: 'PATCH' }).respond(hangUp);

    const error = await client.request({ method: 'PATCH', path: '/u', body: {} }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'ECONNRESET', attempts: 1 });
    expect(calls()).toHaveLength(1);
  });

  it('does not retry other errors (404, 500)', async () => {
    const { server, client, calls } = await setup();
    server
      .intercept({ path: '/missing' })
      .reply(404, { error: 'Not found', code: 'NOT_FOUND' }, { headers: JSON_HEADERS });
    server.intercept({ path: '/boom' }).reply(500, { error: 'Internal error' }, { headers: JSON_HEADERS });

    await expect(client.request({ method: 'GET', path: '/missing' })).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
    await expect(client.request({ method: 'GET', path: '/boom' })).rejects.toMatchObject({ status: 500 });
    expect(calls()).toHaveLength(2);
  });

  it('retries a POST with an idempotency key, sending the same Idempotency-Key each time', async () => {
    const { server, client, calls } = await setup();
    server.intercept({ path: '/create', method: 'POST' }).reply(503, { error: 'busy' }, { headers: JSON_HEADERS });
    server.intercept({ path: '/create', method: 'POST' }).respond(hangUp);
    server.intercept({ path: '/create', method: 'POST' }).reply(201, { id: 'new' }, { headers: JSON_HEADERS });

    const res = await client.request({ method: 'POST', path: '/create', body: { a: 1 }, idempotencyKey: 'key-123' });
    expect(res).toMatchObject({ status: 201, body: { id: 'new' } });
    expect(calls().map((log) => header(log, 'idempotency-key'))).toEqual(['key-123', 'key-123', 'key-123']);
    expect(calls().map((log) => log.body)).toEqual(['{"a":1}', '{"a":1}', '{"a":1}']);
  });

  it('honours Retry-After on 429 within the retry budget (60 s of waiting in all)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const retries: RetryInfo[] = [];
    const { server, client, calls } = await setup({ onRetry: (info) => retries.push(info) });
    server
      .intercept({ path: '/limited' })
      .reply(
        429,
        { error: 'Too many requests', code: 'RATE_LIMITED' },
        { headers: { ...JSON_HEADERS, 'retry-after': '2' } },
      );
    server
      .intercept({ path: '/limited' })
      .reply(429, { error: 'Too many requests' }, { headers: { ...JSON_HEADERS, 'retry-after': '58' } });
    server.intercept({ path: '/limited' }).reply(200, { ok: 1 }, { headers: JSON_HEADERS });

    let settled = false;
    const pending = client.request({ method: 'GET', path: '/limited' }).finally(() => {
      settled = true;
    });

    // The answers come over real sockets: wait for each before moving the clock.
    await until(() => retries.length === 1);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(calls()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => retries.length === 2);
    expect(calls()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(57_999);
    expect(settled).toBe(false);
    expect(calls()).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);

    expect((await pending).body).toEqual({ ok: 1 });
    expect(calls()).toHaveLength(3);
    expect(retries.map((r) => [r.status, r.delayMs])).toEqual([
      [429, 2_000],
      [429, 58_000],
    ]);
  });

  it('issue 9 item 12: a Retry-After beyond the retry budget fails at once with the 429 and its Retry-After', async () => {
    const retries: RetryInfo[] = [];
    const { server, client, calls } = await setup({ onRetry: (info) => retries.push(info) });
    server
      .intercept({ path: '/limited' })
      .reply(429, { error: 'Too many requests', code: 'RATE_LIMITED' }, { headers: { ...JSON_HEADERS, 'retry-after': '3475' } });

    const error = await client.request({ method: 'GET', path: '/limited' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(429);
    expect((error as ApiError).headers['retry-after']).toBe('3475');
    expect(calls()).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('issue 9 item 12: a request that gives up says how many tries it made and the time they took in all', async () => {
    const { server, client } = await setup({ timeoutMs: 100, retries: 2, backoff: { baseMs: 1, capMs: 1 } });
    server.intercept({ path: '/never' }).respond(stall).times(2);
    const error = await client.request({ method: 'GET', path: '/never' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).message).toMatch(/No answer within 100 ms .*; 2 tries in \d+\.\d s$/);
  });

  it('throws ApiError 429 when the rate limit outlasts the tries', async () => {
    const { server, client } = await setup({ retries: 2 });
    server
      .intercept({ path: '/limited' })
      .reply(
        429,
        { error: 'Too many requests', code: 'RATE_LIMITED' },
        { headers: { ...JSON_HEADERS, 'retry-after': '0' } },
      )
      .times(2);

    await expect(client.request({ method: 'GET', path: '/limited' })).rejects.toMatchObject({
      status: 429,
      code: 'RATE_LIMITED',
    });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2024-05-01T12:00:00Z');
    expect(retryAfterMs('5', now)).toBe(5_000);
    expect(retryAfterMs('86400', now)).toBe(86_400_000);
    expect(retryAfterMs('Wed, 01 May 2024 12:00:07 GMT', now)).toBe(7_000);
    expect(retryAfterMs('Wed, 01 May 2024 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it('backs off exponentially with full jitter: base 200 ms, cap 5 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const retries: RetryInfo[] = [];
    const { server, client } = await setup({ retries: 7, backoff: {}, onRetry: (info) => retries.push(info) });
    server.intercept({ path: '/slow' }).reply(503, 'busy').times(6);
    server.intercept({ path: '/slow' }).reply(200, { ok: true }, { headers: JSON_HEADERS });

    const pending = client.request({ method: 'GET', path: '/slow' });
    for (let tries = 1; tries <= 6; tries++) {
      await until(() => retries.length === tries);
      await vi.advanceTimersByTimeAsync(retries[tries - 1]?.delayMs ?? 0);
    }
    expect((await pending).body).toEqual({ ok: true });
    // half of min(5000, 200 · 2^(n-1)) for n = 1…6
    expect(retries.map((r) => r.delayMs)).toEqual([100, 200, 400, 800, 1600, 2500]);
  });

  it('turns a refused connection into NetworkError after the retries', async () => {
    const retries: RetryInfo[] = [];
    const baseUrl = await refusingUrl();
    const client = new HttpClient({ baseUrl, backoff: { baseMs: 1, capMs: 2 }, onRetry: (info) => retries.push(info) });

    const error = await client.request({ method: 'GET', path: '/down' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'ECONNREFUSED', attempts: 3 });
    expect((error as NetworkError).cause).toBeInstanceOf(Error);
    expect((error as NetworkError).message).toContain(`${baseUrl}/down`);
    expect(retries.map((r) => r.error?.code)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
    await client.close();
  });

  it('retries timeouts too', async () => {
    const retries: RetryInfo[] = [];
    const { server, client } = await setup({ timeoutMs: 250, onRetry: (info) => retries.push(info) });
    server.intercept({ path: '/t' }).respond(stall);
    server.intercept({ path: '/t' }).reply(200, { ok: true }, { headers: JSON_HEADERS });

    expect((await client.request({ method: 'GET', path: '/t' })).body).toEqual({ ok: true });
    expect(retries.map((r) => r.error?.code)).toEqual(['HEADERS_TIMEOUT']);
  });

  it('does not retry a transport error that is not transient', async () => {
    // An answer that is not HTTP: node's parser refuses it, and the next try would get the same.
    const { server, client, calls } = await setup();
    server.intercept({ path: '/garbled' }).respond((req) => req.socket.end('SMTP ready\r\n\r\n'));

    await expect(client.request({ method: 'GET', path: '/garbled' })).rejects.toMatchObject({
      name: 'NetworkError',
      code: expect.stringMatching(/^HPE_/),
    });
    expect(calls()).toHaveLength(1);
  });

  it('does not retry a certificate it cannot verify (https goes through node:https)', async () => {
    const retries: RetryInfo[] = [];
    const { server, client } = await setup({ onRetry: (info) => retries.push(info) }, true);
    server.intercept({ path: '/tls' }).reply(200, { ok: true }, { headers: JSON_HEADERS });

    const error = await client.request({ method: 'GET', path: '/tls' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    // A self-signed certificate that nothing trusts: the TLS code, not a retryable one.
    expect((error as NetworkError).code).toMatch(/SELF_SIGNED|UNABLE_TO_VERIFY|CERT/);
    expect((error as NetworkError).attempts).toBe(1);
    expect(retries).toEqual([]);
    expect(server.calls()).toEqual([]);
  });
});

describe('transparent token refresh', () => {
  /** `refreshMs`: how long the refresh takes (a real one is a round trip to the server). */
  function tokenAuth(refreshResult: boolean, refreshMs = 0): AuthProvider & { token: string; refreshCalls: number } {
    return {
      token: 'old',
      refreshCalls: 0,
      headers() {
        return Promise.resolve({ authorization: `Bearer ${this.token}` });
      },
      async refresh() {
        this.refreshCalls += 1;
        if (refreshMs > 0) await new Promise((resolve) => setTimeout(resolve, refreshMs));
        if (refreshResult) this.token = 'new';
        return refreshResult;
      },
    };
  }

  it('refreshes once on 401 and re-sends with the new token', async () => {
    const auth = tokenAuth(true);
    const { server, client, calls } = await setup({ auth, retries: 1 });
    server
      .intercept({ path: '/api/v1/users/me', method: 'POST' })
      .reply(401, { error: 'Token expired', code: 'TOKEN_EXPIRED' }, { headers: JSON_HEADERS });
    server.intercept({ path: '/api/v1/users/me', method: 'POST' }).reply(200, { id: 'u1' }, { headers: JSON_HEADERS });

    // retries: 1 and a non-idempotent POST: the re-send after a refresh is not a retry
    const res = await client.request({ method: 'POST', path: '/api/v1/users/me', body: {} });
    expect(res.body).toEqual({ id: 'u1' });
    expect(auth.refreshCalls).toBe(1);
    expect(calls().map((log) => header(log, 'authorization'))).toEqual(['Bearer old', 'Bearer new']);
  });

  it('does not count the re-send after a refresh against the retries', async () => {
    const auth = tokenAuth(true);
    const { server, client, calls } = await setup({ auth, retries: 2 });
    server.intercept({ path: '/me' }).reply(401, { error: 'Token expired' }, { headers: JSON_HEADERS });
    server.intercept({ path: '/me' }).reply(503, { error: 'busy' }, { headers: JSON_HEADERS });
    server.intercept({ path: '/me' }).reply(200, { id: 'u1' }, { headers: JSON_HEADERS });

    expect((await client.request({ method: 'GET', path: '/me' })).body).toEqual({ id: 'u1' });
    expect(calls()).toHaveLength(3);
  });

  it('does not refresh on a 401 that is not about the token (a wrong re-auth password)', async () => {
    const auth = tokenAuth(true);
    const { server, client, calls } = await setup({ auth });
    server
      .intercept({ path: '/api/v1/pam/elevation-requests/x/respond', method: 'POST' })
      .reply(401, { error: 'Re-authentication required', code: 'reauth_required' }, { headers: JSON_HEADERS });

    await expect(
      client.request({ method: 'POST', path: '/api/v1/pam/elevation-requests/x/respond', body: {} }),
    ).rejects.toMatchObject({ status: 401, code: 'reauth_required' });
    expect(auth.refreshCalls).toBe(0);
    expect(calls()).toHaveLength(1);
  });

  it('throws ApiError 401 when the refresh fails', async () => {
    const auth = tokenAuth(false);
    const { server, client, calls } = await setup({ auth });
    server
      .intercept({ path: '/me' })
      .reply(401, { error: 'Token expired', code: 'TOKEN_EXPIRED' }, { headers: JSON_HEADERS });

    await expect(client.request({ method: 'GET', path: '/me' })).rejects.toMatchObject({
      name: 'ApiError',
      status: 401,
      code: 'TOKEN_EXPIRED',
      message: 'Token expired',
    });
    expect(auth.refreshCalls).toBe(1);
    expect(calls()).toHaveLength(1);
  });

  it('refreshes at most once per request', async () => {
    const auth = tokenAuth(true);
    const { server, client, calls } = await setup({ auth });
    server.intercept({ path: '/me' }).reply(401, { error: 'Invalid token' }, { headers: JSON_HEADERS }).times(2);

    await expect(client.request({ method: 'GET', path: '/me' })).rejects.toMatchObject({ status: 401 });
    expect(auth.refreshCalls).toBe(1);
    expect(calls()).toHaveLength(2);
  });

  it('shares one refresh between requests that hit 401 together', async () => {
    const auth = tokenAuth(true, 50);
    const { server, client } = await setup({ auth });
    // Both 401s go out once both requests are in, so that they overlap.
    const held: ServerResponse[] = [];
    const expired: Responder = (_req, res) => {
      held.push(res);
      if (held.length === 2)
        for (const r of held) r.writeHead(401, JSON_HEADERS).end(JSON.stringify({ error: 'expired' }));
    };
    server.intercept({ path: '/a', headers: { authorization: 'Bearer old' } }).respond(expired);
    server.intercept({ path: '/b', headers: { authorization: 'Bearer old' } }).respond(expired);
    server
      .intercept({ path: '/a', headers: { authorization: 'Bearer new' } })
      .reply(200, { a: 1 }, { headers: JSON_HEADERS });
    server
      .intercept({ path: '/b', headers: { authorization: 'Bearer new' } })
      .reply(200, { b: 1 }, { headers: JSON_HEADERS });

    const [a, b] = await Promise.all([
      client.request({ method: 'GET', path: '/a' }),
      client.request({ method: 'GET', path: '/b' }),
    ]);
    expect([a.body, b.body]).toEqual([{ a: 1 }, { b: 1 }]);
    expect(auth.refreshCalls).toBe(1);
  });

  it('does not refresh when the request carried an API key rather than a bearer token', async () => {
    const refresh = vi.fn(() => Promise.resolve(true));
    const { server, client } = await setup({ auth: { headers: () => Promise.resolve({ 'x-api-key': 'k' }), refresh } });
    server.intercept({ path: '/me' }).reply(401, { error: 'API key is revoked' }, { headers: JSON_HEADERS });

    await expect(client.request({ method: 'GET', path: '/me' })).rejects.toMatchObject({
      status: 401,
      message: 'API key is revoked',
    });
    expect(refresh).not.toHaveBeenCalled();
  });
});

describe('transport (node:http on a loopback server)', () => {
  /** Headers for a body of `length` bytes, then `sent` of them, then nothing more. */
  function partialBody(length: number, sent: string): Responder {
    return (_req, res) => {
      res.writeHead(200, { ...JSON_HEADERS, 'content-length': String(length) });
      res.write(sent);
    };
  }

  it('times out a body that stalls between chunks (BODY_TIMEOUT), parsed or raw', async () => {
    const { server, client, calls } = await setup({ timeoutMs: 250 });
    server.intercept({ path: '/slow-body' }).respond(partialBody(100, '{"a":')).times(2);

    await expect(client.request({ method: 'GET', path: '/slow-body' })).rejects.toMatchObject({
      name: 'NetworkError',
      code: 'BODY_TIMEOUT',
    });
    const raw = await client.request({ method: 'GET', path: '/slow-body', raw: true });
    await expect(raw.body.text()).rejects.toMatchObject({ code: 'BODY_TIMEOUT' });
    // A read that fails after the headers is not retried: the client cannot know what the server did.
    expect(calls()).toHaveLength(2);
  });

  it('gives up on a server that never answers with HEADERS_TIMEOUT once the tries are spent', async () => {
    const { server, client, calls } = await setup({ timeoutMs: 250, retries: 2 });
    server.intercept({ path: '/never' }).respond(stall).times(2);

    await expect(client.request({ method: 'GET', path: '/never' })).rejects.toMatchObject({
      name: 'NetworkError',
      code: 'HEADERS_TIMEOUT',
      attempts: 2,
    });
    expect(calls()).toHaveLength(2);
  });

  it('turns a connection reset mid-body into NetworkError ECONNRESET, parsed or raw', async () => {
    const { server, client } = await setup();
    const cut: Responder = (req, res) => {
      res.writeHead(200, { ...JSON_HEADERS, 'content-length': '1000' }).write('{"rows":[1,2,');
      setTimeout(() => req.socket.destroy(), 20);
    };
    server.intercept({ path: '/cut' }).respond(cut).times(2);

    const error = await client.request({ method: 'GET', path: '/cut' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ code: 'ECONNRESET' });
    expect((error as NetworkError).message).toContain('while reading the HTTP 200 body');
    const raw = await client.request({ method: 'GET', path: '/cut', raw: true });
    await expect(raw.body.text()).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('stops on its AbortSignal: waiting for headers, between retries, and while a raw body streams', async () => {
    const retries: RetryInfo[] = [];
    const { server, client, calls } = await setup({
      backoff: { baseMs: 10_000, capMs: 10_000 },
      onRetry: (info) => retries.push(info),
    });
    server.intercept({ path: '/wait' }).respond(stall);
    server.intercept({ path: '/busy' }).reply(503, 'busy');
    server.intercept({ path: '/stream' }).respond(partialBody(1000, 'a,b\n'));

    const waiting = new AbortController();
    const pending = client.request({ method: 'GET', path: '/wait', signal: waiting.signal });
    await until(() => calls().length === 1);
    waiting.abort(new Error('stop waiting'));
    await expect(pending).rejects.toThrow('stop waiting');

    const backingOff = new AbortController();
    const retrying = client.request({ method: 'GET', path: '/busy', signal: backingOff.signal });
    await until(() => retries.length === 1);
    backingOff.abort(new Error('stop retrying'));
    await expect(retrying).rejects.toThrow('stop retrying');

    const reading = new AbortController();
    const raw = await client.request({ method: 'GET', path: '/stream', raw: true, signal: reading.signal });
    const text = raw.body.text();
    reading.abort(new Error('stop reading'));
    await expect(text).rejects.toThrow('stop reading');

    await expect(client.request({ method: 'GET', path: '/wait', signal: reading.signal })).rejects.toThrow(
      'stop reading',
    );
    expect(calls()).toHaveLength(3);
  });

  it('reuses one keep-alive connection for consecutive requests; dump() closes it only for a big body', async () => {
    const { server, client } = await setup();
    server.intercept({ path: '/json' }).reply(200, { ok: true }, { headers: JSON_HEADERS }).times(2);
    server
      .intercept({ path: '/page' })
      .reply(200, 'a\n1\n', { headers: { 'content-type': 'text/csv' } })
      .times(2);
    server.intercept({ path: '/big' }).reply(200, 'x'.repeat(1024 * 1024));
    server.intercept({ path: '/after' }).reply(204);

    expect((await client.request({ method: 'GET', path: '/json' })).body).toEqual({ ok: true });
    expect(await (await client.request({ method: 'GET', path: '/json', raw: true })).body.json()).toEqual({ ok: true });
    expect(await (await client.request({ method: 'GET', path: '/page', raw: true })).body.text()).toBe('a\n1\n');
    await (await client.request({ method: 'GET', path: '/page', raw: true })).body.dump();
    expect(server.connections()).toBe(1);

    // An export page nobody will read: cheaper to drop the connection than to download the rest.
    await (await client.request({ method: 'GET', path: '/big', raw: true })).body.dump();
    await client.request({ method: 'GET', path: '/after' });
    expect(server.connections()).toBe(2);
  });

  it('gives repeated response headers as arrays, single ones as strings', async () => {
    const { server, client } = await setup();
    server
      .intercept({ path: '/h' })
      .reply(200, '', { headers: { 'x-one': '1', 'x-many': ['a', 'b'], 'set-cookie': ['c=1', 'd=2'] } });

    const res = await client.request({ method: 'GET', path: '/h' });
    expect(res.headers).toMatchObject({ 'x-one': '1', 'x-many': ['a', 'b'], 'set-cookie': ['c=1', 'd=2'] });
  });
});
