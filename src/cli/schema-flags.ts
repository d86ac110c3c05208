import type { Interfaces } from '@oclif/core';
import type { EndpointDef, RequestOf } from '../contract/endpoint.js';
import type { ClientEndpoint, FieldDescriptor, FieldKind } from '../contract/projection.js';
import { Flags } from './flags.js';

/** `partnerId` → `partner-id` (CLI.md "Grammar": body fields map to kebab-case flags). */
export function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

export interface FieldFlag {
  field: string;
  flag: string;
  kind: FieldKind;
  nullable: boolean;
  /** The contract requires it: checked before sending, once --from-file is merged. */
  required: boolean;
  /** A date-time field: a date-only value is sent as the start of that day in UTC. */
  dateTime?: boolean;
}

type AnyFlag = Interfaces.Flag<unknown>;

/**
 * oclif flags for the fields of a contract body or query (as src/client/endpoints.ts describes them), so commands
 * never restate the contract: strings and enums as options, numbers parsed, booleans with --no-, lists repeated
 * or comma-separated, objects as JSON. A field the contract requires is a required flag; where `--from-file` may
 * supply it instead (`fromFile`, the default), help says so and `requireFields` checks it once the file is merged.
 */
function flagsFor(
  descriptors: readonly FieldDescriptor[],
  options: {
    omit?: readonly string[];
    descriptions?: Readonly<Record<string, string | undefined>>;
    fromFile?: boolean;
    supplied?: readonly string[];
  } = {},
) {
  const flags: Record<string, AnyFlag> = {};
  const fields: FieldFlag[] = [];
  const fromFile = options.fromFile ?? true;
  for (const { field, kind, nullable, options: values, description, required: contractRequired = false, dateTime = false } of descriptors) {
    if (options.omit?.includes(field)) continue;
    const required = contractRequired && !options.supplied?.includes(field);
    const flag = kebab(field);
    const text = options.descriptions?.[field] ?? description ?? `The ${field} field${nullable ? ' ("null" clears it)' : ''}.`;
    const summary = required && fromFile ? `${text} Required unless given by --from-file.` : text;
    if (kind === 'boolean') flags[flag] = Flags.boolean({ summary, allowNo: true });
    else if (kind === 'integer' || kind === 'number')
      flags[flag] = Flags.string({ summary, helpValue: kind === 'integer' ? '<int>' : '<number>' }) as AnyFlag;
    else if (kind === 'array')
      flags[flag] = Flags.string({ summary: `${summary} Repeat the flag, separate with commas, or give a JSON array.`, multiple: true }) as AnyFlag;
    else if (kind === 'object')
      flags[flag] = Flags.string({ summary: `${summary} As JSON.`, helpValue: '<json>' }) as AnyFlag;
    else if (values) flags[flag] = Flags.string({ summary, options: [...values] }) as AnyFlag;
    else flags[flag] = Flags.string({ summary }) as AnyFlag;
    if (required && !fromFile) flags[flag] = { ...flags[flag], required: true };
    fields.push({ field, flag, kind, nullable, required, ...(dateTime ? { dateTime } : {}) });
  }
  return { flags, fields };
}

declare const fieldsType: unique symbol;

/** Flags made from the fields of an endpoint's body or query, typed (a phantom, never set) with what reading them
 * back yields: the contract's input type, less the fields left out. */
export interface FieldFlags<T> {
  readonly flags: Record<string, AnyFlag>;
  readonly fields: readonly FieldFlag[];
  readonly [fieldsType]?: T;
}

/** What a body or query accepts, as the contract's input type. */
export type BodyInput<E extends EndpointDef> = NonNullable<RequestOf<E>['body']>;
export type QueryInput<E extends EndpointDef> = NonNullable<RequestOf<E>['query']>;
/** The keys of every member of a union (a body may be one of several shapes). */
export type KeysOf<T> = T extends unknown ? keyof T : never;
/** Omit over each member of a union, so a discriminated body keeps its members. */
export type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export interface FieldOptions<T, O> {
  /** Fields the command supplies itself (or never sends): no flag for them. */
  omit?: readonly O[];
  /** Help text by field, where the contract's description is not what a CLI user needs. */
  descriptions?: { readonly [K in KeysOf<T>]?: string };
  /** Whether `--from-file` may supply a required field (default true); without it the flag itself is required. */
  fromFile?: boolean;
  /** Required fields the command fills in itself when they are not given. */
  supplied?: readonly KeysOf<T>[];
}

/** Flags for the body of an endpoint; `bodyFrom` reads them back as the body type. A renamed or removed
 * contract field named in `omit` or `descriptions` is a compile error. */
export function bodyFlags<E extends EndpointDef, const O extends KeysOf<BodyInput<E>> = never>(
  def: ClientEndpoint<E> & { readonly body: readonly FieldDescriptor[] },
  options: FieldOptions<BodyInput<E>, O> = {},
): FieldFlags<Without<BodyInput<E>, O>> {
  return flagsFor(def.body, options as Parameters<typeof flagsFor>[1]);
}

/** Flags for the query of an endpoint; `queryFrom` reads them back typed as the query. */
export function queryFlags<E extends EndpointDef, const O extends KeysOf<QueryInput<E>> = never>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  options: FieldOptions<QueryInput<E>, O> = {},
): FieldFlags<Without<QueryInput<E>, O>> {
  return flagsFor(def.query, options as Parameters<typeof flagsFor>[1]);
}

/** Flags for the filters of a paged list: its query less `page` and `limit`, which `list` sets itself (and less
 * `omit`). */
export function listFilterFlags<E extends EndpointDef>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  options: Pick<FieldOptions<QueryInput<E>, KeysOf<QueryInput<E>>>, 'omit' | 'descriptions'> = {},
): FieldFlags<Without<QueryInput<E>, 'page' | 'limit'>> {
  const omit: readonly PropertyKey[] = options.omit ?? [];
  return flagsFor(def.query, { ...options, omit: ['page', 'limit', ...omit.map(String)] });
}

export class FlagValueError extends Error {
  constructor(
    message: string,
    readonly flag: string,
  ) {
    super(message);
  }
}

/** Before anything is sent: every field the contract requires is in the body, or the error names its flag. */
export function requireFields(fields: readonly FieldFlag[], body: Record<string, unknown>): void {
  const missing = fields.filter((f) => f.required && body[f.field] === undefined).map((f) => `--${f.flag}`);
  if (missing.length > 0)
    throw new FlagValueError(`Missing required flag${missing.length === 1 ? '' : 's'} ${missing.join(', ')} (or give ${missing.length === 1 ? 'it' : 'them'} in --from-file)`, missing[0] ?? '');
}

// Decimal notation only: `0x10`, `1e3`, ` 7` and an empty value are typing mistakes, not numbers.
const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?$/;

function numberFrom(flag: string, kind: 'integer' | 'number', text: string): number {
  const what = kind === 'integer' ? 'a whole number' : 'a number';
  if (text === '') throw new FlagValueError(`--${flag} expects ${what}, got an empty value`, `--${flag}`);
  const n = Number(text);
  if (!(kind === 'integer' ? INTEGER : DECIMAL).test(text) || (kind === 'integer' && !Number.isSafeInteger(n)))
    throw new FlagValueError(`--${flag} expects ${what} in decimal digits, got "${text}"`, `--${flag}`);
  return n;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A date-time flag given as a date only (`--due-date 2026-12-31`) is sent as the start of that day in UTC
 * (`2026-12-31T00:00:00.000Z`): a deployment that accepts only date-times takes it, and it means the same day
 * everywhere. An impossible date (`2026-02-30`) is refused before anything is sent. Anything else goes as typed.
 */
export function startOfDayUtc(flag: string, text: string): string {
  if (!DATE_ONLY.test(text)) return text;
  const day = new Date(`${text}T00:00:00.000Z`);
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== text)
    throw new FlagValueError(`--${flag} expects a date (YYYY-MM-DD) or an ISO 8601 date-time, got "${text}"`, `--${flag}`);
  return day.toISOString();
}

/** The items of one value of a list flag: a JSON array or object as it is (lists of objects, such as escalation
 * steps, have no comma form), else comma-separated words. */
function listItems(flag: string, value: string): unknown[] {
  const text = value.trim();
  if (!text.startsWith('[') && !text.startsWith('{')) return text.split(',').map((v) => v.trim()).filter(Boolean);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new FlagValueError(`--${flag} expects a JSON array or object here, got "${text}"`, `--${flag}`);
  }
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** Reads the values of `fields` from parsed flags back into a body (only the flags that were given). */
export function valuesFromFlags(fields: readonly FieldFlag[], flags: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { field, flag, kind, nullable: canBeNull, dateTime } of fields) {
    const raw = flags[flag];
    if (raw === undefined) continue;
    const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
    if (canBeNull && raw === 'null') {
      out[field] = null;
      continue;
    }
    switch (kind) {
      case 'boolean':
        out[field] = raw;
        break;
      case 'integer':
      case 'number':
        out[field] = numberFrom(flag, kind, text);
        break;
      case 'array':
        out[field] = (raw as string[]).flatMap((value) => listItems(flag, value));
        break;
      case 'object':
        try {
          out[field] = JSON.parse(text) as unknown;
        } catch {
          throw new FlagValueError(`--${flag} expects JSON, got "${text}"`, `--${flag}`);
        }
        break;
      default:
        out[field] = dateTime === true && typeof raw === 'string' ? startOfDayUtc(flag, raw) : raw;
    }
  }
  return out;
}
