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
}

type AnyFlag = Interfaces.Flag<unknown>;

/**
 * oclif flags for the fields of a contract body or query (as src/client/endpoints.ts describes them), so commands
 * never restate the contract: strings and enums as options, numbers parsed, booleans with --no-, lists repeated
 * or comma-separated, objects as JSON. Nothing is required here: `--from-file` may supply it, and the server
 * validates.
 */
function flagsFor(
  descriptors: readonly FieldDescriptor[],
  options: { omit?: readonly string[]; descriptions?: Readonly<Record<string, string | undefined>> } = {},
) {
  const flags: Record<string, AnyFlag> = {};
  const fields: FieldFlag[] = [];
  for (const { field, kind, nullable, options: values, description } of descriptors) {
    if (options.omit?.includes(field)) continue;
    const flag = kebab(field);
    const summary =
      options.descriptions?.[field] ?? description ?? `The ${field} field${nullable ? ' ("null" clears it)' : ''}.`;
    if (kind === 'boolean') flags[flag] = Flags.boolean({ summary, allowNo: true });
    else if (kind === 'integer' || kind === 'number')
      flags[flag] = Flags.string({ summary, helpValue: kind === 'integer' ? '<int>' : '<number>' }) as AnyFlag;
    else if (kind === 'array')
      flags[flag] = Flags.string({ summary: `${summary} Repeat the flag or separate with commas.`, multiple: true }) as AnyFlag;
    else if (kind === 'object')
      flags[flag] = Flags.string({ summary: `${summary} As JSON.`, helpValue: '<json>' }) as AnyFlag;
    else if (values) flags[flag] = Flags.string({ summary, options: [...values] }) as AnyFlag;
    else flags[flag] = Flags.string({ summary }) as AnyFlag;
    fields.push({ field, flag, kind, nullable });
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
}

/** Flags for the body of an endpoint; `bodyFrom` reads them back as the body type. A renamed or removed
 * contract field named in `omit` or `descriptions` is a compile error. */
export function bodyFlags<E extends EndpointDef, const O extends KeysOf<BodyInput<E>> = never>(
  def: ClientEndpoint<E> & { readonly body: readonly FieldDescriptor[] },
  options: FieldOptions<BodyInput<E>, O> = {},
): FieldFlags<Without<BodyInput<E>, O>> {
  return flagsFor(def.body, options as { omit?: string[]; descriptions?: Record<string, string> });
}

/** Flags for the query of an endpoint; `queryFrom` reads them back typed as the query. */
export function queryFlags<E extends EndpointDef, const O extends KeysOf<QueryInput<E>> = never>(
  def: ClientEndpoint<E> & { readonly query: readonly FieldDescriptor[] },
  options: FieldOptions<QueryInput<E>, O> = {},
): FieldFlags<Without<QueryInput<E>, O>> {
  return flagsFor(def.query, options as { omit?: string[]; descriptions?: Record<string, string> });
}

export class FlagValueError extends Error {}

/** Reads the values of `fields` from parsed flags back into a body (only the flags that were given). */
export function valuesFromFlags(fields: readonly FieldFlag[], flags: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { field, flag, kind, nullable: canBeNull } of fields) {
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
      case 'number': {
        const n = Number(raw);
        if (!Number.isFinite(n) || (kind === 'integer' && !Number.isInteger(n))) throw new FlagValueError(`--${flag} expects ${kind === 'integer' ? 'a whole number' : 'a number'}, got "${text}"`);
        out[field] = n;
        break;
      }
      case 'array':
        out[field] = (raw as string[]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
        break;
      case 'object':
        try {
          out[field] = JSON.parse(text) as unknown;
        } catch {
          throw new FlagValueError(`--${flag} expects JSON, got "${text}"`);
        }
        break;
      default:
        out[field] = raw;
    }
  }
  return out;
}
