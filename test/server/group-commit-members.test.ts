import { describe, expect, it } from 'vitest';
import { useWorld } from '../helpers/world.js';
import { committed } from '../../src/server/db/group-commit.js';
import { createIdempotency } from '../../src/server/http/idempotency.js';
import { SecretBox } from '../../src/server/security/crypto.js';
import type { TestApp } from '../helpers/server.js';
import type { World } from '../helpers/seed.js';

const API = '/api/v1';

/**
 * db/group-commit.ts: a statement run outside a transaction function commits by itself whenever no group is open.
 * The routes below each write one statement; sent together, their writes are one group commit (none of their own),
 * and each answer comes once it is stored. docs/api-notes.md, "Group commit" (6).
 */
describe('single-statement writes join the group commit of their turn (db/group-commit.ts)', () => {
  let t: TestApp;
  let w: World;
  useWorld({}, (app, world) => ([t, w] = [app, world]));

  /** Sends the requests together; answers how many groups were committed for them, and their statuses. */
  const together = async (requests: { method: 'POST' | 'PATCH' | 'DELETE'; url: string; body?: unknown }[]) => {
    // The caller's token is checked once first (its first check may end in another turn than the next ones').
    expect((await t.call('GET', `${API}/notifications/unread-count`, { token: w.tokens.orgUser })).status).toBe(200);
    const before = t.commits.committed;
    const answers = await Promise.all(requests.map((r) => t.call(r.method, `${API}${r.url}`, { token: w.tokens.orgUser, ...(r.body ? { body: r.body } : {}) })));
    return { groups: t.commits.committed - before, statuses: answers.map((a) => a.status) };
  };

  it('02§4.2 notifications marked read and deleted, sent together: one group commit', async () => {
    expect(await together([1, 2, 3].map(() => ({ method: 'PATCH' as const, url: '/notifications/read', body: { all: true } })))).toEqual({
      groups: 1,
      statuses: [200, 200, 200],
    });
    expect(await together([1, 2].map(() => ({ method: 'DELETE' as const, url: '/notifications' })))).toEqual({ groups: 1, statuses: [200, 200] });
  });

  it('02§4.6 push tokens registered and unregistered together: one group commit, every token stored', async () => {
    const register = await together(['t-1', 't-2', 't-3'].map((token) => ({ method: 'POST' as const, url: '/mobile/notifications/register', body: { token: `${token}-push`, platform: 'android' } })));
    expect(register).toEqual({ groups: 1, statuses: [200, 200, 200] });
    expect(t.db.$client.prepare('SELECT count(*) FROM mobile_push_tokens').pluck().get()).toBe(3);
    const unregister = await together(['t-1', 't-2'].map((token) => ({ method: 'POST' as const, url: '/mobile/notifications/unregister', body: { token: `${token}-push` } })));
    expect(unregister).toEqual({ groups: 1, statuses: [200, 200] });
  });

  it('02§4.5 filter previews (each audited) sent together: one group commit, one entry each', async () => {
    const tree = { operator: 'AND', conditions: [{ field: 'hostname', operator: 'startsWith', value: 'web' }] };
    const preview = await together([1, 2, 3].map(() => ({ method: 'POST' as const, url: '/filters/preview', body: { conditions: tree } })));
    expect(preview).toEqual({ groups: 1, statuses: [200, 200, 200] });
    expect(t.db.$client.prepare("SELECT count(*) FROM audit_logs WHERE action = 'filter.preview'").pluck().get()).toBe(3);
  });

  it('01§4.3 an idempotent create whose handler awaits its commit: the stored answer commits in a group of its own, not alone', async () => {
    // A handler that waits for its write's commit before it answers (as the SMS sender does) leaves no group open:
    // the wrapper's record of the answer then opens one (a bare statement would commit by itself, uncounted).
    const idempotency = createIdempotency(t.db, new SecretBox('ab'.repeat(32)));
    const request = { headers: { 'idempotency-key': 'awaits-commit' }, method: 'POST', url: '/x', routeOptions: { url: '/x' }, body: { n: 1 } };
    const ctx = { caller: { userId: w.users.orgUser.id } };
    const before = t.commits.committed;
    const outcome = await idempotency(request as never, {} as never, ctx as never, async () => {
      await committed(t.db.$client);
      return { status: 201, body: { id: 'made' } };
    });
    expect(outcome).toEqual({ status: 201, body: { id: 'made' }, replayed: false });
    await committed(t.db.$client);
    // The claim's group, then the stored answer's.
    expect(t.commits.committed - before).toBe(2);
    expect(t.db.$client.prepare('SELECT status FROM idempotency_keys').pluck().all()).toEqual([201]);
    const replay = await idempotency(request as never, {} as never, ctx as never, () => Promise.reject(new Error('not run again')));
    expect(replay).toEqual({ status: 201, body: { id: 'made' }, replayed: true });
  });
});
