import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';

const API = '/api/v1';

/** http/bind.ts looks a kept GET answer up by the raw parameters and query, after the guard and before parsing:
 * these prove that no kept answer skips authentication, authorization or validation. */
describe('kept GET answers: looked up after the guard, by raw input (http/bind.ts)', () => {
  let t: TestApp;
  let w: World;
  const keyWith = async (scopes: string[]) => {
    const res = await t.call('POST', `${API}/api-keys`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: 'k', scopes } });
    expect(res.status).toBe(201);
    return res.body.key as string;
  };

  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  it('DESIGN "Errors" bad parameters and query stay 400 while a valid answer of the route is kept', async () => {
    const key = await keyWith(['sites:read']);
    for (let round = 0; round < 2; round++) {
      const ok = await t.call('GET', `${API}/orgs/sites?limit=1`, { apiKey: key });
      expect(ok.status).toBe(200);
      expect(ok.body.pagination).toMatchObject({ limit: 1, total: 2 });
      for (const bad of ['?orgId=not-a-uuid', '?organizationId=42']) {
        const res = await t.call('GET', `${API}/orgs/sites${bad}`, { apiKey: key });
        expect(res.status, bad).toBe(400);
        expect(res.body.code, bad).toBe('VALIDATION_ERROR');
      }
      expect((await t.call('GET', `${API}/orgs/sites/not-a-uuid`, { apiKey: key })).status).toBe(400);
    }
    // Out-of-range paging is clamped (01 §4), kept or not.
    const clamped = await t.call('GET', `${API}/orgs/sites?limit=0`, { apiKey: key });
    expect(clamped.body.pagination).toMatchObject({ limit: 1 });
    // The same query in another order is its own entry, with the same answer.
    const ab = await t.call('GET', `${API}/orgs/sites?limit=1&page=2`, { apiKey: key });
    const ba = await t.call('GET', `${API}/orgs/sites?page=2&limit=1`, { apiKey: key });
    expect(ab.status).toBe(200);
    expect(ba.text).toBe(ab.text);
  });

  it('01§5.4 a key without the scope is refused while another key of the organization has its answer kept', async () => {
    const reader = await keyWith(['sites:read']);
    const other = await keyWith(['devices:read']);
    for (let round = 0; round < 2; round++) {
      expect((await t.call('GET', `${API}/orgs/sites`, { apiKey: reader })).status).toBe(200);
      const refused = await t.call('GET', `${API}/orgs/sites`, { apiKey: other });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('INSUFFICIENT_SCOPE');
    }
    const unknown = await t.call('GET', `${API}/orgs/sites`, { apiKey: `svc_${'x'.repeat(32)}` });
    expect(unknown.status).toBe(401);
  });

  it('01§5.6 an answer served from the cache still carries the key window headers, counting down', async () => {
    const key = await keyWith(['sites:read']);
    const first = await t.call('GET', `${API}/orgs/sites`, { apiKey: key });
    const second = await t.call('GET', `${API}/orgs/sites`, { apiKey: key });
    expect(second.text).toBe(first.text);
    expect(Number(second.headers['x-ratelimit-remaining'])).toBe(Number(first.headers['x-ratelimit-remaining']) - 1);
  });
});
