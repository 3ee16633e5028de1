/** The application services the HTTP routes (and later triggers) call, built from one set of deps. */
import type { Logger } from 'pino';
import type { Bus } from '../bus/types.js';
import type { Engine } from '../engine/engine.js';
import type { SecretSource } from '../runtime/types.js';
import type { BlockTypeRegistry } from '../model/types.js';
import type { Store } from '../store/types.js';
import { CompiledCache } from './compiled-cache.js';
import { DeploymentService } from './deployments.js';
import { ExecutionService, type ExecutionObserver } from './executions.js';
import { ApiKeyService } from './keys.js';
import { LookupCache } from './lookup-cache.js';
import { TokenBuckets } from './rate-limit.js';
import { ChatService } from './chat.js';
import { ChatMessages } from './chat-messages.js';
import { logMailer, type Mailer } from './mailer.js';
import { ScheduleService } from './schedules.js';
import { SecretService } from './secrets.js';
import { WebhookService } from './webhooks.js';
import { WorkflowService } from './workflows.js';
import { chainSecrets, envSecrets } from '../runtime/secrets.js';
import { ApprovalService } from './approvals.js';
import { ChildWorkflows } from './children.js';
import { ClusterService } from './cluster.js';
import { RerunService } from './rerun.js';

export interface ServiceDeps {
  store: Store;
  engine: Engine;
  registry: BlockTypeRegistry;
  logger: Logger;
  secretKey: string;
  maxInflight: number;
  /** API key requests per minute */
  keyRateLimit: number;
  now?: () => number;
  observer?: ExecutionObserver;
  pollMs?: number;
  /** where chat sign-in codes are sent (default: the log) */
  mailer?: Mailer;
  /** the engine's time limit: a run older than it cannot still be running */
  executionTimeoutMs?: number;
  /** TROUPE_CHAT_IDLE_MS */
  chatIdleMs?: number;
  /** TROUPE_MAX_CALL_DEPTH */
  maxCallDepth?: number;
  /** where instances tell each other that keys or deployments changed (see LookupCache) */
  bus?: { bus: Bus; prefix: string };
  /** this instance (TROUPE_INSTANCE_ID; generated when absent) and the version it runs */
  instance: { id?: string | undefined; version: string };
}

export interface Services {
  cache: CompiledCache;
  workflows: WorkflowService;
  keys: ApiKeyService;
  deployments: DeploymentService;
  secrets: SecretService;
  executions: ExecutionService;
  rateLimits: TokenBuckets;
  lookups: LookupCache;
  webhooks: WebhookService;
  schedules: ScheduleService;
  chat: ChatService;
  chatMessages: ChatMessages;
  /** for views that read several repositories (schedules) */
  store: Store;
  approvals: ApprovalService;
  children: ChildWorkflows;
  reruns: RerunService;
  /** this instance among the service's (GET /api/cluster) */
  cluster: ClusterService;
}

const DEFAULT_EXECUTION_TIMEOUT_MS = 300_000;

export function createServices(deps: ServiceDeps): Services {
  const now = deps.now ?? Date.now;
  const cache = new CompiledCache(deps.registry);
  const lookups = new LookupCache(now, deps.bus);
  const keys = new ApiKeyService(deps.store, now, lookups);
  const deployments = new DeploymentService(deps.store, keys, cache, now, lookups);
  const secrets = new SecretService(deps.store, deps.secretKey);
  const executions = new ExecutionService({
    store: deps.store,
    engine: deps.engine,
    logger: deps.logger,
    maxInflight: deps.maxInflight,
    ...(deps.observer ? { observer: deps.observer } : {}),
    ...(deps.pollMs === undefined ? {} : { pollMs: deps.pollMs }),
  });
  const webhooks = new WebhookService({
    store: deps.store,
    deployments,
    executions,
    cache,
    // as the engine resolves {{NAME}}: the secrets API, then TROUPE_VAR_NAME
    secrets: chainSecrets(secrets.source(), envSecrets()),
    runSecrets: (workflow) => deps.engine.loadSecrets(workflow),
    logger: deps.logger,
    now,
    ...(deps.bus ? { bus: deps.bus } : {}),
  });
  const executionTimeoutMs = deps.executionTimeoutMs ?? DEFAULT_EXECUTION_TIMEOUT_MS;
  return {
    cache,
    lookups,
    workflows: new WorkflowService(deps.store, deps.registry, cache, lookups),
    keys,
    deployments,
    secrets,
    executions,
    rateLimits: new TokenBuckets(deps.keyRateLimit, now),
    webhooks,
    schedules: new ScheduleService({
      store: deps.store,
      executions,
      deployments,
      registry: deps.registry,
      logger: deps.logger,
      now,
      executionTimeoutMs,
    }),
    store: deps.store,
    approvals: new ApprovalService(deps.store, deps.secretKey, now),
    children: new ChildWorkflows(deps.store, executions, deployments, cache, deps.maxCallDepth ?? 10),
    chatMessages: new ChatMessages({ store: deps.store, deployments, executions, logger: deps.logger, now, ...(deps.chatIdleMs === undefined ? {} : { idleMs: deps.chatIdleMs }) }),
    reruns: new RerunService({ store: deps.store, cache, executions, executionTimeoutMs }),
    cluster: new ClusterService({ instanceId: deps.instance.id, version: deps.instance.version, running: () => deps.engine.inflight, ...(deps.now ? { now: deps.now } : {}) }),
    chat: new ChatService({
      store: deps.store, logger: deps.logger, now, secretKey: deps.secretKey, mailer: deps.mailer ?? logMailer(deps.logger),
    }),
  };
}

/**
 * `{{NAME}}` values from the secrets API, for the Engine that `troupe serve` builds (pass it as
 * openRuntime's `secrets` option): decrypts with the same key the secrets routes encrypt with.
 */
export function storeSecretSource(store: Store, secretKey: string): SecretSource {
  return new SecretService(store, secretKey).source();
}

export type { ExecutionObserver } from './executions.js';
export type { LoadedWorkflow } from './compiled-cache.js';
export type { SeqEvent } from './live.js';
