import { describe, expect, it } from 'vitest';
import { useWorld, type Method } from '../helpers/world.js';
import type { World } from '../helpers/seed.js';

/**
 * A system caller's list without orgId covers the rows of every live organization (01 §1: system callers reach
 * every organization; a soft-deleted one is gone): the condition is in the list's statement (tenancy/access.ts
 * inLiveOrgs), not a list of ids read first. Partner callers keep their own reach.
 */
describe('list routes of a system caller without orgId (01 §1, §4.1, §4.2; 02 §4.3)', () => {
  let w: World;
  const as = useWorld({ mfa: true, env: { SVC_OUTBOUND_ALLOW: '127.0.0.1/32' } }, (_app, world) => (w = world));

  async function ok(method: Method, url: string, body?: unknown, who: 'system' | 'aAdmin' = 'system') {
    const res = await as(who, method, url, body);
    expect(res.status, `${method} ${url}: ${res.text}`).toBeLessThan(300);
    return res.body;
  }

  /** Creates one row named after its organization in A1, A2 and B1, then soft-deletes A2 through the API. */
  async function oneInEachThenDeleteA2(path: string, body: (orgId: string) => Record<string, unknown>): Promise<void> {
    for (const org of [w.orgA1, w.orgA2, w.orgB1]) await ok('POST', path, { ...body(org.id), orgId: org.id, name: org.name });
    await ok('DELETE', `/orgs/organizations/${w.orgA2.id}`);
  }

  async function listedNames(path: string, who: 'system' | 'aAdmin' = 'system') {
    const res = await ok('GET', `${path}?limit=100`, undefined, who);
    return { names: (res.data as { name: string }[]).map((r) => r.name).sort(), total: res.pagination.total as number };
  }

  const cases = [
    ['01§4.1', "a system caller's API key list", '/api-keys', () => ({})],
    ['01§4.2', "a system caller's enrollment key list", '/enrollment-keys', () => ({ maxUsage: 5 })],
    ['02§4.3', "a system caller's webhook list", '/webhooks', () => ({ url: 'https://127.0.0.1:9/hook', secret: 'whsec-scope-1', events: ['*'] })],
  ] as const;

  it.each(cases)('%s %s covers every live organization and none of a deleted one', async (_section, _what, path, body) => {
    await oneInEachThenDeleteA2(path, body);
    const live = [w.orgA1.name, w.orgB1.name].sort();
    expect(await listedNames(path)).toEqual({ names: live, total: 2 });
    // Partner callers keep their reach (their live organizations only); the deleted organization named is 404.
    expect(await listedNames(path, 'aAdmin')).toEqual({ names: [w.orgA1.name], total: 1 });
    expect((await as('system', 'GET', `${path}?orgId=${w.orgA2.id}`)).status).toBe(404);
  });
});
