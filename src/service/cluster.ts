/**
 * The service's instances (SPEC §9, GET /api/cluster), this one named by TROUPE_INSTANCE_ID (a
 * random id per start when unset). Alone (no NATS or no shared store) the answer is this
 * process; in a cluster it is the directory every instance announces itself in
 * (src/server/cluster/instances.ts).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

export interface InstanceView {
  id: string;
  host: string;
  /** the package version the instance runs */
  version: string;
  startedAt: string;
  /** when it was last known alive: now, for this process */
  lastSeenAt: string;
  /** executions running in it */
  running: number;
}

export interface ClusterDeps {
  instanceId?: string | undefined;
  version: string;
  /** executions running in this process */
  running: () => number;
  now?: () => number;
}

/** Where the live instances of a cluster are listed. */
export interface InstanceSource {
  list(): Promise<InstanceView[]>;
}

export class ClusterService {
  readonly instanceId: string;
  readonly startedAt: string;
  private directory: InstanceSource | undefined;

  constructor(private readonly deps: ClusterDeps) {
    this.instanceId = deps.instanceId ?? randomUUID();
    this.startedAt = new Date(this.now()).toISOString();
  }

  /** From now on the instances are the cluster's, listed by `directory`. */
  useDirectory(directory: InstanceSource | undefined): void {
    this.directory = directory;
  }

  async instances(): Promise<InstanceView[]> {
    if (this.directory !== undefined) return this.directory.list();
    return [this.self()];
  }

  /** This instance as it is now. */
  self(): InstanceView {
    return {
      id: this.instanceId,
      host: hostname(),
      version: this.deps.version,
      startedAt: this.startedAt,
      lastSeenAt: new Date(this.now()).toISOString(),
      running: this.deps.running(),
    };
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}
