import { describe, expect, it } from 'vitest';
import { type TestApp, useAdminApp } from '../helpers/server.js';

describe('tenancy (01 §4.3)', () => {
  let t: TestApp, token: string;
  useAdminApp((app, adminToken) => ([t, token] = [app, adminToken]));

  it('01§4.3 system caller creates and lists partners, organizations and sites', async () => {
    const partner = await t.call('POST', '/api/v1/orgs/partners', { token, body: { name: 'Acme MSP', slug: 'acme' } });
    expect(partner.status).toBe(201);
    expect(partner.body).toMatchObject({
      name: 'Acme MSP',
      slug: 'acme',
      type: 'msp',
      plan: 'free',
      status: 'active',
      deletedAt: null,
    });
    const org = await t.call('POST', '/api/v1/orgs/organizations', {
      token,
      body: { name: 'Contoso', slug: 'contoso', partnerId: partner.body.id },
    });
    expect(org.status).toBe(201);
    const site = await t.call('POST', '/api/v1/orgs/sites', { token, body: { orgId: org.body.id, name: 'HQ' } });
    expect(site.status).toBe(201);
    expect(site.body.timezone).toBe('UTC');
    const sites = await t.call('GET', `/api/v1/orgs/sites?orgId=${org.body.id}`, { token });
    expect(sites.body).toEqual({ data: [site.body], pagination: { page: 1, limit: 50, total: 1 } });
  });

  it('01§4.3 empty PATCH is 400', async () => {
    const partner = await t.call('POST', '/api/v1/orgs/partners', { token, body: { name: 'P', slug: 'p' } });
    const res = await t.call('PATCH', `/api/v1/orgs/partners/${partner.body.id}`, { token, body: {} });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('No updates provided');
  });
});
