import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { endpoint, type HttpMethod } from '../../src/contract/endpoint.js';
import { systemContext } from '../../src/server/context.js';
import { bind, type BindDeps } from '../../src/server/http/bind.js';
import { mutationTurns } from '../../src/server/http/mutation-turn.js';
import { type TestApp, useAdminApp } from '../helpers/server.js';

const turnOver = () => new Promise<void>((resolve) => setImmediate(resolve));

/** http/mutation-turn.ts: the mutations of a turn of the event loop run together at its end, then commit. */
describe('mutation turns (http/mutation-turn.ts)', () => {
  it('the mutations of a turn start at its end, in the order they came, and their group is committed right after', async () => {
    const events: string[] = [];
    const turn = mutationTurns({ flush: () => events.push('flush') });
    const started = ['a', 'b', 'c'].map((name) => turn().then(() => events.push(name)));
    events.push('rest of the turn');
    await Promise.all(started);
    await turnOver();
    expect(events).toEqual(['rest of the turn', 'a', 'b', 'c', 'flush']);
  });

  it('each stage of every mutation of a turn runs before the next stage of any, and the commit waits for all that needs no I/O', async () => {
    const events: string[] = [];
    const turn = mutationTurns({ flush: () => events.push('flush') });
    const handler = async (name: string) => {
      await turn();
      events.push(`${name}: authenticated`);
      await Promise.resolve();
      events.push(`${name}: written`);
    };
    await Promise.all([handler('a'), handler('b')]);
    await turnOver();
    expect(events).toEqual(['a: authenticated', 'b: authenticated', 'a: written', 'b: written', 'flush']);
  });

  it('a mutation that arrives while a turn runs waits for the next one, with a commit of its own', async () => {
    const events: string[] = [];
    const turn = mutationTurns({ flush: () => events.push('flush') });
    await turn().then(async () => {
      events.push('first');
      await turn();
      events.push('second');
    });
    await turnOver();
    expect(events).toEqual(['first', 'flush', 'second', 'flush']);
  });
});

describe('mutation turns in the server (app.ts, http/bind.ts)', () => {
  it('every route but GET waits for the turn before anything else (the guard included); GET routes do not', async () => {
    const app = Fastify({ logger: false });
    const events: string[] = [];
    const deps: BindDeps = {
      guard: async (request) => {
        events.push(`guard ${request.method}`);
        return systemContext(request.id);
      },
      idempotency: async (_request, _reply, _ctx, run) => ({ ...(await run()), replayed: false }),
      mutationTurn: async () => {
        events.push('turn');
      },
    };
    const methods: HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    for (const method of methods) {
      const def = endpoint({
        method,
        path: '/turn-probe',
        responses: { 200: z.object({ ok: z.boolean() }) },
        auth: { public: true },
        summary: 'test only',
      });
      bind(app, deps, def, () => ({ ok: true }));
    }
    try {
      for (const method of methods) {
        events.length = 0;
        const res = await app.inject({ method, url: '/api/v1/turn-probe' });
        expect(res.statusCode).toBe(200);
        expect(events).toEqual(method === 'GET' ? ['guard GET'] : ['turn', `guard ${method}`]);
      }
    } finally {
      await app.close();
    }
  });

  describe('with the real app', () => {
    let t: TestApp, token: string;
    useAdminApp((app, adminToken) => ([t, token] = [app, adminToken]));

    it('01§4.3 site creates sent together: one group commit for all, each answered 201 only once every one is stored', async () => {
      const partner = await t.call('POST', '/api/v1/orgs/partners', {
        token,
        body: { name: 'Turn MSP', slug: 'turn' },
      });
      const org = await t.call('POST', '/api/v1/orgs/organizations', {
        token,
        body: { name: 'T', slug: 't', partnerId: partner.body.id },
      });
      const before = t.commits.committed;
      const stored = new Database(t.db.$client.name, { readonly: true });
      try {
        const count = stored.prepare('SELECT count(*) FROM sites WHERE org_id = ?').pluck();
        const created = await Promise.all(
          Array.from({ length: 8 }, async (_, i) => {
            const res = await t.call('POST', '/api/v1/orgs/sites', {
              token,
              body: { orgId: org.body.id, name: `S${i}` },
            });
            // What another connection sees the moment this answer arrives: every site of the batch.
            return { status: res.status, seen: count.get(org.body.id) };
          }),
        );
        expect(created).toEqual(Array(8).fill({ status: 201, seen: 8 }));
        expect(t.commits.committed - before).toBe(1);
      } finally {
        stored.close();
      }
    });
  });
});
