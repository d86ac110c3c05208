import type { z } from 'zod';

/** Who may call an endpoint and what they must have proved. Enforced by the server's one guard. */
export interface EndpointAuth {
  /** No credential at all (health, login, registration, agent enrollment). */
  readonly public?: boolean;
  /** Named permission(s) `resource:action` the caller needs, all of them (01 §2.8). Omitted: any authenticated
   * caller. */
  readonly permission?: string | readonly string[];
  /** The caller's token must carry `mfa: true` (01 §5.7). */
  readonly mfa?: boolean;
  /** A user session is required; API keys are refused (01 §5.5). */
  readonly sessionOnly?: boolean;
  /** Caller scopes allowed to reach the route (01 §4.3 "Scope" column). Omitted: all three. */
  readonly callerScopes?: readonly CallerScope[];
  /** Scopes an API key needs (at least one; `*` satisfies all) (01 §5.4). Omitted: unprotected for keys. */
  readonly keyScopes?: readonly string[];
  /** Reachable by callers whose partner is not active (04 wire notes: sign-in, /users/me, /orgs/partners/me). */
  readonly allowInactivePartner?: boolean;
  /** Authenticated by an agent bearer token rather than a user or API key. */
  readonly agent?: boolean;
}

/** The permissions an endpoint needs, every one of them. */
export function requiredPermissions(auth: EndpointAuth): readonly string[] {
  if (auth.permission === undefined) return [];
  return typeof auth.permission === 'string' ? [auth.permission] : auth.permission;
}

export type CallerScope = 'system' | 'partner' | 'organization';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A response that is not JSON: a stream of text such as CSV or JSON lines. */
export interface RawResponse {
  readonly raw: true;
  readonly contentTypes: readonly string[];
  readonly headers?: readonly string[];
}

export type ResponseSpec = z.ZodType | RawResponse;

export interface EndpointDef {
  readonly method: HttpMethod;
  /** Path below `/api/v1` (or absolute when `root` is true), with `:name` parameters. */
  readonly path: string;
  /** The path is served outside `/api/v1` (health). */
  readonly root?: boolean;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  /** The success responses by status; errors share the one error body. */
  readonly responses: Readonly<Record<number, ResponseSpec>>;
  readonly auth: EndpointAuth;
  readonly summary: string;
  readonly description?: string;
  /** The call creates a resource: the client sends an Idempotency-Key and the server honours it. */
  readonly idempotent?: boolean;
  /** The largest request body this endpoint accepts, in bytes (default: the server's limit); larger → 413. */
  readonly bodyLimit?: number;
}

/** Identity function that keeps the literal types of a declaration. */
export function endpoint<const E extends EndpointDef>(def: E): E {
  return def;
}

type Infer<T> = T extends z.ZodType ? z.infer<T> : never;
type InferInput<T> = T extends z.ZodType ? z.input<T> : never;

export type SuccessStatus<E extends EndpointDef> = Extract<keyof E['responses'], number>;

/** The parsed body of the endpoint's success response (the first JSON one). */
export type ResponseOf<E extends EndpointDef> = {
  [S in SuccessStatus<E>]: E['responses'][S] extends z.ZodType ? z.infer<E['responses'][S]> : never;
}[SuccessStatus<E>];

export type ParamsOf<E extends EndpointDef> = Infer<E['params']>;
export type QueryOf<E extends EndpointDef> = Infer<E['query']>;
export type BodyOf<E extends EndpointDef> = Infer<E['body']>;

/** What a client passes: the schemas' input types, every key optional where the schema allows it. */
export type RequestOf<E extends EndpointDef> = (E['params'] extends z.ZodType
  ? { params: InferInput<E['params']> }
  : { params?: undefined }) &
  (E['query'] extends z.ZodType ? { query?: InferInput<E['query']> } : { query?: undefined }) &
  (E['body'] extends z.ZodType ? { body: InferInput<E['body']> } : { body?: undefined }) & {
    headers?: Record<string, string>;
  };

export function isRawResponse(spec: ResponseSpec | undefined): spec is RawResponse {
  return typeof spec === 'object' && spec !== null && 'raw' in spec && spec.raw;
}

export const API_PREFIX = '/api/v1';

export function fullPath(def: EndpointDef): string {
  return def.root ? def.path : `${API_PREFIX}${def.path === '/' ? '' : def.path}`;
}
