/**
 * Execution leases (SPEC §9; docs/architecture.md "Leases and takeover"): this instance renews
 * the lease of every execution it runs, and looks for running records whose lease expired (or
 * was released by an instance that stopped) to take them over: a compare-and-set on the lease
 * entry decides between the instances trying, then the record's guarded claim (resumption.ts)
 * resumes it here from its last block boundary.
 */
import type { KV } from 'nats';
import type { Logger } from 'pino';
import { mayTakeOver, parseLease, type Lease, type LeaseTiming } from '../../model/lease.js';
import { resumedMark } from '../../model/resume.js';
import type { ExecutionRecord, ExecutionRepo, StatusCursor } from '../../store/types.js';
import type { ResumeOutcome } from '../resumption.js';
import { decodeEntry, encodeEntry, kvKey } from './nats-kv.js';

const PAGE = 500;

export interface LeaseKeeperDeps {
  bucket: KV;
  instanceId: string;
  timing: LeaseTiming;
  now: () => number;
  /** ids of the executions running in this process */
  localIds: () => string[];
  executions: ExecutionRepo;
  /** resumes a running record here, from its last block boundary */
  resume: (rec: ExecutionRecord) => Promise<ResumeOutcome>;
  /**
   * Another instance took over this execution while it still ran here (this one could not
   * renew in time: a pause, a lost connection): stop it here without writing its record again.
   */
  lost: (executionId: string) => void;
  logger: Logger;
}

export class LeaseKeeper {
  private timer: NodeJS.Timeout | undefined;
  /** the lease entries this instance wrote, by execution id: the revision of its last write */
  private held = new Map<string, number>();
  private busy = false;
  /** executions taken over by this instance since it started */
  takenOver = 0;

  constructor(private readonly deps: LeaseKeeperDeps) {}

  /** how many execution leases this instance holds */
  get heldCount(): number {
    return this.held.size;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.deps.timing.renewMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    while (this.busy) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  /** One period: renew what runs here, then take over what nobody renews. */
  async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.renew();
      await this.sweep();
    } catch (err) {
      this.deps.logger.error({ err }, 'execution leases: renewal or takeover failed');
    } finally {
      this.busy = false;
    }
  }

  /**
   * Renews the lease of each local execution with a compare-and-set at the revision this
   * instance last wrote, so a lease another instance took meanwhile is found lost rather than
   * overwritten; drops the leases of the executions that ended.
   */
  async renew(): Promise<void> {
    const local = new Set(this.deps.localIds());
    const lease = encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now() } satisfies Lease);
    await Promise.all([...local].map((id) => this.renewOne(id, lease)));
    const ended = [...this.held.entries()].filter(([id]) => !local.has(id));
    // only the entry this instance last wrote: a parked execution woken elsewhere meanwhile has
    // that instance's lease now, which must stay
    await Promise.all(ended.map(([id, revision]) => this.deps.bucket.delete(kvKey(id), { previousSeq: revision }).catch(() => undefined)));
    for (const [id] of ended) this.held.delete(id);
  }

  /**
   * Takes the lease of an execution whose record this instance has just claimed from `waiting`
   * (a wake-up: the guarded write on the record decided it). Whatever lease is there belongs to
   * the run that parked it, which has ended (its instance may be gone without deleting it), so
   * it is overwritten rather than taken as a sign that another instance runs it.
   */
  async adopt(id: string): Promise<void> {
    const mine = encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now() } satisfies Lease);
    this.held.set(id, await this.deps.bucket.put(kvKey(id), mine));
  }

  private async renewOne(id: string, lease: Uint8Array): Promise<void> {
    const key = kvKey(id);
    const revision = this.held.get(id);
    try {
      if (revision !== undefined) {
        this.held.set(id, await this.deps.bucket.update(key, lease, revision));
        return;
      }
      // a run started here: its first lease (an entry left by an earlier run of it may be there)
      const entry = await this.deps.bucket.get(key);
      const found = parseLease(decodeEntry(entry));
      if (found !== null && found.owner !== this.deps.instanceId && !found.released) throw new Error('leased by another instance');
      this.held.set(id, entry === null ? await this.deps.bucket.create(key, lease) : await this.deps.bucket.update(key, lease, entry.revision));
    } catch (err) {
      if (!(await this.takenBySomeoneElse(key))) throw err;
      this.held.delete(id);
      this.deps.logger.warn({ executionId: id }, 'another instance took this execution over: it stops here');
      this.deps.lost(id);
    }
  }

  private async takenBySomeoneElse(key: string): Promise<boolean> {
    const now = parseLease(decodeEntry(await this.deps.bucket.get(key)));
    return now !== null && now.owner !== this.deps.instanceId;
  }

  /** Takes over every running record not run here whose lease allows it. */
  async sweep(): Promise<void> {
    const local = new Set(this.deps.localIds());
    let after: StatusCursor | undefined;
    for (;;) {
      const page = await this.deps.executions.listByStatus(['running'], PAGE, after);
      for (const rec of page) if (!local.has(rec.id)) await this.consider(rec);
      const last = page.at(-1);
      if (page.length < PAGE || last?.createdAt === undefined || last.createdAt === null) return;
      after = { createdAt: last.createdAt, id: last.id };
    }
  }

  private async consider(rec: ExecutionRecord): Promise<void> {
    const key = kvKey(rec.id);
    const entry = await this.deps.bucket.get(key);
    const lease = parseLease(decodeEntry(entry));
    // our own lease on a run not here: a previous start of this instance died holding it
    const orphaned = lease !== null && lease.owner === this.deps.instanceId;
    if (!orphaned && !mayTakeOver(lease, claimedAt(rec), this.deps.now(), this.deps.timing)) return;
    const mine = encodeEntry({ owner: this.deps.instanceId, renewedAt: this.deps.now() } satisfies Lease);
    try {
      this.held.set(rec.id, entry === null ? await this.deps.bucket.create(key, mine) : await this.deps.bucket.update(key, mine, entry.revision));
    } catch {
      return; // another instance won the lease first
    }
    const outcome = await this.deps.resume(rec);
    if (outcome === 'resumed') {
      this.takenOver += 1;
      this.deps.logger.warn({ executionId: rec.id, from: lease?.owner ?? null, released: lease?.released === true }, 'took over an execution');
      return;
    }
    // not resumed here: the lease goes, so the next sweep (here or elsewhere) decides again
    this.held.delete(rec.id);
    await this.deps.bucket.delete(key).catch(() => undefined);
  }

  /** Marks the leases of these executions released: another instance takes them over at once. */
  async handOver(ids: readonly string[]): Promise<void> {
    const released: Lease = { owner: this.deps.instanceId, renewedAt: this.deps.now(), released: true };
    await Promise.all(ids.map((id) => this.deps.bucket.put(kvKey(id), encodeEntry(released))));
    for (const id of ids) this.held.delete(id);
  }
}

/** When the record last showed its execution alive: its start, or its latest resumption. */
function claimedAt(rec: ExecutionRecord): number {
  const at = rec.startedAt ?? rec.createdAt;
  const started = at === undefined || at === null ? 0 : Date.parse(at);
  return Math.max(started, resumedMark(rec.context)?.at ?? Number.NEGATIVE_INFINITY);
}
