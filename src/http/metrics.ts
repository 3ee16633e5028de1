/**
 * Prometheus metrics, one registry per app (never prom-client's global one), so several apps
 * can live in one process (tests) without clashing.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ExecutionObserver } from '../service/executions.js';

export interface AppMetrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  executions: Counter<'status' | 'trigger'>;
  blockDuration: Histogram<'type' | 'status'>;
  observer: ExecutionObserver;
  /** reports executions in flight at scrape time */
  trackInflight(read: () => number): void;
}

export function createMetrics(): AppMetrics {
  const registry = new Registry();
  const httpDuration = new Histogram({
    name: 'troupe_http_request_duration_seconds',
    help: 'HTTP request duration until the handler returned (SSE: until the stream opened)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const executions = new Counter({
    name: 'troupe_executions_total',
    help: 'Executions that ended, by final status and trigger type',
    labelNames: ['status', 'trigger'] as const,
    registers: [registry],
  });
  const blockDuration = new Histogram({
    name: 'troupe_block_duration_seconds',
    help: 'Block run duration by block type and how it settled (completed, failed, skipped; a block cut off by the end of its execution is not counted)',
    labelNames: ['type', 'status'] as const,
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120],
    registers: [registry],
  });
  let readInflight = (): number => 0;
  new Gauge({
    name: 'troupe_executions_inflight',
    help: 'Executions running or starting in this process',
    registers: [registry],
    collect() {
      this.set(readInflight());
    },
  });
  return {
    registry,
    httpDuration,
    executions,
    blockDuration,
    observer: {
      blockSettled(type, status, durationMs) {
        // a skipped block never ran, so its log has no duration: it is counted as taking none,
        // else `status="skipped"` (named in the help) would never appear
        blockDuration.observe({ type, status }, (durationMs ?? 0) / 1000);
      },
      executionEnded(status, trigger) {
        executions.inc({ status, trigger });
      },
    },
    trackInflight(read) {
      readInflight = read;
    },
  };
}
