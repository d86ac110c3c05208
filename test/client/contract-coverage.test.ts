import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as generated from '../../src/client/endpoints.js';
import { createApi, fillPath, type EndpointGroups } from '../../src/client/index.js';
import { contract, type EndpointDef } from '../../src/contract/index.js';
import type { FieldDescriptor, FieldKind } from '../../src/contract/projection.js';
import { JSON_HEADERS, harness, type Harness } from './helpers.js';

/**
 * src/client/endpoints.ts is what commands build their flags and calls from; scripts/generate.js derives it from
 * the contract through zod's JSON Schema output. These tests hold it against the contract by another route: the
 * path is written out by hand, each field is probed with zod itself (what it accepts and refuses), and every call
 * goes over the wire to a loopback server that records it.
 */

const endpoints = Object.entries(contract).flatMap(([area, group]) =>
  Object.entries(group as Record<string, EndpointDef>).map(([name, def]) => ({
    id: `${area}.${name}`,
    area,
    name,
    def,
  })),
);

interface Projected {
  area: string;
  name: string;
  method: string;
  fullPath: string;
  idempotent?: true;
  rawOnly?: true;
  query?: readonly FieldDescriptor[];
  body?: readonly FieldDescriptor[];
}

const projections = Object.fromEntries(
  Object.keys(contract).map((area) => [area, (generated as unknown as Record<string, unknown>)[area]]),
) as EndpointGroups;
const projected = (area: string, name: string) => (projections[area] as Record<string, Projected> | undefined)?.[name];

/** The properties a caller may send in an object schema, through wrappers, pipes and unions (zod's own defs). */
function propertiesOf(schema: z.ZodType): Record<string, z.ZodType> {
  const def = schema._zod.def as unknown as {
    type: string;
    shape?: Record<string, z.ZodType>;
    innerType?: z.ZodType;
    in?: z.ZodType;
    options?: z.ZodType[];
    left?: z.ZodType;
    right?: z.ZodType;
  };
  if (def.type === 'object') return { ...def.shape };
  if (def.type === 'union') return Object.assign({}, ...(def.options ?? []).map(propertiesOf));
  if (def.type === 'intersection' && def.left && def.right)
    return { ...propertiesOf(def.left), ...propertiesOf(def.right) };
  const inner = def.innerType ?? def.in;
  return inner ? propertiesOf(inner) : {};
}

/** One value of each kind: a field of kind K must refuse the values of every other kind. */
const SAMPLES: Record<FieldKind, unknown> = {
  string: 'a-string',
  integer: 2,
  number: 2.5,
  boolean: true,
  array: [],
  object: {},
};

/** The kinds a descriptor of `kind` may also accept (an integer is a number too). */
const ALSO: Partial<Record<FieldKind, FieldKind[]>> = { number: ['integer'] };

function accepts(schema: z.ZodType, value: unknown): boolean {
  return schema.safeParse(value).success;
}

/** Path parameters for a call: a UUID for every `:name`. */
function paramsFor(path: string): Record<string, string> {
  return Object.fromEntries([...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => [m[1] ?? '', randomUUID()]));
}

describe('src/client/endpoints.ts against the contract (DESIGN.md "One contract, three consumers")', () => {
  it('every contract endpoint is projected once, under its own area and name, and nothing else is', () => {
    const fromContract = endpoints.map(({ id }) => id).sort();
    const fromGenerated = Object.entries(projections)
      .flatMap(([area, group]) => Object.values(group ?? {}).map((e) => `${area}.${(e as Projected).name}`))
      .sort();
    expect(fromGenerated).toEqual(fromContract);
    for (const { area, name } of endpoints) expect(projected(area, name)).toMatchObject({ area, name });
  });

  it.each(endpoints)(
    '$id: method, path under /api/v1 (or the root), idempotency and raw answers',
    ({ area, name, def }) => {
      const p = projected(area, name);
      expect(p?.method).toBe(def.method);
      expect(p?.fullPath).toBe(def.root ? def.path : `/api/v1${def.path === '/' ? '' : def.path}`);
      expect(p?.idempotent ?? false).toBe(def.idempotent ?? false);
      const specs = Object.values(def.responses);
      expect(p?.rawOnly ?? false).toBe(specs.length > 0 && specs.every((spec) => 'raw' in spec));
    },
  );

  it.each(endpoints)(
    "$id: query and body fields are the schema's, with kinds, enums and null as zod parses them",
    ({ area, name, def }) => {
      const p = projected(area, name);
      for (const part of ['query', 'body'] as const) {
        const schema = def[part];
        const fields = p?.[part];
        if (!schema) {
          expect(fields).toBeUndefined();
          continue;
        }
        const properties = propertiesOf(schema);
        expect(fields?.map((f) => f.field).sort()).toEqual(Object.keys(properties).sort());
        for (const field of fields ?? []) {
          const zodField = properties[field.field];
          if (!zodField) continue;
          const label = `${part} field ${field.field}`;
          for (const option of field.options ?? [])
            expect(accepts(zodField, option), `${label} accepts ${option}`).toBe(true);
          if (field.options) expect(accepts(zodField, 'not-one-of-the-options'), `${label} is an enum`).toBe(false);
          // Query strings are coerced (z.coerce): only a body field says by refusals what kind it is.
          if (part === 'query' || accepts(zodField, Symbol('anything'))) continue;
          for (const [kind, sample] of Object.entries(SAMPLES) as [FieldKind, unknown][]) {
            if (kind === field.kind || ALSO[field.kind]?.includes(kind)) continue;
            expect(accepts(zodField, sample), `${label} (${field.kind}) refuses a ${kind}`).toBe(false);
          }
          expect(accepts(zodField, null), `${label} nullable`).toBe(field.nullable);
        }
      }
    },
  );
});

describe('the client sends each endpoint as the contract declares it, over the wire', () => {
  // One server for every endpoint: each call is told apart by the order of arrival.
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ retries: 1 });
  });
  afterAll(() => h.close());

  it.each(endpoints)('$id sends $def.method to its path', async ({ area, name, def }) => {
    const params = paramsFor(def.path);
    const path = fillPath(def.root ? def.path : `/api/v1${def.path === '/' ? '' : def.path}`, params);
    const before = h.calls().length;
    h.server
      .intercept({ path: (p) => p.split('?')[0] === path, method: def.method })
      .reply(200, {}, { headers: JSON_HEADERS });
    const api = createApi(h.client, projections) as unknown as Record<
      string,
      Record<string, (req: unknown) => Promise<unknown>>
    >;
    const method = api[area]?.[name];
    expect(method).toBeTypeOf('function');
    await method?.({ params, ...(def.body ? { body: { probe: 1 } } : {}) });
    const call = h.calls()[before];
    expect(call?.method).toBe(def.method);
    expect(call?.path.split('?')[0]).toBe(path);
    if (def.body) expect(JSON.parse(call?.body ?? '')).toEqual({ probe: 1 });
    expect(Boolean(call?.headers['idempotency-key'])).toBe(Boolean(def.idempotent));
  });
});
