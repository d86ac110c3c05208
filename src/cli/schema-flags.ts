import type { Interfaces } from '@oclif/core';
import { Flags } from './flags.js';
import { z } from 'zod';

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  default?: unknown;
};

/** `partnerId` → `partner-id` (CLI.md "Grammar": body fields map to kebab-case flags). */
export function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}

/** The branch of a nullable/union schema that says what the value is. */
function core(schema: JsonSchema): JsonSchema {
  if (schema.anyOf) {
    const real = schema.anyOf.filter((s) => s.type !== 'null');
    if (real.length === 1 && real[0]) return core(real[0]);
    return real.every((s) => s.type === 'string' || s.const !== undefined) ? { type: 'string' } : { type: 'object' };
  }
  if (Array.isArray(schema.type)) return { ...schema, type: schema.type.find((t) => t !== 'null') ?? 'string' };
  if (schema.const !== undefined) return { type: typeof schema.const, enum: [schema.const] };
  return schema;
}

function nullable(schema: JsonSchema): boolean {
  return (schema.anyOf?.some((s) => s.type === 'null') ?? false) || (Array.isArray(schema.type) && schema.type.includes('null'));
}

export interface FieldFlag {
  field: string;
  flag: string;
  kind: 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';
  nullable: boolean;
}

type AnyFlag = Interfaces.Flag<unknown>;

/**
 * oclif flags for the fields of a contract body or query schema, so commands never restate the contract:
 * strings and enums as options, numbers parsed, booleans with --no-, lists repeated or comma-separated,
 * objects as JSON. Nothing is required here: `--from-file` may supply it, and the server validates.
 */
export function flagsFor(schema: z.ZodType, options: { omit?: string[]; descriptions?: Record<string, string> } = {}) {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const flags: Record<string, AnyFlag> = {};
  const fields: FieldFlag[] = [];
  for (const [field, prop] of Object.entries(json.properties ?? {})) {
    if (options.omit?.includes(field)) continue;
    const c = core(prop);
    const flag = kebab(field);
    const summary = options.descriptions?.[field] ?? prop.description ?? `The ${field} field${nullable(prop) ? ' ("null" clears it)' : ''}.`;
    let kind: FieldFlag['kind'] = 'string';
    if (c.type === 'boolean') {
      kind = 'boolean';
      flags[flag] = Flags.boolean({ summary, allowNo: true });
    } else if (c.type === 'integer' || c.type === 'number') {
      kind = c.type;
      flags[flag] = Flags.string({ summary, helpValue: c.type === 'integer' ? '<int>' : '<number>' }) as AnyFlag;
    } else if (c.type === 'array') {
      kind = 'array';
      flags[flag] = Flags.string({ summary: `${summary} Repeat the flag or separate with commas.`, multiple: true }) as AnyFlag;
    } else if (c.type === 'object') {
      kind = 'object';
      flags[flag] = Flags.string({ summary: `${summary} As JSON.`, helpValue: '<json>' }) as AnyFlag;
    } else if (c.enum) {
      flags[flag] = Flags.string({ summary, options: c.enum.map(String) }) as AnyFlag;
    } else {
      flags[flag] = Flags.string({ summary }) as AnyFlag;
    }
    fields.push({ field, flag, kind, nullable: nullable(prop) });
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
