import { readFileSync } from 'node:fs';
import { API_PREFIX } from '../client/endpoints.js';
import { UsageError } from './prompts.js';

/**
 * `svc api` fields, as `gh api` reads them: `-f key=value` is always a string; `-F key=value` is typed (true,
 * false, null and numbers become JSON values, `@file` is the file's text, `@-` standard input). Keys may nest:
 * `settings[timezone]=UTC`, and `tags[]=a` appends to a list.
 */
export interface RawField {
  text: string;
  typed: boolean;
}

const NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/** `key=value` as [key, value]; undefined when there is no key. */
function keyValue(text: string): [string, string] | undefined {
  const at = text.indexOf('=');
  return at <= 0 ? undefined : [text.slice(0, at), text.slice(at + 1)];
}

function split(text: string, flag: string): [string, string] {
  const pair = keyValue(text);
  if (!pair) throw new UsageError(`${flag} expects key=value, got "${text}"`, flag);
  return pair;
}

/** Whether the field takes standard input (`-F key=@-`); one with no key takes nothing: it is a usage error. */
export function readsStdin(field: RawField): boolean {
  return field.typed && keyValue(field.text)?.[1] === '@-';
}

/** `a[b][]` → ['a', 'b', ''] ('' appends to a list). */
export function keyPath(key: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (!match?.[1]) throw new UsageError(`Invalid field name "${key}": use name, name[sub] or name[]`);
  const rest = [...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '');
  return [match[1], ...rest];
}

export function typedValue(value: string, readStdin: () => string): unknown {
  if (value === 'true') return true;
  if (value === 'false') return false;
  if (value === 'null') return null;
  if (NUMBER.test(value)) return Number(value);
  if (value.startsWith('@')) {
    const file = value.slice(1);
    if (file === '-') return readStdin();
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`Cannot read ${value}: ${(err as Error).message}`, '-F');
    }
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function assign(target: Record<string, unknown>, path: string[], value: unknown, key: string): void {
  let current: Record<string, unknown> | unknown[] = target;
  for (let i = 0; i < path.length; i++) {
    const part = path[i] ?? '';
    const last = i === path.length - 1;
    const nextIsList = path[i + 1] === '';
    if (Array.isArray(current)) {
      if (part !== '') throw new UsageError(`Field "${key}" mixes a list and an object`);
      if (last) {
        current.push(value);
        return;
      }
      const child: Record<string, unknown> | unknown[] = nextIsList ? [] : {};
      current.push(child);
      current = child;
      continue;
    }
    if (part === '') throw new UsageError(`Field "${key}" mixes a list and an object`);
    if (last) {
      current[part] = value;
      return;
    }
    const existing: unknown = current[part];
    if (existing === undefined) {
      const child: Record<string, unknown> | unknown[] = nextIsList ? [] : {};
      current[part] = child;
      current = child;
    } else if (nextIsList ? Array.isArray(existing) : isRecord(existing)) {
      current = existing as Record<string, unknown> | unknown[];
    } else {
      throw new UsageError(`Field "${key}" conflicts with another field of the same name`);
    }
  }
}

/** Builds one JSON object from the fields, in the order given. */
export function fieldsToObject(fields: readonly RawField[], readStdin: () => string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const flag = field.typed ? '-F' : '-f';
    const [key, raw] = split(field.text, flag);
    assign(out, keyPath(key), field.typed ? typedValue(raw, readStdin) : raw, key);
  }
  return out;
}

/** Flat query parameters from the fields: `key[]=v` repeats `key`; nested names are kept as written. */
export function fieldsToQuery(fields: readonly RawField[], readStdin: () => string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const [rawKey, raw] = split(field.text, field.typed ? '-F' : '-f');
    const value = field.typed ? typedValue(raw, readStdin) : raw;
    const list = rawKey.endsWith('[]');
    const key = list ? rawKey.slice(0, -2) : rawKey;
    const existing = out[key];
    if (list || existing !== undefined) out[key] = [...(Array.isArray(existing) ? (existing as unknown[]) : existing === undefined ? [] : [existing]), value];
    else out[key] = value;
  }
  return out;
}

/** `Name: value` → [name, value]. */
export function parseHeader(text: string): [string, string] {
  const at = text.indexOf(':');
  const name = at > 0 ? text.slice(0, at).trim() : '';
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) throw new UsageError(`-H expects "Name: value", got "${text}"`, '-H');
  return [name.toLowerCase(), text.slice(at + 1).trim()];
}

/** `/orgs/partners`, `orgs/partners` and `/api/v1/orgs/partners` all name the same path; /health stays at the root. */
export function apiPath(input: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(input)) throw new UsageError(`Give a path such as /orgs/partners, not a URL (the base URL comes from --base-url or the profile): ${input}`);
  const path = input.startsWith('/') ? input : `/${input}`;
  if (/^\/(api|health)(\/|\?|$)/.test(path)) return path;
  return `${API_PREFIX}${path}`;
}

