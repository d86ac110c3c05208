import { randomUUID } from 'node:crypto';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { audit, health, tenancy } from '../../src/client/endpoints.js';
import type { Partner } from '../../src/contract/tenancy.js';
import {
  ApiError,
  HttpClient,
  UnexpectedResponseError,
  call,
  callWithResponse,
  createApi,
  type Api,
  type HttpResponse,
  type RawBody,
} from '../../src/client/index.js';
import { JSON_HEADERS, header, useHarness } from './helpers.js';

const setup = useHarness();

function partner(id: string, overrides: Partial<Partner> = {}): Partner {
  return {
    id,
    name: 'Acme MSP',
    slug: 'acme',
    type: 'msp',
    plan: 'pro',
    status: 'active',
    maxOrganizations: null,
    maxDevices: null,
    settings: {},
    ssoConfig: null,
    billingEmail: null,
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    deletedAt: null,
    ...overrides,
  };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('createApi over the tenancy contract', () => {
  it('api.tenancy.getPartner fills the path under /api/v1 and returns the typed body', async () => {
    const { server, client, calls } = await setup();
    const api = createApi(client, { tenancy });
    const id = randomUUID();
    server.intercept({ path: `/api/v1/orgs/partners/${id}` }).reply(200, partner(id), { headers: JSON_HEADERS });

    const got = await api.tenancy.getPartner({ params: { id } });

    expectTypeOf(got).toEqualTypeOf<Partner>();
    expect(got.slug).toBe('acme');
    expect(calls()[0]?.method).toBe('GET');
  });

  it('types requests from the contract', () => {
    // Nothing is sent: the client only has to exist.
    const client = new HttpClient({ baseUrl: 'http://127.0.0.1:9' });
    const api: Api<{ tenancy: typeof tenancy }> = createApi(client, { tenancy });
    // params are required where the path has them; nothing is required where nothing is declared
    expectTypeOf(api.tenancy.getPartner).toBeCallableWith({ params: { id: randomUUID() } });
    expectTypeOf(api.tenancy.getMyPartner).toBeCallableWith();
    expectTypeOf(api.tenancy.listPartners).toBeCallableWith({ query: { page: 2 } });
    expectTypeOf(api.tenancy.createSite).toBeCallableWith({ body: { orgId: randomUUID(), name: 'HQ' } });
    expectTypeOf(api.tenancy.listSites).returns.resolves.toHaveProperty('pagination');
    // @ts-expect-error getPartner needs its id
    void (() => api.tenancy.getPartner());
    // @ts-expect-error createPartner needs a body
    void (() => api.tenancy.createPartner({}));
    expectTypeOf(api.tenancy).not.toHaveProperty('nope');
  });

  it('sends the query of a list call and encodes path parameters', async () => {
    const { server, client, calls } = await setup();
    const api = createApi(client, { tenancy });
    const orgId = randomUUID();
    server
      .intercept({ path: `/api/v1/orgs/sites?orgId=${orgId}&page=2&limit=10` })
      .reply(200, { data: [], pagination: { page: 2, limit: 10, total: 0 } }, { headers: JSON_HEADERS });

    const page = await api.tenancy.listSites({ query: { orgId, page: 2, limit: 10 } });
    expect(page.pagination.total).toBe(0);
    expect(calls()[0]?.searchParams).toEqual({ orgId, page: '2', limit: '10' });
  });

  it('sends a fresh Idempotency-Key for endpoints that create, and retries them with the same key', async () => {
    const { server, client, calls } = await setup();
    const api = createApi(client, { tenancy });
    const id = randomUUID();
    server
      .intercept({ path: '/api/v1/orgs/partners', method: 'POST' })
      .reply(503, { error: 'busy' }, { headers: JSON_HEADERS });
    server
      .intercept({ path: '/api/v1/orgs/partners', method: 'POST' })
      .reply(201, partner(id), { headers: JSON_HEADERS });
    server
      .intercept({ path: '/api/v1/orgs/partners', method: 'POST' })
      .reply(201, partner(id), { headers: JSON_HEADERS });

    await api.tenancy.createPartner({ body: { name: 'Acme MSP', slug: 'acme' } });
    await api.tenancy.createPartner({ body: { name: 'Acme MSP', slug: 'acme' } });

    const keys = calls().map((log) => header(log, 'idempotency-key'));
    expect(keys[0]).toMatch(UUID_RE);
    expect(keys[1]).toBe(keys[0]);
    expect(keys[2]).toMatch(UUID_RE);
    expect(keys[2]).not.toBe(keys[0]);
    expect(calls()[0]?.body).toBe('{"name":"Acme MSP","slug":"acme"}');
  });

  it('uses the caller’s Idempotency-Key when one is given (--idempotency-key)', async () => {
    const { server, client, calls } = await setup();
    const id = randomUUID();
    server
      .intercept({ path: '/api/v1/orgs/partners', method: 'POST' })
      .reply(201, partner(id), { headers: JSON_HEADERS });

    await call(client, tenancy.createPartner, {
      body: { name: 'Acme', slug: 'acme' },
      headers: { 'Idempotency-Key': 'ci-step-42' },
    });
    expect(header(calls()[0], 'idempotency-key')).toBe('ci-step-42');
  });

  it('sends no Idempotency-Key for endpoints that do not create, and does not retry their PATCH', async () => {
    const { server, client, calls } = await setup();
    const id = randomUUID();
    server
      .intercept({ path: `/api/v1/orgs/partners/${id}`, method: 'PATCH' })
      .reply(503, { error: 'busy' }, { headers: JSON_HEADERS });

    await expect(call(client, tenancy.updatePartner, { params: { id }, body: { name: 'New' } })).rejects.toBeInstanceOf(
      ApiError,
    );
    expect(calls()).toHaveLength(1);
    expect(header(calls()[0], 'idempotency-key')).toBeUndefined();
  });

  it('maps the error body to ApiError', async () => {
    const { server, client } = await setup();
    const id = randomUUID();
    server
      .intercept({ path: `/api/v1/orgs/partners/${id}` })
      .reply(404, { error: 'Partner not found', code: 'NOT_FOUND' }, { headers: JSON_HEADERS });

    await expect(call(client, tenancy.getPartner, { params: { id } })).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
      message: 'Partner not found',
    });
  });

  it('does not validate responses by default, and does with { validate: true }', async () => {
    const { server, client } = await setup();
    const id = randomUUID();
    const extra = { ...partner(id), passwordHash: 'leak', name: 42 };
    server
      .intercept({ path: `/api/v1/orgs/partners/${id}` })
      .reply(200, extra, { headers: JSON_HEADERS })
      .times(2);

    expect(await call(client, tenancy.getPartner, { params: { id } })).toEqual(extra);
    const error = await call(client, tenancy.getPartner, { params: { id } }, { validate: true }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as UnexpectedResponseError).issues).toEqual([expect.objectContaining({ path: ['name'] })]);
  });

  it('strips unknown fields when validating a good response, and exposes status and headers', async () => {
    const { server, client } = await setup();
    const id = randomUUID();
    server
      .intercept({ path: `/api/v1/orgs/partners/${id}` })
      .reply(200, { ...partner(id), extra: true }, { headers: { ...JSON_HEADERS, etag: 'W/"1"' } });

    const res = await callWithResponse(client, tenancy.getPartner, { params: { id } }, { validate: true });
    expect(res.status).toBe(200);
    expect(res.headers.etag).toBe('W/"1"');
    expect(res.body).toEqual(partner(id));
  });

  it('returns the unread response for raw-only endpoints', async () => {
    const { server, client } = await setup();
    server
      .intercept({ path: '/api/v1/audit-logs/export?format=csv' })
      .reply(200, 'a\n1\n', { headers: { 'content-type': 'text/csv' } });

    const api = createApi(client, { audit });
    const res = await api.audit.export({ query: { format: 'csv' } });
    expectTypeOf(res).toEqualTypeOf<HttpResponse<RawBody>>();
    expect(await res.body.text()).toBe('a\n1\n');
  });

  it('serves root paths outside /api/v1', async () => {
    const { server, client } = await setup();
    server.intercept({ path: '/health' }).reply(200, { status: 'ok' }, { headers: JSON_HEADERS });

    const api = createApi(client, { health });
    expect(await api.health.live()).toEqual({ status: 'ok' });
  });
});
