/**
 * One scheduler per cluster (SPEC §9): the instance holding the leader lease (the `scheduler`
 * entry of the `{prefix}_leader` bucket) runs the scheduler; every instance checks the lease each
 * renewal period. The leader renews it with a compare-and-set at the revision it last wrote, so
 * an instance that lost it (a pause longer than the expiry, and another took it) learns so and
 * stops its scheduler; the others take an expired or released lease the same way. A due time
 * fires once whoever leads: its fire is claimed in the store, keyed by workflow, trigger and
 * due time (src/service/schedules.ts).
 */
import type { KV } from 'nats';
import type { Logger } from 'pino';
import { mayTakeOver, parseLease, type Lease, type LeaseTiming } from '../../model/lease.js';
import { decodeEntry, encodeEntry } from './nats-kv.js';

const KEY = 'scheduler';

export interface Scheduler {
  start(): void;
  stop(): Promise<void>;
}

export interface SchedulerLeaderDeps {
  bucket: KV;
  instanceId: string;
  timing: LeaseTiming;
  now: () => number;
  scheduler: Scheduler;
  logger: Logger;
}

export class SchedulerLeader {
  private timer: NodeJS.Timeout | undefined;
  /** the revision of the lease entry this instance last wrote while leading; null: not leading */
  private revision: number | null = null;
  private busy: Promise<void> | null = null;

  constructor(private readonly deps: SchedulerLeaderDeps) {}

  get leading(): boolean {
    return this.revision !== null;
  }

  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.deps.timing.renewMs);
    this.timer.unref();
  }

  /** One period: renew the lease when leading, else take it when it is free. */
  tick(): Promise<void> {
    this.busy ??= this.check().catch((err: unknown) => this.deps.logger.error({ err }, 'scheduler leader lease: check failed')).finally(() => {
      this.busy = null;
    });
    return this.busy;
  }

  /** Stops the scheduler here and releases the lease, so another instance leads at once. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.busy;
    if (this.revision === null) return;
    await this.deps.scheduler.stop();
    const released: Lease = { owner: this.deps.instanceId, renewedAt: this.deps.now(), released: true };
    await this.deps.bucket.update(KEY, encodeEntry(released), this.revision).catch(() => undefined);
    this.revision = null;
  }

  private async check(): Promise<void> {
    const mine = encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now() } satisfies Lease);
    if (this.revision !== null) {
      try {
        this.revision = await this.deps.bucket.update(KEY, mine, this.revision);
      } catch {
        // another instance wrote the lease since: it leads now
        this.revision = null;
        this.deps.logger.warn('lost the scheduler leader lease: this instance stops scheduling');
        await this.deps.scheduler.stop();
      }
      return;
    }
    const entry = await this.deps.bucket.get(KEY);
    const lease = parseLease(decodeEntry(entry));
    if (lease !== null && !mayTakeOver(lease, Number.NEGATIVE_INFINITY, this.deps.now(), this.deps.timing)) return;
    try {
      this.revision = entry === null ? await this.deps.bucket.create(KEY, mine) : await this.deps.bucket.update(KEY, mine, entry.revision);
    } catch {
      return; // another instance took it first
    }
    this.deps.logger.warn({ from: lease?.owner ?? null }, 'this instance leads the scheduler');
    this.deps.scheduler.start();
  }
}
