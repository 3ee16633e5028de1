/**
 * The composition root: the one place that builds the layers, in their order, and starts the
 * work in the background (docs/architecture.md "Layers"). One running service is: config →
 * secrets at rest → store → bus → engine (openRuntime, src/main.ts) → services
 * (composeServices) → recovery, the cluster, the waker → createApp(services) → node:http
 * server → scheduler, retention, sweeps; and the orderly way back down. `troupe serve` and the
 * HTTP benchmarks use startService; tests that need an app on their own engine use composeApp.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config/load.js';
import type { Bus } from './bus/types.js';
import type { Engine } from './engine/engine.js';
import { TroupeError } from './errors.js';
import { createApp, type TroupeApp } from './http/app.js';
import { answerClientErrors } from './http/client-error.js';
import { ConsoleSessions } from './http/console-sessions.js';
import { createMetrics, type AppMetrics } from './http/metrics.js';
import type { AppOptions } from './http/types.js';
import type { BlockTypeRegistry } from './model/types.js';
import { packageVersion } from './package-root.js';
import type { ClusterService } from './service/cluster.js';
import { smtpMailer, type Mailer } from './service/mailer.js';
import { RetentionJob } from './service/retention.js';
import { openRuntime, type Runtime } from './main.js';
import { createServices, storeSecretSource, type Services } from './service/index.js';
import { recoverExecutions, type RecoveryDeps, type RecoveryReport } from './server/recovery.js';
import { lockDataDir } from './server/data-dir-lock.js';
import { loadServiceSecrets, type ServiceSecrets } from './server/secrets-at-rest.js';
import type { Store } from './store/types.js';
import { serviceUrl } from './server/urls.js';
import { Waker } from './server/waker.js';
import type { WaitEntry } from './store/types.js';
import { soleLeader, startScheduler } from '../actors/scheduler.js';
import { DEFAULT_LEASE_TIMING } from './model/lease.js';
import { clustered, joinCluster, type ClusterMember } from './server/cluster/index.js';

/** On a shared store, how often unfinished records of dead instances are looked for. */
const SHARED_SWEEP_MS = 60_000;

/** What the services are built on: the runtime's parts and the settings (tests build their own engine). */
export interface ServiceInputs {
  config: Readonly<Config>;
  store: Store;
  bus: Bus;
  engine: Engine;
  registry: BlockTypeRegistry;
  logger: Logger;
  /** the key that encrypts secrets at rest (from env, or generated into the data dir) */
  secretKey: string;
  /** where chat sign-in codes are sent (default: the log) */
  mailer?: Mailer;
  /** injected clock for rate limits and timestamps */
  now?: () => number;
  /** how often an event stream polls the store for an execution running elsewhere (ms, default 250) */
  eventPollMs?: number;
}

/** The services, and the HTTP layer's parts they report to or that outlive a request. */
export interface Composed {
  services: Services;
  metrics: AppMetrics;
  sessions: ConsoleSessions;
  version: string;
}

/** The application services on a runtime, with the metrics that observe them. */
export function composeServices(deps: ServiceInputs): Composed {
  const { config } = deps;
  const metrics = createMetrics();
  const version = packageVersion();
  const services = createServices({
    store: deps.store, engine: deps.engine, registry: deps.registry, logger: deps.logger, secretKey: deps.secretKey,
    maxInflight: config.maxInflight, keyRateLimit: config.keyRateLimit,
    executionTimeoutMs: config.executionTimeoutMs, chatIdleMs: config.chatIdleMs, maxCallDepth: config.maxCallDepth,
    ...(deps.mailer ? { mailer: deps.mailer } : {}),
    observer: metrics.observer,
    bus: { bus: deps.bus, prefix: config.busPrefix },
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.eventPollMs === undefined ? {} : { pollMs: deps.eventPollMs }),
    instance: { id: config.instanceId, version },
  });
  metrics.trackInflight(() => services.executions.inflight);
  const sessions = new ConsoleSessions(config.consoleSessionHours * 3_600_000, deps.now);
  return { services, metrics, sessions, version };
}

/** What createApp is given besides the services. */
function appOptions(composed: Composed, deps: Pick<ServiceInputs, 'config' | 'logger' | 'bus'> & AppExtras): AppOptions {
  return {
    config: deps.config, logger: deps.logger, adminToken: deps.adminToken, bus: deps.bus,
    metrics: composed.metrics, sessions: composed.sessions, version: composed.version,
    ...(deps.consoleDir === undefined ? {} : { consoleDir: deps.consoleDir }),
    ...(deps.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: deps.readyTimeoutMs }),
  };
}

interface AppExtras {
  /** the admin bearer token in force (from env, or generated into the data dir) */
  adminToken: string;
  /** the built console (default: the package's dist/console) */
  consoleDir?: string;
  /** how long /readyz waits for the store and the bus (ms, default 2000) */
  readyTimeoutMs?: number;
}

export type AppDeps = ServiceInputs & AppExtras;

/** An app with the services and metrics behind it. */
export interface ComposedApp extends TroupeApp {
  services: Services;
  metrics: AppMetrics;
  /** this instance among the service's (GET /api/cluster) */
  cluster: ClusterService;
}

/** Services, then the app on them: an app on a runtime built elsewhere (tests, a second instance). */
export function composeApp(deps: AppDeps): ComposedApp {
  const composed = composeServices(deps);
  const { app, routes } = createApp(composed.services, appOptions(composed, deps));
  return { app, routes, services: composed.services, metrics: composed.metrics, cluster: composed.services.cluster };
}

export interface ServiceOptions {
  logger: Logger;
  shutdownGraceMs?: number;
}

export interface Service {
  /** base URL clients use, e.g. http://127.0.0.1:3000 */
  url: string;
  port: number;
  runtime: Runtime;
  secrets: ServiceSecrets;
  recovery: RecoveryReport;
  server: http.Server;
  /** idempotent; resolves once the runtime is closed */
  stop(reason?: string): Promise<void>;
}

export async function startService(config: Readonly<Config>, options: ServiceOptions): Promise<Service> {
  const { logger } = options;
  // before anything reads the store: recovery would take another live service's runs for orphans
  // (a shared store, PostgreSQL or MongoDB, is meant for several instances and takes no lock)
  const lock = config.mongodbUrl === undefined && config.databaseUrl === undefined ? lockDataDir(config.dataDir) : undefined;
  let runtime: Runtime;
  let secrets: ServiceSecrets;
  try {
    secrets = loadServiceSecrets(config);
    runtime = await openRuntime(config, {
      // the same decryption the secrets routes encrypt for; TROUPE_VAR_* is chained after it
      secrets: (store) => storeSecretSource(store, secrets.secretKey.value),
      // what the engine cannot throw to a caller: a record batch the store refused, lifecycle events
      // the bus could not take, a run that failed to end cleanly
      onError: (err) => logger.error({ err }, 'execution runtime error (record, lifecycle event or run)'),
      park: true,
      resumedElsewhere: clustered(config),
    });
  } catch (err) {
    lock?.release();
    throw err;
  }
  return serveOn(runtime, secrets, config, options, () => lock?.release());
}

/** The app, recovery, the listener and the schedulers on an open runtime; `release` runs once it is closed again. */
async function serveOn(runtime: Runtime, secrets: ServiceSecrets, config: Readonly<Config>, options: ServiceOptions, release: () => void): Promise<Service> {
  const { logger } = options;
  try {
    const composed = composeServices({
      config, store: runtime.store, bus: runtime.bus, engine: runtime.engine, registry: runtime.registry, logger, secretKey: secrets.secretKey.value,
      ...(config.smtpUrl === undefined ? {} : { mailer: await smtpMailer(config.smtpUrl, config.smtpFrom) }),
    });
    const { services, metrics } = composed;
    const cluster = services.cluster;
    // a changed TROUPE_SECRET_KEY stops the start here, naming itself
    await services.secrets.checkKey();
    // before listening; through the execution service, so resumed runs are followed, cancelled and counted like any
    const launch: Launch = async (compiled, req) => {
      const handle = await services.executions.launch(compiled, req);
      if (req.trigger.type === 'chat') {
        services.chatMessages.adopt(handle, req.trigger).catch((err: unknown) => logger.error({ err, executionId: req.executionId }, 'chat answer of a resumed execution not stored'));
      }
      return handle;
    };
    useWaitingServices(runtime, services);
    const recovery = await recover(runtime, logger, false, launch);
    // NATS and a shared store: one instance of a cluster (announced, leasing its executions)
    const member = clustered(config) ? await joinCluster({ config, runtime, cluster, executions: services.executions, webhooks: services.webhooks, chatMessages: services.chatMessages, metrics: metrics.registry, start: launch, logger }) : undefined;
    const waker = waiting(runtime, logger, launch, member);
    const { app } = createApp(services, appOptions(composed, { config, logger, bus: runtime.bus, adminToken: secrets.adminToken.value }));
    const server = http.createServer(app.callback());
    answerClientErrors(server, logger);
    const port = await listen(server, config);
    const sweep = runtime.store.kind !== 'sqlite' ? startSweep(runtime, logger, launch) : undefined;
    const stopBackground = startBackground(runtime, services, config, logger, { waker, member });
    const url = serviceUrl(config, port);
    services.approvals.baseUrl = url;
    logger.info({ url, store: runtime.store.kind, bus: config.natsUrl ? 'nats' : 'memory', instance: cluster.instanceId }, 'troupe listening');
    let stopping: Promise<void> | undefined;
    return {
      url,
      port,
      runtime,
      secrets,
      recovery,
      server,
      stop(reason = 'stop requested') {
        if (sweep) clearInterval(sweep);
        // a tick or sweep in progress may still be starting runs: they belong to the grace period below
        stopping ??= stopBackground()
          .then(() => shutdown(server, runtime, logger, options.shutdownGraceMs ?? config.shutdownGraceMs, reason, member))
          .finally(release);
        return stopping;
      },
    };
  } catch (err) {
    await runtime.close().finally(release);
    throw err;
  }
}

type Launch = NonNullable<RecoveryDeps['start']>;

/** The service's background work, started once it listens; the function returned stops it. */
function startBackground(
  runtime: Runtime, services: Services, config: Readonly<Config>, logger: Logger, parts: { waker: Waker; member: ClusterMember | undefined },
): () => Promise<unknown> {
  // accepted webhook events left pending (a crash, back-pressure) start from here
  services.webhooks.startSweeper();
  // one scheduler actor per service: alone it leads at once, in a cluster the lease holder fires
  const scheduler = startScheduler({
    lease: parts.member?.schedulerLease ?? soleLeader, renewMs: parts.member?.leaseTiming.renewMs ?? DEFAULT_LEASE_TIMING.renewMs,
    activate: () => services.schedules.activate(), tick: () => services.schedules.tick(), deactivate: () => services.schedules.stop(),
    now: () => services.schedules.now(), logger,
  });
  const retention = new RetentionJob(
    { executions: runtime.store.executions, clock: runtime.services.clock, logger },
    { retentionDays: config.executionRetentionDays },
  );
  retention.start();
  parts.waker.start();
  return () => {
    // idle chat sessions end now (their timers with them); the conversations are in the store
    services.chatMessages.sessions.passivateAll();
    return Promise.all([scheduler.stop(), services.webhooks.stopSweeper(), retention.stop(), parts.waker.stop()]);
  };
}

/**
 * What waiting blocks need of the service (docs/waiting.md): approvals and workflow blocks keep
 * their state through its services (it knows its secret key and URL).
 */
function useWaitingServices(runtime: Runtime, services: Services): void {
  runtime.services.approvals = services.approvals;
  runtime.services.children = services.children;
  services.approvals.baseUrl = serviceUrl(runtime.config, runtime.config.port);
}

/**
 * The waker; in a cluster it hands what falls due to the work queue, and takes the lease of what
 * it wakes itself (the parking instance's may be left, if it died).
 */
function waiting(runtime: Runtime, logger: Logger, launch: Launch, member: ClusterMember | undefined): Waker {
  return new Waker(
    {
      store: runtime.store, engine: runtime.engine, registry: runtime.registry, logger, start: launch,
      ...(member === undefined ? {} : { adopt: (id: string) => member.leases.adopt(id) }),
    },
    {
      executionTimeoutMs: runtime.config.executionTimeoutMs, pollMs: runtime.config.waitPollMs, now: () => runtime.services.clock.now(),
      // in a cluster a wake-up goes through the work queue, to one instance (docs/waiting.md)
      ...(member === undefined ? {} : { dispatch: (e: WaitEntry) => member.queue.resume(e.executionId, e.key) }),
    },
  );
}

function recover(runtime: Runtime, logger: Logger, shared: boolean, launch: Launch): Promise<RecoveryReport> {
  return recoverExecutions(
    {
      store: runtime.store, engine: runtime.engine, registry: runtime.registry, logger, start: launch,
      events: { bus: runtime.bus, prefix: runtime.config.busPrefix },
    },
    {
      mode: shared || runtime.store.kind !== 'sqlite' ? 'shared' : 'exclusive',
      // past its time limit an execution cannot still be running on a live instance
      staleAfterMs: runtime.config.executionTimeoutMs + SHARED_SWEEP_MS,
      executionTimeoutMs: runtime.config.executionTimeoutMs,
      maxResumeAttempts: runtime.config.maxResumeAttempts,
    },
  );
}

function startSweep(runtime: Runtime, logger: Logger, launch: Launch): NodeJS.Timeout {
  const timer = setInterval(() => {
    recover(runtime, logger, true, launch).catch((err: unknown) => logger.error({ err }, 'recovery sweep failed'));
  }, SHARED_SWEEP_MS);
  timer.unref();
  return timer;
}

function listen(server: http.Server, config: Readonly<Config>): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(new TroupeError('INVALID_CONFIG', `cannot listen on ${config.host}:${config.port} (TROUPE_HOST/TROUPE_PORT): ${err.code ?? err.message}`, { cause: err }));
    };
    server.once('error', onError);
    server.listen(config.port, config.host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Stop accepting connections, let running executions finish (sync callers get their answers),
 * cancel what outlives the grace period so it is recorded `cancelled` rather than left
 * `running` (in a cluster: hand it over to another instance instead), then close the runtime
 * (bus, sandbox, store).
 */
async function shutdown(server: http.Server, runtime: Runtime, logger: Logger, graceMs: number, reason: string, member?: ClusterMember): Promise<void> {
  logger.info({ reason, inflight: runtime.engine.inflight }, 'shutting down');
  await member?.stopIntake();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  if (!(await runtime.engine.whenIdle(graceMs))) {
    if (member !== undefined) {
      const handed = await member.handOver();
      logger.warn({ handed, graceMs }, 'executions still running after the grace period were handed over to another instance');
    } else {
      const cancelled = runtime.engine.cancelAll();
      logger.warn({ cancelled, graceMs }, 'executions still running after the grace period were cancelled');
      await runtime.engine.whenIdle(5_000);
    }
  }
  await member?.close();
  // responses of just-finished executions get a moment to leave, long-lived streams do not
  server.closeIdleConnections();
  await Promise.race([closed, delay(2_000)]);
  server.closeAllConnections();
  await closed;
  await runtime.close();
  logger.info('stopped');
}

/** Unref'd: it only bounds a race, and once the race is decided it must not hold the process for its remaining time. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
