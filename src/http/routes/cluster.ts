/** Admin: the service's instances (SPEC §4.1, §9). */
import { z } from 'zod';
import type { ClusterService } from '../../service/cluster.js';
import { errorResponse, type RouteSpec } from '../route-spec.js';

const instanceSchema = z.object({
  id: z.string().describe('TROUPE_INSTANCE_ID, or an id generated when the instance started'),
  host: z.string(),
  version: z.string().describe('the Troupe version it runs'),
  startedAt: z.string(),
  lastSeenAt: z.string(),
  running: z.number().int().describe('executions running in it'),
});

export function clusterRoutes(cluster: ClusterService): RouteSpec[] {
  return [{
    method: 'get', path: '/api/cluster', operationId: 'listInstances', tag: 'cluster', auth: 'admin',
    summary: "The service's live instances (this process alone, unless several share a store and NATS)",
    responses: { 200: { description: 'the instances', schema: z.object({ items: z.array(instanceSchema), nextCursor: z.null().describe('always null: one page') }) },
      401: errorResponse('no or wrong admin token (UNAUTHORIZED)') },
    handler: async (ctx) => {
      ctx.body = { items: await cluster.instances(), nextCursor: null };
    },
  }];
}
