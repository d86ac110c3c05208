import { describe, expect, it } from 'vitest';
import { refreshHeaders, sessionCookiesFrom } from '../../src/client/cookies.js';
import { ApiError, unknownRoutePath } from '../../src/client/errors.js';
import { auditRowMatcher } from '../../src/cli/export/audit-rows.js';
import { exportFormatOf } from '../../src/cli/export/content-type.js';
import { FlagValueError, startOfDayUtc, valuesFromFlags } from '../../src/cli/schema-flags.js';

describe('hosted deployments: the client side (issue 15)', () => {
  it('issue 15 §1 session cookies are found by the <prefix>_refresh_token / <prefix>_csrf_token pattern, whatever the brand', async () => {
    const found = await sessionCookiesFrom(
      { 'set-cookie': ['acme_refresh_token=r1; Path=/api/v1/auth; HttpOnly', 'acme_csrf_token=c1; Path=/', 'other=x'] },
      undefined,
    );
    expect(found).toEqual({ prefix: 'acme', refreshToken: 'r1', csrfToken: 'c1' });
    expect(refreshHeaders({ prefix: 'acme', refreshToken: 'r1', csrfToken: 'c1' })).toEqual({
      cookie: 'acme_refresh_token=r1; acme_csrf_token=c1',
      'x-acme-csrf': 'c1',
    });
    // The bundled server sets no CSRF cookie: the header still goes, with any value.
    expect(refreshHeaders({ prefix: 'svc', refreshToken: 'r' })['x-svc-csrf']).toBe('1');
    expect(await sessionCookiesFrom({ 'set-cookie': 'acme_refresh_token=; Max-Age=0; Path=/api/v1/auth' }, undefined)).toBeNull();
    expect(await sessionCookiesFrom({}, undefined)).toBeUndefined();
    expect(await sessionCookiesFrom({ 'set-cookie': 'theme=dark' }, undefined)).toBeUndefined();
  });

  it('issue 15 §3 a date-only value of a date-time field is the start of that day in UTC; other values go as typed', () => {
    expect(startOfDayUtc('due-date', '2026-12-31')).toBe('2026-12-31T00:00:00.000Z');
    expect(startOfDayUtc('due-date', '2026-12-31T10:00:00+02:00')).toBe('2026-12-31T10:00:00+02:00');
    expect(() => startOfDayUtc('due-date', '2026-02-30')).toThrow(FlagValueError);
    const fields = [
      { field: 'dueDate', flag: 'due-date', kind: 'string' as const, nullable: true, required: false, dateTime: true },
      { field: 'name', flag: 'name', kind: 'string' as const, nullable: false, required: false },
    ];
    expect(valuesFromFlags(fields, { 'due-date': '2026-03-31', name: '2026-03-31' })).toEqual({ dueDate: '2026-03-31T00:00:00.000Z', name: '2026-03-31' });
  });

  it('issue 15 §4 an unknown route (ours, or Fastify\'s shape) is told apart from a missing record', () => {
    expect(unknownRoutePath(ApiError.fromResponse(404, {}, JSON.stringify({ error: 'Not Found', path: '/api/v1/audit-logs/verify' })))).toBe('/api/v1/audit-logs/verify');
    expect(
      unknownRoutePath(ApiError.fromResponse(404, {}, JSON.stringify({ message: 'Route GET:/api/v1/pam/rules/x not found', error: 'Not Found', statusCode: 404 }))),
    ).toBe('GET /api/v1/pam/rules/x');
    expect(unknownRoutePath(ApiError.fromResponse(404, {}, JSON.stringify({ error: 'Rule not found', code: 'NOT_FOUND' })))).toBeUndefined();
  });

  it('issue 15 §5 exports are recognised by Content-Type and rows outside the filters are left out', () => {
    expect(exportFormatOf({ 'content-type': 'text/csv; charset=utf-8' })).toBe('csv');
    expect(exportFormatOf({ 'content-type': 'application/x-ndjson' })).toBe('jsonl');
    expect(exportFormatOf({ 'content-type': 'text/html' })).toBeUndefined();
    const match = auditRowMatcher({ action: 'LOGIN', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', user: 'admin@' });
    const row = { action: 'auth.login', timestamp: '2026-01-01T10:00:00Z', actorEmail: 'admin@x.test' };
    expect(match(row)).toBe(true);
    // 05 "03 §2.6/§4.4": from/to inclusive.
    expect(match({ ...row, timestamp: '2026-01-02T00:00:00Z' })).toBe(true);
    expect(match({ ...row, timestamp: '2026-01-02T00:00:00.001Z' })).toBe(false);
    expect(match({ ...row, action: 'site.create' })).toBe(false);
    expect(match({ action: 'auth.login', actorEmail: 'admin@x.test' })).toBe(false);
  });
});
