/**
 * createApp(services, options): the Koa app of SPEC §4 on services built elsewhere (the
 * composition root, src/compose.ts), without listening (`troupe serve` and tests call
 * `app.callback()`). It builds nothing of its own but the router and the middleware chain.
 * Middleware order: request id → metrics/logs → errors → lazy body reader → routes (admin routes
 * check the bearer token before their handler).
 */
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import Koa from 'koa';
import { packageFile } from '../package-root.js';
import type { Services } from '../service/index.js';
import { adminAuth, consoleSession } from './middleware/auth.js';
import { bodyReader } from './middleware/body.js';
import { chatHostRewrite } from './middleware/chat-host.js';
import { consoleStatic } from './middleware/console-static.js';
import { errorHandler } from './middleware/errors.js';
import { observe } from './middleware/observe.js';
import { requestId } from './middleware/request-id.js';
import { mount, type RouteSpec } from './route-spec.js';
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
import type { AppOptions, AppState } from './types.js';
import { approvalRoutes } from './routes/approvals.js';

/** where `make console` (run by `make setup`) builds the console */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(packageFile('dist/console'));

export interface TroupeApp {
  app: Koa<AppState>;
  /** every route the app serves (the OpenAPI document lists them) */
  routes: readonly RouteSpec[];
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

/** The app on `services`: their routes, the admin check, the middleware chain. */
export function createApp(services: Services, options: AppOptions): TroupeApp {
  const { config, logger, adminToken } = options;
  const routes = appRoutes(services, options);
  const router = new Router<AppState>();
  const hot = new Router<AppState>();
  mount(router, routes, adminAuth(adminToken), hot);

  const app = new Koa<AppState>();
  app.silent = true;
  // behind N trusted proxies the client's address and scheme come from their X-Forwarded-* headers
  // (only the last N hops: a client cannot forge its way past the limits keyed by address)
  if (config.trustProxy > 0) {
    app.proxy = true;
    app.maxIpsCount = config.trustProxy;
  }
  app.on('error', (err: unknown) => logger.warn({ err: streamError(err) }, 'response stream error'));
  app.use(requestId());
  app.use(observe(logger, options.metrics));
  app.use(errorHandler(logger));
  app.use(bodyReader(config.maxBodyBytes));
  app.use(chatHostRewrite(config.chatHost));
  if (config.console) {
    app.use(consoleSession(options.sessions));
    app.use(consoleStatic(options.consoleDir ?? DEFAULT_CONSOLE_DIR));
  }
  app.use(hot.routes());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { app, routes };
}

function appRoutes(services: Services, options: AppOptions): RouteSpec[] {
  const { config, logger, adminToken } = options;
  const routes: RouteSpec[] = [];
  if (config.console) routes.push(...consoleRoutes(options.sessions, adminToken));
  routes.push(
    ...workflowRoutes(services),
    ...executeRoutes(services, logger),
    ...deployRoutes(services),
    ...secretRoutes(services),
    ...executionRoutes(services, adminToken, logger), ...approvalRoutes(services, adminToken),
    ...versionRoutes(services.store),
    ...allExecutionsRoutes(services),
    ...rerunRoutes(services, services.reruns, logger),
    ...clusterRoutes(services.cluster),
    ...webhookRoutes(services, logger),
    ...scheduleRoutes(services),
    ...chatAdminRoutes(services, config.chatHost),
    ...chatPublicRoutes(services, logger),
    ...systemRoutes({
      store: services.store, bus: options.bus, metrics: options.metrics, readyTimeoutMs: options.readyTimeoutMs ?? 2000, busPrefix: config.busPrefix,
      allRoutes: () => routes, version: options.version,
    }),
  );
  return routes;
}
