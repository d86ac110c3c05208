import { OutboundBlockedError, type OutboundClient } from '../../delivery/outbound.js';
import type { Config } from './config.js';

/** How long a `test` call waits for the far side (the chat senders' default of 02 §8 is 30 s; a person waits on a
 * test, so it is shorter). */
export const PROBE_TIMEOUT_MS = 15_000;
const USER_AGENT = 'Svc-Integrations/1.0';

export interface ProbeResult {
  success: boolean;
  /** The far side's status, when it answered. */
  status: number | null;
  message: string;
}

export interface ProbeRequest {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
}

/** One request through the outbound guard (HTTPS only, every address checked at connect time, no redirects);
 * 2xx is success, anything else a failure that says why. Never throws. */
export async function probe(outbound: OutboundClient, req: ProbeRequest, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeResult> {
  const body = req.body === undefined ? undefined : JSON.stringify(req.body);
  try {
    const res = await outbound.request(req.url, {
      method: req.method,
      headers: { 'user-agent': USER_AGENT, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}), ...req.headers },
      ...(body ? { body } : {}),
      timeoutMs,
      httpsOnly: true,
      maxResponseBytes: 4096,
    });
    if (res.status >= 200 && res.status < 300) return { success: true, status: res.status, message: `HTTP ${res.status}` };
    const excerpt = res.body.trim().slice(0, 200);
    return { success: false, status: res.status, message: `HTTP ${res.status}${excerpt ? `: ${excerpt}` : ''}` };
  } catch (err) {
    if (err instanceof OutboundBlockedError) return { success: false, status: null, message: `Unsafe URL: ${err.reason}` };
    return { success: false, status: null, message: err instanceof Error ? err.message : String(err) };
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/**
 * The Authorization header a configuration's credentials make (top-level fields, or inside `credentials`):
 * email + apiToken (Jira Cloud, Zendesk as `email/token`) or username + password → Basic; apiKey, apiToken,
 * token or personalAccessToken → Bearer. None: no header.
 */
export function authorizationOf(config: Config): Record<string, string> {
  const nested = typeof config.credentials === 'object' && config.credentials !== null && !Array.isArray(config.credentials) ? (config.credentials as Config) : {};
  const c = { ...config, ...nested };
  const email = str(c.email);
  const apiToken = str(c.apiToken);
  const username = str(c.username);
  const password = str(c.password);
  if (email && apiToken) return { authorization: basic(email, apiToken) };
  if (username && password) return { authorization: basic(username, password) };
  const bearer = str(c.apiKey) ?? apiToken ?? str(c.token) ?? str(c.personalAccessToken);
  return bearer ? { authorization: `Bearer ${bearer}` } : {};
}

/** The body each chat provider's incoming webhook takes: Slack `text` (+ channel, username), Teams `text`
 * (a MessageCard of one line), Discord `content` (+ username). */
export function chatMessage(provider: string, config: Config, text: string): Record<string, unknown> {
  const channel = str(config.channel);
  const username = str(config.username);
  if (provider === 'slack') return { text, ...(channel ? { channel } : {}), ...(username ? { username } : {}) };
  if (provider === 'teams') return { '@type': 'MessageCard', '@context': 'https://schema.org/extensions', summary: 'Svc test notification', text };
  return { content: text, ...(username ? { username } : {}) };
}
