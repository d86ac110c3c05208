import type { EndpointDef, RequestOf, ResponseOf } from '../contract/endpoint.js';
import type { ClientEndpoint, ContractOf } from '../contract/projection.js';
import { contractAreas } from './endpoints.js';
import { UnexpectedResponseError } from './errors.js';
import type { HttpClient, HttpResponse, RawBody } from './http.js';

export interface CallOptions {
  /** Parse the body with the contract's response schema for the status received (off by default: the server
   * already validated it, and skipping zod keeps commands fast; on, it loads the endpoint's contract area). */
  validate?: boolean;
  signal?: AbortSignal;
}

/** True when every success response of the endpoint is a raw stream (CSV, JSON lines). */
export type IsRawOnly<E extends EndpointDef> = [ResponseOf<E>] extends [never] ? true : false;

/** What a typed call resolves to: the parsed JSON body, or the unread response for raw-only endpoints. */
export type CallResult<E extends EndpointDef> = IsRawOnly<E> extends true ? HttpResponse<RawBody> : ResponseOf<E>;

/** A request as the contract types it, seen without its generic: what `call` actually reads. */
interface RequestShape {
  params?: unknown;
  query?: unknown;
  body?: unknown;
  headers?: Record<string, string>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isRawOnlyEndpoint(def: ClientEndpoint): boolean {
  return def.rawOnly === true;
}

/** The zod declaration behind a projection, loaded on first need (validation only: zod is not small). */
export async function contractEndpoint<E extends EndpointDef>(def: ClientEndpoint<E>): Promise<E> {
  const load = contractAreas[def.area];
  const found = load ? (await load())[def.name] : undefined;
  if (!found) throw new Error(`src/client/endpoints.ts is stale: the contract has no ${def.area}.${def.name}`);
  return found as E;
}

/** Fills `:name` parameters of a path. */
export function fillPath(path: string, params: Record<string, unknown> | undefined): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    const value = params?.[name];
    if (typeof value !== 'string' && typeof value !== 'number') throw new Error(`Missing path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
}

function prepare(def: ClientEndpoint, request: RequestShape) {
  const path = fillPath(def.fullPath, isRecord(request.params) ? request.params : undefined);
  const headers: Record<string, string> = {};
  let idempotencyKey: string | undefined;
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (def.idempotent && name.toLowerCase() === 'idempotency-key') idempotencyKey = value;
    else headers[name] = value;
  }
  // The global Web Crypto: node:crypto would load on every command, and only creating calls need a key.
  if (def.idempotent) idempotencyKey ??= crypto.randomUUID();
  return {
    method: def.method,
    path,
    ...(isRecord(request.query) ? { query: request.query } : {}),
    ...(request.body === undefined ? {} : { body: request.body }),
    headers,
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  };
}

async function validateBody(endpoint: ClientEndpoint, status: number, body: unknown): Promise<unknown> {
  const def = await contractEndpoint(endpoint);
  const spec = def.responses[status];
  if (spec === undefined) {
    throw new UnexpectedResponseError(
      `${def.method} ${def.path} answered HTTP ${status}, which the contract does not declare`,
      {
        status,
        body,
      },
    );
  }
  if ('raw' in spec) return body; // a stream: nothing to parse
  const parsed = spec.safeParse(body);
  if (!parsed.success) {
    throw new UnexpectedResponseError(`${def.method} ${def.path} answered a body that does not match the contract`, {
      status,
      body,
      issues: parsed.error.issues,
    });
  }
  return parsed.data;
}

/** Sends a contract call and returns status, headers and the (JSON) body. */
export async function callWithResponse<E extends EndpointDef>(
  http: HttpClient,
  def: ClientEndpoint<E>,
  request: RequestOf<E>,
  options: CallOptions = {},
): Promise<HttpResponse<ResponseOf<E>>> {
  const response = await http.request({
    ...prepare(def, request),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
  const body = options.validate ? await validateBody(def, response.status, response.body) : response.body;
  return { status: response.status, headers: response.headers, body: body as ResponseOf<E> };
}

/** Sends a contract call and returns the body stream unread (raw endpoints, cursor exports). */
export function callRaw<E extends EndpointDef>(
  http: HttpClient,
  def: ClientEndpoint<E>,
  request: RequestOf<E>,
  options: Pick<CallOptions, 'signal'> = {},
): Promise<HttpResponse<RawBody>> {
  return http.request({
    ...prepare(def, request),
    raw: true,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  });
}

/**
 * One typed call: fills the path, sends query and body (and an Idempotency-Key for endpoints that create),
 * and resolves to the response body — or, for raw-only endpoints, to the unread response.
 */
export async function call<E extends EndpointDef>(
  http: HttpClient,
  def: ClientEndpoint<E>,
  request: RequestOf<E>,
  options: CallOptions = {},
): Promise<CallResult<E>> {
  if (isRawOnlyEndpoint(def)) return (await callRaw(http, def, request, options)) as CallResult<E>;
  return (await callWithResponse(http, def, request, options)).body as CallResult<E>;
}

export type EndpointGroup = Readonly<Record<string, ClientEndpoint>>;
export type EndpointGroups = Readonly<Record<string, EndpointGroup>>;

/** One endpoint as a method; the request argument may be left out when nothing in it is required. */
export type ApiMethod<E extends EndpointDef> =
  Partial<RequestOf<E>> extends RequestOf<E>
    ? (request?: RequestOf<E>, options?: CallOptions) => Promise<CallResult<E>>
    : (request: RequestOf<E>, options?: CallOptions) => Promise<CallResult<E>>;

/** `api.tenancy.getPartner({ params: { id } })`: every area of the contract as an object of typed methods. */
export type Api<G extends EndpointGroups> = {
  readonly [A in keyof G]: {
    readonly [K in keyof G[A]]: ApiMethod<ContractOf<G[A][K]>>;
  };
};

type UntypedMethod = (request?: RequestShape, options?: CallOptions) => Promise<unknown>;

/** Builds the typed API over the given areas of src/client/endpoints.ts (eagerly: a closure per endpoint is cheap). */
export function createApi<const G extends EndpointGroups>(
  http: HttpClient,
  groups: G,
  defaults: CallOptions = {},
): Api<G> {
  const api: Record<string, Readonly<Record<string, UntypedMethod>>> = {};
  for (const [area, group] of Object.entries(groups)) {
    const methods: Record<string, UntypedMethod> = {};
    for (const [name, def] of Object.entries(group)) {
      methods[name] = (request = {}, options = {}) =>
        call(http, def, request as RequestOf<EndpointDef>, { ...defaults, ...options });
    }
    api[area] = Object.freeze(methods);
  }
  return Object.freeze(api) as unknown as Api<G>;
}
