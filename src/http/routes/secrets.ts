/** Admin: workflow secrets, values write-only (SPEC §4.1, §6). */
import type { Services } from '../../service/index.js';
import { pageOf } from '../../store/shared.js';
import { errorResponse, param, parseBody, parseQuery, type RouteSpec } from '../route-spec.js';
import { page, pageQuery, secretPutBody, secretPutResponse, secretViewSchema } from '../schemas.js';

const unauthorized = errorResponse('no or wrong admin token (UNAUTHORIZED)');
const badQuery = errorResponse('invalid limit or cursor (INVALID_REQUEST)');

export function secretRoutes(s: Services): RouteSpec[] {
  return [
    {
      method: 'put', path: '/api/secrets/{name}', operationId: 'putSecret', tag: 'secrets', auth: 'admin',
      summary: 'Set a secret, read by workflows as {{NAME}}; stored encrypted, never returned',
      body: { schema: secretPutBody },
      responses: { 201: { description: 'created', schema: secretPutResponse }, 200: { description: 'replaced', schema: secretPutResponse },
        400: errorResponse('invalid JSON, name or body (INVALID_JSON, INVALID_REQUEST)'), 401: unauthorized,
        413: errorResponse('body over the size limit (PAYLOAD_TOO_LARGE)') },
      handler: async (ctx) => {
        const name = param(ctx, 'name');
        const { value } = await parseBody(ctx, secretPutBody);
        const { created } = await s.secrets.put(name, value);
        ctx.status = created ? 201 : 200;
        ctx.body = { name, created };
      },
    },
    {
      method: 'get', path: '/api/secrets', operationId: 'listSecrets', tag: 'secrets', auth: 'admin',
      summary: 'List secret names (never values)', query: pageQuery,
      responses: { 200: { description: 'secret names, by name', schema: page(secretViewSchema) }, 400: badQuery, 401: unauthorized },
      handler: async (ctx) => {
        const q = parseQuery(ctx, pageQuery);
        ctx.body = pageOf(await s.secrets.list(), (v) => v.name, { limit: q.limit, cursor: q.cursor ?? null });
      },
    },
    {
      method: 'delete', path: '/api/secrets/{name}', operationId: 'deleteSecret', tag: 'secrets', auth: 'admin',
      summary: 'Delete a secret',
      responses: { 204: { description: 'deleted' }, 400: errorResponse('invalid name (INVALID_REQUEST)'), 401: unauthorized,
        404: errorResponse('unknown secret (NOT_FOUND)') },
      handler: async (ctx) => {
        await s.secrets.delete(param(ctx, 'name'));
        ctx.status = 204;
      },
    },
  ];
}
