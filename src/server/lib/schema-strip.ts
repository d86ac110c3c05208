import { ZodError, type z } from 'zod';

/** A compiled strip: the value reduced to what its schema lists, or a thrown ZodError like zod's parse. */
export type Strip = (value: unknown) => unknown;

/** A value whose type does not match its schema, on its way up to the compiled strip's entry point. */
class SchemaStripError extends Error {
  readonly path: (string | number)[];
  constructor(message: string, path: (string | number)[] = []) {
    super(message);
    this.name = 'SchemaStripError';
    this.path = path;
  }

  within(key: string | number): this {
    this.path.unshift(key);
    return this;
  }
}

/** The parts of a zod 4 schema definition read here (zod's `_zod.def`, typed loosely on purpose). */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  partial?: boolean;
  entries?: Record<string, unknown>;
  values?: readonly unknown[];
  checks?: readonly { _zod: { def: { check: string } } }[];
  coerce?: boolean;
}

function pathKey(key: PropertyKey): string | number {
  return typeof key === 'number' ? key : String(key);
}

function defOf(schema: z.ZodType): Def {
  return schema._zod.def;
}

/** Checks that may change the value (`.trim()`, `.toLowerCase()`, `.overwrite()`) make a node zod's alone. */
function rewrites(def: Def): boolean {
  return def.coerce === true || (def.checks ?? []).some((c) => c._zod.def.check === 'overwrite');
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function primitive(type: 'string' | 'number' | 'boolean'): Strip {
  return (value) => {
    if (typeof value !== type || (type === 'number' && !Number.isFinite(value)))
      throw new SchemaStripError(`expected ${type}`);
    return value;
  };
}

function member(allowed: readonly unknown[], expected: string): Strip {
  const set = new Set(allowed);
  return (value) => {
    if (!set.has(value)) throw new SchemaStripError(`expected ${expected}`);
    return value;
  };
}

function object(shape: Record<string, z.ZodType>): Strip {
  const fields = Object.entries(shape).map(([key, schema]) => ({ key, strip: compileNode(schema) }));
  return (value) => {
    if (!isPlainObject(value)) throw new SchemaStripError('expected object');
    const out: Record<string, unknown> = {};
    for (const { key, strip } of fields) {
      const field = value[key];
      try {
        const stripped = strip(field);
        // As zod: an absent key stays absent unless its schema gives it a value (a default); a required one
        // has failed above.
        if (stripped !== undefined || key in value) out[key] = stripped;
      } catch (err) {
        throw err instanceof SchemaStripError ? err.within(key) : err;
      }
    }
    return out;
  };
}

function array(element: z.ZodType): Strip {
  const strip = compileNode(element);
  return (value) => {
    if (!Array.isArray(value)) throw new SchemaStripError('expected array');
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      try {
        out[i] = strip(value[i]);
      } catch (err) {
        throw err instanceof SchemaStripError ? err.within(i) : err;
      }
    }
    return out;
  };
}

/**
 * What `schema.parse(value)` returns for a response, without zod's validation pass: objects keep only the
 * fields their schema lists (in its order), recursively through arrays, optional and nullable; primitives,
 * enums and literals are checked by type and value and passed through; `z.record(z.string(), z.unknown())`
 * (free-form JSON) passes through as zod passes it. Checks that only validate (formats, lengths, regexes,
 * refinements) are not run. Any other node (unions, transforms, defaults, pipes, loose or strict objects,
 * rewriting checks) is handed to zod's own parse, so the output is always what zod would give for a value of
 * the schema's type. Compiled once per schema; the returned function allocates only the output.
 */
export function compileStrip(schema: z.ZodType): Strip {
  const strip = compileNode(schema);
  return (value) => {
    try {
      return strip(value);
    } catch (err) {
      if (!(err instanceof SchemaStripError)) throw err;
      // The error zod's parse would throw, so the error handler treats both alike (500, logged with the issue).
      throw new ZodError([{ code: 'custom', path: err.path, message: err.message, input: undefined }]);
    }
  };
}

function compileNode(schema: z.ZodType): Strip {
  const def = defOf(schema);
  const byZod: Strip = (value) => {
    const result = schema.safeParse(value);
    if (result.success) return result.data;
    const issue = result.error.issues[0];
    throw new SchemaStripError(issue?.message ?? 'a valid value', issue ? [...issue.path].map(pathKey) : []);
  };
  if (rewrites(def)) return byZod;
  switch (def.type) {
    case 'object':
      return def.shape && def.catchall === undefined ? object(def.shape) : byZod;
    case 'array':
      return def.element ? array(def.element) : byZod;
    case 'optional': {
      if (!def.innerType) return byZod;
      const inner = compileNode(def.innerType);
      return (value) => (value === undefined ? undefined : inner(value));
    }
    case 'nullable': {
      if (!def.innerType) return byZod;
      const inner = compileNode(def.innerType);
      return (value) => (value === null ? null : inner(value));
    }
    case 'string':
    case 'number':
    case 'boolean':
      return primitive(def.type);
    case 'null':
      return member([null], 'null');
    case 'enum':
      return def.entries ? member(Object.values(def.entries), 'one of the enum values') : byZod;
    case 'literal':
      return def.values ? member(def.values, 'the literal value') : byZod;
    case 'record': {
      const key = def.keyType && defOf(def.keyType);
      const val = def.valueType && defOf(def.valueType);
      const plainKeys = key?.type === 'string' && !key.checks?.length && !rewrites(key);
      if (!plainKeys || (val?.type !== 'unknown' && val?.type !== 'any')) return byZod;
      // JSON.parse output passes as is; anything else (another prototype, an own __proto__ key, which zod
      // drops) gets zod's answer.
      return (value) =>
        isPlainObject(value) && Object.getPrototypeOf(value) === Object.prototype && !Object.hasOwn(value, '__proto__')
          ? value
          : byZod(value);
    }
    case 'unknown':
    case 'any':
      return (value) => value;
    default:
      return byZod;
  }
}
