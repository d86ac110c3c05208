import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contract, type EndpointDef } from '../../src/contract/index.js';
import { buildOpenApi } from '../../src/contract/openapi.js';
import { boundEndpoints } from '../../src/server/http/bind.js';
import { VERSION } from '../../src/server/version.js';
import { createTestApp, type TestApp } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const COMMITTED = path.join(ROOT, 'docs/openapi.json');

function contractEndpoints(): Map<EndpointDef, string> {
  const out = new Map<EndpointDef, string>();
  for (const [area, endpoints] of Object.entries(contract as unknown as Record<string, Record<string, EndpointDef>>)) {
    for (const [name, def] of Object.entries(endpoints)) out.set(def, `${area}.${name} (${def.method} ${def.path})`);
  }
  return out;
}

describe('contract and server agree (DESIGN.md "One contract, three consumers")', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(async () => t.close());

  it('contract: every bound route is declared in the contract', () => {
    const declared = contractEndpoints();
    const extra = [...boundEndpoints(t.app)]
      .filter((def) => !declared.has(def))
      .map((def) => `${def.method} ${def.path}`);
    expect(extra, `routes bound on the server but missing from src/contract: ${extra.join(', ')}`).toEqual([]);
  });

  it('contract: every endpoint in the contract has a bound server route', () => {
    const bound = boundEndpoints(t.app);
    const unbound = [...contractEndpoints()].filter(([def]) => !bound.has(def)).map(([, name]) => name);
    expect(
      unbound,
      `${unbound.length} contract endpoint(s) have no server route yet:\n  ${unbound.join('\n  ')}`,
    ).toEqual([]);
  });

  it('contract: no two endpoints share a method and path', () => {
    const seen = new Map<string, string>();
    const clashes: string[] = [];
    for (const [def, name] of contractEndpoints()) {
      const key = `${def.method} ${def.root ? '' : '/api/v1'}${def.path.replace(/:[A-Za-z0-9_]+/g, ':p').replace(/\/$/, '')}`;
      const prior = seen.get(key);
      if (prior) clashes.push(`${prior} and ${name}`);
      seen.set(key, name);
    }
    expect(clashes).toEqual([]);
  });

  it('contract: the served OpenAPI document is buildOpenApi(contract) at both paths, and docs/openapi.json is current', async () => {
    const expected = buildOpenApi(contract, VERSION);
    for (const url of ['/api/v1/openapi.json', '/api/v1/docs/openapi.json']) {
      const res = await t.call('GET', url);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(JSON.parse(JSON.stringify(expected)));
    }
    expect(fs.existsSync(COMMITTED), 'docs/openapi.json is missing: run npm run generate').toBe(true);
    const committed: unknown = JSON.parse(fs.readFileSync(COMMITTED, 'utf8'));
    const current: unknown = JSON.parse(JSON.stringify(expected));
    expect(committed, 'docs/openapi.json is stale: run npm run generate').toEqual(current);
  });

  it('contract: every operation has a summary, a success response (2xx, or a 3xx redirect) and the error body', () => {
    const doc = buildOpenApi(contract, VERSION) as {
      paths: Record<string, Record<string, { summary?: string; responses: Record<string, unknown> }>>;
    };
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect({ op: `${method} ${p}`, summary: Boolean(op.summary) }).toEqual({ op: `${method} ${p}`, summary: true });
        expect(Object.keys(op.responses)).toContain('default');
        expect(Object.keys(op.responses).some((s) => /^[23]\d\d$/.test(s))).toBe(true);
      }
    }
  });
});
