import { z } from 'zod';
import { fullPath, isRawResponse, type EndpointDef, type HttpMethod } from './endpoint.js';

/**
 * What the CLI needs of an endpoint at run time, as plain data: scripts/generate.js writes it for every endpoint
 * into src/client/endpoints.ts, so that commands derive their flags and send their calls without loading zod or
 * building a single schema. The zod declaration stays the one source; this is computed from it.
 */

export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object';

/** One property of a query or body schema, as the CLI makes a flag of it. */
export interface FieldDescriptor {
  readonly field: string;
  readonly kind: FieldKind;
  /** `"null"` given for it means null (clears the value). */
  readonly nullable: boolean;
  /** The body or query is invalid without it. */
  readonly required?: true;
  /** The allowed values of a string enum. */
  readonly options?: readonly string[];
  /** A date-time (ISO 8601): the CLI sends a date-only value as the start of that day in UTC. */
  readonly dateTime?: true;
  readonly description?: string;
}

declare const contractType: unique symbol;

interface ClientEndpointData {
  /** The contract area and entry it projects (`contract[area][name]`), for loading its schemas when needed. */
  readonly area: string;
  readonly name: string;
  readonly method: HttpMethod;
  /** The path as sent: below `/api/v1`, or at the root for `root` endpoints; `:name` parameters unfilled. */
  readonly fullPath: string;
  readonly idempotent?: true;
  /** Every success response is a raw stream: a call resolves to the unread response. */
  readonly rawOnly?: true;
  readonly query?: readonly FieldDescriptor[];
  readonly body?: readonly FieldDescriptor[];
}

/** The projection of endpoint E. E is a phantom (never set at run time): it types requests and responses exactly
 * as the declaration does, and it requires query and body fields exactly where the declaration has schemas. */
export type ClientEndpoint<E extends EndpointDef = EndpointDef> = ClientEndpointData & {
  readonly [contractType]?: E;
} & (E['query'] extends z.ZodType ? { readonly query: readonly FieldDescriptor[] } : unknown) &
  (E['body'] extends z.ZodType ? { readonly body: readonly FieldDescriptor[] } : unknown);

/** The declaration a projection stands for. */
export type ContractOf<C> = C extends { readonly [contractType]?: infer E extends EndpointDef } ? E : never;

/** The projection of one contract area, endpoint by endpoint. */
export type ClientGroup<G> = { readonly [K in keyof G]: G[K] extends EndpointDef ? ClientEndpoint<G[K]> : never };

export type ContractGroup = Readonly<Record<string, EndpointDef>>;

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  description?: string;
  format?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
};

/** The branch of a nullable/union schema that says what the value is. */
function core(schema: JsonSchema): JsonSchema {
  if (schema.anyOf) {
    const real = schema.anyOf.filter((s) => s.type !== 'null');
    if (real.length === 1 && real[0]) return core(real[0]);
    // `one value or a list of them` (e.g. a status filter): a list flag, which takes one value as well.
    const list = real.find((s) => s.type === 'array');
    if (list && real.every((s) => s === list || s.type === 'string' || s.const !== undefined)) return list;
    return real.every((s) => s.type === 'string' || s.const !== undefined) ? { type: 'string' } : { type: 'object' };
  }
  if (Array.isArray(schema.type)) return { ...schema, type: schema.type.find((t) => t !== 'null') ?? 'string' };
  if (schema.const !== undefined) return { type: typeof schema.const, enum: [schema.const] };
  return schema;
}

function nullable(schema: JsonSchema): boolean {
  return (
    (schema.anyOf?.some((s) => s.type === 'null') ?? false) ||
    (Array.isArray(schema.type) && schema.type.includes('null'))
  );
}

/** A date-time, alone or as one branch of a union (`date-time | date`) or of a nullable. */
function isDateTime(schema: JsonSchema): boolean {
  return schema.format === 'date-time' || (schema.anyOf?.some(isDateTime) ?? false);
}

const KINDS: readonly string[] = ['boolean', 'integer', 'number', 'array', 'object'] satisfies FieldKind[];

/** The fields of a body or query schema, read from its input JSON Schema (what a caller may send). */
export function fieldsOf(schema: z.ZodType): FieldDescriptor[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return Object.entries(json.properties ?? {}).map(([field, prop]) => {
    const c = core(prop);
    const kind = typeof c.type === 'string' && KINDS.includes(c.type) ? (c.type as FieldKind) : 'string';
    return {
      field,
      kind,
      nullable: nullable(prop),
      ...(json.required?.includes(field) ? { required: true as const } : {}),
      ...(kind === 'string' && c.enum ? { options: c.enum.map(String) } : {}),
      ...(kind === 'string' && isDateTime(prop) ? { dateTime: true as const } : {}),
      ...(prop.description === undefined ? {} : { description: prop.description }),
    };
  });
}

/** The client's projection of one declaration. */
export function projectEndpoint(area: string, name: string, def: EndpointDef): ClientEndpoint {
  const specs = Object.values(def.responses);
  return {
    area,
    name,
    method: def.method,
    fullPath: fullPath(def),
    ...(def.idempotent ? { idempotent: true } : {}),
    ...(specs.length > 0 && specs.every((spec) => isRawResponse(spec)) ? { rawOnly: true } : {}),
    ...(def.query ? { query: fieldsOf(def.query) } : {}),
    ...(def.body ? { body: fieldsOf(def.body) } : {}),
  };
}
