import { z } from 'zod';
import { ErrorBodySchema } from './common.js';
import { fullPath, isRawResponse, type EndpointDef } from './endpoint.js';

type JsonObject = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonObject;
  delete json.$schema;
  return json;
}

function parametersOf(def: EndpointDef): JsonObject[] {
  const out: JsonObject[] = [];
  for (const [where, schema] of [['path', def.params], ['query', def.query]] as const) {
    if (!schema) continue;
    const json = schemaOf(schema, 'input');
    const properties = (json.properties ?? {}) as Record<string, JsonObject>;
    const required = new Set((json.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(properties)) {
      out.push({ name, in: where, required: where === 'path' || (required.has(name) && !('default' in prop)), schema: prop });
    }
  }
  if (def.idempotent) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'The same key and body from the same caller within 24 hours replays the first answer (Idempotent-Replayed: true)',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  return out;
}

/** The OpenAPI 3.1 document of a contract: one operation per endpoint, x-svc-auth carrying the guard rules. */
export function buildOpenApi(groups: Record<string, Record<string, EndpointDef>>, version: string): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  const errorSchema = schemaOf(ErrorBodySchema, 'output');
  for (const [area, endpoints] of Object.entries(groups)) {
    for (const [name, def] of Object.entries(endpoints)) {
      const path = fullPath(def).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const responses: Record<string, JsonObject> = {};
      for (const [status, spec] of Object.entries(def.responses)) {
        responses[status] = isRawResponse(spec)
          ? { description: 'Streamed', content: Object.fromEntries(spec.contentTypes.map((t) => [t, { schema: { type: 'string' } }])) }
          : { description: 'Success', content: { 'application/json': { schema: schemaOf(spec, 'output') } } };
      }
      responses.default = { description: 'Error', content: { 'application/json': { schema: errorSchema } } };
      const operation: JsonObject = {
        operationId: `${area}.${name}`,
        tags: [area],
        summary: def.summary,
        ...(def.description ? { description: def.description } : {}),
        parameters: parametersOf(def),
        responses,
        security: def.auth.public ? [] : def.auth.sessionOnly ? [{ bearer: [] }] : [{ bearer: [] }, { apiKey: [] }],
        'x-svc-auth': def.auth,
      };
      if (def.body) {
        operation.requestBody = { required: true, content: { 'application/json': { schema: schemaOf(def.body, 'input') } } };
      }
      (paths[path] ??= {})[def.method.toLowerCase()] = operation;
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'svc API', version, description: 'Multi-tenant remote monitoring and management administration API' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
    paths,
  };
}
