import { ZodError, z } from 'zod';
import { UntracedError } from './untraced-error.js';

/** A compiled strip: the value reduced to what its schema lists, or a thrown ZodError like zod's parse. */
export type Strip = (value: unknown) => unknown;

/** A node of the JSON Schema (draft 2020-12) that zod 4 emits for a schema with `z.toJSONSchema`. */
type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
} & Record<string, unknown>;

/** Keywords that only validate (formats, lengths, bounds, patterns) or describe: not run on output, as input is
 * checked on the way in. A node with any keyword not listed here or in JsonSchema is left to zod. */
const VALIDATE_ONLY = new Set([
  '$schema',
  'description',
  'title',
  'examples',
  'format',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'readOnly',
]);
const UNDERSTOOD = new Set([
  ...VALIDATE_ONLY,
  'type',
  'properties',
  'required',
  'additionalProperties',
  'propertyNames',
  'items',
  'anyOf',
  'enum',
  'const',
  'default',
]);

/** A value whose type does not match its schema, on its way up to the compiled strip's entry point. Made
 * without a stack trace: a union tries its branches by catching these (every null of a nullable field is
 * one), and capturing a stack costs more than the rest of the strip; the ZodError it becomes has its own. */
class SchemaStripError extends UntracedError {
  readonly path: (string | number)[] = [];
  within(key: string | number): this {
    this.path.unshift(key);
    return this;
  }
}

/** A strip that also carries a test its value must pass, or it throws: a union skips a branch whose test fails
 * without building an error (every null of a nullable field, or of a nullable object, would otherwise be one).
 * A leaf (a type, an enum or a literal) passes whatever passes its test; an object or an array tests its type
 * only, and may still throw for what is inside. */
interface TestedStrip extends Strip {
  test: (value: unknown) => boolean;
}

function tested(strip: Strip, test: (value: unknown) => boolean): TestedStrip {
  return Object.assign(strip, { test });
}

function leaf(test: (value: unknown) => boolean, message: () => string): TestedStrip {
  return tested((value: unknown) => {
    if (!test(value)) throw new SchemaStripError(message());
    return value;
  }, test);
}

/** A node the compiler does not handle: the whole schema then goes through zod's own parse. */
class Unsupported extends Error {}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeCheck(type: string): Strip {
  const ok: (value: unknown) => boolean =
    type === 'integer'
      ? (v) => Number.isSafeInteger(v)
      : type === 'number'
        ? (v) => typeof v === 'number' && Number.isFinite(v)
        : type === 'null'
          ? (v) => v === null
          : (v) => typeof v === type;
  return leaf(ok, () => `expected ${type}`);
}

function member(allowed: readonly unknown[]): Strip {
  const set = new Set(allowed);
  return leaf(
    (value) => set.has(value),
    () => `expected one of ${JSON.stringify(allowed)}`,
  );
}

/** The first branch that takes the value, as a zod union picks its first matching option. */
function firstOf(branches: Strip[]): Strip {
  return (value) => {
    let first: unknown;
    for (const branch of branches) {
      // A branch whose test fails is skipped without an error (one is made if nothing matches).
      if ('test' in branch && !(branch as TestedStrip).test(value)) continue;
      try {
        return branch(value);
      } catch (err) {
        if (!(err instanceof SchemaStripError)) throw err;
        first ??= err;
      }
    }
    if (first instanceof SchemaStripError) throw first;
    // Every branch failed its test: the first one's error, as when it was thrown.
    const [firstBranch] = branches;
    if (firstBranch) firstBranch(value);
    throw new SchemaStripError('no option matched');
  };
}

/** The strip of one field or item, an error naming where it failed (no closure per call: it runs per value). */
function within(key: string | number, strip: Strip, value: unknown): unknown {
  try {
    return strip(value);
  } catch (err) {
    throw err instanceof SchemaStripError ? err.within(key) : err;
  }
}

function object(node: JsonSchema): Strip {
  const required = new Set(node.required ?? []);
  const fields = Object.entries(node.properties ?? {}).map(([key, schema]) => ({
    key,
    strip: compileNode(schema),
    optional: !required.has(key),
    fallback: 'default' in schema ? schema.default : undefined,
  }));
  const listed = new Set(fields.map((f) => f.key));
  const extra = node.additionalProperties;
  if (node.propertyNames && node.propertyNames.type !== 'string') throw new Unsupported('property names');
  // Extra keys: dropped (additionalProperties false, or absent with properties listed), or kept under a schema
  // (records and loose objects); `{}` keeps their values whole.
  const rest =
    extra === false || (extra === undefined && fields.length > 0)
      ? null
      : extra === true || extra === undefined
        ? (v: unknown) => v
        : compileNode(extra);
  return tested((value) => {
    if (!isPlainObject(value)) throw new SchemaStripError('expected object');
    const out: Record<string, unknown> = {};
    for (const { key, strip, optional, fallback } of fields) {
      const field = value[key] === undefined && fallback !== undefined ? fallback : value[key];
      // As zod: an optional key left undefined stays as it is (absent or undefined); a required one must match.
      if (field === undefined && optional) {
        if (key in value) out[key] = undefined;
        continue;
      }
      out[key] = within(key, strip, field);
    }
    if (rest) {
      for (const key of Object.keys(value)) {
        // zod drops an own __proto__ key; JSON.parse output never has another prototype.
        if (listed.has(key) || key === '__proto__') continue;
        out[key] = within(key, rest, value[key]);
      }
    }
    return out;
  }, isPlainObject);
}

function array(node: JsonSchema): Strip {
  const strip = node.items ? compileNode(node.items) : (v: unknown) => v;
  return tested((value) => {
    if (!Array.isArray(value)) throw new SchemaStripError('expected array');
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = within(i, strip, value[i]);
    return out;
  }, Array.isArray);
}

function compileNode(node: JsonSchema | boolean): Strip {
  if (node === true) return (value) => value;
  if (node === false) throw new Unsupported('false schema');
  for (const key of Object.keys(node)) if (!UNDERSTOOD.has(key)) throw new Unsupported(key);
  if (node.anyOf) {
    const { anyOf, ...rest } = node;
    const branches = anyOf.map((branch) => compileNode({ ...rest, ...branch }));
    return firstOf(branches);
  }
  if ('const' in node) return member([node.const]);
  if (node.enum) return member(node.enum);
  if (Array.isArray(node.type)) return firstOf(node.type.map((type) => compileNode({ ...node, type })));
  switch (node.type) {
    case undefined:
      // No type: unknown or any, passed whole.
      return (value) => value;
    case 'object':
      return object(node);
    case 'array':
      return array(node);
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return typeCheck(node.type);
    default:
      throw new Unsupported(`type ${node.type}`);
  }
}

/**
 * What `schema.parse(value)` returns for a response, without zod's validation pass, compiled once per schema
 * from the JSON Schema zod emits for its output (`z.toJSONSchema`, public API): objects keep only the fields
 * their schema lists (in its order), recursively through arrays, unions and records; primitives, enums and
 * literals are checked by type and value and passed through; absent fields with a default get it. Keywords
 * that only validate (formats, lengths, bounds, patterns) are not run. A schema JSON Schema cannot express
 * (transforms) or with a keyword not handled here is parsed by zod itself, so the output is always that of a
 * value of the schema's type.
 */
export function compileStrip(schema: z.ZodType): Strip {
  const byZod: Strip = (value) => schema.parse(value);
  let json: JsonSchema;
  try {
    json = z.toJSONSchema(schema, { io: 'output', target: 'draft-2020-12' }) as JsonSchema;
  } catch {
    return byZod; // not representable (a transform): zod alone knows the output
  }
  let strip: Strip;
  try {
    strip = compileNode(json);
  } catch (err) {
    if (err instanceof Unsupported) return byZod;
    throw err;
  }
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
