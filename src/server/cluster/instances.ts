/**
 * The instances of one service (SPEC §9, GET /api/cluster): each puts its own entry in the
 * instances bucket every renewal period, and the bucket forgets an entry not put again within
 * the lease expiry (its TTL), so a SIGKILLed instance drops out of the list by itself.
 */
import type { KV } from 'nats';
import type { InstanceView } from '../../service/cluster.js';
import { decodeEntry, encodeEntry, kvKey } from './nats-kv.js';

export interface InstanceDirectoryDeps {
  bucket: KV;
  /** this instance as it is now (lastSeenAt is set here) */
  self: () => Omit<InstanceView, 'lastSeenAt'>;
  renewMs: number;
  expireMs: number;
  now: () => number;
  onError: (err: unknown) => void;
}

export class InstanceDirectory {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: InstanceDirectoryDeps) {}

  /** Announces this instance (once before resolving), then keeps announcing it. */
  async start(): Promise<void> {
    await this.announce();
    this.timer = setInterval(() => {
      this.announce().catch(this.deps.onError);
    }, this.deps.renewMs);
    this.timer.unref();
  }

  async announce(): Promise<void> {
    const self = this.deps.self();
    const view: InstanceView = { ...self, lastSeenAt: new Date(this.deps.now()).toISOString() };
    await this.deps.bucket.put(kvKey(self.id), encodeEntry(view));
  }

  /** The live instances, by id; one not seen within the expiry is left out even before the bucket drops it. */
  async list(): Promise<InstanceView[]> {
    const found: InstanceView[] = [];
    const keys = await this.deps.bucket.keys();
    const names: string[] = [];
    for await (const key of keys) names.push(key);
    for (const key of names) {
      const view = asView(decodeEntry(await this.deps.bucket.get(key)));
      if (view !== null && this.deps.now() - Date.parse(view.lastSeenAt) < this.deps.expireMs) found.push(view);
    }
    return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Leaves the list at once (an orderly stop). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.deps.bucket.delete(kvKey(this.deps.self().id)).catch(this.deps.onError);
  }
}

function asView(value: unknown): InstanceView | null {
  if (value === null || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  const strings = ['id', 'host', 'version', 'startedAt', 'lastSeenAt'].every((k) => typeof v[k] === 'string');
  return strings && typeof v.running === 'number' ? (v as unknown as InstanceView) : null;
}
