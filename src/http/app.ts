/**
 * createApp(deps): the Koa app of SPEC §4 without listening (`troupe serve` and tests call
 * `app.callback()`). Middleware order: request id → metrics/logs → errors → lazy body reader →
 * routes (admin routes check the bearer token before their handler).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import Koa from 'koa';
import { packageFile } from '../package-root.js';
import { createServices, type Services } from '../service/index.js';
import { createMetrics, type AppMetrics } from './metrics.js';
import { ConsoleSessions } from './console-sessions.js';
import { adminAuth, consoleSession } from './middleware/auth.js';
import { bodyReader } from './middleware/body.js';
import { chatHostRewrite } from './middleware/chat-host.js';
import { consoleStatic } from './middleware/console-static.js';
import { errorHandler } from './middleware/errors.js';
import { observe } from './middleware/observe.js';
import { requestId } from './middleware/request-id.js';
import { mount, type RouteSpec } from './route-spec.js';
import { ClusterService } from '../service/cluster.js';
import { RerunService } from '../service/rerun.js';
import { allExecutionsRoutes } from './routes/all-executions.js';
import { chatAdminRoutes, chatPublicRoutes } from './routes/chat.js';
import { clusterRoutes } from './routes/cluster.js';
import { consoleRoutes } from './routes/console.js';
import { deployRoutes } from './routes/deploy.js';
import { executeRoutes } from './routes/execute.js';
import { executionRoutes } from './routes/executions.js';
import { rerunRoutes } from './routes/rerun.js';
import { scheduleRoutes } from './routes/schedules.js';
import { secretRoutes } from './routes/secrets.js';
import { systemRoutes } from './routes/system.js';
import { versionRoutes } from './routes/versions.js';
import { webhookRoutes } from './routes/webhooks.js';
import { workflowRoutes } from './routes/workflows.js';
import type { AppDeps, AppState } from './types.js';
import { approvalRoutes } from './routes/approvals.js';

/** where `make console` (run by `make setup`) builds the console */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(packageFile('dist/console'));

export interface TroupeApp {
  app: Koa<AppState>;
  services: Services;
  metrics: AppMetrics;
  routes: readonly RouteSpec[];
  /** this instance among the service's (GET /api/cluster) */
  cluster: ClusterService;
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * What the log keeps of an error on a response's stream. A socket's error can be the HTTP
 * parser's, whose `rawPacket` holds the request bytes as received, credentials included; so
 * the log takes the error's name, code, message and stack, and nothing else it carries.
 */
export function streamError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const code = (err as { code?: unknown }).code;
  return { type: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}), stack: err.stack };
}

function appServices(deps: AppDeps, metrics: AppMetrics): Services {
  return createServices({
    store: deps.store,
    engine: deps.engine,
    registry: deps.registry,
    logger: deps.logger,
    secretKey: deps.secretKey,
    maxInflight: deps.config.maxInflight,
    keyRateLimit: deps.config.keyRateLimit,
    executionTimeoutMs: deps.config.executionTimeoutMs, maxCallDepth: deps.config.maxCallDepth,
    ...(deps.mailer ? { mailer: deps.mailer } : {}),
    observer: metrics.observer,
    bus: { bus: deps.bus, prefix: deps.config.busPrefix },
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.eventPollMs === undefined ? {} : { pollMs: deps.eventPollMs }),
  });
}

/** The app with the services and metrics behind it (serve uses the services for recovery and the demo). */
export function buildApp(deps: AppDeps): TroupeApp {
  const metrics = createMetrics();
  const services = appServices(deps, metrics);
  metrics.trackInflight(() => services.executions.inflight);
  const version = packageVersion();
  const cluster = new ClusterService({ instanceId: deps.config.instanceId, version, running: () => deps.engine.inflight, ...(deps.now ? { now: deps.now } : {}) });
  const reruns = new RerunService({
    store: deps.store, cache: services.cache, executions: services.executions, executionTimeoutMs: deps.config.executionTimeoutMs,
  });
  const routes: RouteSpec[] = [];
  const sessions = new ConsoleSessions(deps.config.consoleSessionHours * 3_600_000, deps.now);
  if (deps.config.console) routes.push(...consoleRoutes(sessions, deps.adminToken));
  routes.push(
    ...workflowRoutes(services),
    ...executeRoutes(services, deps.logger),
    ...deployRoutes(services),
    ...secretRoutes(services),
    ...executionRoutes(services, deps.adminToken, deps.logger), ...approvalRoutes(services, deps.adminToken),
    ...versionRoutes(deps.store),
    ...allExecutionsRoutes(services),
    ...rerunRoutes(services, reruns, deps.logger),
    ...clusterRoutes(cluster),
    ...webhookRoutes(services, deps.logger),
    ...scheduleRoutes(services),
    ...chatAdminRoutes(services, deps.config.chatHost),
    ...chatPublicRoutes(services, deps.logger),
    ...systemRoutes({
      store: deps.store, bus: deps.bus, metrics, readyTimeoutMs: deps.readyTimeoutMs ?? 2000, busPrefix: deps.config.busPrefix, allRoutes: () => routes, version,
    }),
  );
  const router = new Router<AppState>();
  const hot = new Router<AppState>();
  mount(router, routes, adminAuth(deps.adminToken), hot);

  const app = new Koa<AppState>();
  app.silent = true;
  // behind N trusted proxies the client's address and scheme come from their X-Forwarded-* headers
  // (only the last N hops: a client cannot forge its way past the limits keyed by address)
  if (deps.config.trustProxy > 0) {
    app.proxy = true;
    app.maxIpsCount = deps.config.trustProxy;
  }
  app.on('error', (err: unknown) => deps.logger.warn({ err: streamError(err) }, 'response stream error'));
  app.use(requestId());
  app.use(observe(deps.logger, metrics));
  app.use(errorHandler(deps.logger));
  app.use(bodyReader(deps.config.maxBodyBytes));
  app.use(chatHostRewrite(deps.config.chatHost));
  if (deps.config.console) {
    app.use(consoleSession(sessions));
    app.use(consoleStatic(deps.consoleDir ?? DEFAULT_CONSOLE_DIR));
  }
  app.use(hot.routes());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, services, metrics, routes, cluster };
}

export function createApp(deps: AppDeps): Koa<AppState> {
  return buildApp(deps).app;
}
