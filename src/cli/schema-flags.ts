import type { Interfaces } from '@oclif/core';
import type { FieldDescriptor, FieldKind } from '../contract/projection.js';
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
}

type AnyFlag = Interfaces.Flag<unknown>;

/**
 * oclif flags for the fields of a contract body or query (as src/client/endpoints.ts describes them), so commands
 * never restate the contract: strings and enums as options, numbers parsed, booleans with --no-, lists repeated
 * or comma-separated, objects as JSON. A field the contract requires is a required flag; where `--from-file` may
 * supply it instead (`fromFile`, the default), help says so and `requireFields` checks it once the file is merged.
 * `supplied` names required fields the command fills in itself when they are not given.
 */
export function flagsFor(
  descriptors: readonly FieldDescriptor[],
  options: { omit?: string[]; descriptions?: Record<string, string>; fromFile?: boolean; supplied?: string[] } = {},
) {
  const flags: Record<string, AnyFlag> = {};
  const fields: FieldFlag[] = [];
  const fromFile = options.fromFile ?? true;
  for (const { field, kind, nullable, options: values, description, required: contractRequired = false } of descriptors) {
    if (options.omit?.includes(field)) continue;
    const required = contractRequired && !options.supplied?.includes(field);
    const flag = kebab(field);
    const text = options.descriptions?.[field] ?? description ?? `The ${field} field${nullable ? ' ("null" clears it)' : ''}.`;
    const summary = required && fromFile ? `${text} Required unless given by --from-file.` : text;
    if (kind === 'boolean') flags[flag] = Flags.boolean({ summary, allowNo: true });
    else if (kind === 'integer' || kind === 'number')
      flags[flag] = Flags.string({ summary, helpValue: kind === 'integer' ? '<int>' : '<number>' }) as AnyFlag;
    else if (kind === 'array')
      flags[flag] = Flags.string({ summary: `${summary} Repeat the flag or separate with commas.`, multiple: true }) as AnyFlag;
    else if (kind === 'object')
      flags[flag] = Flags.string({ summary: `${summary} As JSON.`, helpValue: '<json>' }) as AnyFlag;
    else if (values) flags[flag] = Flags.string({ summary, options: [...values] }) as AnyFlag;
    else flags[flag] = Flags.string({ summary }) as AnyFlag;
    if (required && !fromFile) flags[flag] = { ...flags[flag], required: true };
    fields.push({ field, flag, kind, nullable, required });
  }
  return { flags, fields };
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
      case 'number':
        out[field] = numberFrom(flag, kind, text);
        break;
      case 'array':
        out[field] = (raw as string[]).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
        break;
      case 'object':
        try {
          out[field] = JSON.parse(text) as unknown;
        } catch {
          throw new FlagValueError(`--${flag} expects JSON, got "${text}"`, `--${flag}`);
        }
        break;
      default:
        out[field] = raw;
    }
  }
  return out;
}
