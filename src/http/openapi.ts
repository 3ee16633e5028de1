/** OpenAPI 3.1 document generated from the route specs and their zod schemas. */
import { z } from 'zod';
import type { ResponseSpec, RouteSpec } from './route-spec.js';
import { errorSchema } from './schemas.js';

type Json = Record<string, unknown>;

const HEADER_DOCS: Record<string, string> = {
  'X-Execution-Id': 'the execution this response is about',
  'Retry-After': 'seconds to wait before retrying',
  'X-Request-Id': 'the request id (also in the logs)',
  'Set-Cookie': 'the session cookie (HttpOnly, signed)',
  'X-Conversation-Id': 'the chat conversation this message belongs to',
  'X-Conversation-Token': 'the token that continues this conversation (also in the done event)',
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  delete out['$schema'];
  return out;
}

function parameters(spec: RouteSpec): Json[] {
  const params: Json[] = [...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1], in: 'path', required: true, schema: { type: 'string' },
  }));
  if (spec.query) {
    const schema = jsonSchema(spec.query, 'input');
    const props = (schema['properties'] ?? {}) as Record<string, Json>;
    const required = new Set((schema['required'] ?? []) as string[]);
    for (const [name, s] of Object.entries(props)) params.push({ name, in: 'query', required: required.has(name), schema: s });
  }
  for (const h of spec.requestHeaders ?? []) params.push({ name: h.name, in: 'header', required: false, description: h.description, schema: { type: 'string' } });
  if (spec.auth === 'apiKey' || spec.auth === 'adminOrKey') {
    params.push({ name: 'X-API-Key', in: 'header', required: spec.auth === 'apiKey', schema: { type: 'string' } });
  }
  return params;
}

function response(r: ResponseSpec): Json {
  const out: Json = { description: r.description };
  if (r.schema) out['content'] = { [r.contentType ?? 'application/json']: { schema: jsonSchema(r.schema, 'output') } };
  else if (r.contentType) out['content'] = { [r.contentType]: { schema: { type: 'string' } } };
  for (const type of r.alsoContentTypes ?? []) out['content'] = { ...(out['content'] as Json | undefined), [type]: { schema: { type: 'string' } } };
  if (r.headers) {
    out['headers'] = Object.fromEntries(r.headers.map((h) => [h, { description: HEADER_DOCS[h] ?? h, schema: { type: 'string' } }]));
  }
  return out;
}

/**
 * What any route may answer, said or not in its spec: 413 for a body over the limit (SPEC §4; a
 * route that takes no body refuses one sent anyway), 500 INTERNAL, 503 when the store fails.
 */
function withCommonAnswers(spec: RouteSpec): RouteSpec['responses'] {
  const out = { ...spec.responses };
  out[413] ??= {
    description: spec.body === undefined ? 'a body sent anyway, over TROUPE_MAX_BODY_BYTES (PAYLOAD_TOO_LARGE)' : 'body over TROUPE_MAX_BODY_BYTES (PAYLOAD_TOO_LARGE)',
    schema: errorSchema,
  };
  out[500] ??= { description: 'an unexpected failure (INTERNAL, no details)', schema: errorSchema };
  out[503] ??= { description: 'the store failed (STORE_ERROR)', schema: errorSchema, headers: ['Retry-After'] };
  return out;
}

function security(spec: RouteSpec): Json[] | undefined {
  switch (spec.auth) {
    case 'admin':
      return [{ adminToken: [] }];
    case 'apiKey':
      return [{ apiKey: [] }];
    case 'adminOrKey':
      return [{ adminToken: [] }, { apiKey: [] }];
    case 'none':
      return [];
  }
}

function operation(spec: RouteSpec): Json {
  const op: Json = {
    operationId: spec.operationId,
    summary: spec.summary,
    tags: [spec.tag],
    parameters: parameters(spec),
    security: security(spec),
    responses: Object.fromEntries(Object.entries(withCommonAnswers(spec)).map(([status, r]) => [status, response(r)])),
  };
  if (spec.description) op['description'] = spec.description;
  if (spec.body) {
    op['requestBody'] = {
      required: spec.body.required ?? true,
      ...(spec.body.description ? { description: spec.body.description } : {}),
      content: { 'application/json': { schema: jsonSchema(spec.body.schema, 'input') } },
    };
  }
  return op;
}

export function buildOpenApi(specs: readonly RouteSpec[], version: string): Json {
  const paths: Record<string, Json> = {};
  for (const spec of specs) {
    paths[spec.path] ??= {};
    (paths[spec.path] as Json)[spec.method] = operation(spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Troupe',
      version,
      description: 'Workflows as graphs of blocks run by an actor runtime. Errors: { "error": { "code", "message", "details" } }.',
    },
    paths,
    components: {
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'the admin token (TROUPE_ADMIN_TOKEN or generated into the data dir)' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'a key of the deployed workflow (trp_...)' },
      },
    },
  };
}
