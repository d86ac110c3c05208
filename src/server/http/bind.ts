import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import type { z } from 'zod';
import {
  fullPath,
  isRawResponse,
  type BodyOf,
  type EndpointDef,
  type ParamsOf,
  type QueryOf,
  type ResponseOf,
} from '../../contract/endpoint.js';
import type { ReadCache } from '../lib/read-cache.js';
import { compileStrip, type Strip } from '../lib/schema-strip.js';
import type { Caller, RequestContext } from '../context.js';
import { validationError } from '../errors.js';
import { sendJson } from './compression.js';

export interface HandlerInput<E extends EndpointDef> {
  params: ParamsOf<E>;
  query: QueryOf<E>;
  body: BodyOf<E>;
  ctx: RequestContext;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** Hooks of one endpoint's route only (Fastify route-level hooks), for what concerns a few endpoints (a check before
 * the body is read, a body encoding): a global hook would run, and cost, on every request. */
export type RouteHooks = Pick<RouteShorthandOptions, 'onRequest' | 'preParsing'>;

/** A handler returns the response body, or (for raw responses) sends it itself and returns nothing. */
export type Handler<E extends EndpointDef> = (
  input: HandlerInput<E>,
) => Promise<ResponseOf<E> | undefined> | ResponseOf<E> | undefined;

/** Resolves the request context and enforces the endpoint's auth declaration (http/guard.ts). */
export type Guard = (request: FastifyRequest, reply: FastifyReply, def: EndpointDef) => Promise<RequestContext>;

/** Wraps a create call so a repeated Idempotency-Key replays the first response (http/idempotency.ts). */
export type IdempotencyWrapper = (
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: RequestContext,
  run: () => Promise<{ status: number; body: unknown }>,
) => Promise<{ status: number; body: unknown; replayed: boolean }>;

/** Answers of GET routes as the bytes sent (UTF-8 JSON, encoded once; gzipped once for clients that take it,
 * http/compression.ts), kept until the next write to the database (lib/read-cache.ts): sending a kept answer
 * again costs the same whatever its size. */
export type ResponseCache = ReadCache<{ status: number; body: Buffer }>;

export interface BindDeps {
  guard: Guard;
  idempotency: IdempotencyWrapper;
  /** When given, every authenticated GET route with a JSON answer keeps its answers here. */
  responses?: ResponseCache;
  /** When given, what every other route's handler awaits first: the mutations of a turn run together at its end
   * (http/mutation-turn.ts). */
  mutationTurn?: () => Promise<void>;
}

/** Larger answers are not kept: the cache's memory stays bounded by its entry count times this. */
const MAX_KEPT_BYTES = 64 * 1024;

/** The caller whole (scope, reach, permissions, session) as text, so no kept answer reaches another caller;
 * computed once per caller object (the session and API key authenticators hand out the same frozen caller
 * while the database is unchanged). */
const callerKeys = new WeakMap<Caller, string>();
function callerKey(caller: Caller): string {
  let key = callerKeys.get(caller);
  if (key === undefined) {
    key = JSON.stringify(caller);
    // Only a frozen caller cannot change under its remembered text.
    if (Object.isFrozen(caller)) callerKeys.set(caller, key);
  }
  return key;
}

/** Every endpoint bound so far, so a test can prove the contract is fully served. */
export const BOUND = Symbol('svc.boundEndpoints');

function parseInput(schema: z.ZodType | undefined, value: unknown, where: 'params' | 'query' | 'body'): unknown {
  if (!schema) return undefined;
  // An absent JSON body is an empty object to the schema, so "required" messages name the fields.
  const input = where === 'body' && (value === undefined || value === null) ? {} : value;
  const result = schema.safeParse(input);
  if (!result.success) throw validationError(result.error, where);
  return result.data;
}

function successStatus(def: EndpointDef): number {
  const statuses = Object.keys(def.responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort((a, b) => a - b);
  return statuses[0] ?? 200;
}

/** Registers one contract endpoint on the app: auth, input validation, the handler, output serialization. */
export function bind<E extends EndpointDef>(
  app: FastifyInstance,
  deps: BindDeps,
  def: E,
  handler: Handler<E>,
  hooks: RouteHooks = {},
): void {
  const status = successStatus(def);
  const raw = isRawResponse(def.responses[status]);
  const bound = ((app as unknown as Record<symbol, Set<EndpointDef>>)[BOUND] ??= new Set());
  bound.add(def);

  // Response schemas strip every field they do not list: hashes and secrets never leave the server. The strip
  // of each declared status is compiled once (lib/schema-strip.ts) rather than run as a zod parse per request,
  // on the route's first answer with that status: compiling all of them at start cost it some 100 ms.
  const strips = new Map<number, Strip | null>();
  const strip = (result: unknown, code: number) => {
    let compiled = strips.get(code);
    if (compiled === undefined) {
      const spec = def.responses[code];
      compiled = spec && !isRawResponse(spec) ? compileStrip(spec) : null;
      strips.set(code, compiled);
    }
    return compiled ? compiled(result) : result;
  };
  /** A handler may pick another declared status (readiness answers 503 with the same body shape). */
  const statusOf = (reply: FastifyReply) =>
    reply.statusCode !== 200 && def.responses[reply.statusCode] ? reply.statusCode : status;
  // An authenticated GET answer is a function of the database, the caller and the parsed input (and, within the
  // cache's max age, of the clock): kept until the next write. Public routes (health) are left alone, and so are
  // agents' routes: an agent's command poll hands commands out and long-polls (`wait`), which a kept empty
  // answer would skip.
  const responses = def.method === 'GET' && !raw && !def.auth.public && !def.auth.agent ? deps.responses : undefined;
  const routeKey = `${def.method} ${fullPath(def)}`;
  const mutationTurn = def.method === 'GET' ? undefined : deps.mutationTurn;

  const respond = async (input: HandlerInput<E>): Promise<{ status: number; body: unknown }> => {
    const result = await handler(input);
    if (raw || input.reply.sent) return { status, body: undefined };
    const chosen = statusOf(input.reply);
    return { status: chosen, body: strip(result, chosen) };
  };

  app.route({
    method: def.method,
    url: fullPath(def),
    config: { endpoint: def },
    ...(def.bodyLimit !== undefined ? { bodyLimit: def.bodyLimit } : {}),
    ...hooks,
    handler: async (request, reply) => {
      if (mutationTurn) await mutationTurn();
      const ctx = await deps.guard(request, reply, def);
      // A kept answer is looked up by the raw parameters and query, before they are parsed: only answers to
      // input that parsed are kept, and parsing is a function of the input, so the same raw input would parse
      // to the same values (and the kept answer is dropped within the cache's max age anyway).
      let key: string | undefined;
      if (responses) {
        key = `${routeKey} ${JSON.stringify([request.params, request.query])} ${callerKey(ctx.caller)}`;
        const kept = responses.lookup(key);
        // Sent as its bytes (no serialization, no re-encoding), gzipped once if the client takes it.
        if (kept) return sendJson(request, reply, kept.status, kept.body);
      }
      const input: HandlerInput<E> = {
        params: parseInput(def.params, request.params, 'params') as ParamsOf<E>,
        query: parseInput(def.query, request.query, 'query') as QueryOf<E>,
        body: parseInput(def.body, request.body, 'body') as BodyOf<E>,
        ctx,
        request,
        reply,
      };

      if (def.idempotent && request.headers['idempotency-key'] !== undefined) {
        const outcome = await deps.idempotency(request, reply, ctx, () => respond(input));
        if (outcome.replayed) reply.header('idempotent-replayed', 'true');
        return reply.code(outcome.status).send(outcome.body);
      }

      if (responses && key !== undefined) {
        const stamp = responses.stamp();
        const result = await handler(input);
        if (reply.sent) return reply;
        const chosen = statusOf(reply);
        // The text Fastify would send for the object (JSON.stringify, the same content type), as its bytes.
        const body = Buffer.from(JSON.stringify(strip(result, chosen)), 'utf8');
        if (body.length <= MAX_KEPT_BYTES) responses.store(key, { status: chosen, body }, stamp);
        return sendJson(request, reply, chosen, body);
      }

      const result = await handler(input);
      if (raw || reply.sent) return reply;
      return reply.code(statusOf(reply)).send(strip(result, statusOf(reply)));
    },
  });
}

export function boundEndpoints(app: FastifyInstance): Set<EndpointDef> {
  return (app as unknown as Record<symbol, Set<EndpointDef> | undefined>)[BOUND] ?? new Set();
}
