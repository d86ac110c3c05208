import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { tenancy } from '../../src/client/endpoints.js';
import {
  createApi,
  detectPage,
  headerValue,
  paginateCursor,
  paginateItems,
  paginatePages,
  paginateRaw,
  type Page,
} from '../../src/client/index.js';
import { JSON_HEADERS, useHarness } from './helpers.js';

const setup = useHarness();

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of iterable) out.push(value);
  return out;
}

function site(n: number) {
  return {
    id: randomUUID(),
    orgId: randomUUID(),
    name: `site-${n}`,
    address: null,
    timezone: 'UTC',
    contact: null,
    settings: {},
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
  };
}

describe('paginatePages', () => {
  it('walks 3 pages of a contract list through a loopback server and stops at page × limit ≥ total', async () => {
    const { server, client, calls } = await setup();
    const api = createApi(client, { tenancy });
    const sites = Array.from({ length: 5 }, (_, i) => site(i));
    for (const page of [1, 2, 3]) {
      server
        .intercept({ path: `/api/v1/orgs/sites?page=${page}&limit=2` })
        .reply(
          200,
          { data: sites.slice((page - 1) * 2, page * 2), pagination: { page, limit: 2, total: 5 } },
          { headers: JSON_HEADERS },
        );
    }

    const pages = await collect(paginatePages((page) => api.tenancy.listSites({ query: { page, limit: 2 } })));

    expect(pages.map((items) => items.map((s) => s.name))).toEqual([
      ['site-0', 'site-1'],
      ['site-2', 'site-3'],
      ['site-4'],
    ]);
    expect(calls()).toHaveLength(3);
  });

  it('stops on an empty page even when the total says more', async () => {
    const requested: number[] = [];
    const fetchPage = (page: number): Promise<Page<number>> => {
      requested.push(page);
      return Promise.resolve({ data: page === 1 ? [1, 2] : [], pagination: { page, limit: 2, total: 10 } });
    };
    expect(await collect(paginateItems(fetchPage))).toEqual([1, 2]);
    expect(requested).toEqual([1, 2]);
  });

  it('03 §2.6 skipCount: an unknown total (-1) walks on while pages are full and stops at the first short one', async () => {
    const requested: number[] = [];
    const fetchPage = (page: number): Promise<Page<number>> => {
      requested.push(page);
      const data = page < 3 ? [page * 10, page * 10 + 1] : [page * 10];
      return Promise.resolve({ data, pagination: { page, limit: 2, total: -1 } });
    };
    expect(await collect(paginateItems(fetchPage))).toEqual([10, 11, 20, 21, 30]);
    expect(requested).toEqual([1, 2, 3]);
  });

  it('uses the limit the server applied (clamped), starts where asked and honours maxPages', async () => {
    const requested: number[] = [];
    const fetchPage = (page: number): Promise<Page<number>> => {
      requested.push(page);
      return Promise.resolve({ data: [page], pagination: { page, limit: 1, total: 9 } });
    };
    expect(await collect(paginateItems(fetchPage, { startPage: 3, maxPages: 2 }))).toEqual([3, 4]);
    expect(requested).toEqual([3, 4]);
  });
});

describe('paginateRaw (svc api --paginate)', () => {
  it('finds `data` or the first array field (PAM `requests`)', () => {
    expect(detectPage({ data: [1], pagination: { page: 1, limit: 1, total: 1 } })).toEqual({
      items: [1],
      field: 'data',
      pagination: { page: 1, limit: 1, total: 1 },
    });
    expect(
      detectPage({ summary: {}, requests: [{ id: 'r' }], pagination: { page: 1, limit: 50, total: 1 } }),
    ).toMatchObject({ field: 'requests', items: [{ id: 'r' }] });
    expect(detectPage([1, 2])).toEqual({ items: [1, 2] });
    expect(detectPage({ id: 'x' })).toBeUndefined();
  });

  it('follows pages of the PAM shape', async () => {
    const bodies = [1, 2, 3].map((page) => ({
      requests: [`r${page}a`, `r${page}b`].slice(0, page === 3 ? 1 : 2),
      pagination: { page, limit: 2, total: 5 },
    }));
    const requested: number[] = [];
    const rows = await collect(
      paginateRaw((page) => {
        requested.push(page);
        return Promise.resolve(bodies[page - 1]);
      }),
    );
    expect(rows.flat()).toEqual(['r1a', 'r1b', 'r2a', 'r2b', 'r3a']);
    expect(requested).toEqual([1, 2, 3]);
  });

  it('yields an unpaged body once', async () => {
    expect(await collect(paginateRaw(() => Promise.resolve({ data: [1, 2] })))).toEqual([[1, 2]]);
    expect(await collect(paginateRaw(() => Promise.resolve({ id: 'x' })))).toEqual([[{ id: 'x' }]]);
  });
});

describe('paginateCursor', () => {
  it('follows X-Next-Cursor while X-Has-More is true, starting from a checkpoint when given', async () => {
    const pages: Record<string, { headers: Record<string, string>; body: string }> = {
      start: { headers: { 'x-has-more': 'true', 'x-next-cursor': 'c2' }, body: 'p1' },
      c2: { headers: { 'x-has-more': 'true', 'x-next-cursor': 'c3' }, body: 'p2' },
      c3: { headers: { 'x-has-more': 'false' }, body: 'p3' },
    };
    const seen: (string | undefined)[] = [];
    const fetch = (cursor?: string) => {
      seen.push(cursor);
      const page = pages[cursor ?? 'start'];
      return page ? Promise.resolve(page) : Promise.reject(new Error(`unknown cursor ${String(cursor)}`));
    };

    expect((await collect(paginateCursor(fetch))).map((r) => r.body)).toEqual(['p1', 'p2', 'p3']);
    expect(seen).toEqual([undefined, 'c2', 'c3']);
    expect(
      (await collect(paginateCursor(fetch, { cursor: 'c2' }))).map((r) => headerValue(r.headers, 'x-has-more')),
    ).toEqual(['true', 'false']);
  });

  it('readAhead asks for the next page while the caller still holds this one, and discards it when the caller stops', async () => {
    const fetched: string[] = [];
    const fetch = (cursor?: string) => {
      const n = cursor === undefined ? 1 : Number(cursor);
      fetched.push(String(n));
      return Promise.resolve({ headers: { 'x-has-more': String(n < 5), 'x-next-cursor': String(n + 1) }, n });
    };
    const discarded: number[] = [];
    const pages = paginateCursor(fetch, { readAhead: { pages: 1, discard: (r) => discarded.push(r.n) } });
    const first = await pages.next();
    expect(first.value).toMatchObject({ n: 1 });
    // Page 2 is under way before the caller is done with page 1.
    expect(fetched).toEqual(['1', '2']);
    expect((await pages.next()).value).toMatchObject({ n: 2 });
    expect(fetched).toEqual(['1', '2', '3']);
    await pages.return();
    await new Promise((resolve) => setImmediate(resolve));
    expect(discarded).toEqual([3]);

    // To the end: every page once, in order, nothing fetched past the last one.
    fetched.length = 0;
    const all = await collect(paginateCursor(fetch, { readAhead: { pages: 1, discard: (r) => discarded.push(r.n) } }));
    expect(all.map((r) => r.n)).toEqual([1, 2, 3, 4, 5]);
    expect(fetched).toEqual(['1', '2', '3', '4', '5']);
    expect(discarded).toEqual([3]);
  });

  it('readAhead of 2 keeps at most two pages the caller has not taken in flight', async () => {
    const fetched: number[] = [];
    const fetch = (cursor?: string) => {
      const n = cursor === undefined ? 1 : Number(cursor);
      fetched.push(n);
      return Promise.resolve({ headers: { 'x-has-more': String(n < 9), 'x-next-cursor': String(n + 1) }, n });
    };
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const pages = paginateCursor(fetch, { readAhead: { pages: 2, discard: () => undefined } });
    expect((await pages.next()).value).toMatchObject({ n: 1 });
    await settle();
    expect(fetched).toEqual([1, 2, 3]);
    expect((await pages.next()).value).toMatchObject({ n: 2 });
    await settle();
    expect(fetched).toEqual([1, 2, 3, 4]);
    const rest: number[] = [];
    for (let r = await pages.next(); !r.done; r = await pages.next()) rest.push(r.value.n);
    expect(rest).toEqual([3, 4, 5, 6, 7, 8, 9]);
    expect(fetched).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('readAhead: a page fetched ahead that fails is thrown when it is reached, not as an unhandled rejection', async () => {
    const fetch = (cursor?: string) =>
      cursor === undefined
        ? Promise.resolve({ headers: { 'x-has-more': 'true', 'x-next-cursor': 'c2' } })
        : Promise.reject(new Error('connection reset'));
    const pages = paginateCursor(fetch, { readAhead: { pages: 1, discard: () => undefined } });
    await pages.next();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(pages.next()).rejects.toThrow('connection reset');
  });

  it('refuses a has-more page without a cursor, and a cursor that repeats', async () => {
    await expect(collect(paginateCursor(() => Promise.resolve({ headers: { 'x-has-more': 'true' } })))).rejects.toThrow(
      /X-Next-Cursor/,
    );
    await expect(
      collect(paginateCursor(() => Promise.resolve({ headers: { 'x-has-more': 'true', 'x-next-cursor': 'same' } }))),
    ).rejects.toThrow(/twice/);
  });
});
