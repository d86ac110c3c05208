import type { CallerScope } from '../contract/endpoint.js';

/** Who is making a request, resolved once per request by the auth plugin. */
export interface Caller {
  kind: 'user' | 'apiKey' | 'agent';
  /** The user (for API keys: the key's creator, for attribution only). */
  userId: string | null;
  email: string | null;
  name: string | null;
  scope: CallerScope;
  partnerId: string | null;
  /** Organization of an organization-scope caller (user link, API key or agent). */
  orgId: string | null;
  /** Partner callers: which of the partner's organizations they reach (01 §2.6). */
  orgAccess: 'all' | 'selected' | 'none' | null;
  orgIds: string[] | null;
  /** Organization users restricted to some sites (01 §2.6); null means all. */
  siteIds: string[] | null;
  deviceGroupIds: string[] | null;
  roleId: string | null;
  /** `resource:action` grants (user role, effective) or key scopes. */
  permissions: string[];
  mfa: boolean;
  sessionId: string | null;
  apiKeyId: string | null;
  agentId: string | null;
  /** The device of an agent caller (its agentId's). */
  deviceId: string | null;
  partnerStatus: string | null;
}

/** What every service call receives about the request: for attribution, auditing and scoping. */
export interface RequestContext {
  caller: Caller;
  ip: string | null;
  userAgent: string | null;
  requestId: string;
}

/** The context of work the server does on its own (first start, jobs). */
export function systemContext(requestId = 'system'): RequestContext {
  return {
    caller: {
      kind: 'user',
      userId: null,
      email: null,
      name: 'system',
      scope: 'system',
      partnerId: null,
      orgId: null,
      orgAccess: null,
      orgIds: null,
      siteIds: null,
      deviceGroupIds: null,
      roleId: null,
      permissions: ['*:*'],
      mfa: true,
      sessionId: null,
      apiKeyId: null,
      agentId: null,
      deviceId: null,
      partnerStatus: null,
    },
    ip: null,
    userAgent: null,
    requestId,
  };
}

/** A grant matches when resource and action are equal or `*` (04 wire notes "Users and roles"). */
export function grants(held: readonly string[], needed: string): boolean {
  const [resource, action] = needed.split(':');
  return held.some((grant) => {
    if (grant === '*') return true;
    const [r, a] = grant.split(':');
    return (r === '*' || r === resource) && (a === '*' || a === action);
  });
}
