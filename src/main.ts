import type { Config } from '../config/load.js';
import { TroupeError, toTroupeError } from './errors.js';
import { blockTypes, blockTypeRegistry } from './blocks/index.js';
import type { BlockServices } from './blocks/types.js';
import { MemoryBus } from './bus/memory.js';
import { NatsBus } from './bus/nats.js';
import { webhookStream } from './bus/subjects.js';
import type { Bus } from './bus/types.js';
import type { BlockTypeRegistry } from './model/types.js';
import { createOutboundClient } from './outbound/client.js';
import { createModelClient } from './providers/index.js';
import { systemClock } from './runtime/clock.js';
import { chainSecrets, envSecrets } from './runtime/secrets.js';
import type { SecretSource } from './runtime/types.js';
import { IsolatedVmSandbox } from './sandbox/isolated.js';
import { fencedExecutions } from './server/cluster/fence.js';
import { requeueAwareExecutions } from './server/recovery.js';
import { TrackedEngine } from './server/tracked-engine.js';
import { openStore as openConfiguredStore, storeVariable } from './store/open.js';
import type { Store } from './store/types.js';
import { DAY_MS } from './model/wait.js';
import { setMaxWaitDays } from './blocks/wait.js';

/**
 * Everything a process runs on: the runtime part of the composition root (src/compose.ts builds
 * the services and the app on it; `troupe run` uses it alone). main.ts is the only module that
 * chooses adapters (DESIGN).
 */
export interface Runtime {
  config: Readonly<Config>;
  bus: Bus;
  store: Store;
  /** an Engine that also knows the executions running in this process (for shutdown) */
  engine: TrackedEngine;
  registry: BlockTypeRegistry;
  services: BlockServices;
  /** refuses every further record write of these executions (handed over to another instance) */
  fence(ids: Iterable<string>): void;
  close(): Promise<void>;
}

/** `onWarning` hears what goes wrong off the request path (a NATS server without JetStream). */
export async function openBus(config: Readonly<Config>, onWarning?: (message: string) => void): Promise<Bus> {
  if (!config.natsUrl) return new MemoryBus();
  const options = { name: 'troupe', streams: [webhookStream(config.busPrefix)], ...(onWarning ? { onWarning } : {}) };
  return naming('NATS_URL', NatsBus.connect(config.natsUrl, options));
}

/** `onWarning` hears what goes wrong off the request path (a failed WAL checkpoint). */
export async function openStore(config: Readonly<Config>, onWarning?: (message: string) => void): Promise<Store> {
  const selection = { mongodbUrl: config.mongodbUrl, databaseUrl: config.databaseUrl };
  const opened = openConfiguredStore({ ...selection, dataDir: config.dataDir, ...(onWarning ? { onWarning } : {}) });
  return naming(storeVariable(selection), opened);
}

/** A start-up failure names the setting that led to it, as a bad value's message does (SPEC §6). */
async function naming<T>(variable: string, opening: Promise<T>): Promise<T> {
  try {
    return await opening;
  } catch (err) {
    const e = toTroupeError(err);
    throw new TroupeError(e.code, `${variable}: ${e.message}`, { cause: err, retryable: e.retryable, ...(e.details === undefined ? {} : { details: e.details }) });
  }
}

export interface RuntimeOptions {
  /** extra `{{NAME}}` source consulted before the environment (the secrets API) */
  secrets?: (store: Store) => SecretSource;
  onError?: (err: unknown) => void;
  /**
   * true (the service): an execution waiting longer than TROUPE_SYNC_WAIT_MS parks and the
   * service's waker resumes it; otherwise (troupe run) every wait is kept in memory
   */
  park?: boolean;
  /** true (a cluster member): another instance resumes this one's runs if it dies (RuntimeDeps.resumedElsewhere) */
  resumedElsewhere?: boolean;
}

export async function openRuntime(config: Readonly<Config>, options: RuntimeOptions = {}): Promise<Runtime> {
  // the layers in order: the store, the bus, then the engine on them
  const store = await openStore(config, (message) => options.onError?.(new Error(message)));
  let bus: Bus;
  try {
    bus = await openBus(config, (message) => options.onError?.(new Error(message)));
  } catch (err) {
    await store.close();
    throw err;
  }
  const sandbox = new IsolatedVmSandbox();
  const http = createOutboundClient({
    allowPrivateNetwork: config.allowPrivateNetwork,
    allowHosts: config.allowHosts,
    hostRps: config.hostRps,
    hostMaxInflight: config.hostMaxInflight,
  });
  // language models go through the same address policy as the API block
  const models = createModelClient({ allowPrivateNetwork: config.allowPrivateNetwork, allowHosts: config.allowHosts, defaults: config.models });
  const services: BlockServices = {
    sandbox,
    clock: systemClock,
    http,
    models,
    memory: store.memories,
    functionTimeoutMs: config.functionTimeoutMs,
    functionMemoryMb: config.functionMemoryMb,
    waits: store.waits,
    maxWaitMs: config.maxWaitDays * DAY_MS,
  };
  setMaxWaitDays(config.maxWaitDays);
  const secrets = options.secrets ? chainSecrets(options.secrets(store), envSecrets()) : envSecrets();
  // requeue-aware: restart recovery runs a queued execution again under its own id
  // fenced: a run handed over to another instance must not write over its record (server/cluster)
  const executions = fencedExecutions(requeueAwareExecutions(store.executions));
  const engine = new TrackedEngine(
    { bus, blockTypes, services, secrets, executions, busPrefix: config.busPrefix, executionTimeoutMs: config.executionTimeoutMs, redact: processKeys(config), limits: config.limits,
      ...(options.park === true ? { parkAfterMs: config.syncWaitMs } : {}),
      ...(options.resumedElsewhere === true ? { resumedElsewhere: true } : {}) },
    options.onError,
  );
  return {
    config,
    bus,
    store,
    engine,
    registry: blockTypeRegistry(blockTypes, config.limits),
    services,
    fence: (ids) => executions.fence(ids),
    async close() {
      await bus.close();
      http.close();
      models.close();
      await sandbox.dispose();
      await store.close();
    },
  };
}

/** The model keys the process holds itself: redacted in every execution, like a secret it uses. */
function processKeys(config: Readonly<Config>): string[] {
  return [config.models.openai.apiKey, config.models.anthropic.apiKey].filter((k): k is string => k !== undefined && k.length >= 4);
}
