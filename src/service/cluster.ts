/**
 * The service's instances (SPEC §9, GET /api/cluster). One process for now: this one, named by
 * TROUPE_INSTANCE_ID (a random id per start when unset). Several instances, each announcing
 * itself, come with the distributed mode; the answer's shape is already theirs.
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

export class ClusterService {
  readonly instanceId: string;
  private readonly startedAt: string;

  constructor(private readonly deps: ClusterDeps) {
    this.instanceId = deps.instanceId ?? randomUUID();
    this.startedAt = new Date(this.now()).toISOString();
  }

  instances(): InstanceView[] {
    return [{
      id: this.instanceId,
      host: hostname(),
      version: this.deps.version,
      startedAt: this.startedAt,
      lastSeenAt: new Date(this.now()).toISOString(),
      running: this.deps.running(),
    }];
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}
