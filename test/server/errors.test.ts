import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError, badRequest, conflict, forbidden, notFound, tooManyRequests, unauthorized, unprocessable } from '../../src/server/errors.js';
import { installErrorHandler } from '../../src/server/http/error-handler.js';

// Services throw domain errors without knowing HTTP; the one error handler picks the status (DESIGN.md "Errors").
describe('domain errors through the one error handler', () => {
  const app = Fastify({ logger: false });
  installErrorHandler(app);
  const thrown: Record<string, () => Error> = {
    invalid: () => badRequest('Bad thing', 'BAD_THING', { validTiers: [1, 2] }),
    unauthenticated: () => unauthorized(),
    forbidden: () => forbidden(),
    not_found: () => notFound('Device not found'),
    conflict: () => conflict('Slug taken', 'SLUG_TAKEN'),
    unprocessable: () => unprocessable('Key reused with another body', 'IDEMPOTENCY_KEY_REUSED'),
    rate_limited: () => tooManyRequests('Rate limit exceeded', 0.2, 'RATE_LIMIT_EXCEEDED'),
    upstream_failed: () => new DomainError('upstream_failed', 'SMS delivery failed', 'SMS_DELIVERY_FAILED'),
    unavailable: () => new DomainError('unavailable', 'SMS service not configured', 'SMS_NOT_CONFIGURED'),
  };
  for (const [kind, make] of Object.entries(thrown)) app.get(`/${kind}`, () => Promise.reject(make()));
  afterAll(() => app.close());

  const expected: [string, number, Record<string, unknown>][] = [
    ['invalid', 400, { error: 'Bad thing', validTiers: [1, 2], code: 'BAD_THING' }],
    ['unauthenticated', 401, { error: 'Missing or invalid authorization header', code: 'UNAUTHORIZED' }],
    ['forbidden', 403, { error: 'Permission denied', code: 'FORBIDDEN' }],
    ['not_found', 404, { error: 'Device not found', code: 'NOT_FOUND' }],
    ['conflict', 409, { error: 'Slug taken', code: 'SLUG_TAKEN' }],
    ['unprocessable', 422, { error: 'Key reused with another body', code: 'IDEMPOTENCY_KEY_REUSED' }],
    ['rate_limited', 429, { error: 'Rate limit exceeded', code: 'RATE_LIMIT_EXCEEDED' }],
    ['upstream_failed', 502, { error: 'SMS delivery failed', code: 'SMS_DELIVERY_FAILED' }],
    ['unavailable', 503, { error: 'SMS service not configured', code: 'SMS_NOT_CONFIGURED' }],
  ];
  it.each(expected)('kind %s answers %i with the one error body', async (kind, status, body) => {
    const res = await app.inject({ method: 'GET', url: `/${kind}` });
    expect(res.statusCode).toBe(status);
    expect(res.body).toBe(JSON.stringify(body));
  });

  // A 4xx is an answer: its error is made without a stack trace (the capture cost more than the rest of it).
  it('DESIGN.md "Errors": client faults carry no stack frames; server faults (5xx) keep theirs', () => {
    const limit = Error.stackTraceLimit;
    for (const [kind, make] of Object.entries(thrown)) {
      const err = make() as DomainError;
      const frames = (err.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '));
      if (err.isClientFault) expect(frames, kind).toEqual([]);
      else expect(frames.length, kind).toBeGreaterThan(0);
      expect(err.stack, kind).toContain(err.message);
      expect(err, kind).toBeInstanceOf(Error);
    }
    // The process-wide limit is left as it was.
    expect(Error.stackTraceLimit).toBe(limit);
  });

  it('a rate-limited error sends Retry-After in whole seconds, at least 1', async () => {
    const res = await app.inject({ method: 'GET', url: '/rate_limited' });
    expect(res.headers['retry-after']).toBe('1');
  });
});
