import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { pagedSchema } from '../../src/contract/common.js';
import { endpoint, isRawResponse, type EndpointDef } from '../../src/contract/endpoint.js';
import { contract } from '../../src/contract/index.js';
import { SiteSchema } from '../../src/contract/tenancy.js';
import { bind, type BindDeps } from '../../src/server/http/bind.js';
import { systemContext } from '../../src/server/context.js';
import { installErrorHandler } from '../../src/server/http/error-handler.js';
import { freezeDeep } from '../../src/server/lib/read-cache.js';
import { compileStrip } from '../../src/server/lib/schema-strip.js';

const SITE = {
  id: '3f0c8a52-7f5e-4d52-9a51-0b6f2f1c9d11',
  orgId: '8d7b0a9e-52a1-4c44-8f1a-7a1c2b3d4e5f',
  name: 'Berlin',
  address: { city: 'Berlin', street: 'Unter den Linden 1' },
  timezone: 'Europe/Berlin',
  contact: null,
  settings: { tags: ['hq'], nested: { deep: true } },
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-02T00:00:00.000Z',
};

/** A value of the schema's type (first option of a union, first enum value, ...) with an unlisted field in
 * every object the schema lists fields for; undefined when the schema has a node this does not build. */
function sampleOf(schema: z.ZodType, depth = 0): { value: unknown } | undefined {
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string };
  const inner = (key: string) => sampleOf(def[key] as z.ZodType, depth + 1);
  if (depth > 12) return undefined;
  switch (def.type) {
    case 'object': {
      const out: Record<string, unknown> = { unlistedSecret: 'must not leave', keyHash: 'ab'.repeat(32) };
      for (const [key, field] of Object.entries(def.shape as Record<string, z.ZodType>)) {
        const sample = sampleOf(field, depth + 1);
        if (!sample) return undefined;
        if (sample.value !== undefined) out[key] = sample.value;
      }
      return { value: out };
    }
    case 'array': {
      const element = inner('element');
      return element && { value: [element.value, element.value] };
    }
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
      return inner('innerType');
    case 'pipe':
      return inner('in');
    case 'union':
      return sampleOf((def.options as z.ZodType[])[0] as z.ZodType, depth + 1);
    case 'string': {
      const format = def.format as string | undefined;
      if (format === 'uuid') return { value: SITE.id };
      if (format === 'datetime') return { value: SITE.createdAt };
      if (format === 'email') return { value: 'someone@example.test' };
      if (format === 'url') return { value: 'https://example.test/' };
      return { value: 'text' };
    }
    case 'number':
      return { value: 7 };
    case 'boolean':
      return { value: true };
    case 'null':
      return { value: null };
    case 'enum':
      return { value: Object.values(def.entries as Record<string, unknown>)[0] };
    case 'literal':
      return { value: (def.values as unknown[])[0] };
    case 'record':
      return { value: { free: 'form', unlistedSecret: 'kept, as zod keeps it' } };
    case 'unknown':
    case 'any':
      return { value: { anything: [1, 2] } };
    default:
      return undefined;
  }
}

function responseSchemas(): [string, z.ZodType][] {
  const out: [string, z.ZodType][] = [];
  for (const [area, endpoints] of Object.entries(contract as unknown as Record<string, Record<string, EndpointDef>>)) {
    for (const [name, def] of Object.entries(endpoints)) {
      for (const [status, spec] of Object.entries(def.responses)) {
        if (spec && !isRawResponse(spec)) out.push([`${area}.${name} ${status}`, spec]);
      }
    }
  }
  return out;
}

describe('response strip (DESIGN.md: response schemas strip every field they do not list)', () => {
  it('drops fields the schema does not list, at every depth, exactly as zod parse does', () => {
    const schema = pagedSchema(SiteSchema);
    const value = {
      data: [
        { ...SITE, keyHash: 'secret-hash', password: 'hunter2' },
        { ...SITE, id: '5b2e1d3c-9a8f-4e7d-8c6b-5a4f3e2d1c0b', internal: { token: 't' } },
      ],
      pagination: { page: 1, limit: 50, total: 2, sql: 'select *' },
      debug: { query: 'select *' },
    };
    const stripped = compileStrip(schema)(value);
    expect(JSON.stringify(stripped)).toBe(JSON.stringify(schema.parse(value)));
    const text = JSON.stringify(stripped);
    for (const unlisted of ['keyHash', 'secret-hash', 'password', 'internal', 'debug', 'sql'])
      expect(text).not.toContain(unlisted);
    expect(Object.keys((stripped as { data: object[] }).data[0] ?? {})).toEqual(Object.keys(SiteSchema.shape));
    // Free-form JSON (z.record of unknown) passes whole, as zod passes it.
    expect((stripped as { data: { settings: unknown }[] }).data[0]?.settings).toEqual(SITE.settings);
  });

  it('gives what zod parse gives for every response schema of the contract', () => {
    let compared = 0;
    for (const [name, schema] of responseSchemas()) {
      const sample = sampleOf(schema);
      if (!sample) continue;
      const parsed = schema.safeParse(sample.value);
      if (!parsed.success) continue;
      expect(JSON.stringify(compileStrip(schema)(sample.value)), name).toBe(JSON.stringify(parsed.data));
      compared++;
    }
    // Most of the contract is compared (a schema whose sample zod refuses, e.g. a regex, is skipped).
    expect(compared).toBeGreaterThan(responseSchemas().length * 0.8);
  });

  it('refuses a value of the wrong type with a ZodError (a server bug: 500), never passing it through', () => {
    const strip = compileStrip(SiteSchema);
    expect(() => strip({ ...SITE, name: { secret: 'object where a string is declared' } })).toThrow(z.ZodError);
    expect(() => strip({ ...SITE, timezone: undefined })).toThrow(z.ZodError);
    expect(() => strip({ ...SITE, address: ['not', 'an', 'object'] })).toThrow(z.ZodError);
    expect(() => strip([SITE])).toThrow(z.ZodError);
    expect(() => compileStrip(z.object({ status: z.enum(['ok']) }))({ status: 'other' })).toThrow(z.ZodError);
  });

  it('leaves nodes that rewrite values to zod (transforms, defaults, trims, loose objects, unions)', () => {
    const schema = z.object({
      trimmed: z.string().trim(),
      defaulted: z.string().default('d'),
      piped: z.string().transform((s) => s.length),
      loose: z.object({ a: z.string() }).loose(),
      either: z.union([z.object({ kind: z.literal('a'), a: z.string() }), z.object({ kind: z.literal('b') })]),
    });
    const value = {
      trimmed: '  x  ',
      piped: 'abc',
      loose: { a: 'a', extra: 1 },
      either: { kind: 'a', a: 'x', hidden: 1 },
    };
    expect(compileStrip(schema)(value)).toEqual(schema.parse(value));
  });
});

describe('bind serializes responses through the strip', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const deps: BindDeps = {
    guard: async (request) => systemContext(request.id),
    idempotency: async (_request, _reply, _ctx, run) => ({ ...(await run()), replayed: false }),
  };
  const def = endpoint({
    method: 'GET',
    path: '/strip-probe',
    responses: { 200: pagedSchema(SiteSchema) },
    auth: { public: true },
    summary: 'test only',
  });

  it('a handler that returns unlisted fields (a row with its hash) sends only the listed ones', async () => {
    app = Fastify({ logger: false });
    installErrorHandler(app);
    bind(app, deps, def, () => ({
      data: [{ ...SITE, keyHash: 'secret-hash' }] as unknown as z.infer<typeof SiteSchema>[],
      pagination: { page: 1, limit: 50, total: 1 },
    }));
    const res = await app.inject({ method: 'GET', url: '/api/v1/strip-probe' });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('secret-hash');
    expect(res.json()).toEqual({ data: [SITE], pagination: { page: 1, limit: 50, total: 1 } });
  });

  it('a result frozen deep (a kept page) is stripped the same and sent as the same bytes, each time', async () => {
    const value = () => ({
      data: [{ ...SITE, keyHash: 'secret-hash' }] as unknown as z.infer<typeof SiteSchema>[],
      pagination: { page: 1, limit: 50, total: 1 },
    });
    const kept = freezeDeep(value());
    app = Fastify({ logger: false });
    installErrorHandler(app);
    bind(app, deps, def, () => value());
    bind(app, deps, { ...def, path: '/strip-probe-kept' }, () => kept);
    const fresh = await app.inject({ method: 'GET', url: '/api/v1/strip-probe' });
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({ method: 'GET', url: '/api/v1/strip-probe-kept' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(fresh.headers['content-type']);
      expect(res.body).toBe(fresh.body);
      expect(res.body).not.toContain('secret-hash');
    }
  });

  it('a handler whose value does not match the schema gets a 500 without the value', async () => {
    app = Fastify({ logger: false });
    installErrorHandler(app);
    bind(app, deps, def, () => ({
      data: [{ ...SITE, name: { passwordHash: 'leak' } }] as unknown as z.infer<typeof SiteSchema>[],
      pagination: { page: 1, limit: 50, total: 1 },
    }));
    const res = await app.inject({ method: 'GET', url: '/api/v1/strip-probe' });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain('leak');
  });
});
