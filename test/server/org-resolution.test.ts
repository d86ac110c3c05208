import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { seedWorld, type World } from '../helpers/seed.js';

const API = '/api/v1';

/** Creates of documents 02 and 03 that take an optional orgId, with a body valid but for the organization. */
const WRITES: [path: string, body: Record<string, unknown>][] = [
  ['/scripts', { name: 'Uptime', osTypes: ['windows'], language: 'powershell', content: 'Get-Date' }],
  ['/alerts/channels', { name: 'Ops mail', type: 'email', config: { recipients: ['ops@a1.test'] } }],
  [
    '/alerts/policies',
    { name: 'Page ops', steps: [{ delayMinutes: 15, channelIds: ['11111111-1111-4111-8111-111111111111'] }] },
  ],
  [
    '/webhooks',
    { name: 'Hook', url: 'https://127.0.0.1:9/in', secret: 'hook-secret-0123456789', events: ['user.deleted'] },
  ],
  ['/groups', { name: 'Servers' }],
];

/**
 * 05 wire notes "Org resolution (common)": every write of documents 02 and 03 that names an organization resolves
 * it by the one rule (tenancy/access.ts resolveWriteOrg), whichever module serves it.
 */
describe('05 Org resolution (common) across the modules', () => {
  let t: TestApp;
  let w: World;
  const post = (token: string, path: string, body: Record<string, unknown>) =>
    t.call('POST', `${API}${path}`, { token, body });

  beforeEach(async () => {
    t = await createTestApp({ SVC_OUTBOUND_ALLOW: '127.0.0.1/32' });
    w = await seedWorld(t, { mfa: true });
  });
  afterEach(async () => t.close());

  it.each(WRITES)(
    '05 Org resolution: POST %s without orgId — system 400, a multi-org partner 400, a partner of none 403',
    async (path, body) => {
      const system = await post(w.tokens.system, path, body);
      expect([system.status, system.body.error, system.body.code], system.text).toEqual([
        400,
        'orgId is required',
        'ORG_ID_REQUIRED',
      ]);
      const many = await post(w.tokens.aAdmin, path, body);
      expect([many.status, many.body.error, many.body.code], many.text).toEqual([
        400,
        'orgId is required when partner has multiple organizations',
        'ORG_ID_REQUIRED',
      ]);
      const none = await post(w.tokens.aNone, path, body);
      expect([none.status, none.body.code], none.text).toEqual([403, 'ORG_CONTEXT_REQUIRED']);
    },
  );

  // (An Org Admin may not write webhooks at all: the guard refuses it before the organization is resolved.)
  it.each(WRITES.filter(([path]) => path !== '/webhooks'))(
    '05 Org resolution: POST %s by an organization caller naming another organization is 403',
    async (path, body) => {
      const cross = await post(w.tokens.orgUser, path, { ...body, orgId: w.orgB1.id });
      expect([cross.status, cross.body.error, cross.body.code], cross.text).toEqual([
        403,
        'Access to this organization denied',
        'ORG_ACCESS_DENIED',
      ]);
    },
  );

  it("05 Org resolution: a partner's only organization is taken, and an organization caller's own", async () => {
    const [path, body] = ['/alerts/channels', { name: 'Ops mail', type: 'email', config: { recipients: ['ops@a1.test'] } }] as const;
    const single = await post(w.tokens.aSelAdmin, path, body);
    expect(single.status, single.text).toBe(201);
    expect(single.body.orgId).toBe(w.orgA1.id);
    const own = await post(w.tokens.orgUser, path, { ...body, name: 'Own mail' });
    expect(own.status, own.text).toBe(201);
    expect(own.body.orgId).toBe(w.orgA1.id);
  });

  it('02§4.5 saved filters: a partner must give orgId even when it reaches one organization', async () => {
    const body = {
      name: 'Windows',
      conditions: { operator: 'AND', conditions: [{ field: 'osType', operator: 'equals', value: 'windows' }] },
    };
    const single = await post(w.tokens.aSelAdmin, '/filters', body);
    expect([single.status, single.body.error, single.body.code], single.text).toEqual([
      400,
      'orgId is required',
      'ORG_ID_REQUIRED',
    ]);
    const given = await post(w.tokens.aSelAdmin, '/filters', { ...body, orgId: w.orgA1.id });
    expect(given.status, given.text).toBe(201);
  });
});
