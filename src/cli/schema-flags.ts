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
}

type AnyFlag = Interfaces.Flag<unknown>;

/**
 * oclif flags for the fields of a contract body or query (as src/client/endpoints.ts describes them), so commands
 * never restate the contract: strings and enums as options, numbers parsed, booleans with --no-, lists repeated
 * or comma-separated, objects as JSON. Nothing is required here: `--from-file` may supply it, and the server
 * validates.
 */
export function flagsFor(
  descriptors: readonly FieldDescriptor[],
  options: { omit?: string[]; descriptions?: Record<string, string> } = {},
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
