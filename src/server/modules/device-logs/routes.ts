import { PassThrough, type Readable } from 'node:stream';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { errorCodes, type preParsingAsyncHookHandler } from 'fastify';
import { LOG_BODY_LIMIT } from '../../../contract/device-logs.js';
import { contract } from '../../../contract/index.js';
import type { ModuleContext, RouteHooks } from '../../app-context.js';
import { badRequest } from '../../errors.js';
import { DeviceLogsService } from './service.js';

const gunzipAsync = promisify(gunzip);

/** 05 wire notes "4.4 Logs": 400 `{error: "Failed to decode request body", detail}`. */
const decodeFailed = (detail: string) => badRequest('Failed to decode request body', 'BODY_DECODE_FAILED', { detail });

/** The request's bytes, refused with 413 past `limit` (as Fastify's own body limit does). */
async function readAll(payload: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of payload) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += bytes.length;
    if (size > limit) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/**
 * The route hook that takes `Content-Encoding: gzip` request bodies (03 §4.4 log ingest), inflated before the JSON
 * parser sees them: at most `maxBytes` compressed (413 beyond, like any body) and at most `maxBytes` inflated
 * (zlib's maxOutputLength; beyond it, or for bytes that are not gzip, 400 `Failed to decode request body`). No
 * encoding or `identity` passes as it is; any other encoding is refused with the same 400.
 */
export function gzipBodies(maxBytes: number): RouteHooks {
  const preParsing: preParsingAsyncHookHandler = async (request, _reply, payload) => {
    const encoding = String(request.headers['content-encoding'] ?? '').trim().toLowerCase();
    if (encoding === '' || encoding === 'identity') return payload;
    if (encoding !== 'gzip' && encoding !== 'x-gzip') throw decodeFailed(`Unsupported Content-Encoding: ${encoding.slice(0, 40)}`);
    const length = Number(request.headers['content-length']);
    if (length > maxBytes) throw new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
    const compressed = await readAll(payload, maxBytes);
    let inflated: Buffer;
    try {
      inflated = await gunzipAsync(compressed, { maxOutputLength: maxBytes });
    } catch (err) {
      const detail = err instanceof RangeError ? `Decompressed body exceeds ${maxBytes} bytes` : err instanceof Error ? err.message : String(err);
      throw decodeFailed(detail);
    }
    // What the parser reads; Fastify checks Content-Length against the bytes received, which were these.
    const body = new PassThrough() as PassThrough & { receivedEncodedLength: number };
    body.receivedEncodedLength = compressed.length;
    body.end(inflated);
    return body;
  };
  return { preParsing };
}

/** Agent diagnostic logs and device event logs (03 §4.4): the agents' two ingest routes and the two device reads. */
export function registerDeviceLogRoutes({ app, db, route, services }: ModuleContext): void {
  const c = contract.deviceLogs;
  const logs = new DeviceLogsService(db, services.devices, (err, what) => app.log.error({ err }, what));
  const gzipped = gzipBodies(LOG_BODY_LIMIT);

  route(c.ingest, ({ ctx, params, body, reply }) => {
    const { stored, total } = logs.ingest(ctx, params.id, body);
    // 03 §4.4: 200 for an empty batch, 201 all stored, 207 some, 500 none.
    if (total === 0) return { received: 0 };
    if (stored === total) {
      void reply.code(201);
      return { received: stored };
    }
    if (stored > 0) {
      void reply.code(207);
      return { received: stored, total, partial: true as const };
    }
    void reply.code(500);
    return { error: 'Failed to insert logs', code: 'LOG_INSERT_FAILED', received: 0 };
  }, gzipped);
  route(c.diagnosticLogs, ({ ctx, params, query }) => logs.diagnosticLogs(ctx, params.id, query));
  route(c.submitEvents, ({ ctx, params, body, reply }) => {
    const { stored, total, failedGroups } = logs.submitEvents(ctx, params.id, body);
    if (failedGroups === 0) return { success: true as const, count: stored, filtered: 0 };
    // 05 wire notes: a group that could not be stored fails the submission, saying how many were.
    void reply.code(500);
    return { success: false as const, error: 'Partial insert failure', code: 'EVENT_INSERT_FAILED', count: stored, filtered: 0, expectedCount: total };
  }, gzipped);
  route(c.events, ({ ctx, params, query }) => logs.events(ctx, params.id, query));
}
