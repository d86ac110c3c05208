import { randomUUID } from 'node:crypto';
import type * as Zlib from 'node:zlib';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { MIN_GZIP_BYTES } from '../../src/server/http/compression.js';
import { type World } from '../helpers/seed.js';
import { type TestApp } from '../helpers/server.js';
import { useWorld } from '../helpers/world.js';

const API = '/api/v1';

/** zlib's gzipSync, counted: how often the server compresses. */
const gzips = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:zlib', async (importOriginal) => {
  const zlib = await importOriginal<typeof Zlib>();
  return {
    ...zlib,
    gzipSync: (...args: Parameters<typeof Zlib.gzipSync>) => {
      gzips.count++;
      return zlib.gzipSync(...args);
    },
  };
});

/** JSON answers are gzipped for clients that ask (RFC 9110 §8.4 Content-Encoding, §12.5.3 Accept-Encoding),
 * and a kept answer is kept compressed (http/compression.ts, http/bind.ts). */
describe('compressed answers (RFC 9110 §8.4, §12.5.3)', () => {
  let t: TestApp;
  let w: World;
  useWorld({}, (app, world) => ([t, w] = [app, world]));

  const get = (url: string, acceptEncoding?: string) =>
    t.app.inject({
      method: 'GET',
      url: `${API}${url}`,
      headers: { authorization: `Bearer ${w.tokens.system}`, ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }) },
    });
  /** Sites created through the API: each adds an audit entry, so the audit list grows past MIN_GZIP_BYTES. */
  const addSites = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const res = await t.call('POST', `${API}/orgs/sites`, { token: w.tokens.system, body: { orgId: w.orgA1.id, name: `compressed ${randomUUID()}` } });
      expect(res.status).toBe(201);
    }
  };

  it('a JSON answer of 1 KiB or more is gzipped for a client that takes gzip: the same JSON once inflated, its length declared, compressed once while kept', async () => {
    await addSites(8);
    const plain = await get('/audit-logs/logs');
    expect(plain.statusCode).toBe(200);
    expect(plain.rawPayload.length).toBeGreaterThanOrEqual(MIN_GZIP_BYTES);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('accept-encoding');

    const first = await get('/audit-logs/logs', 'gzip, deflate, br');
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-encoding']).toBe('gzip');
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers.vary).toBe('accept-encoding');
    expect(Number(first.headers['content-length'])).toBe(first.rawPayload.length);
    expect(first.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    expect(gunzipSync(first.rawPayload).equals(plain.rawPayload)).toBe(true);

    // Kept: the second answer is the same bytes, the gzip made for the first (nothing compressed again).
    const compressed = gzips.count;
    const second = await get('/audit-logs/logs', 'gzip');
    expect(second.rawPayload.equals(first.rawPayload)).toBe(true);
    expect(gzips.count).toBe(compressed);
  });

  it('gzip refused (q=0), identity only, malformed, overlong or no Accept-Encoding: the plain bytes; `*` takes gzip; a small answer goes as it is', async () => {
    await addSites(8);
    const plain = (await get('/audit-logs/logs')).rawPayload;
    const overlong = `${'x-custom;q=0.1, '.repeat(200)}gzip`;
    for (const refusing of ['gzip;q=0', 'identity', 'br', 'gzip;q=0, *;q=1, identity', 'gzip;q=abc', ';;;,,', overlong]) {
      const res = await get('/audit-logs/logs', refusing);
      expect(res.statusCode, refusing.slice(0, 40)).toBe(200);
      expect(res.headers['content-encoding'], refusing.slice(0, 40)).toBeUndefined();
      expect(res.rawPayload.equals(plain), refusing.slice(0, 40)).toBe(true);
    }
    const any = await get('/audit-logs/logs', '*');
    expect(any.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(any.rawPayload).equals(plain)).toBe(true);

    const small = await get(`/orgs/sites/${w.siteA1a.id}`, 'gzip');
    expect(small.statusCode).toBe(200);
    expect(small.rawPayload.length).toBeLessThan(MIN_GZIP_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toBeUndefined();
    expect(small.json()).toMatchObject({ id: w.siteA1a.id });
  });

  it('a write drops the kept answer with its gzip: the next compressed answer has the new row; errors are never compressed', async () => {
    await addSites(8);
    const before = JSON.parse(gunzipSync((await get('/audit-logs/logs?limit=100', 'gzip')).rawPayload).toString('utf8'));
    await addSites(1);
    const compressed = gzips.count;
    const after = await get('/audit-logs/logs?limit=100', 'gzip');
    expect(gzips.count).toBe(compressed + 1);
    const body = JSON.parse(gunzipSync(after.rawPayload).toString('utf8'));
    expect(body.pagination.total).toBe(before.pagination.total + 1);

    const missing = await get(`/orgs/sites/${randomUUID()}`, 'gzip');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-encoding']).toBeUndefined();
    expect(missing.json()).toMatchObject({ error: expect.any(String) });
  });
});
