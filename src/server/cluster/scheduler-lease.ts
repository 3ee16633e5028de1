/**
 * The scheduler's leader lease in a cluster (SPEC §9): the `scheduler` entry of the
 * `{prefix}_leader` JetStream key-value bucket, the distributed adapter of the scheduler actor's
 * lease port (actors/scheduler.ts; `soleLeader` is the one-process adapter). The leader renews
 * it with a compare-and-set at the revision it last wrote, so an instance that lost it (a pause
 * longer than the expiry, and another took it) learns so; the others take an expired or
 * released lease the same way, and one of two racing for it wins. A due time fires once
 * whoever leads: its fire is claimed in the store (src/service/schedules.ts).
 */
import type { KV } from 'nats';
import type { Logger } from 'pino';
import type { LeaderLeasePort } from '../../../actors/scheduler.js';
import { mayTakeOver, parseLease, type Lease, type LeaseTiming } from '../../model/lease.js';
import { decodeEntry, encodeEntry } from './nats-kv.js';

const KEY = 'scheduler';

export interface SchedulerLeaseDeps {
  bucket: KV;
  instanceId: string;
  timing: LeaseTiming;
  now: () => number;
  logger: Logger;
}

export class SchedulerLease implements LeaderLeasePort {
  /** the revision of the lease entry this instance last wrote while leading; null: not leading */
  private revision: number | null = null;
  /** one operation at a time: a release waits for a take in flight, so it cannot leave it held */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SchedulerLeaseDeps) {}

  get held(): boolean {
    return this.revision !== null;
  }

  acquire(): Promise<boolean> {
    return this.serial(() => this.take());
  }

  renew(): Promise<boolean> {
    return this.serial(async () => {
      if (this.revision === null) return false;
      try {
        this.revision = await this.deps.bucket.update(KEY, this.mine(), this.revision);
        return true;
      } catch {
        // another instance wrote the lease since (or NATS cannot say): it may lead now
        this.revision = null;
        return false;
      }
    });
  }

  release(): Promise<void> {
    return this.serial(async () => {
      if (this.revision === null) return;
      const released: Lease = { owner: this.deps.instanceId, renewedAt: this.deps.now(), released: true };
      await this.deps.bucket.update(KEY, encodeEntry(released), this.revision).catch(() => undefined);
      this.revision = null;
    });
  }

  private async take(): Promise<boolean> {
    if (this.revision !== null) return true;
    const entry = await this.deps.bucket.get(KEY);
    const lease = parseLease(decodeEntry(entry));
    if (lease !== null && !mayTakeOver(lease, Number.NEGATIVE_INFINITY, this.deps.now(), this.deps.timing)) return false;
    try {
      this.revision = entry === null ? await this.deps.bucket.create(KEY, this.mine()) : await this.deps.bucket.update(KEY, this.mine(), entry.revision);
    } catch {
      return false; // another instance took it first
    }
    this.deps.logger.info({ from: lease?.owner ?? null, released: lease?.released === true }, 'took the scheduler leader lease');
    return true;
  }

  private mine(): Uint8Array {
    return encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now() } satisfies Lease);
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op, op);
    this.chain = next.catch(() => undefined);
    return next;
  }
}
