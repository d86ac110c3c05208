import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as generated from '../../src/client/endpoints.js';
import { createApi, fillPath, type EndpointGroups } from '../../src/client/index.js';
import { contract, fullPath, type EndpointDef } from '../../src/contract/index.js';
import { projectEndpoint } from '../../src/contract/projection.js';
import { JSON_HEADERS, harness, type Harness } from './helpers.js';

const endpoints = Object.entries(contract).flatMap(([area, group]) =>
  Object.entries(group as Record<string, EndpointDef>).map(([name, def]) => ({ area, name, def })),
);

/** Path parameters for a call: a UUID for every `:name` (enough to prove the client fills the path). */
function paramsFor(def: EndpointDef): Record<string, string> {
  return Object.fromEntries([...def.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => [m[1] ?? '', randomUUID()]));
}

/** The generated projection of every area (src/client/endpoints.ts), as createApi takes it. */
const projections = Object.fromEntries(
  Object.keys(contract).map((area) => [area, (generated as unknown as Record<string, unknown>)[area]]),
) as EndpointGroups;

describe('the client derives one call per contract endpoint (DESIGN.md "One contract, three consumers")', () => {
  it.each(endpoints)(
    '$area.$name is projected into src/client/endpoints.ts as the contract says',
    ({ area, name, def }) => {
      expect(projections[area]?.[name]).toEqual(projectEndpoint(area, name, def));
    },
  );

  // One server for every endpoint: each call is told apart by the order of arrival.
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ retries: 1 });
  });
  afterAll(() => h.close());

  it('every endpoint of the contract has a client method', () => {
    const api = createApi(h.client, projections) as unknown as Record<string, Record<string, unknown>>;
    const missing = endpoints
      .filter(({ area, name }) => typeof api[area]?.[name] !== 'function')
      .map(({ area, name }) => `${area}.${name}`);
    expect(missing).toEqual([]);
  });

  it.each(endpoints)('$area.$name sends $def.method to its path', async ({ area, name, def }) => {
    const params = paramsFor(def);
    const path = fillPath(fullPath(def), params);
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
    await method?.({ params, ...(def.body ? { body: {} } : {}) });
    const call = h.calls()[before];
    expect(call?.method).toBe(def.method);
    expect(call?.path.split('?')[0]).toBe(path);
    if (def.idempotent) expect(call?.headers['idempotency-key']).toBeTruthy();
  });
});
