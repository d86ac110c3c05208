import { describe, expect, it } from 'vitest';
import { type TestApp, useTestApp } from '../helpers/server.js';
import { seedWorld, type WorldCaller } from '../helpers/seed.js';

const API = '/api/v1';

/** Issue 15 item 11: three routes the deployed service's own clients call, the spec silent on their shape. */
describe('routes the deployed service clients call (issue 15 item 11)', () => {
  let t: TestApp | undefined;
  const startApp = useTestApp();

  it('01§5.8 GET /config is public and says registration is enabled by default', async () => {
    t = await startApp();
    const res = await t.call('GET', `${API}/config`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ registration: { enabled: true }, mfa: { enabled: true } });
  });

  it('01§5.8 GET /config reflects ENABLE_REGISTRATION and ENABLE_2FA as configured', async () => {
    t = await startApp({ ENABLE_REGISTRATION: 'off', ENABLE_2FA: 'false' });
    const res = await t.call('GET', `${API}/config`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ registration: { enabled: false }, mfa: { enabled: false } });
  });

  it('issue 15 item 11: GET /auth/me answers {user}, the same user as /users/me, with the same auth', async () => {
    t = await startApp();
    const w = await seedWorld(t);
    for (const caller of ['system', 'aAdmin', 'orgUser', 'siteUser'] as WorldCaller[]) {
      const token = w.tokens[caller];
      const me = await t.call('GET', `${API}/users/me`, { token });
      const authMe = await t.call('GET', `${API}/auth/me`, { token });
      expect(me.status, caller).toBe(200);
      expect(authMe.status, caller).toBe(200);
      expect(authMe.body, caller).toEqual({ user: me.body });
    }
    expect((await t.call('GET', `${API}/auth/me`)).status).toBe(401);
    expect((await t.call('GET', `${API}/auth/me`, { token: 'nope' })).status).toBe(401);
  });

  it('issue 15 item 11: GET /audit-logs is the list of /audit-logs/logs: same filters, permissions and paging', async () => {
    t = await startApp();
    const w = await seedWorld(t);
    const app = t;
    // Some entries to list: sites created by the system administrator.
    for (let i = 0; i < 3; i += 1) {
      const res = await app.call('POST', `${API}/orgs/sites`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: `site ${i}` } });
      expect(res.status).toBe(201);
    }
    const queries = ['', '?limit=2', '?limit=2&page=2', `?orgId=${w.orgA1.id}`, '?action=site', '?from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z', '?limit=0', '?orgId=nope'];
    for (const caller of Object.keys(w.tokens) as WorldCaller[]) {
      for (const query of queries) {
        const token = w.tokens[caller];
        const logs = await app.call('GET', `${API}/audit-logs/logs${query}`, { token });
        const list = await app.call('GET', `${API}/audit-logs${query}`, { token });
        expect(list.status, `${caller} ${query}`).toBe(logs.status);
        expect(list.body, `${caller} ${query}`).toEqual(logs.body);
      }
    }
    const all = await app.call('GET', `${API}/audit-logs?limit=2`, { token: w.tokens.system });
    expect(all.status).toBe(200);
    expect(all.body.data).toHaveLength(2);
    expect((await app.call('GET', `${API}/audit-logs`)).status).toBe(401);
  });
});
