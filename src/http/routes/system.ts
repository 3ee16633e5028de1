/** Unauthenticated service routes: liveness, readiness, Prometheus metrics, the OpenAPI document. */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Bus } from '../../bus/types.js';
import { TroupeError } from '../../errors.js';
import type { Store } from '../../store/types.js';
import type { AppMetrics } from '../metrics.js';
import { buildOpenApi } from '../openapi.js';
import { errorResponse, type RouteSpec } from '../route-spec.js';
import { healthSchema, readySchema } from '../schemas.js';

export interface SystemDeps {
  store: Store;
  bus: Bus;
  metrics: AppMetrics;
  readyTimeoutMs: number;
  busPrefix: string;
  /** every route of the app, this module's included (for /openapi.json) */
  allRoutes: () => readonly RouteSpec[];
  version: string;
}

function within(p: Promise<unknown>, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    p.then(
      () => {
        clearTimeout(timer);
        resolve('ok');
      },
      () => {
        clearTimeout(timer);
        resolve('error');
      },
    );
  });
}

/**
 * A message round trip through the bus (subscribe, publish, receive): flush alone succeeds on a
 * closed bus, a round trip does not, and over NATS it proves the server relays.
 */
function busRoundTrip(bus: Bus, prefix: string, ms: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const subject = `${prefix}.ready.${randomBytes(8).toString('hex')}`;
    const sub = bus.subscribe(subject, () => {
      clearTimeout(timer);
      sub.unsubscribe();
      resolve();
    });
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new Error('bus round trip timed out'));
    }, ms);
    try {
      bus.publish(subject, { ping: true });
    } catch (err) {
      clearTimeout(timer);
      sub.unsubscribe();
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

async function readiness(d: SystemDeps): Promise<Record<string, string>> {
  const [store, bus] = await Promise.all([
    within(Promise.resolve().then(() => d.store.ping()), d.readyTimeoutMs),
    within(Promise.resolve().then(() => busRoundTrip(d.bus, d.busPrefix, d.readyTimeoutMs)), d.readyTimeoutMs + 100),
  ]);
  return { store, bus };
}

export function systemRoutes(d: SystemDeps): RouteSpec[] {
  let openapi: Record<string, unknown> | undefined;
  return [
    {
      method: 'get', path: '/healthz', operationId: 'health', tag: 'service', auth: 'none', summary: 'The process is up',
      responses: { 200: { description: 'up', schema: healthSchema } },
      handler: (ctx) => {
        ctx.body = { status: 'ok' };
      },
    },
    {
      method: 'get', path: '/readyz', operationId: 'ready', tag: 'service', auth: 'none',
      summary: 'The store and the bus answer (within a time limit)',
      responses: { 200: { description: 'ready', schema: readySchema }, 503: errorResponse('not ready (NOT_READY, details.checks)', ['Retry-After']) },
      handler: async (ctx) => {
        const checks = await readiness(d);
        if (Object.values(checks).some((v) => v !== 'ok')) throw new TroupeError('NOT_READY', 'a dependency is not reachable', { details: { checks, retryAfterSec: 1 } });
        ctx.body = { status: 'ready', checks };
      },
    },
    {
      method: 'get', path: '/metrics', operationId: 'metrics', tag: 'service', auth: 'none', summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain' } },
      handler: async (ctx) => {
        ctx.type = d.metrics.registry.contentType;
        ctx.body = await d.metrics.registry.metrics();
      },
    },
    {
      method: 'get', path: '/openapi.json', operationId: 'openapi', tag: 'service', auth: 'none', summary: 'This document',
      responses: { 200: { description: 'OpenAPI 3.1', schema: z.record(z.string(), z.unknown()).describe('an OpenAPI 3.1 document') } },
      handler: (ctx) => {
        openapi ??= buildOpenApi(d.allRoutes(), d.version);
        ctx.body = openapi;
      },
    },
  ];
}
