import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { contract, fullPath, requiredPermissions, type CallerScope, type EndpointDef } from '../../src/contract/index.js';
import { NAMED_PERMISSIONS } from '../../src/contract/roles.js';
import { BUILTIN_ROLES } from '../../src/server/modules/identity/builtin-roles.js';
import { createTestApp, type TestApp } from '../helpers/server.js';
import { seedOrg, seedPartner, seedRole, seedUser, type World } from '../helpers/seed.js';

/**
 * Generated from the contract: every endpoint that declares `auth.permission` — in every area, including
 * the ones added after this file was written — is called by users whose role lacks one of its permissions (403
 * `Permission denied`) and by one whose role holds only them (not refused for want of a permission or MFA).
 */

interface Entry {
  name: string;
  def: EndpointDef;
}

const ENDPOINTS: Entry[] = Object.entries(contract as unknown as Record<string, Record<string, EndpointDef>>).flatMap(
  ([area, endpoints]) => Object.entries(endpoints).map(([name, def]) => ({ name: `${area}.${name}`, def })),
);

const GUARDED = ENDPOINTS.filter(({ def }) => def.auth.permission !== undefined && !def.auth.public && !def.auth.agent);

type TenantScope = Exclude<CallerScope, 'system'>;

/** A tenant caller scope the endpoint allows (partner first), or null when only system callers may call it. */
function tenantScopeFor(def: EndpointDef): TenantScope | null {
  const allowed = def.auth.callerScopes ?? ['system', 'partner', 'organization'];
  if (allowed.includes('partner')) return 'partner';
  if (allowed.includes('organization')) return 'organization';
  return null;
}

/** The request: every path parameter a fresh UUID, an empty JSON object as body where one is declared. */
function requestFor(def: EndpointDef): { method: EndpointDef['method']; url: string; body?: unknown } {
  const url = fullPath(def).replace(/:([A-Za-z0-9_]+)/g, () => randomUUID());
  return def.body ? { method: def.method, url, body: {} } : { method: def.method, url };
}

/** A custom role, written straight into the database, owned by the partner or organization. */
function customRole(t: TestApp, scope: TenantScope, owner: { partnerId: string; orgId: string }, permissions: readonly string[]): string {
  return seedRole(t, { scope, partnerId: scope === 'partner' ? owner.partnerId : null, orgId: scope === 'organization' ? owner.orgId : null, permissions });
}

async function tenantUser(
  t: TestApp,
  scope: TenantScope,
  owner: { partnerId: string; orgId: string },
  email: string,
  roleId: string,
): Promise<string> {
  const link = scope === 'partner' ? { partner: { partnerId: owner.partnerId, roleId, orgAccess: 'all' as const } } : { org: { orgId: owner.orgId, roleId } };
  const user = await seedUser(t, { email, ...link, login: 'mint', mfa: true });
  return user.token;
}

const REFUSED_FOR_PERMISSION = ['Permission denied', 'MFA required'];

describe('01§2.8 every permission-guarded endpoint of the contract (generated)', () => {
  it('01§2.8 the contract has guarded endpoints, each naming a resource:action permission', () => {
    expect(GUARDED.length).toBeGreaterThan(40);
    for (const { name, def } of GUARDED) {
      const needed = requiredPermissions(def.auth);
      expect(needed.length, name).toBeGreaterThan(0);
      for (const permission of needed) expect({ name, permission }).toEqual({ name, permission: expect.stringMatching(/^[a-z_*]+:[a-z_*]+$/) });
    }
  });

  it('01§4.9 the elevation audit export declares both permissions it needs: devices:read and audit:export', () => {
    expect(requiredPermissions(contract.pam.exportAudit.auth)).toEqual(['devices:read', 'audit:export']);
  });

  for (const { name, def } of GUARDED) {
    const scope = tenantScopeFor(def);
    const needed = requiredPermissions(def.auth);
    const title = `${name} (${def.method} ${def.path}) needs ${needed.join(' and ')}`;
    if (scope === null) {
      it(`01§2.8 ${title}: only system callers, and no tenant caller gets through`, async () => {
        const t = await createTestApp();
        try {
          const partner = seedPartner(t, { name: 'P', slug: 'p' });
          const org = seedOrg(t, partner.id, { name: 'O', slug: 'o' });
          const token = await tenantUser(t, 'partner', { partnerId: partner.id, orgId: org.id }, 'admin@p.test', BUILTIN_ROLES[0]?.id ?? '');
          const req = requestFor(def);
          const res = await t.call(req.method, req.url, { token, body: req.body });
          expect(res.status).toBe(403);
        } finally {
          await t.close();
        }
      });
      continue;
    }
    it(`01§2.8 ${title}: 403 without it, not refused with only it (${scope} caller)`, async () => {
      const t = await createTestApp();
      try {
        const partner = seedPartner(t, { name: 'P', slug: 'p' });
        const org = seedOrg(t, partner.id, { name: 'O', slug: 'o' });
        const owner = { partnerId: partner.id, orgId: org.id };
        const req = requestFor(def);
        // Without one of them: every other named permission, so nothing but that one is missing.
        for (const [i, missing] of needed.entries()) {
          const without = customRole(t, scope, owner, NAMED_PERMISSIONS.filter((p) => p !== missing));
          const deniedToken = await tenantUser(t, scope, owner, `without${i}@p.test`, without);
          const refused = await t.call(req.method, req.url, { token: deniedToken, body: req.body });
          expect({ missing, status: refused.status, error: refused.body?.error }).toEqual({ missing, status: 403, error: 'Permission denied' });
        }
        const only = customRole(t, scope, owner, needed);
        const allowedToken = await tenantUser(t, scope, owner, 'only@p.test', only);

        const passed = await t.call(req.method, req.url, { token: allowedToken, body: req.body });
        expect(passed.status, passed.text).not.toBe(401);
        expect(passed.status, passed.text).toBeLessThan(500);
        const refusedForPermission = passed.status === 403 && REFUSED_FOR_PERMISSION.includes(passed.body?.error as string);
        expect(refusedForPermission, `${title}: ${passed.status} ${passed.text}`).toBe(false);
      } finally {
        await t.close();
      }
    });
  }
});

describe('01§2.8 permissions in practice', () => {
  let t: TestApp, w: World;
  useWorld({ mfa: true }, (app, world) => ([t, w] = [app, world]));

  it('01§2.8 a technician whose custom role lacks users:write is refused on every users:write route', async () => {
    const technician = BUILTIN_ROLES.find((r) => r.name === 'Partner Technician')?.permissions ?? [];
    expect(technician).not.toContain('users:write');
    const roleId = customRole(t, 'partner', { partnerId: w.partnerA.id, orgId: w.orgA1.id }, [...technician, 'users:invite', 'users:delete']);
    const token = await tenantUser(t, 'partner', { partnerId: w.partnerA.id, orgId: w.orgA1.id }, 'tech2@a.test', roleId);
    const routes = GUARDED.filter(({ def }) => def.auth.permission === 'users:write');
    expect(routes.length).toBeGreaterThanOrEqual(10);
    for (const { name, def } of routes) {
      const req = requestFor(def);
      const res = await t.call(req.method, req.url, { token, body: req.body });
      expect({ name, status: res.status, error: res.body?.error }).toEqual({ name, status: 403, error: 'Permission denied' });
    }
    // The same caller still reads.
    expect((await t.call('GET', '/api/v1/users', { token })).status).toBe(200);
  });

  it('01§2.6 an organization user restricted to some sites sees only those', async () => {
    const list = await t.call('GET', '/api/v1/orgs/sites', { token: w.tokens.siteUser });
    expect(list.status).toBe(200);
    expect((list.body.data as { id: string }[]).map((s) => s.id)).toEqual([w.siteA1a.id]);
    expect((await t.call('GET', `/api/v1/orgs/sites/${w.siteA1a.id}`, { token: w.tokens.siteUser })).status).toBe(200);
    for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'Mine now' }], ['DELETE', undefined]] as const) {
      const res = await t.call(method, `/api/v1/orgs/sites/${w.siteA1b.id}`, { token: w.tokens.siteUser, ...(body ? { body } : {}) });
      expect({ method, status: res.status, error: res.body?.error }).toEqual({ method, status: 403, error: 'Access to this site denied' });
    }
    // An unrestricted user of the same organization sees both.
    const all = await t.call('GET', '/api/v1/orgs/sites', { token: w.tokens.orgUser });
    expect((all.body.data as { id: string }[]).map((s) => s.id).sort()).toEqual([w.siteA1a.id, w.siteA1b.id].sort());
  });

  it('01§3 a disabled user loses access at once: the existing access token is refused on the next request', async () => {
    expect((await t.call('GET', '/api/v1/users', { token: w.tokens.orgUser })).status).toBe(200);
    const res = await t.call('PATCH', `/api/v1/users/${w.users.orgUser.id}`, { token: w.tokens.aAdmin, body: { status: 'disabled' } });
    expect(res.status).toBe(200);
    for (const url of ['/api/v1/users', '/api/v1/users/me', '/api/v1/roles']) {
      const after = await t.call('GET', url, { token: w.tokens.orgUser });
      expect({ url, status: after.status }).toEqual({ url, status: 401 });
    }
    const login = await t.call('POST', '/api/v1/auth/login', { body: { email: 'org-admin@a1.test', password: w.users.orgUser.password } });
    expect(login.status).toBe(401);
  });
});
