import type { FastifyReply, FastifyRequest } from 'fastify';
import { requiredPermissions, type EndpointDef } from '../../contract/endpoint.js';
import type { Guard } from './bind.js';
import { grants, systemContext, type Caller, type RequestContext } from '../context.js';
import { DomainError, forbidden, partnerInactive, tooManyRequests, unauthorized, validationError } from '../errors.js';

/** The state of a key's hourly window after a request (01 §5.6). */
export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds. */
  reset: number;
  /** Seconds until a refused request would be admitted. */
  retryAfter: number;
}

export interface CredentialResolvers {
  /** A bearer access token → the user caller; null when the token or its session is not valid. */
  session(token: string): Promise<Caller | null>;
  /** An X-API-Key value → the key's caller (null when the window refused the request) and the window's state,
   * or throws the 401s of 01 §5.2 (modules/api-keys/authenticator.ts). */
  apiKey?: (key: string) => Promise<{ caller: Caller | null; rateLimit: RateLimitState }>;
  /** An agent bearer token for /agents/:id/* → the agent caller (modules/devices). */
  agent?(token: string): Promise<Caller>;
}

export interface GuardOptions {
  resolvers: CredentialResolvers;
  mfaEnabled: boolean;
  clientIp(request: FastifyRequest): string | null;
}

/** The context of a request without credentials (public routes and the invitation and reset pages). */
export function anonymous(request: FastifyRequest, ip: string | null): RequestContext {
  const ctx = systemContext(request.id);
  return {
    caller: { ...ctx.caller, name: null, permissions: [], mfa: false },
    ip,
    userAgent: request.headers['user-agent'] ?? null,
    requestId: request.id,
  };
}

/** The one parser of `Authorization: Bearer …` (the guard's, and public routes that accept a session). */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * Authenticates an X-API-Key and puts the window's X-RateLimit-* headers on the reply, whatever the answer
 * turns out to be (01 §5.6: every key-authenticated response, errors included); a refusal by the window is the
 * 429 with Retry-After. The 401s of a key that does not authenticate carry no headers.
 */
async function authenticateKey(resolve: NonNullable<CredentialResolvers['apiKey']>, key: string, reply: FastifyReply): Promise<Caller> {
  const { caller, rateLimit } = await resolve(key);
  void reply.headers({
    'x-ratelimit-limit': String(rateLimit.limit),
    'x-ratelimit-remaining': String(rateLimit.remaining),
    'x-ratelimit-reset': String(rateLimit.reset),
  });
  if (!caller) throw tooManyRequests('Rate limit exceeded', rateLimit.retryAfter, 'RATE_LIMIT_EXCEEDED');
  return caller;
}

/**
 * For the not-found answer: a request with an X-API-Key to a path no route serves is still key-authenticated
 * (counted in the key's window, with its headers, or 429 over the limit); a key that does not authenticate
 * leaves the answer the plain 404.
 */
export function createNotFoundKeyCheck(resolvers: CredentialResolvers) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const apiKey = request.headers['x-api-key'];
    if (typeof apiKey !== 'string' || !resolvers.apiKey) return;
    try {
      await authenticateKey(resolvers.apiKey, apiKey, reply);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'unauthenticated') return;
      throw err;
    }
  };
}

/** 01 §5.13: an agent token opens only its own agent's routes (`/agents/:<param>/…`). The agent id is read from
 * the validated params, as the handler will see it. */
function assertOwnAgent(def: EndpointDef, request: FastifyRequest, caller: Caller): void {
  const param = /^\/agents\/:(\w+)/.exec(def.path)?.[1];
  if (!param || !def.params) return;
  const parsed = def.params.safeParse(request.params);
  if (!parsed.success) throw validationError(parsed.error, 'params');
  const named: unknown = (parsed.data as Record<string, unknown>)[param];
  if (named !== caller.agentId) throw forbidden('Agent token does not belong to this agent', 'AGENT_MISMATCH');
}

/** The one guard: authenticates the request and enforces the endpoint's declared auth (01 §5, 04 notes). */
export function createGuard(options: GuardOptions): Guard {
  const { resolvers } = options;
  return async (request, reply, def: EndpointDef) => {
    const ip = options.clientIp(request);
    const rule = def.auth;
    if (rule.public) return anonymous(request, ip);

    let caller: Caller;
    if (rule.agent) {
      const token = bearerToken(request);
      if (!token || !resolvers.agent) throw unauthorized();
      caller = await resolvers.agent(token);
      assertOwnAgent(def, request, caller);
    } else {
      const apiKey = request.headers['x-api-key'];
      if (typeof apiKey === 'string' && resolvers.apiKey) {
        // 01 §5.3: with both credentials present the API key wins.
        caller = await authenticateKey(resolvers.apiKey, apiKey, reply);
        if (rule.sessionOnly) throw forbidden('This endpoint requires a user session, not an API key', 'SESSION_REQUIRED');
      } else {
        const token = bearerToken(request);
        if (!token) throw unauthorized('Missing or invalid authorization header');
        const resolved = await resolvers.session(token);
        if (!resolved) throw unauthorized('Invalid or expired token', 'INVALID_TOKEN');
        caller = resolved;
      }
    }

    if (caller.partnerStatus && caller.partnerStatus !== 'active' && !rule.allowInactivePartner) {
      throw partnerInactive(caller.partnerStatus);
    }
    if (rule.callerScopes && !rule.callerScopes.includes(caller.scope)) throw forbidden();
    if (caller.kind === 'apiKey') {
      // 01 §5.4: at least one of the route's scopes; `*` satisfies all; empty scopes are denied here and
      // allowed on unprotected routes.
      // Without declared key scopes, the key needs every permission of the route.
      const enough = rule.keyScopes
        ? rule.keyScopes.length === 0 || rule.keyScopes.some((scope) => grants(caller.permissions, scope))
        : requiredPermissions(rule).every((permission) => grants(caller.permissions, permission));
      if (!enough) throw forbidden('Insufficient permissions', 'INSUFFICIENT_SCOPE');
    } else if (!requiredPermissions(rule).every((permission) => grants(caller.permissions, permission))) {
      throw forbidden();
    }
    if (rule.mfa && options.mfaEnabled && caller.kind === 'user' && !caller.mfa) {
      throw forbidden('MFA required', 'MFA_REQUIRED');
    }
    return { caller, ip, userAgent: request.headers['user-agent'] ?? null, requestId: request.id };
  };
}
