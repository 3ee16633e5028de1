/**
 * An instance's part in a cluster (SPEC §9): on when NATS and a shared store are configured.
 * It announces the instance (instances.ts), keeps and takes over execution leases (leases.ts)
 * and, when the instance stops, hands its unfinished executions over instead of cancelling
 * them. docs/architecture.md tells the lifecycle.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../../../config/load.js';
import { DEFAULT_LEASE_TIMING, type LeaseTiming } from '../../model/lease.js';
import type { BlockTypeRegistry } from '../../model/types.js';
import type { Store } from '../../store/types.js';
import type { TrackedEngine } from '../tracked-engine.js';
import type { Bus } from '../../bus/types.js';
import type { ChatMessages } from '../../service/chat-messages.js';
import type { ClusterService } from '../../service/cluster.js';
import type { ExecutionService } from '../../service/executions.js';
import type { WebhookService } from '../../service/webhooks.js';
import { resumeExecution, type ResumeDeps } from '../resumption.js';
import { wakeDue } from '../waker.js';
import { ChatLeases } from './chat-leases.js';
import { InstanceDirectory } from './instances.js';
import { LeaseKeeper } from './leases.js';
import { openClusterBuckets, type ClusterBuckets } from './nats-kv.js';
import type { Registry } from 'prom-client';
import { registerClusterMetrics } from './metrics.js';
import { SchedulerLease } from './scheduler-lease.js';
import { WebhookStarts } from './webhook-starts.js';
import { WorkQueue } from './work-queue.js';

/** queue messages an instance holds at once (each only until its execution's record exists) */
const QUEUE_CONCURRENCY = 8;

export interface ClusterMember {
  directory: InstanceDirectory;
  leases: LeaseKeeper;
  queue: WorkQueue;
  /** the scheduler actor's leader lease (the actor itself is the service's: src/server/service.ts) */
  schedulerLease: SchedulerLease;
  leaseTiming: LeaseTiming;
  chats: ChatLeases;
  /** takes no more work from the queue (a stop begins); async executions are queued for the others */
  stopIntake(): Promise<void>;
  /**
   * Stops the runs still here without recording an end, releases their leases so that another
   * instance resumes them at once, and leaves the cluster. Returns how many were handed over.
   */
  handOver(): Promise<number>;
  /** leaves the cluster (the directory entry, the timers, the connection) */
  close(): Promise<void>;
}

/** What of the process's runtime (src/main.ts) an instance's part in a cluster works on. */
export interface ClusterRuntime {
  store: Store;
  engine: TrackedEngine;
  registry: BlockTypeRegistry;
  /** chat session forwarding goes over it */
  bus: Bus;
  /** refuses every further record write of these executions (handed over to another instance) */
  fence(ids: Iterable<string>): void;
}

export interface JoinOptions {
  config: Readonly<Config>;
  runtime: ClusterRuntime;
  cluster: ClusterService;
  executions: ExecutionService;
  webhooks: WebhookService;
  /** the instance's /metrics registry, which gets the cluster's figures */
  metrics: Registry;
  /** whose session actors are placed by lease (chat-leases.ts) */
  chatMessages: ChatMessages;
  start: NonNullable<ResumeDeps['start']>;
  logger: Logger;
  timing?: LeaseTiming;
  now?: () => number;
}

/** Whether this configuration runs as one instance of a cluster. */
export function clustered(config: Readonly<Config>): boolean {
  return config.natsUrl !== undefined && (config.databaseUrl !== undefined || config.mongodbUrl !== undefined);
}

interface Parts {
  buckets: ClusterBuckets;
  directory: InstanceDirectory;
  leases: LeaseKeeper;
  queue: WorkQueue;
  hooks: WebhookStarts;
  schedulerLease: SchedulerLease;
  chats: ChatLeases;
}

/** The cluster's parts for this instance, nothing started yet. */
async function parts(opts: JoinOptions, timing: LeaseTiming, now: () => number): Promise<Parts> {
  const { config, runtime, cluster, logger } = opts;
  const buckets = await openClusterBuckets(config.natsUrl as string, config.busPrefix, timing.expireMs);
  const host = hostname();
  const directory = new InstanceDirectory({
    bucket: buckets.instances, renewMs: timing.renewMs, expireMs: timing.expireMs, now,
    onError: (err) => logger.error({ err }, 'cluster: announcing this instance failed'),
    self: () => {
      const me = cluster.self();
      return { id: me.id, host, version: me.version, startedAt: me.startedAt, running: me.running };
    },
  });
  const resumeDeps: ResumeDeps = { store: runtime.store, engine: runtime.engine, registry: runtime.registry, logger, start: opts.start };
  const leases = new LeaseKeeper({
    bucket: buckets.leases, instanceId: cluster.instanceId, timing, now, logger,
    localIds: () => runtime.engine.localIds,
    executions: runtime.store.executions,
    resume: (rec) => resumeExecution(resumeDeps, rec, config.executionTimeoutMs),
    // fenced first: the run stopping here must not write over the record the other one resumed
    lost: (id) => {
      runtime.fence([id]);
      runtime.engine.cancelHere(id);
    },
  });
  const queue = new WorkQueue({
    nc: buckets.nc, prefix: config.busPrefix, store: runtime.store, registry: runtime.registry, start: opts.start,
    hasCapacity: () => opts.executions.hasCapacity(), concurrency: QUEUE_CONCURRENCY, logger,
    // the woken run takes the lease at once: the parking instance's may be left (a SIGKILL)
    wake: (id) => wakeDue({ ...resumeDeps, adopt: (x) => leases.adopt(x) }, id, config.executionTimeoutMs),
  });
  const hooks = new WebhookStarts(buckets.nc, config.busPrefix, opts.webhooks, QUEUE_CONCURRENCY, logger);
  const schedulerLease = new SchedulerLease({ bucket: buckets.leader, instanceId: cluster.instanceId, timing, now, logger });
  const sessions = opts.chatMessages.sessions;
  const chats = new ChatLeases({
    bucket: buckets.chatSessions, bus: runtime.bus, prefix: config.busPrefix, instanceId: cluster.instanceId, timing, now, logger,
    activeIds: () => sessions.ids, lost: (id) => sessions.lost(id), serve: (msg) => opts.chatMessages.serveForwarded(msg),
  });
  // placed by lease from now on; forwarded messages arrive once chats.start() subscribes
  opts.chatMessages.usePlacement(chats);
  return { buckets, directory, leases, queue, hooks, schedulerLease, chats };
}

/** Announces the instance and opens the work queue and the webhook stream; the connection is closed if any fails. */
async function openParts(buckets: ClusterBuckets, directory: InstanceDirectory, queue: WorkQueue, hooks: WebhookStarts): Promise<void> {
  try {
    await directory.start();
    await queue.open();
    await hooks.open();
  } catch (err) {
    await buckets.nc.close();
    throw err;
  }
}

export async function joinCluster(opts: JoinOptions): Promise<ClusterMember> {
  const { runtime, cluster } = opts;
  const leaseTiming = opts.timing ?? DEFAULT_LEASE_TIMING;
  const { buckets, directory, leases, queue, hooks, schedulerLease, chats } = await parts(opts, leaseTiming, opts.now ?? Date.now);
  await openParts(buckets, directory, queue, hooks);
  cluster.useDirectory(directory);
  opts.executions.useQueue(queue);
  registerClusterMetrics(opts.metrics, {
    instances: async () => (await directory.list()).length, leasesHeld: () => leases.heldCount, takenOver: () => leases.takenOver, leading: () => schedulerLease.held,
  });
  // the first renewal and sweep now: a restarted instance takes its own orphans back at once
  await leases.tick();
  leases.start();
  await queue.consume();
  await hooks.consume();
  opts.webhooks.shareStarts(true);
  chats.start();
  // what arrives meanwhile still goes to the queue and the stream, for the other instances
  const stopIntake = async (): Promise<void> => {
    chats.stop();
    await Promise.all([queue.stop(), hooks.stop()]);
  };
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await stopIntake();
    opts.executions.useQueue(undefined);
    opts.webhooks.shareStarts(false);
    await leases.stop();
    cluster.useDirectory(undefined);
    await directory.stop();
    await buckets.nc.drain().catch(() => undefined);
  };
  return {
    directory,
    leases,
    queue,
    schedulerLease,
    leaseTiming,
    chats,
    close,
    stopIntake,
    async handOver() {
      await stopIntake();
      await leases.stop();
      const ids = runtime.engine.localIds;
      // fence first: once another instance resumes one, nothing of the run here may write
      runtime.fence(ids);
      runtime.engine.cancelAll();
      await leases.handOver(ids);
      // idle sessions end here; the next message of any conversation activates it elsewhere at once
      opts.chatMessages.sessions.passivateAll();
      await chats.handOver();
      await runtime.engine.whenIdle(5_000);
      return ids.length;
    },
  };
}
