import { INTEGRATION_BODY_MAX_BYTES, INTEGRATION_BODY_MAX_KEYS } from '../../../contract/integrations.js';
import { badRequest } from '../../errors.js';

/** What a masked secret reads as (the same as webhook header values, 05-wire-notes 4.3). */
export const MASK = '********';

/** Keys whose values are secrets: kept only inside the SecretBox ciphertext and masked when read. Everything under
 * a `credentials` or `headers` key is secret too (header values carry credentials; webhooks mask every one). */
const SECRET_KEY =
  /password|passphrase|passwd|^pass$|^pwd$|secret|token|bearer|authori[sz]ation|cookie|webhook_?url|api_?key|private_?key|public_?key|access_?key|^key$|integration_?code|credentials?$|^headers$/i;

/** Keys the server adds when it shows a configuration; a body that carries them back (GET, edit, POST) drops them. */
export const STATUS_KEYS = ['orgId', 'test', 'lastTestedAt', 'lastTestStatus', 'lastTestError', 'updatedAt'] as const;

export type Config = Record<string, unknown>;

const isObject = (v: unknown): v is Config => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The masked form of one secret value: URLs keep their origin (so a reader sees where it points), the rest is
 * the mask alone. */
function maskValue(value: unknown): unknown {
  if (typeof value === 'string') {
    try {
      const url = new URL(value);
      if (url.protocol === 'https:' || url.protocol === 'http:') return `${url.origin}/${MASK}`;
    } catch {
      // Not a URL: the mask alone.
    }
    return MASK;
  }
  if (Array.isArray(value)) return value.map(maskValue);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskValue(v)]));
  return value === null || value === undefined ? value : MASK;
}

/** The configuration as the API shows it: every secret value masked, at any depth. */
export function maskConfig(config: Config): Config {
  return Object.fromEntries(
    Object.entries(config).map(([key, value]) => [key, SECRET_KEY.test(key) ? maskValue(value) : isObject(value) ? maskConfig(value) : value]),
  );
}

/** `next` with every value that is still the masked form of the stored value at the same place replaced by the
 * stored value, so a configuration read, edited and sent back keeps its secrets. */
export function unmask(next: Config, stored: Config | undefined): Config {
  if (!stored) return next;
  return Object.fromEntries(
    Object.entries(next).map(([key, value]) => {
      const old = stored[key];
      if (old !== undefined && value !== null && typeof value !== 'boolean' && JSON.stringify(value) === JSON.stringify(maskValue(old)) && containsMask(value))
        return [key, old];
      if (isObject(value) && isObject(old)) return [key, unmask(value, old)];
      return [key, value];
    }),
  );
}

function containsMask(value: unknown): boolean {
  if (typeof value === 'string') return value.endsWith(MASK);
  if (Array.isArray(value)) return value.some(containsMask);
  if (isObject(value)) return Object.values(value).some(containsMask);
  return false;
}

/**
 * 05-wire-notes 4.4: the body is any JSON object of at most 64 keys and 16384 bytes. Returns the object without
 * the keys the server owns (orgId, test, the test status fields).
 */
export function parseConfigBody(body: unknown): Config {
  if (!isObject(body)) throw badRequest('Body must be a JSON object', 'INVALID_BODY');
  if (Buffer.byteLength(JSON.stringify(body)) > INTEGRATION_BODY_MAX_BYTES)
    throw badRequest(`payload exceeds ${INTEGRATION_BODY_MAX_BYTES} bytes`, 'PAYLOAD_TOO_LARGE');
  if (Object.keys(body).length > INTEGRATION_BODY_MAX_KEYS) throw badRequest(`Body may have at most ${INTEGRATION_BODY_MAX_KEYS} keys`, 'INVALID_BODY');
  const config: Config = { ...body };
  for (const key of STATUS_KEYS) delete config[key];
  return config;
}

/** The orgId a body names (partner and system callers may pass it in the body instead of the query). */
export function bodyOrgId(body: unknown): string | undefined {
  return isObject(body) && typeof body.orgId === 'string' ? body.orgId : undefined;
}

/** Whether the body asks for a test (`test: true`). */
export const wantsTest = (body: unknown): boolean => isObject(body) && body.test === true;

type FieldType = 'string' | 'boolean' | 'string[]' | 'url' | 'object';

/** Checks the type of the fields a kind knows, where present; other keys are free-form. */
export function checkFields(config: Config, fields: Record<string, FieldType>): void {
  for (const [key, type] of Object.entries(fields)) {
    const value = config[key];
    if (value === undefined || value === null) continue;
    const ok =
      type === 'boolean'
        ? typeof value === 'boolean'
        : type === 'string[]'
          ? Array.isArray(value) && value.every((v) => typeof v === 'string')
          : type === 'object'
            ? isObject(value)
            : typeof value === 'string' && value.length > 0 && value.length <= 2048;
    if (!ok) {
      const expected = type === 'string[]' ? 'an array of strings' : type === 'url' ? 'a URL' : type === 'object' ? 'an object' : `a ${type}`;
      throw badRequest(`${key} must be ${expected}`, 'VALIDATION_ERROR');
    }
  }
}
