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
import type { Runtime } from '../../main.js';
import type { ClusterService } from '../../service/cluster.js';
import { resumeExecution, type ResumeDeps } from '../resumption.js';
import { InstanceDirectory } from './instances.js';
import { LeaseKeeper } from './leases.js';
import { openClusterBuckets, type ClusterBuckets } from './nats-kv.js';

export interface ClusterMember {
  directory: InstanceDirectory;
  leases: LeaseKeeper;
  /**
   * Stops the runs still here without recording an end, releases their leases so that another
   * instance resumes them at once, and leaves the cluster. Returns how many were handed over.
   */
  handOver(): Promise<number>;
  /** leaves the cluster (the directory entry, the timers, the connection) */
  close(): Promise<void>;
}

export interface JoinOptions {
  config: Readonly<Config>;
  runtime: Runtime;
  cluster: ClusterService;
  start: NonNullable<ResumeDeps['start']>;
  logger: Logger;
  timing?: LeaseTiming;
  now?: () => number;
}

/** Whether this configuration runs as one instance of a cluster. */
export function clustered(config: Readonly<Config>): boolean {
  return config.natsUrl !== undefined && (config.databaseUrl !== undefined || config.mongodbUrl !== undefined);
}

export async function joinCluster(opts: JoinOptions): Promise<ClusterMember> {
  const { config, runtime, cluster, logger } = opts;
  const timing = opts.timing ?? DEFAULT_LEASE_TIMING;
  const now = opts.now ?? Date.now;
  const buckets: ClusterBuckets = await openClusterBuckets(config.natsUrl as string, config.busPrefix, timing.expireMs);
  const onError = (err: unknown): void => logger.error({ err }, 'cluster: announcing this instance failed');
  const host = hostname();
  const directory = new InstanceDirectory({
    bucket: buckets.instances, renewMs: timing.renewMs, expireMs: timing.expireMs, now, onError,
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
  });
  try {
    await directory.start();
  } catch (err) {
    await buckets.nc.close();
    throw err;
  }
  cluster.useDirectory(directory);
  // the first renewal and sweep now: a restarted instance takes its own orphans back at once
  await leases.tick();
  leases.start();
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await leases.stop();
    cluster.useDirectory(undefined);
    await directory.stop();
    await buckets.nc.drain().catch(() => undefined);
  };
  return {
    directory,
    leases,
    close,
    async handOver() {
      await leases.stop();
      const ids = runtime.engine.localIds;
      // fence first: once another instance resumes one, nothing of the run here may write
      runtime.fence(ids);
      runtime.engine.cancelAll();
      await leases.handOver(ids);
      await runtime.engine.whenIdle(5_000);
      return ids.length;
    },
  };
}
