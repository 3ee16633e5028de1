/**
 * The instance's part in the cluster on its /metrics (each instance has its own registry, so
 * every figure here is this instance's view): the live instances it sees, the execution leases
 * it holds, the executions it took over, and whether it leads the scheduler.
 */
import { Gauge, type Registry } from 'prom-client';

export interface ClusterFigures {
  instances(): Promise<number>;
  leasesHeld(): number;
  takenOver(): number;
  leading(): boolean;
}

export function registerClusterMetrics(registry: Registry, figures: ClusterFigures): void {
  new Gauge({
    name: 'troupe_cluster_instances', help: 'Live instances of the cluster, as this instance sees them', registers: [registry],
    async collect() {
      this.set(await figures.instances().catch(() => 0));
    },
  });
  new Gauge({
    name: 'troupe_cluster_leases_held', help: 'Execution leases this instance holds (the executions it runs)', registers: [registry],
    collect() {
      this.set(figures.leasesHeld());
    },
  });
  new Gauge({
    name: 'troupe_cluster_takeovers', help: 'Executions this instance took over from another since it started', registers: [registry],
    collect() {
      this.set(figures.takenOver());
    },
  });
  new Gauge({
    name: 'troupe_cluster_scheduler_leader', help: '1 while this instance leads the scheduler, else 0', registers: [registry],
    collect() {
      this.set(figures.leading() ? 1 : 0);
    },
  });
}
