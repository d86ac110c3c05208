import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { organizations, partners, sites } from '../../src/server/db/schema/index.js';
import { accessibleOrgIds, canAccessOrg } from '../../src/server/modules/tenancy/access.js';
import { loginAs, type TestApp } from '../helpers/server.js';
import { openDatabase } from '../../src/server/db/connection.js';
import { writeAsAnotherProcess } from '../helpers/other-process.js';
import { useWorld } from '../helpers/world.js';
import {
  ROLES,
  seedOrg,
  seedPartner,
  seedSite,
  seedUser,
  type World,
  type WorldCaller,
} from '../helpers/seed.js';

const API = '/api/v1';
const CALLERS: WorldCaller[] = ['system', 'aAdmin', 'aTech', 'aSelAdmin', 'aNone', 'bAdmin', 'orgUser', 'siteUser'];
const ORG_DENIED = { status: 403, body: { error: 'Access to this organization denied' } };
const SITE_DENIED = { status: 403, body: { error: 'Access to this site denied' } };
const PERMISSION_DENIED = { status: 403, body: { error: 'Permission denied' } };

type Res = Awaited<ReturnType<TestApp['call']>>;

function expectError(res: Res, status: number, error?: string, code?: string): void {
  expect({ status: res.status, error: res.body?.error }).toMatchObject({ status, ...(error ? { error } : {}) });
  expect(typeof res.body.error).toBe('string');
  if (code) expect(res.body.code).toBe(code);
}

/** The organizations each partner-level caller reaches (system and partner scope; 01 §2.6). */
function partnerReach(w: World): Record<Exclude<WorldCaller, 'orgUser' | 'siteUser'>, string[]> {
  return {
    system: [w.orgA1.id, w.orgA2.id, w.orgB1.id],
    aAdmin: [w.orgA1.id, w.orgA2.id],
    aTech: [w.orgA1.id],
    aSelAdmin: [w.orgA1.id],
    aNone: [],
    bAdmin: [w.orgB1.id],
  };
}

/** The sites each caller reaches, in list order (by name: "A1 Branch" before "A1 HQ"; 01 §2.6 and §4.3). */
function siteReach(w: World): Record<WorldCaller, string[]> {
  return {
    system: [w.siteA1b.id, w.siteA1a.id, w.siteA2a.id, w.siteB1a.id],
    aAdmin: [w.siteA1b.id, w.siteA1a.id, w.siteA2a.id],
    aTech: [w.siteA1b.id, w.siteA1a.id],
    aSelAdmin: [w.siteA1b.id, w.siteA1a.id],
    aNone: [],
    bAdmin: [w.siteB1a.id],
    orgUser: [w.siteA1b.id, w.siteA1a.id],
    siteUser: [w.siteA1a.id],
  };
}

function sorted(...list: string[]): string[] {
  return [...list].sort();
}

function ids(rows: { id: string }[]): string[] {
  return rows.map((r) => r.id);
}

describe('tenancy scope matrix (01 §1, §2.6, §4.3)', () => {
  let t: TestApp, w: World;
  const as = useWorld({}, (app, world) => ([t, w] = [app, world]));

  /** GET `${base}/:id` of every item as every caller of `reach`: 200 with the item where it is reachable, else
   * `denied` (the item's name says which one failed). */
  async function expectReach(
    reach: Partial<Record<WorldCaller, string[]>>,
    items: { id: string; name: string }[],
    base: string,
    denied: object,
  ): Promise<void> {
    for (const [who, reachable] of Object.entries(reach) as [WorldCaller, string[]][]) {
      for (const item of items) {
        const res = await as(who, 'GET', `${base}/${item.id}`);
        if (reachable.includes(item.id))
          expect({ who, status: res.status, id: res.body.id }).toEqual({ who, status: 200, id: item.id });
        else
          expect({ who, item: item.name, status: res.status, body: res.body }).toMatchObject({
            who,
            item: item.name,
            ...denied,
          });
      }
    }
  }

  /** PATCH and DELETE of `${base}/:id` as each caller with its id answer `denied`. */
  async function expectWritesDenied(attempts: [WorldCaller, string][], base: string, denied: object): Promise<void> {
    for (const [who, id] of attempts) {
      expect(await as(who, 'PATCH', `${base}/${id}`, { name: 'Taken over' })).toMatchObject(denied);
      expect(await as(who, 'DELETE', `${base}/${id}`)).toMatchObject(denied);
    }
  }


  it('01§4.3 the scope column: each endpoint answers the caller scopes it lists and 403 "Permission denied" to the others', async () => {
    type Scope = 'system' | 'partner' | 'organization';
    const callerOf: Record<Scope, WorldCaller> = { system: 'system', partner: 'aAdmin', organization: 'orgUser' };
    let n = 0;
    const unique = () => `scope-${++n}`;
    // Each call gets its own target so that deletes and creates never collide.
    const table: [string, Scope[], () => [method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown]][] =
      [
        ['GET /orgs/partners', ['system'], () => ['GET', '/orgs/partners']],
        ['POST /orgs/partners', ['system'], () => ['POST', '/orgs/partners', { name: 'P', slug: unique() }]],
        ['GET /orgs/partners/:id', ['system'], () => ['GET', `/orgs/partners/${w.partnerA.id}`]],
        ['PATCH /orgs/partners/:id', ['system'], () => ['PATCH', `/orgs/partners/${w.partnerA.id}`, { plan: 'pro' }]],
        [
          'DELETE /orgs/partners/:id',
          ['system'],
          () => ['DELETE', `/orgs/partners/${seedPartner(t, { name: 'Tmp', slug: unique() }).id}`],
        ],
        ['GET /orgs/partners/me', ['partner'], () => ['GET', '/orgs/partners/me']],
        ['PATCH /orgs/partners/me', ['partner'], () => ['PATCH', '/orgs/partners/me', { billingEmail: 'b@a.test' }]],
        ['GET /orgs/', ['system', 'partner', 'organization'], () => ['GET', '/orgs/']],
        ['GET /orgs/organizations', ['system', 'partner'], () => ['GET', '/orgs/organizations']],
        [
          'POST /orgs/organizations',
          ['system', 'partner'],
          () => ['POST', '/orgs/organizations', { name: 'O', slug: unique(), partnerId: w.partnerA.id }],
        ],
        ['GET /orgs/organizations/:id', ['system', 'partner'], () => ['GET', `/orgs/organizations/${w.orgA1.id}`]],
        [
          'PATCH /orgs/organizations/:id',
          ['system', 'partner'],
          () => ['PATCH', `/orgs/organizations/${w.orgA1.id}`, { status: 'trial' }],
        ],
        [
          'DELETE /orgs/organizations/:id',
          ['system', 'partner'],
          () => ['DELETE', `/orgs/organizations/${seedOrg(t, w.partnerA.id, { name: 'Tmp', slug: unique() }).id}`],
        ],
        ['GET /orgs/sites', ['system', 'partner', 'organization'], () => ['GET', '/orgs/sites']],
        [
          'POST /orgs/sites',
          ['system', 'partner', 'organization'],
          () => ['POST', '/orgs/sites', { orgId: w.orgA1.id, name: unique() }],
        ],
        ['GET /orgs/sites/:id', ['system', 'partner', 'organization'], () => ['GET', `/orgs/sites/${w.siteA1a.id}`]],
        [
          'PATCH /orgs/sites/:id',
          ['system', 'partner', 'organization'],
          () => ['PATCH', `/orgs/sites/${w.siteA1a.id}`, { name: unique() }],
        ],
        [
          'DELETE /orgs/sites/:id',
          ['system', 'partner', 'organization'],
          () => ['DELETE', `/orgs/sites/${seedSite(t, w.orgA1.id, { name: unique() }).id}`],
        ],
      ];
    const seen: string[] = [];
    for (const [name, , make] of table) {
      for (const scope of ['system', 'partner', 'organization'] as const) {
        const [method, url, body] = make();
        const res = await as(callerOf[scope], method, url, body);
        const outcome =
          res.status === 403 ? `403 ${res.body.error}` : res.status < 300 ? 'ok' : `${res.status} ${res.body.error}`;
        seen.push(`${name} as ${scope}: ${outcome}`);
      }
    }
    const want = table.flatMap(([name, allowed]) =>
      (['system', 'partner', 'organization'] as const).map(
        (scope) => `${name} as ${scope}: ${allowed.includes(scope) ? 'ok' : '403 Permission denied'}`,
      ),
    );
    expect(seen).toEqual(want);
  });

  it('01§4.3 partner administration (list, create, get, patch, delete /orgs/partners) is system scope only', async () => {
    for (const who of CALLERS.filter((c) => c !== 'system')) {
      const attempts = [
        await as(who, 'GET', '/orgs/partners'),
        await as(who, 'POST', '/orgs/partners', { name: 'Rogue', slug: `rogue-${who.toLowerCase()}` }),
        await as(who, 'GET', `/orgs/partners/${w.partnerA.id}`),
        await as(who, 'PATCH', `/orgs/partners/${w.partnerA.id}`, { name: 'Hijacked' }),
        await as(who, 'DELETE', `/orgs/partners/${w.partnerB.id}`),
      ];
      for (const res of attempts) expectError(res, 403, 'Permission denied');
    }
    expect(
      t.db
        .select()
        .from(partners)
        .all()
        .map((p) => p.name)
        .sort(),
    ).toEqual(['Partner A', 'Partner B']);
    expect(
      t.db
        .select()
        .from(partners)
        .all()
        .every((p) => p.deletedAt === null),
    ).toBe(true);

    const list = await as('system', 'GET', '/orgs/partners');
    expect(list.status).toBe(200);
    expect(ids(list.body.data)).toEqual([w.partnerA.id, w.partnerB.id]);
    expect(list.body.pagination).toEqual({ page: 1, limit: 50, total: 2 });
    expect((await as('system', 'GET', `/orgs/partners/${w.partnerB.id}`)).body.name).toBe('Partner B');
    expect((await as('system', 'POST', '/orgs/partners', { name: 'C', slug: 'c' })).status).toBe(201);
  });

  it('01§1 GET /orgs/ answers exactly the reachable organizations, ordered by name, unpaged', async () => {
    // Organization callers reach their own organization too (01 §2.6).
    const expected: Record<WorldCaller, string[]> = { ...partnerReach(w), orgUser: [w.orgA1.id], siteUser: [w.orgA1.id] };
    for (const who of CALLERS) {
      const res = await as(who, 'GET', '/orgs/');
      expect({ who, status: res.status, ids: ids(res.body.data) }).toEqual({ who, status: 200, ids: expected[who] });
      expect(Object.keys(res.body)).toEqual(['data']);
    }
    // The path without the trailing slash is the same route.
    expect(ids((await as('aAdmin', 'GET', '/orgs')).body.data)).toEqual(expected.aAdmin);
  });

  it('01§4.3 GET /orgs/organizations is partner and system scope, paged over exactly the reachable set', async () => {
    const expected = partnerReach(w);
    for (const [who, want] of Object.entries(expected) as [WorldCaller, string[]][]) {
      const res = await as(who, 'GET', '/orgs/organizations');
      expect({ who, status: res.status, ids: ids(res.body.data) }).toEqual({ who, status: 200, ids: want });
      expect(res.body.pagination).toEqual({ page: 1, limit: 50, total: want.length });
    }
    for (const who of ['orgUser', 'siteUser'] as const)
      expectError(await as(who, 'GET', '/orgs/organizations'), 403, 'Permission denied');

    expect(ids((await as('system', 'GET', `/orgs/organizations?partnerId=${w.partnerA.id}`)).body.data)).toEqual([
      w.orgA1.id,
      w.orgA2.id,
    ]);
    expect(ids((await as('aAdmin', 'GET', `/orgs/organizations?partnerId=${w.partnerA.id}`)).body.data)).toEqual([
      w.orgA1.id,
      w.orgA2.id,
    ]);
    expectError(await as('aAdmin', 'GET', `/orgs/organizations?partnerId=${w.partnerB.id}`), 403);
  });

  it('01§4.3 GET /orgs/organizations/:id: reachable 200, another tenant 403 "Access to this organization denied"', async () => {
    await expectReach(partnerReach(w), [w.orgA1, w.orgA2, w.orgB1], '/orgs/organizations', ORG_DENIED);
    // Organization callers are outside the route's scope column altogether.
    for (const who of ['orgUser', 'siteUser'] as const) {
      expect(await as(who, 'GET', `/orgs/organizations/${w.orgA1.id}`)).toMatchObject(PERMISSION_DENIED);
    }
  });

  it('01§4.3 PATCH and DELETE /orgs/organizations/:id of an unreachable organization are 403 and change nothing', async () => {
    const attempts: [WorldCaller, string][] = [
      ['aAdmin', w.orgB1.id],
      ['bAdmin', w.orgA1.id],
      ['aSelAdmin', w.orgA2.id],
      ['aNone', w.orgA1.id],
    ];
    await expectWritesDenied(attempts, '/orgs/organizations', ORG_DENIED);
    // Without organizations:write the permission check answers first.
    expect(await as('aTech', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { name: 'x' })).toMatchObject(
      PERMISSION_DENIED,
    );
    expect(await as('orgUser', 'DELETE', `/orgs/organizations/${w.orgA1.id}`)).toMatchObject(PERMISSION_DENIED);
    const rows = t.db.select().from(organizations).all();
    expect(rows.map((r) => r.name).sort()).toEqual(['Alpha One', 'Alpha Two', 'Bravo One']);
    expect(rows.every((r) => r.deletedAt === null)).toBe(true);

    expect((await as('aSelAdmin', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { name: 'Alpha Uno' })).status).toBe(
      200,
    );
    expect((await as('bAdmin', 'DELETE', `/orgs/organizations/${w.orgB1.id}`)).body).toEqual({ success: true });
  });

  it('01§4.3 POST /orgs/organizations: partner callers create in their own partner only; organization callers cannot', async () => {
    const own = await as('aAdmin', 'POST', '/orgs/organizations', { name: 'Alpha Three', slug: 'alpha-three' });
    expect(own.status).toBe(201);
    expect(own.body.partnerId).toBe(w.partnerA.id);
    const explicit = await as('aAdmin', 'POST', '/orgs/organizations', {
      name: 'Alpha Four',
      slug: 'alpha-four',
      partnerId: w.partnerA.id,
    });
    expect(explicit.status).toBe(201);
    expectError(
      await as('aAdmin', 'POST', '/orgs/organizations', { name: 'Sneaky', slug: 'sneaky', partnerId: w.partnerB.id }),
      403,
    );
    expect(await as('orgUser', 'POST', '/orgs/organizations', { name: 'X', slug: 'x' })).toMatchObject(
      PERMISSION_DENIED,
    );
    expect(await as('aTech', 'POST', '/orgs/organizations', { name: 'X', slug: 'x' })).toMatchObject(PERMISSION_DENIED);
    expect(t.db.select().from(organizations).where(eq(organizations.slug, 'sneaky')).all()).toEqual([]);

    // A system caller names the partner; without one it is a validation error.
    const sys = await as('system', 'POST', '/orgs/organizations', {
      name: 'Bravo Two',
      slug: 'bravo-two',
      partnerId: w.partnerB.id,
    });
    expect(sys.status).toBe(201);
    const missing = await as('system', 'POST', '/orgs/organizations', { name: 'Orphan', slug: 'orphan' });
    expectError(missing, 400, undefined, 'VALIDATION_ERROR');
    expect(missing.body.error).toMatch(/^partnerId: /);
    expect(missing.body.details.fieldErrors.partnerId).toHaveLength(1);

    // A partner user limited to selected organizations keeps reach over the one it creates.
    const sel = await as('aSelAdmin', 'POST', '/orgs/organizations', { name: 'Alpha Five', slug: 'alpha-five' });
    expect(sel.status).toBe(201);
    // ("Alpha Five" sorts before "Alpha One".)
    expect(ids((await as('aSelAdmin', 'GET', '/orgs/')).body.data)).toEqual([sel.body.id, w.orgA1.id]);
  });

  it('01§4.3 GET /orgs/sites answers exactly the reachable sites (organization, partner grant, site restriction)', async () => {
    const expected = siteReach(w);
    for (const who of CALLERS) {
      const res = await as(who, 'GET', '/orgs/sites');
      expect({ who, status: res.status, ids: ids(res.body.data) }).toEqual({ who, status: 200, ids: expected[who] });
      expect(res.body.pagination.total).toBe(expected[who].length);
    }
    expect(ids((await as('system', 'GET', `/orgs/sites?orgId=${w.orgA2.id}`)).body.data)).toEqual([w.siteA2a.id]);
    expect(ids((await as('aAdmin', 'GET', `/orgs/sites?organizationId=${w.orgA1.id}`)).body.data)).toEqual([
      w.siteA1b.id,
      w.siteA1a.id,
    ]);
    expect(ids((await as('siteUser', 'GET', `/orgs/sites?orgId=${w.orgA1.id}`)).body.data)).toEqual([w.siteA1a.id]);
    expect(await as('aAdmin', 'GET', `/orgs/sites?orgId=${w.orgB1.id}`)).toMatchObject(ORG_DENIED);
    expect(await as('orgUser', 'GET', `/orgs/sites?organizationId=${w.orgA2.id}`)).toMatchObject(ORG_DENIED);
    expect(await as('aTech', 'GET', `/orgs/sites?orgId=${w.orgA2.id}`)).toMatchObject(ORG_DENIED);
    expect(await as('bAdmin', 'GET', `/orgs/sites?orgId=${w.orgA1.id}`)).toMatchObject(ORG_DENIED);
  });

  it('01§4.3 GET /orgs/sites/:id is checked against the parent organization (and site restriction): 403 "Access to this site denied"', async () => {
    const all = [w.siteA1a, w.siteA1b, w.siteA2a, w.siteB1a];
    await expectReach(siteReach(w), all, '/orgs/sites', SITE_DENIED);
  });

  it('01§4.3 POST, PATCH and DELETE of sites outside the caller reach are 403 and change nothing', async () => {
    expect(await as('aAdmin', 'POST', '/orgs/sites', { orgId: w.orgB1.id, name: 'Intruder' })).toMatchObject(
      ORG_DENIED,
    );
    expect(await as('orgUser', 'POST', '/orgs/sites', { orgId: w.orgA2.id, name: 'Intruder' })).toMatchObject(
      ORG_DENIED,
    );
    expect(await as('aNone', 'POST', '/orgs/sites', { orgId: w.orgA1.id, name: 'Intruder' })).toMatchObject(ORG_DENIED);
    // A user restricted to some sites cannot widen its reach by creating one.
    expect(await as('siteUser', 'POST', '/orgs/sites', { orgId: w.orgA1.id, name: 'Intruder' })).toMatchObject(
      SITE_DENIED,
    );
    expect(await as('aTech', 'POST', '/orgs/sites', { orgId: w.orgA1.id, name: 'Intruder' })).toMatchObject(
      PERMISSION_DENIED,
    );

    const attempts: [WorldCaller, string][] = [
      ['bAdmin', w.siteA1a.id],
      ['aAdmin', w.siteB1a.id],
      ['aSelAdmin', w.siteA2a.id],
      ['orgUser', w.siteA2a.id],
      ['siteUser', w.siteA1b.id],
      ['aNone', w.siteA1a.id],
    ];
    await expectWritesDenied(attempts, '/orgs/sites', SITE_DENIED);
    expect(await as('aTech', 'PATCH', `/orgs/sites/${w.siteA1a.id}`, { name: 'x' })).toMatchObject(PERMISSION_DENIED);
    const rows = t.db.select().from(sites).all();
    expect(rows.map((s) => s.name).sort()).toEqual(['A1 Branch', 'A1 HQ', 'A2 HQ', 'B1 HQ']);

    // And within reach they succeed.
    expect((await as('orgUser', 'POST', '/orgs/sites', { orgId: w.orgA1.id, name: 'A1 Lab' })).status).toBe(201);
    expect((await as('siteUser', 'PATCH', `/orgs/sites/${w.siteA1a.id}`, { name: 'A1 Head Office' })).body.name).toBe(
      'A1 Head Office',
    );
    expect((await as('aAdmin', 'DELETE', `/orgs/sites/${w.siteA2a.id}`)).body).toEqual({ success: true });
    expect(
      (await as('bAdmin', 'POST', '/orgs/sites', { orgId: w.orgB1.id, name: 'B1 Lab', timezone: 'Europe/Paris' })).body
        .timezone,
    ).toBe('Europe/Paris');
  });

  it('01§7 absent ids are 404 for partners, organizations and sites', async () => {
    const missing = randomUUID();
    for (const who of ['system', 'aAdmin'] as const) {
      for (const path of [`/orgs/organizations/${missing}`, `/orgs/sites/${missing}`]) {
        expectError(await as(who, 'GET', path), 404);
        expectError(await as(who, 'PATCH', path, { name: 'x' }), 404);
        expectError(await as(who, 'DELETE', path), 404);
      }
    }
    expectError(await as('system', 'GET', `/orgs/partners/${missing}`), 404, 'Partner not found');
    expectError(await as('system', 'PATCH', `/orgs/partners/${missing}`, { name: 'x' }), 404);
    expectError(await as('system', 'DELETE', `/orgs/partners/${missing}`), 404);
    expectError(await as('orgUser', 'GET', `/orgs/sites/${missing}`), 404);
    expectError(await as('system', 'POST', '/orgs/sites', { orgId: missing, name: 'x' }), 404);
    expectError(await as('system', 'POST', '/orgs/organizations', { name: 'x', slug: 'x', partnerId: missing }), 404);
  });

  it('01§1 a soft-deleted organization vanishes from every query, 404s on every call, and takes its sites with it', async () => {
    expect((await as('aAdmin', 'DELETE', `/orgs/organizations/${w.orgA2.id}`)).body).toEqual({ success: true });
    const row = t.db.select().from(organizations).where(eq(organizations.id, w.orgA2.id)).get();
    expect(row?.deletedAt).toEqual(expect.any(String));

    for (const who of ['system', 'aAdmin'] as const) {
      expect(ids((await as(who, 'GET', '/orgs/')).body.data)).not.toContain(w.orgA2.id);
      expect(ids((await as(who, 'GET', '/orgs/organizations')).body.data)).not.toContain(w.orgA2.id);
      expect(ids((await as(who, 'GET', '/orgs/sites')).body.data)).not.toContain(w.siteA2a.id);
      expectError(await as(who, 'GET', `/orgs/organizations/${w.orgA2.id}`), 404, 'Organization not found');
      expectError(await as(who, 'PATCH', `/orgs/organizations/${w.orgA2.id}`, { name: 'Back' }), 404);
      expectError(await as(who, 'DELETE', `/orgs/organizations/${w.orgA2.id}`), 404);
      expectError(await as(who, 'GET', `/orgs/sites?orgId=${w.orgA2.id}`), 404);
      expectError(await as(who, 'GET', `/orgs/sites/${w.siteA2a.id}`), 404);
      expectError(await as(who, 'PATCH', `/orgs/sites/${w.siteA2a.id}`, { name: 'x' }), 404);
      expectError(await as(who, 'POST', '/orgs/sites', { orgId: w.orgA2.id, name: 'x' }), 404);
    }
    expect((await as('system', 'GET', '/orgs/organizations')).body.pagination.total).toBe(2);
    // Its slug is free again within the partner.
    expect((await as('aAdmin', 'POST', '/orgs/organizations', { name: 'Alpha Two', slug: 'alpha-two' })).status).toBe(
      201,
    );
  });

  it('01§1 one organization is reached exactly when the reachable list holds it: every caller and organization, before and after one is deleted', async () => {
    const orgs = [w.orgA1.id, w.orgA2.id, w.orgB1.id, randomUUID()];
    const callerOf = async (who: WorldCaller) => {
      const caller = await t.services.auth.callerForAccessToken(w.tokens[who]);
      if (!caller) throw new Error(`no caller for ${who}`);
      return caller;
    };
    const compare = async (when: string) => {
      for (const who of CALLERS) {
        const caller = await callerOf(who);
        const listed = accessibleOrgIds(t.db, caller);
        for (const orgId of orgs) {
          const expected = listed === null || listed.includes(orgId);
          expect({ when, who, orgId, reached: canAccessOrg(t.db, caller, orgId) }).toEqual({ when, who, orgId, reached: expected });
        }
      }
    };
    await compare('all live');
    // A1 is in the selected callers' grants: a deleted organization leaves their reach.
    expect((await as('aAdmin', 'DELETE', `/orgs/organizations/${w.orgA1.id}`)).status).toBe(200);
    await compare('A1 deleted');
    expect(canAccessOrg(t.db, await callerOf('aSelAdmin'), w.orgA1.id)).toBe(false);
  });

  it('01§1 a partner caller\'s reach follows every change of its organizations: created, deleted, moved, written by another process', async () => {
    // The reach itself (every list query takes it), and what GET /orgs/ answers from it.
    const reach = async (who: WorldCaller) => {
      const caller = await t.services.auth.callerForAccessToken(w.tokens[who]);
      if (!caller) throw new Error(`no caller for ${who}`);
      const listed = ids((await as(who, 'GET', '/orgs/')).body.data).sort();
      expect({ who, reach: [...(accessibleOrgIds(t.db, caller) ?? [])].sort() }).toEqual({ who, reach: listed });
      return listed;
    };
    expect(await reach('aAdmin')).toEqual(sorted(w.orgA1.id, w.orgA2.id));
    expect(await reach('aSelAdmin')).toEqual([w.orgA1.id]);

    const created = await as('aAdmin', 'POST', '/orgs/organizations', { name: 'Alpha Three', slug: 'alpha-three' });
    expect(created.status).toBe(201);
    expect(await reach('aAdmin')).toEqual(sorted(w.orgA1.id, w.orgA2.id, created.body.id));
    // The selected caller's reach is its own: unchanged by the new organization, and it loses a deleted one.
    expect(await reach('aSelAdmin')).toEqual([w.orgA1.id]);
    expect((await as('aAdmin', 'DELETE', `/orgs/organizations/${w.orgA1.id}`)).status).toBe(200);
    expect(await reach('aSelAdmin')).toEqual([]);
    expect(await reach('aAdmin')).toEqual(sorted(w.orgA2.id, created.body.id));

    // Moved to another partner (no route does this; the reach must still follow the table).
    t.db.update(organizations).set({ partnerId: w.partnerB.id }).where(eq(organizations.id, w.orgA2.id)).run();
    expect(await reach('aAdmin')).toEqual([created.body.id]);
    expect(await reach('bAdmin')).toEqual(sorted(w.orgB1.id, w.orgA2.id));

    const now = new Date().toISOString();
    const outside = randomUUID();
    await writeAsAnotherProcess(
      t.db.$client.name,
      'INSERT INTO organizations (id, partner_id, name, slug, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
      outside,
      w.partnerA.id,
      'Alpha Four',
      'alpha-four',
      now,
      now,
    );
    expect(await reach('aAdmin')).toEqual(sorted(created.body.id, outside));
  });

  it('01§1 a reach first read inside a transaction that rolls back leaves the connection able to read it again', async () => {
    // A connection of its own, whose reach cache does not exist yet (the server's is made when it starts).
    const db = openDatabase(t.db.$client.name);
    try {
      const caller = await t.services.auth.callerForAccessToken(w.tokens.aAdmin);
      if (!caller) throw new Error('no caller');
      const expected = sorted(w.orgA1.id, w.orgA2.id);
      expect(() =>
        db.$client.transaction(() => {
          expect([...(accessibleOrgIds(db, caller) ?? [])].sort()).toEqual(expected);
          throw new Error('rolled back');
        })(),
      ).toThrow('rolled back');
      expect([...(accessibleOrgIds(db, caller) ?? [])].sort()).toEqual(expected);
      expect([...(accessibleOrgIds(db, caller) ?? [])].sort()).toEqual(expected);
    } finally {
      db.$client.close();
    }
  });

  it('01§1 a soft-deleted partner vanishes from every query and 404s; its organizations go with it', async () => {
    expect((await as('system', 'DELETE', `/orgs/partners/${w.partnerB.id}`)).body).toEqual({ success: true });
    expect(t.db.select().from(partners).where(eq(partners.id, w.partnerB.id)).get()?.deletedAt).toEqual(
      expect.any(String),
    );
    expect(ids((await as('system', 'GET', '/orgs/partners')).body.data)).toEqual([w.partnerA.id]);
    expect((await as('system', 'GET', '/orgs/partners')).body.pagination.total).toBe(1);
    expectError(await as('system', 'GET', `/orgs/partners/${w.partnerB.id}`), 404);
    expectError(await as('system', 'PATCH', `/orgs/partners/${w.partnerB.id}`, { name: 'x' }), 404);
    expectError(await as('system', 'DELETE', `/orgs/partners/${w.partnerB.id}`), 404);
    expect(ids((await as('system', 'GET', '/orgs/')).body.data)).toEqual([w.orgA1.id, w.orgA2.id]);
    expect(ids((await as('system', 'GET', '/orgs/organizations')).body.data)).toEqual([w.orgA1.id, w.orgA2.id]);
    expect(ids((await as('system', 'GET', '/orgs/sites')).body.data)).not.toContain(w.siteB1a.id);
    expectError(await as('system', 'GET', `/orgs/organizations/${w.orgB1.id}`), 404);
    expectError(
      await as('system', 'POST', '/orgs/organizations', { name: 'New', slug: 'new', partnerId: w.partnerB.id }),
      404,
    );
    // Its users are shut out (their partner is no longer active).
    expect(await as('bAdmin', 'GET', '/orgs/')).toMatchObject({ status: 403, body: { code: 'PARTNER_INACTIVE' } });
  });

  it('01§1 sites are hard-deleted', async () => {
    expect((await as('orgUser', 'DELETE', `/orgs/sites/${w.siteA1b.id}`)).body).toEqual({ success: true });
    expect(t.db.select().from(sites).where(eq(sites.id, w.siteA1b.id)).all()).toEqual([]);
    expectError(await as('orgUser', 'GET', `/orgs/sites/${w.siteA1b.id}`), 404);
    expectError(await as('orgUser', 'DELETE', `/orgs/sites/${w.siteA1b.id}`), 404);
  });

  it('01§4 paging: defaults 1/50, limit clamped to 1-100, unparseable values fall back, envelope {data, pagination}', async () => {
    for (let i = 0; i < 3; i++) seedPartner(t, { name: `Partner Z${i}`, slug: `partner-z${i}` });
    const cases: [string, { page: number; limit: number; n: number }][] = [
      ['', { page: 1, limit: 50, n: 5 }],
      ['?limit=0', { page: 1, limit: 1, n: 1 }],
      ['?limit=-5', { page: 1, limit: 1, n: 1 }],
      ['?limit=1000', { page: 1, limit: 100, n: 5 }],
      ['?page=abc', { page: 1, limit: 50, n: 5 }],
      ['?limit=abc', { page: 1, limit: 50, n: 5 }],
      ['?page=0&limit=2', { page: 1, limit: 2, n: 2 }],
      ['?page=3&limit=2', { page: 3, limit: 2, n: 1 }],
      ['?page=99&limit=2', { page: 99, limit: 2, n: 0 }],
      ['?page=&limit=', { page: 1, limit: 50, n: 5 }],
    ];
    for (const [qs, want] of cases) {
      const res = await as('system', 'GET', `/orgs/partners${qs}`);
      expect({
        qs,
        status: res.status,
        keys: Object.keys(res.body).sort(),
        pagination: res.body.pagination,
        n: res.body.data.length,
      }).toEqual({
        qs,
        status: 200,
        keys: ['data', 'pagination'],
        pagination: { page: want.page, limit: want.limit, total: 5 },
        n: want.n,
      });
    }
    const second = await as('system', 'GET', '/orgs/partners?page=2&limit=1');
    expect(second.body.data[0].id).toBe(w.partnerB.id);
    for (const path of ['/orgs/organizations', '/orgs/sites']) {
      const res = await as('system', 'GET', `${path}?limit=0&page=abc`);
      expect(res.body.pagination).toMatchObject({ page: 1, limit: 1 });
      expect(res.body.data).toHaveLength(1);
      expect((await as('system', 'GET', `${path}?limit=1000`)).body.pagination.limit).toBe(100);
    }
  });

  it('01§2.3 partner settings are merged on PATCH (nested businessHours and contact); an unknown key is 400', async () => {
    const created = await as('system', 'POST', '/orgs/partners', {
      name: 'Merge',
      slug: 'merge',
      settings: {
        timezone: 'America/New_York',
        dateFormat: 'MM/DD/YYYY',
        businessHours: { preset: 'custom', custom: { monday: { start: '09:00', end: '17:00' } } },
        contact: { name: 'Ann', email: 'ann@merge.test' },
      },
    });
    expect(created.status).toBe(201);
    const patched = await as('system', 'PATCH', `/orgs/partners/${created.body.id}`, {
      settings: {
        timeFormat: '24h',
        businessHours: { custom: { tuesday: { start: '10:00', end: '16:00', closed: false } } },
        contact: { phone: '+1 555 0100' },
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.settings).toEqual({
      timezone: 'America/New_York',
      dateFormat: 'MM/DD/YYYY',
      timeFormat: '24h',
      businessHours: {
        preset: 'custom',
        custom: { monday: { start: '09:00', end: '17:00' }, tuesday: { start: '10:00', end: '16:00', closed: false } },
      },
      contact: { name: 'Ann', email: 'ann@merge.test', phone: '+1 555 0100' },
    });
    // Other fields are untouched by a settings-only PATCH.
    expect(patched.body).toMatchObject({ name: 'Merge', slug: 'merge' });

    for (const settings of [
      { colour: 'blue' },
      { contact: { fax: '1' } },
      { businessHours: { preset: 'night' } },
      { language: 'fr' },
      { dateFormat: 'D.M.Y' },
      { timeFormat: '13h' },
    ]) {
      const res = await as('system', 'PATCH', `/orgs/partners/${created.body.id}`, { settings });
      expectError(res, 400, undefined, 'VALIDATION_ERROR');
      expect(res.body.error).toMatch(/^settings/);
    }
    const after = await as('system', 'GET', `/orgs/partners/${created.body.id}`);
    expect(after.body.settings).toEqual(patched.body.settings);
  });

  it('01§2.4 an organization partnerId is immutable; 01§2.5 a site orgId is immutable (same value accepted)', async () => {
    const moved = await as('system', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { partnerId: w.partnerB.id });
    expectError(moved, 400, 'partnerId cannot be changed');
    const same = await as('system', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, {
      partnerId: w.partnerA.id,
      name: 'Alpha 1',
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ partnerId: w.partnerA.id, name: 'Alpha 1' });

    expectError(
      await as('system', 'PATCH', `/orgs/sites/${w.siteA1a.id}`, { orgId: w.orgA2.id }),
      400,
      'orgId cannot be changed',
    );
    expectError(
      await as('orgUser', 'PATCH', `/orgs/sites/${w.siteA1a.id}`, { orgId: w.orgB1.id }),
      400,
      'orgId cannot be changed',
    );
    const siteSame = await as('orgUser', 'PATCH', `/orgs/sites/${w.siteA1a.id}`, { orgId: w.orgA1.id, name: 'HQ' });
    expect(siteSame.status).toBe(200);
    expect(siteSame.body).toMatchObject({ orgId: w.orgA1.id, name: 'HQ' });
    expect(t.db.select().from(sites).where(eq(sites.id, w.siteA1a.id)).get()?.orgId).toBe(w.orgA1.id);
  });

  it('01§7 an empty PATCH on an organization or a site is 400', async () => {
    expectError(await as('system', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, {}), 400, 'No updates provided');
    expectError(await as('system', 'PATCH', `/orgs/sites/${w.siteA1a.id}`, {}), 400, 'No updates provided');
    expectError(await as('aAdmin', 'PATCH', '/orgs/partners/me', {}), 400, 'No updates provided');
  });

  it('01§4.3 GET and PATCH /orgs/partners/me: partner scope, own partner, only name, billingEmail and settings', async () => {
    expect((await as('aTech', 'GET', '/orgs/partners/me')).body).toMatchObject({
      id: w.partnerA.id,
      name: 'Partner A',
    });
    expect((await as('aNone', 'GET', '/orgs/partners/me')).body.id).toBe(w.partnerA.id);
    expect((await as('bAdmin', 'GET', '/orgs/partners/me')).body.id).toBe(w.partnerB.id);
    for (const who of ['system', 'orgUser', 'siteUser'] as const) {
      expectError(await as(who, 'GET', '/orgs/partners/me'), 403);
      expectError(await as(who, 'PATCH', '/orgs/partners/me', { name: 'x' }), 403);
    }
    const patched = await as('aAdmin', 'PATCH', '/orgs/partners/me', {
      name: 'Partner A Ltd',
      billingEmail: 'billing@a.test',
      settings: { timezone: 'Europe/London' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      id: w.partnerA.id,
      name: 'Partner A Ltd',
      billingEmail: 'billing@a.test',
      settings: { timezone: 'Europe/London' },
    });
    const merged = await as('aAdmin', 'PATCH', '/orgs/partners/me', { settings: { language: 'en' } });
    expect(merged.body.settings).toEqual({ timezone: 'Europe/London', language: 'en' });
    for (const body of [
      { slug: 'new-slug' },
      { status: 'active' },
      { plan: 'unlimited' },
      { maxDevices: 10 },
      { type: 'internal' },
    ]) {
      expectError(await as('aAdmin', 'PATCH', '/orgs/partners/me', body), 400, undefined, 'VALIDATION_ERROR');
    }
    expect(t.db.select().from(partners).where(eq(partners.id, w.partnerA.id)).get()).toMatchObject({
      slug: 'partner-a',
      plan: 'free',
      status: 'active',
    });
    // A read-only partner role cannot change it.
    const viewer = await seedUser(t, {
      email: 'viewer@a.test',
      partner: { partnerId: w.partnerA.id, roleId: ROLES.partnerViewer, orgAccess: 'all' },
      login: 'mint',
    });
    expectError(
      await t.call('PATCH', `${API}/orgs/partners/me`, { token: viewer.token, body: { name: 'x' } }),
      403,
      'Permission denied',
    );
  });

  it('01§2.3 partner slug: URL-safe, at most 100, unique (409); 01§2.4 organization slug unique within its partner', async () => {
    for (const slug of [
      'Has Space',
      'UPPER',
      'under_score',
      '-lead',
      'trail-',
      'double--hyphen',
      'a'.repeat(101),
      '',
      'ünï',
    ]) {
      expectError(
        await as('system', 'POST', '/orgs/partners', { name: 'S', slug }),
        400,
        undefined,
        'VALIDATION_ERROR',
      );
    }
    expect((await as('system', 'POST', '/orgs/partners', { name: 'S', slug: 'a'.repeat(100) })).status).toBe(201);
    const taken = await as('system', 'POST', '/orgs/partners', { name: 'Another A', slug: 'partner-a' });
    expectError(taken, 409, undefined, 'SLUG_TAKEN');
    expectError(
      await as('system', 'PATCH', `/orgs/partners/${w.partnerB.id}`, { slug: 'partner-a' }),
      409,
      undefined,
      'SLUG_TAKEN',
    );
    expect((await as('system', 'PATCH', `/orgs/partners/${w.partnerB.id}`, { slug: 'partner-b' })).status).toBe(200);

    expectError(
      await as('aAdmin', 'POST', '/orgs/organizations', { name: 'Dup', slug: 'alpha-one' }),
      409,
      undefined,
      'SLUG_TAKEN',
    );
    expectError(
      await as('aAdmin', 'PATCH', `/orgs/organizations/${w.orgA2.id}`, { slug: 'alpha-one' }),
      409,
      undefined,
      'SLUG_TAKEN',
    );
    expect(
      (await as('bAdmin', 'POST', '/orgs/organizations', { name: 'Same slug elsewhere', slug: 'alpha-one' })).status,
    ).toBe(201);
    expectError(
      await as('aAdmin', 'POST', '/orgs/organizations', { name: 'Bad', slug: 'Bad Slug' }),
      400,
      undefined,
      'VALIDATION_ERROR',
    );
  });

  it('01§3 PARTNER_INACTIVE: users of a suspended partner are blocked except on /users/me and /orgs/partners/me', async () => {
    const suspend = await as('system', 'PATCH', `/orgs/partners/${w.partnerA.id}`, { status: 'suspended' });
    expect(suspend.body.status).toBe('suspended');
    const inactive = {
      status: 403,
      body: { error: 'Account inactive', code: 'PARTNER_INACTIVE', status: 'suspended' },
    };
    for (const who of ['aAdmin', 'aTech', 'aNone', 'orgUser', 'siteUser'] as const) {
      expect(await as(who, 'GET', '/orgs/')).toMatchObject(inactive);
      expect(await as(who, 'GET', '/orgs/sites')).toMatchObject(inactive);
      expect(await as(who, 'GET', `/orgs/sites/${w.siteA1a.id}`)).toMatchObject(inactive);
      expect(await as(who, 'POST', '/orgs/sites', { orgId: w.orgA1.id, name: 'x' })).toMatchObject(inactive);
      expect(await as(who, 'GET', '/audit-logs/logs')).toMatchObject(inactive);
      const me = await as(who, 'GET', '/users/me');
      expect({ who, status: me.status }).toEqual({ who, status: 200 });
    }
    for (const who of ['aAdmin', 'aTech'] as const) {
      expect(await as(who, 'GET', '/orgs/organizations')).toMatchObject(inactive);
      const mine = await as(who, 'GET', '/orgs/partners/me');
      expect({ status: mine.status, partnerStatus: mine.body.status }).toEqual({
        status: 200,
        partnerStatus: 'suspended',
      });
    }
    // A suspended partner cannot reactivate itself through PATCH me.
    expectError(await as('aAdmin', 'PATCH', '/orgs/partners/me', { status: 'active' }), 400);
    // Partner B is unaffected.
    expect((await as('bAdmin', 'GET', '/orgs/')).status).toBe(200);

    for (const status of ['pending', 'churned'] as const) {
      await as('system', 'PATCH', `/orgs/partners/${w.partnerA.id}`, { status });
      expect(await as('orgUser', 'GET', '/orgs/')).toMatchObject({
        status: 403,
        body: { code: 'PARTNER_INACTIVE', status },
      });
    }
    await as('system', 'PATCH', `/orgs/partners/${w.partnerA.id}`, { status: 'active' });
    expect((await as('orgUser', 'GET', '/orgs/')).status).toBe(200);
  });

  it('01§2.3-2.5 every validation bound is 400 with the wire-notes body ("<path>: <message>; …", details.fieldErrors)', async () => {
    type Case = [method: 'POST' | 'PATCH', url: string, body: Record<string, unknown>, field: string];
    const partner = { name: 'P', slug: 'p-ok' };
    const org = { name: 'O', slug: 'o-ok', partnerId: w.partnerA.id };
    const site = { orgId: w.orgA1.id, name: 'S' };
    const cases: Case[] = [
      ['POST', '/orgs/partners', { ...partner, name: '' }, 'name'],
      ['POST', '/orgs/partners', { ...partner, name: '   ' }, 'name'],
      ['POST', '/orgs/partners', { ...partner, name: 'n'.repeat(256) }, 'name'],
      ['POST', '/orgs/partners', { ...partner, name: 42 }, 'name'],
      ['POST', '/orgs/partners', { slug: 'no-name' }, 'name'],
      ['POST', '/orgs/partners', { name: 'No slug' }, 'slug'],
      ['POST', '/orgs/partners', { ...partner, slug: 's'.repeat(101) }, 'slug'],
      ['POST', '/orgs/partners', { ...partner, type: 'reseller' }, 'type'],
      ['POST', '/orgs/partners', { ...partner, plan: 'gold' }, 'plan'],
      ['POST', '/orgs/partners', { ...partner, status: 'deleted' }, 'status'],
      ['POST', '/orgs/partners', { ...partner, maxDevices: 1.5 }, 'maxDevices'],
      ['POST', '/orgs/partners', { ...partner, maxDevices: '10' }, 'maxDevices'],
      ['POST', '/orgs/partners', { ...partner, maxDevices: -1 }, 'maxDevices'],
      ['POST', '/orgs/partners', { ...partner, maxOrganizations: 2.5 }, 'maxOrganizations'],
      ['POST', '/orgs/partners', { ...partner, billingEmail: 'not-an-email' }, 'billingEmail'],
      ['POST', '/orgs/partners', { ...partner, billingEmail: `${'b'.repeat(250)}@x.test` }, 'billingEmail'],
      ['POST', '/orgs/partners', { ...partner, settings: { timezone: 'Mars/Olympus_Mons' } }, 'settings'],
      ['POST', '/orgs/partners', { ...partner, settings: 'none' }, 'settings'],
      ['POST', '/orgs/partners', { ...partner, unknownField: 1 }, ''],
      ['PATCH', `/orgs/partners/${w.partnerA.id}`, { name: 'n'.repeat(256) }, 'name'],
      ['PATCH', `/orgs/partners/${w.partnerA.id}`, { plan: 'gold' }, 'plan'],
      ['POST', '/orgs/organizations', { ...org, name: '' }, 'name'],
      ['POST', '/orgs/organizations', { ...org, name: 'n'.repeat(256) }, 'name'],
      ['POST', '/orgs/organizations', { ...org, slug: 's'.repeat(101) }, 'slug'],
      ['POST', '/orgs/organizations', { ...org, type: 'msp' }, 'type'],
      ['POST', '/orgs/organizations', { ...org, status: 'pending' }, 'status'],
      ['POST', '/orgs/organizations', { ...org, maxDevices: 3.2 }, 'maxDevices'],
      ['POST', '/orgs/organizations', { ...org, contractStart: 'yesterday' }, 'contractStart'],
      ['POST', '/orgs/organizations', { ...org, partnerId: 'not-a-uuid' }, 'partnerId'],
      [
        'POST',
        '/orgs/organizations',
        { ...org, contractStart: '2025-06-01T00:00:00Z', contractEnd: '2025-01-01T00:00:00Z' },
        'contractEnd',
      ],
      [
        'PATCH',
        `/orgs/organizations/${w.orgA1.id}`,
        { contractEnd: '2025-01-01T00:00:00Z', contractStart: '2026-01-01T00:00:00+01:00' },
        'contractEnd',
      ],
      ['PATCH', `/orgs/organizations/${w.orgA1.id}`, { status: 'gone' }, 'status'],
      ['PATCH', `/orgs/organizations/${w.orgA1.id}`, { maxDevices: 'many' }, 'maxDevices'],
      ['POST', '/orgs/sites', { ...site, name: '' }, 'name'],
      ['POST', '/orgs/sites', { ...site, name: 'n'.repeat(256) }, 'name'],
      ['POST', '/orgs/sites', { name: 'No org' }, 'orgId'],
      ['POST', '/orgs/sites', { ...site, orgId: 'nope' }, 'orgId'],
      ['POST', '/orgs/sites', { ...site, timezone: 'Nowhere/Land' }, 'timezone'],
      ['POST', '/orgs/sites', { ...site, timezone: `Europe/${'x'.repeat(50)}` }, 'timezone'],
      ['POST', '/orgs/sites', { ...site, address: 'Main Street 1' }, 'address'],
      ['POST', '/orgs/sites', { ...site, contact: ['a'] }, 'contact'],
      ['PATCH', `/orgs/sites/${w.siteA1a.id}`, { timezone: 'UTC+25' }, 'timezone'],
    ];
    for (const [method, url, body, field] of cases) {
      const res = await as('system', method, url, body);
      const label = `${method} ${url} ${JSON.stringify(body).slice(0, 80)}`;
      expect({ label, status: res.status, code: res.body.code }).toEqual({
        label,
        status: 400,
        code: 'VALIDATION_ERROR',
      });
      expect(res.body.error).toMatch(/^[^;]+: .+/);
      expect(res.body.details).toEqual({ formErrors: expect.any(Array), fieldErrors: expect.any(Object) });
      if (field) {
        expect({ label, error: res.body.error.split(': ')[0].split('.')[0] }).toEqual({ label, error: field });
        expect({ label, has: Array.isArray(res.body.details.fieldErrors[field]) }).toEqual({ label, has: true });
      } else {
        expect(res.body.details.formErrors.length).toBeGreaterThan(0);
      }
    }
    // Several issues are joined with "; ".
    const many = await as('system', 'POST', '/orgs/partners', { name: '', slug: 'BAD SLUG', plan: 'gold' });
    expect(
      many.body.error
        .split('; ')
        .map((s: string) => s.split(':')[0])
        .sort(),
    ).toEqual(['name', 'plan', 'slug']);
    expect(Object.keys(many.body.details.fieldErrors).sort()).toEqual(['name', 'plan', 'slug']);

    // The bounds themselves are accepted.
    const edge = await as('system', 'POST', '/orgs/partners', {
      name: 'n'.repeat(255),
      slug: 's'.repeat(100),
      maxDevices: 0,
      maxOrganizations: 10,
      settings: { timezone: 'Asia/Kolkata' },
    });
    expect(edge.status).toBe(201);
    const siteEdge = await as('system', 'POST', '/orgs/sites', {
      ...site,
      name: 'n'.repeat(255),
      timezone: 'America/Argentina/ComodRivadavia',
    });
    expect(siteEdge.status).toBe(201);
    const dated = await as('system', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, {
      contractStart: '2025-01-01T02:00:00+02:00',
    });
    expect(dated.body.contractStart).toBe('2025-01-01T00:00:00.000Z');
    expectError(
      await as('system', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { contractEnd: '2024-12-31T23:59:59Z' }),
      400,
      'contractEnd: must not be before contractStart',
    );
    expect(
      (await as('system', 'PATCH', `/orgs/organizations/${w.orgA1.id}`, { contractEnd: '2025-12-31T23:59:59Z' })).body
        .contractEnd,
    ).toBe('2025-12-31T23:59:59.000Z');
    // Nothing of the rejected attempts was stored.
    expect(t.db.select().from(partners).all()).toHaveLength(3);
  });

  it('01§2.6 seeded users sign in with their password (the seed helper works end to end)', async () => {
    const user = await seedUser(t, {
      email: 'real-login@a.test',
      partner: { partnerId: w.partnerA.id, orgAccess: 'all' },
    });
    expect(user.token).not.toBe('');
    expect((await t.call('GET', `${API}/orgs/`, { token: user.token })).body.data).toHaveLength(2);
    expect(await loginAs(t, 'real-login@a.test', user.password)).toEqual(expect.any(String));
    const other = seedOrg(t, w.partnerB.id, { name: 'Bravo Two', slug: 'bravo-two' });
    expectError(
      await t.call('GET', `${API}/orgs/organizations/${other.id}`, { token: user.token }),
      403,
      'Access to this organization denied',
    );
  });
});
