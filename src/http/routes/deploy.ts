/** Admin: deploy as API, undeploy, and the deployment's API keys (SPEC §4.1). */
import type { Services } from '../../service/index.js';
import { pageOf } from '../../store/shared.js';
import { z } from 'zod';
import { checkBody, errorResponse, param, parseQuery, type RouteSpec } from '../route-spec.js';
import { deployResponseSchema, issuedKeySchema, keyViewSchema, page, pageQuery } from '../schemas.js';

const deployBody = z.strictObject({
  version: z.number().int().min(1).optional().describe('a stored version to pin (a rollback); absent: the current version'),
});

const unauthorized = errorResponse('no or wrong admin token (UNAUTHORIZED)');
const badQuery = errorResponse('invalid limit or cursor (INVALID_REQUEST)');
const notFound = errorResponse('unknown workflow (NOT_FOUND)');

/** Deploy the current version, or a stored one (a rollback). */
function deployRoute(s: Services): RouteSpec {
  return {
    method: 'post', path: '/api/workflows/{id}/deploy', operationId: 'deployWorkflow', tag: 'deployments', auth: 'admin',
    summary: 'Deploy as API: pins the current version, or the stored version the body names (a rollback), and issues a new API key (shown once)',
    description: 'Deploying again re-pins (the then current version, or the one named) and issues another key; earlier keys stay valid '
      + 'until revoked. The endpoint, webhooks, schedules and chat run the pinned version.',
    body: { schema: deployBody, required: false, description: 'empty: the current version' },
    responses: {
      201: { description: 'the deployment and a new API key', schema: deployResponseSchema },
      401: unauthorized,
      400: errorResponse('invalid JSON or body (INVALID_JSON, INVALID_REQUEST)'),
      404: errorResponse('unknown workflow, or no such version of it (NOT_FOUND)'),
      409: errorResponse('a webhook path of this version is served by another deployed workflow (CONFLICT, details.path)'),
    },
    handler: async (ctx) => {
      const raw = await ctx.state.readJson();
      const body = checkBody(raw === undefined ? {} : raw, deployBody);
      const deployed = await s.deployments.deploy(param(ctx, 'id'), body.version);
      ctx.status = 201;
      ctx.body = deployed;
    },
  };
}

export function deployRoutes(s: Services): RouteSpec[] {
  return [
    deployRoute(s),
    {
      method: 'delete', path: '/api/workflows/{id}/deploy', operationId: 'undeployWorkflow', tag: 'deployments', auth: 'admin',
      summary: 'Undeploy: execute answers 403 NOT_DEPLOYED; API keys are kept (idempotent)',
      responses: { 204: { description: 'not deployed (any more)' }, 401: unauthorized, 404: notFound },
      handler: async (ctx) => {
        await s.deployments.undeploy(param(ctx, 'id'));
        ctx.status = 204;
      },
    },
    {
      method: 'post', path: '/api/workflows/{id}/keys', operationId: 'createKey', tag: 'keys', auth: 'admin',
      summary: 'Add an API key (the key is shown once)',
      responses: { 201: { description: 'the new key', schema: issuedKeySchema }, 401: unauthorized, 404: notFound },
      handler: async (ctx) => {
        ctx.status = 201;
        ctx.body = await s.keys.issue(param(ctx, 'id'));
      },
    },
    {
      method: 'get', path: '/api/workflows/{id}/keys', operationId: 'listKeys', tag: 'keys', auth: 'admin',
      summary: 'List API keys (prefix and dates only, revoked ones included)', query: pageQuery,
      responses: { 200: { description: 'the keys of the workflow, oldest first', schema: page(keyViewSchema) }, 400: badQuery, 401: unauthorized, 404: notFound },
      handler: async (ctx) => {
        const q = parseQuery(ctx, pageQuery);
        const keys = await s.keys.list(param(ctx, 'id'));
        ctx.body = pageOf(keys, (k) => `${k.createdAt}|${k.id}`, { limit: q.limit, cursor: q.cursor ?? null });
      },
    },
    {
      method: 'delete', path: '/api/workflows/{id}/keys/{keyId}', operationId: 'revokeKey', tag: 'keys', auth: 'admin',
      summary: 'Revoke an API key (idempotent while the key exists)',
      responses: { 204: { description: 'revoked' }, 401: unauthorized, 404: errorResponse('unknown workflow or key (NOT_FOUND)') },
      handler: async (ctx) => {
        await s.keys.revoke(param(ctx, 'id'), param(ctx, 'keyId'));
        ctx.status = 204;
      },
    },
  ];
}
