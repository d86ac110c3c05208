import type { ChannelType } from '../../../contract/alert-channels.js';
import { HEADER_NAME, headerValueProblem } from '../../../contract/webhooks.js';
import { DomainError } from '../../errors.js';

/** A channel's configuration as stored (plaintext inside the sealed column) and as senders read it. */
export type ChannelConfig = Record<string, unknown>;

export const WEBHOOK_METHODS = ['POST', 'PUT', 'PATCH'] as const;
export const AUTH_TYPES = ['none', 'bearer', 'basic', 'api_key'] as const;
export const INCIDENT_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
/** 02 §2.4, §8: webhook channel timeout 1000-60000 ms, default 30000; incident default 15000. */
export const TIMEOUT = { min: 1000, max: 60_000, webhook: 30_000, incident: 15_000 } as const;
/** The retries a webhook channel may ask for (02 §2.4 gives the default 0, not a bound; docs/api-notes.md). */
export const MAX_RETRY_COUNT = 5;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const E164 = /^\+[1-9]\d{1,14}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v.trim().length > 0;

/** 02 §2.4: e-mail recipients are `recipients` or `to`, a string (comma-separated) or a string array. */
export function recipientsOf(config: ChannelConfig): string[] {
  const raw = config.recipients ?? config.to;
  const list = typeof raw === 'string' ? raw.split(',') : Array.isArray(raw) ? raw : [];
  return list.map((r) => (typeof r === 'string' ? r.trim() : String(r))).filter((r) => r.length > 0);
}

function httpsUrl(value: unknown): boolean {
  if (!nonEmpty(value)) return false;
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

const validTimeout = (v: unknown) => v === undefined || (Number.isInteger(v) && (v as number) >= TIMEOUT.min && (v as number) <= TIMEOUT.max);
const TIMEOUT_MESSAGE = `Timeout must be between ${TIMEOUT.min} and ${TIMEOUT.max} milliseconds`;

/** Placeholders stand for any JSON value, so `{{x}}` is replaced by 0 before the template is parsed. */
export function templateIsJson(template: string): boolean {
  try {
    JSON.parse(template.replace(/\{\{\s*[\w.]+\s*\}\}/g, '0'));
    return true;
  } catch {
    return false;
  }
}

function webhookProblems(c: ChannelConfig): string[] {
  const out: string[] = [];
  if (!httpsUrl(c.url)) out.push('Missing or invalid URL');
  if (c.method !== undefined && !(typeof c.method === 'string' && (WEBHOOK_METHODS as readonly string[]).includes(c.method.toUpperCase())))
    out.push('Method must be POST, PUT, or PATCH');
  if (c.headers !== undefined && !(isObject(c.headers) && Object.values(c.headers).every((v) => typeof v === 'string')))
    out.push('Headers must be an object of string values');
  // What Node's client would refuse at every send is refused here, as for webhooks (02 §4.3): such a channel never sends.
  for (const [name, value] of Object.entries(isObject(c.headers) ? c.headers : {})) {
    const problem = HEADER_NAME.test(name) ? (typeof value === 'string' ? headerValueProblem(value) : null) : 'must be a valid RFC token';
    if (problem) out.push(`Header "${name}" ${problem}`);
  }
  if (typeof c.apiKeyHeader === 'string' && c.apiKeyHeader !== '' && !HEADER_NAME.test(c.apiKeyHeader)) out.push('apiKeyHeader must be a valid RFC token');
  for (const field of ['authToken', 'apiKeyValue'] as const) {
    const value = c[field];
    const problem = typeof value === 'string' ? headerValueProblem(value) : null;
    if (problem) out.push(`${field} ${problem}`);
  }
  const authType = c.authType ?? 'none';
  if (!(AUTH_TYPES as readonly unknown[]).includes(authType)) out.push('Invalid auth type. Must be one of: none, bearer, basic, api_key');
  if (authType === 'bearer' && !nonEmpty(c.authToken)) out.push('Bearer auth requires authToken');
  if (authType === 'basic' && !(nonEmpty(c.authUsername) && nonEmpty(c.authPassword))) out.push('Basic auth requires authUsername and authPassword');
  if (authType === 'api_key' && !(nonEmpty(c.apiKeyHeader) && nonEmpty(c.apiKeyValue))) out.push('API key auth requires apiKeyHeader and apiKeyValue');
  if (!validTimeout(c.timeout)) out.push(TIMEOUT_MESSAGE);
  if (c.retryCount !== undefined && !(Number.isInteger(c.retryCount) && (c.retryCount as number) >= 0 && (c.retryCount as number) <= MAX_RETRY_COUNT))
    out.push(`retryCount must be a whole number from 0 to ${MAX_RETRY_COUNT}`);
  if (c.payloadTemplate !== undefined && c.payloadTemplate !== null) {
    const ok = isObject(c.payloadTemplate) || (typeof c.payloadTemplate === 'string' && templateIsJson(c.payloadTemplate));
    if (!ok) out.push('Payload template is not valid JSON');
  }
  return out;
}

function problemsOf(type: ChannelType, c: ChannelConfig): string[] {
  switch (type) {
    case 'email': {
      const raw = c.recipients ?? c.to;
      const list = recipientsOf(c);
      if (raw === undefined || list.length === 0 || !(typeof raw === 'string' || Array.isArray(raw))) return ['Missing recipients field'];
      return list.filter((r) => !EMAIL.test(r)).map((r) => `Invalid email address: ${r}`);
    }
    case 'slack':
    case 'teams':
      if (!nonEmpty(c.webhookUrl)) return [`${type} webhookUrl must be a non-empty string`];
      return httpsUrl(c.webhookUrl) ? [] : ['Missing or invalid URL'];
    case 'webhook':
      return webhookProblems(c);
    case 'pagerduty': {
      const out: string[] = [];
      if (!nonEmpty(c.routingKey) && !nonEmpty(c.integrationKey)) out.push('PagerDuty channel requires routingKey or integrationKey');
      if (c.severity !== undefined && !(INCIDENT_SEVERITIES as readonly unknown[]).includes(c.severity))
        out.push('Severity must be one of: critical, error, warning, info');
      if (c.customDetails !== undefined && !isObject(c.customDetails)) out.push('customDetails must be an object');
      if (!validTimeout(c.timeout)) out.push(TIMEOUT_MESSAGE);
      return out;
    }
    case 'sms': {
      if (!Array.isArray(c.phoneNumbers) || c.phoneNumbers.length === 0) return ['SMS channel phoneNumbers must be a non-empty array'];
      const out = c.phoneNumbers.filter((p) => typeof p !== 'string' || !E164.test(p)).map((p) => `Invalid E.164 phone number: ${typeof p === 'string' ? p : JSON.stringify(p)}`);
      if (c.from !== undefined && !(typeof c.from === 'string' && E164.test(c.from))) out.push(`Invalid E.164 phone number: ${typeof c.from === 'string' ? c.from : JSON.stringify(c.from)}`);
      if (c.messagingServiceSid !== undefined && !nonEmpty(c.messagingServiceSid)) out.push('messagingServiceSid must be a non-empty string');
      return out;
    }
  }
}

/** 05-wire-notes 4.1: 400 `Invalid <type> channel configuration` with every problem in `details`. */
export function assertValidConfig(type: ChannelType, config: ChannelConfig): void {
  const problems = problemsOf(type, config);
  if (problems.length > 0) {
    throw new DomainError('invalid', `Invalid ${type} channel configuration`, 'INVALID_CHANNEL_CONFIG', { details: problems });
  }
}

/** 05-wire-notes 4.1: the secret keys of each type (webhook header values are secrets too). */
const SECRET_KEYS: Record<ChannelType, readonly string[]> = {
  email: [],
  slack: ['webhookUrl'],
  teams: ['webhookUrl'],
  webhook: ['url', 'authToken', 'authPassword', 'apiKeyValue'],
  pagerduty: ['routingKey', 'integrationKey'],
  sms: [],
};

export const MASK = '********';
const masked = (value: unknown) => ({ redacted: true, hasSecret: nonEmpty(value), masked: MASK });

/** A value that stands for "keep what is stored": a string of only `*`, or the marker object. */
export function isMaskedValue(value: unknown): boolean {
  return (typeof value === 'string' && /^\*+$/.test(value)) || (isObject(value) && value.redacted === true);
}

/** The config as responses show it: every secret replaced by `{redacted, hasSecret, masked}`. */
export function maskConfig(type: ChannelType, config: ChannelConfig): ChannelConfig {
  const out: ChannelConfig = { ...config };
  for (const key of SECRET_KEYS[type]) if (key in out) out[key] = masked(out[key]);
  if (type === 'webhook' && isObject(out.headers)) {
    out.headers = Object.fromEntries(Object.entries(out.headers).map(([k, v]) => [k, masked(v)]));
  }
  return out;
}

/** A config sent on update, with every masked value replaced by the stored secret it stands for. A masked
 * value with nothing stored behind it is dropped (so validation reports the secret as missing). */
export function unmaskConfig(type: ChannelType, incoming: ChannelConfig, stored: ChannelConfig): ChannelConfig {
  const out: ChannelConfig = { ...incoming };
  for (const key of SECRET_KEYS[type]) {
    if (!isMaskedValue(out[key])) continue;
    if (stored[key] === undefined) delete out[key];
    else out[key] = stored[key];
  }
  if (type === 'webhook' && isObject(out.headers)) {
    const old = isObject(stored.headers) ? stored.headers : {};
    const headers: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(out.headers)) {
      if (!isMaskedValue(v)) headers[k] = v;
      else if (typeof old[k] === 'string') headers[k] = old[k];
    }
    out.headers = headers;
  }
  return out;
}

/** For test answers: a URL is shown redacted as well. */
export const redacted = masked;
