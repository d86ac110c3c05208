import { randomUUID } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fillPath } from '../../src/client/contract-client.js';
import { contract, fullPath, type EndpointDef } from '../../src/contract/index.js';
import { auditLogs } from '../../src/server/db/schema/index.js';
import { boundEndpoints } from '../../src/server/http/bind.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { adminToken, seedOrg, seedPartner, seedSite } from '../helpers/seed.js';

/**
 * DESIGN.md "Errors": no input may produce a 500. Every endpoint of the contract, called as the system
 * administrator (with an MFA session, so every guard lets the request through to validation and the
 * handler), gets a battery of bad inputs; every answer must be below 500 and every error must have the one
 * error body `{error: string, code?: string}`.
 */

type Json = Record<string, unknown>;

const ENDPOINTS: [string, EndpointDef][] = Object.entries(
  contract as unknown as Record<string, Record<string, EndpointDef>>,
).flatMap(([area, endpoints]) =>
  Object.entries(endpoints).map(([name, def]): [string, EndpointDef] => [`${area}.${name}`, def]),
);

const LONG = 'x'.repeat(100_000);
const WRONG_VALUES: unknown[] = [
  12345,
  -1,
  0,
  1.5,
  1e308,
  -1e308,
  true,
  false,
  null,
  [],
  {},
  [1, 'a', null],
  { nested: { deeper: [LONG.slice(0, 10)] } },
  '',
  'string',
  LONG,
  '\u0000\ud800\uffff',
  '=cmd|calc',
  '../../etc/passwd',
  "' OR 1=1 --",
];
const BAD_PARAMS = [
  'abc',
  '1',
  '0',
  '-1',
  'null',
  'undefined',
  '%00',
  '%ZZ',
  '..',
  'x'.repeat(400),
  'x'.repeat(600),
  '%F0%9F%98%80',
  `${randomUUID()}%20`,
  randomUUID().toUpperCase(),
  '00000000-0000-0000-0000-000000000000',
];
const BAD_QUERY_VALUES = [
  '',
  'abc',
  '-1',
  '0',
  '1e309',
  'NaN',
  'Infinity',
  '99999999999999999999999',
  '1.5',
  'x'.repeat(10_000),
  'true',
  'null',
  '%00',
  '[]',
  '{}',
];

function jsonSchema(schema: z.ZodType): Json {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
}

/** A plausible valid value for a JSON schema (best effort: enough to get past validation most of the time). */
function sample(
  schema: Json | undefined,
  ids: Record<string, string>,
  name = '',
  root: Json = schema ?? {},
  depth = 0,
): unknown {
  if (!schema || depth > 6) return undefined;
  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref.replace(/^#\/(\$defs|definitions)\//, '');
    const defs = (root.$defs ?? root.definitions ?? {}) as Record<string, Json>;
    return sample(defs[ref], ids, name, root, depth + 1);
  }
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const options = schema[key] as Json[] | undefined;
    if (options?.length) {
      const nonNull = options.find((o) => o.type !== 'null') ?? options[0];
      return sample(nonNull, ids, name, root, depth + 1);
    }
  }
  if ('default' in schema) return schema.default;
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      return Object.fromEntries(
        Object.entries(props)
          .map(([k, v]) => [k, sample(v, ids, k, root, depth + 1)])
          .filter(([, v]) => v !== undefined),
      );
    }
    case 'array': {
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      return Array.from({ length: Math.max(min, 1) }, () => sample(schema.items as Json, ids, name, root, depth + 1));
    }
    case 'integer':
    case 'number': {
      const min =
        typeof schema.minimum === 'number'
          ? schema.minimum
          : typeof schema.exclusiveMinimum === 'number'
            ? schema.exclusiveMinimum + 1
            : 1;
      return Math.max(min, Math.min(1, typeof schema.maximum === 'number' ? schema.maximum : 1));
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return sampleString(schema, ids, name);
    default:
      return {};
  }
}

function sampleString(schema: Json, ids: Record<string, string>, name: string): string {
  const format = schema.format as string | undefined;
  if (format === 'uuid') return ids[name] ?? randomUUID();
  if (format === 'email') return 'someone@example.test';
  if (format === 'date-time') return new Date().toISOString();
  if (format === 'uri' || format === 'url') return 'https://example.test/x';
  if (format === 'ipv4') return '192.0.2.1';
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  const candidates = [
    'Sample-Passw0rd-9',
    'sample',
    'abc-def',
    '12:00',
    '123456',
    'devices:read',
    'Europe/Paris',
    'UTC',
    'a',
    'en',
  ];
  const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern) : null;
  const fit = candidates.find((c) => c.length >= min && c.length <= max && (!pattern || pattern.test(c)));
  return fit ?? 'x'.repeat(Math.max(min, 1));
}

function bodyFields(def: EndpointDef): Record<string, Json> {
  if (!def.body) return {};
  const schema = jsonSchema(def.body);
  return (schema.properties ?? {}) as Record<string, Json>;
}

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

interface Attempt {
  label: string;
  method: InjectOptions['method'];
  url: string;
  payload?: string;
  headers?: Record<string, string>;
}

describe('malformed input never produces a 500 (DESIGN.md "Errors")', () => {
  let t: TestApp;
  let ids: Record<string, string>;
  let pathIds: [RegExp, string][];

  beforeEach(async () => {
    t = await createTestApp();
    const partner = seedPartner(t, { name: 'Fuzz Partner', slug: 'fuzz' });
    const org = seedOrg(t, partner.id, { name: 'Fuzz Org', slug: 'fuzz-org' });
    const site = seedSite(t, org.id, { name: 'Fuzz Site' });
    const audit = t.db.select({ id: auditLogs.id }).from(auditLogs).limit(1).get();
    ids = { partnerId: partner.id, orgId: org.id, organizationId: org.id, siteId: site.id };
    pathIds = [
      [/^\/orgs\/partners\/:id/, partner.id],
      [/^\/orgs\/organizations\/:id/, org.id],
      [/^\/orgs\/sites\/:id/, site.id],
      [/^\/audit-logs\/logs\/:id/, audit?.id ?? randomUUID()],
    ];
  });
  afterEach(async () => t.close());

  function goodParams(def: EndpointDef): Record<string, string> {
    const names = [...def.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1] ?? '');
    return Object.fromEntries(
      names.map((n) => [
        n,
        n === 'id' ? (pathIds.find(([re]) => re.test(def.path))?.[1] ?? randomUUID()) : (ids[n] ?? randomUUID()),
      ]),
    );
  }

  function attemptsFor(def: EndpointDef): Attempt[] {
    const params = goodParams(def);
    const base = fullPath({ ...def, path: fillPath(def.path, params) });
    const method = def.method;
    const json = { 'content-type': 'application/json' };
    const out: Attempt[] = [];
    const add = (label: string, a: Omit<Attempt, 'label' | 'method'> & { method?: InjectOptions['method'] }) =>
      out.push({ method, ...a, label });
    const fields = bodyFields(def);
    const valid = def.body ? ((sample(jsonSchema(def.body), ids) ?? {}) as Json) : {};
    const hasBody = method !== 'GET';

    add('no body', { url: base });
    if (hasBody) {
      add('valid-looking body', { url: base, payload: JSON.stringify(valid), headers: json });
      add('invalid JSON text', { url: base, payload: '{"name": "x",', headers: json });
      add('not JSON at all', { url: base, payload: 'hello world', headers: json });
      add('empty body with JSON content type', { url: base, payload: '', headers: json });
      for (const raw of ['[]', '[1,2]', '42', '"a string"', 'null', 'true', '{}'])
        add(`JSON body ${raw}`, { url: base, payload: raw, headers: json });
      add('__proto__ pollution', {
        url: base,
        payload: '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}}}',
        headers: json,
      });
      add('deeply nested body (5000)', { url: base, payload: nested(5000), headers: json });
      add('unknown extra field', {
        url: base,
        payload: JSON.stringify({ ...valid, zzUnknownField: 'x' }),
        headers: json,
      });
      add('body over the limit', {
        url: base,
        // Past the route's own limit where it declares one (agent metric batches take 2 MiB), else the server's 1 MiB.
        payload: JSON.stringify({ blob: 'x'.repeat((def.bodyLimit ?? 1_048_576) + 50_000) }),
        headers: json,
      });
      add('form content type', {
        url: base,
        payload: 'name=x&slug=y',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      add('text/plain content type', {
        url: base,
        payload: JSON.stringify(valid),
        headers: { 'content-type': 'text/plain' },
      });
      add('xml content type', { url: base, payload: '<a/>', headers: { 'content-type': 'application/xml' } });
      add('odd JSON charset', {
        url: base,
        payload: JSON.stringify(valid),
        headers: { 'content-type': 'application/json; charset=utf-16' },
      });
      add('garbage content type', { url: base, payload: '{}', headers: { 'content-type': ';;;' } });
      const allLong = Object.fromEntries(Object.keys(fields).map((k) => [k, LONG]));
      if (Object.keys(fields).length)
        add('100 KB string in every field', { url: base, payload: JSON.stringify(allLong), headers: json });
      for (const field of Object.keys(fields)) {
        for (const value of WRONG_VALUES) {
          add(`${field} = ${JSON.stringify(value)?.slice(0, 40)}`, {
            url: base,
            payload: JSON.stringify({ ...valid, [field]: value }),
            headers: json,
          });
        }
        const deep = JSON.stringify({ ...valid, [field]: '__DEEP__' }).replace('"__DEEP__"', nested(60_000));
        add(`${field} deeply nested (depth 60000)`, {
          url: base,
          payload: deep,
          headers: { ...json, ...(def.idempotent ? { 'idempotency-key': `deep-${field}` } : {}) },
        });
        add(`${field} nested 64 deep`, {
          url: base,
          payload: JSON.stringify({ ...valid, [field]: '__DEEP__' }).replace('"__DEEP__"', nested(62)),
          headers: json,
        });
        const { [field]: _omitted, ...without } = valid;
        add(`without ${field}`, { url: base, payload: JSON.stringify(without), headers: json });
      }
    } else {
      add('GET with a JSON body', { url: base, payload: '{"x":', headers: json });
    }

    if (def.params) {
      for (const name of Object.keys(params)) {
        for (const bad of BAD_PARAMS) {
          const url = fullPath({ ...def, path: def.path.replace(`:${name}`, bad) });
          add(`param ${name}=${bad.slice(0, 20)}`, {
            url,
            ...(hasBody ? { payload: JSON.stringify(valid), headers: json } : {}),
          });
        }
      }
    }

    const queryFields = def.query ? Object.keys(jsonSchema(def.query).properties ?? {}) : [];
    for (const name of [...queryFields, 'page', 'limit', 'zzUnknown']) {
      for (const bad of BAD_QUERY_VALUES)
        add(`query ${name}=${bad.slice(0, 20)}`, { url: `${base}?${name}=${encodeURIComponent(bad)}` });
      add(`query ${name} repeated`, { url: `${base}?${name}=1&${name}=2` });
      add(`query ${name}[]`, { url: `${base}?${name}[]=1&${name}[x]=2` });
    }
    add('raw bad percent-encoding in query', { url: `${base}?q=%E0%A4%A&page=%` });
    for (const range of ['from', 'to']) {
      for (const date of [
        '2024-02-30T00:00:00Z',
        '0000-01-01T00:00:00Z',
        '9999-12-31T23:59:59-23:59',
        '2024-01-01T24:00:00Z',
        '2024-01-01T00:00:00.1234567890Z',
      ]) {
        add(`query ${range}=${date}`, { url: `${base}?${range}=${encodeURIComponent(date)}` });
      }
    }
    if (def.idempotent) {
      add('idempotency key too long', {
        url: base,
        payload: JSON.stringify(valid),
        headers: { ...json, 'idempotency-key': 'k'.repeat(300) },
      });
      add('idempotency key replay', {
        url: base,
        payload: JSON.stringify(valid),
        headers: { ...json, 'idempotency-key': 'fuzz' },
      });
      add('idempotency key replay, other body', {
        url: base,
        payload: JSON.stringify({ ...valid, zz: 1 }),
        headers: { ...json, 'idempotency-key': 'fuzz' },
      });
    }
    add('garbage bearer', { url: base, headers: { authorization: 'Bearer not.a.jwt' } });
    add('garbage authorization scheme', { url: base, headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    add('garbage API key', { url: base, headers: { 'x-api-key': 'svc_garbage' } });
    return out;
  }

  it.each(ENDPOINTS)(
    'no 500 from any bad input: %s',
    async (_name, def) => {
      const problems: string[] = [];
      // An endpoint not yet bound answers 404 to everything (contract.test.ts lists those); only the
      // "below 500, one error body" rules apply to it.
      const bound = boundEndpoints(t.app).has(def);
      for (const attempt of attemptsFor(def)) {
        const headers: Record<string, string> = { ...(attempt.headers ?? {}) };
        // A fresh MFA session per request, so logout or a password change cannot lock the battery out.
        if (!def.auth.public && !headers.authorization && !headers['x-api-key'])
          headers.authorization = `Bearer ${await adminToken(t, { mfa: true })}`;
        const res = await t.app.inject({
          method: attempt.method,
          url: attempt.url,
          headers,
          ...(attempt.payload !== undefined ? { payload: attempt.payload } : {}),
        });
        const where = `${attempt.label} → ${res.statusCode}`;
        if (res.statusCode >= 500) {
          problems.push(`${where} ${res.body.slice(0, 200)}`);
          continue;
        }
        if (bound) {
          // (A throttle that answers 429 before the body is read is fine too.)
          if (
            attempt.label === 'body over the limit' &&
            ![413, 429].includes(res.statusCode) &&
            def.method !== 'GET' &&
            def.method !== 'DELETE'
          )
            problems.push(`${where} (expected 413)`);
          if (
            ['form content type', 'xml content type'].includes(attempt.label) &&
            def.body &&
            ![400, 415, 429].includes(res.statusCode)
          )
            problems.push(`${where} (expected 415 or 400)`);
          if (attempt.label === 'invalid JSON text' && res.statusCode !== 400) problems.push(`${where} (expected 400)`);
        }
        if (res.statusCode >= 400) {
          let body: unknown;
          try {
            body = JSON.parse(res.body);
          } catch {
            problems.push(`${where} error body is not JSON: ${res.body.slice(0, 100)}`);
            continue;
          }
          const parsed = z
            .looseObject({ error: z.string().min(1), code: z.string().min(1).optional() })
            .safeParse(body);
          if (!parsed.success) problems.push(`${where} error body has the wrong shape: ${res.body.slice(0, 200)}`);
          if (res.body.includes('    at ')) problems.push(`${where} error body carries a stack trace`);
        }
      }
      expect(problems, `${problems.length} problem(s):\n${problems.join('\n')}`).toEqual([]);
    },
    120_000,
  );

  it('invalid JSON answers the wire-notes message; an unknown route answers {error:"Not Found", path}', async () => {
    const token = await adminToken(t);
    const bad = await t.app.inject({
      method: 'POST',
      url: '/api/v1/orgs/partners',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ error: 'Malformed JSON in request body' });
    const unknown = await t.app.inject({ method: 'GET', url: '/api/v1/no/such/route?x=1' });
    expect(unknown.statusCode).toBe(404);
    expect(JSON.parse(unknown.body)).toEqual({ error: 'Not Found', path: '/api/v1/no/such/route' });
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/v1/orgs/partners',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(2_000_000) }),
    });
    expect(big.statusCode).toBe(413);
    expect(JSON.parse(big.body)).toMatchObject({ error: expect.any(String), code: 'PAYLOAD_TOO_LARGE' });
    const deep = await t.app.inject({
      method: 'POST',
      url: '/api/v1/orgs/sites',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: `{"orgId":"${ids.orgId}","name":"Deep","address":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`,
    });
    expect(deep.statusCode).toBe(400);
    expect(JSON.parse(deep.body)).toEqual({
      error: 'Request body is nested too deeply (at most 64 levels)',
      code: 'BODY_TOO_DEEP',
    });
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/v1/orgs/partners',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'name=x',
    });
    expect(form.statusCode).toBe(415);
    expect(JSON.parse(form.body)).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });
});
