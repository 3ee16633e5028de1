/**
 * Execution retention (SPEC §6, TROUPE_EXECUTION_RETENTION_DAYS): now and then, delete the
 * executions that ended more than the retention ago, with their logs and events. The store does
 * each batch in one short write (SQLite: on its writer thread, space handed back by incremental
 * vacuum), and the job pauses between batches, so a large backlog is worked off without holding
 * the store, or the requests that write to it, for long. Every wait goes through the clock.
 */
import type { Logger } from 'pino';
import type { Clock } from '../blocks/types.js';
import type { ExecutionRepo } from '../store/types.js';

const DAY_MS = 86_400_000;

export interface RetentionOptions {
  /** 0: keep every execution forever (the job does nothing) */
  retentionDays: number;
  /** executions per batch */
  batchSize?: number;
  /** pause between two batches of one purge */
  pauseMs?: number;
  /** from the end of one purge to the start of the next */
  intervalMs?: number;
}

export interface RetentionDeps {
  executions: Pick<ExecutionRepo, 'purgeEnded'>;
  clock: Clock;
  logger: Pick<Logger, 'info' | 'warn'>;
}

export class RetentionJob {
  private readonly batchSize: number;
  private readonly pauseMs: number;
  private readonly intervalMs: number;
  private controller: AbortController | null = null;
  private loop: Promise<void> | null = null;

  constructor(private readonly deps: RetentionDeps, private readonly opts: RetentionOptions) {
    this.batchSize = opts.batchSize ?? 200;
    this.pauseMs = opts.pauseMs ?? 100;
    this.intervalMs = opts.intervalMs ?? 3_600_000;
  }

  get enabled(): boolean {
    return this.opts.retentionDays > 0;
  }

  /** Purges now, then every interval, until stop(). Nothing when retention is off. */
  start(): void {
    if (!this.enabled || this.loop !== null) return;
    const controller = new AbortController();
    this.controller = controller;
    this.loop = this.repeat(controller.signal);
  }

  /** Ends the loop; resolves once a batch under way has been written. */
  async stop(): Promise<void> {
    this.controller?.abort();
    await this.loop;
    this.loop = null;
    this.controller = null;
  }

  /** One purge: batches until none older than the cutoff is left (or the signal aborts). Returns how many went. */
  async purge(signal?: AbortSignal): Promise<number> {
    if (!this.enabled) return 0;
    const cutoff = new Date(this.deps.clock.now() - this.opts.retentionDays * DAY_MS).toISOString();
    let total = 0;
    for (;;) {
      const n = await this.deps.executions.purgeEnded(cutoff, this.batchSize);
      total += n;
      if (n < this.batchSize || signal?.aborted === true) break;
      await this.deps.clock.sleep(this.pauseMs, signal);
    }
    if (total > 0) this.deps.logger.info({ deleted: total, endedBefore: cutoff }, 'retention: old executions deleted');
    return total;
  }

  private async repeat(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.purge(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.deps.logger.warn({ err }, 'retention: purge failed; retried at the next interval');
      }
      try {
        await this.deps.clock.sleep(this.intervalMs, signal);
      } catch {
        return; // aborted: stop() was called
      }
    }
  }
}
