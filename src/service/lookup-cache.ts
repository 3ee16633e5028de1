/**
 * What execute looks up on every request and rarely changes: API keys by hash and deployments by
 * workflow. Without a cache each execute read the store twice before running anything (two
 * round trips on MongoDB).
 *
 * Freshness: the instance that deploys, undeploys, revokes or deletes evicts at once and tells
 * the others over the bus (`{prefix}.cache.invalidate`); an instance that misses the message (the
 * bus is at-most-once) serves an entry at most `ttlMs` old. docs/operations.md says so.
 */
import type { Bus, Subscription } from '../bus/types.js';
import { cacheInvalidation } from '../bus/subjects.js';
import type { ApiKeyRecord, Deployment } from '../store/types.js';

/** How long an entry is trusted without hearing of a change. */
export const LOOKUP_TTL_MS = 5_000;
/** Entries per map; a full map starts over (unknown keys and ids are never cached). */
const MAX_ENTRIES = 10_000;

interface Entry<V> {
  value: V;
  at: number;
}

/** A map whose entries expire `ttlMs` after they were set. */
class ExpiringMap<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(private readonly ttlMs: number, private readonly now: () => number) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.now() - entry.at < this.ttlMs) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { value, at: this.now() });
  }

  deleteWhere(test: (value: V, key: string) => boolean): void {
    for (const [key, entry] of this.entries) if (test(entry.value, key)) this.entries.delete(key);
  }
}

/** What changed, as published to the other instances. */
export interface Invalidation {
  workflowId: string;
}

export class LookupCache {
  /** active keys by hash */
  private readonly keys: ExpiringMap<ApiKeyRecord>;
  /** deployments of existing workflows by workflow id */
  private readonly deployments: ExpiringMap<Deployment>;
  private subscription: Subscription | undefined;

  constructor(
    now: () => number,
    private readonly bus?: { bus: Bus; prefix: string },
    ttlMs = LOOKUP_TTL_MS,
  ) {
    this.keys = new ExpiringMap(ttlMs, now);
    this.deployments = new ExpiringMap(ttlMs, now);
    if (bus !== undefined) {
      this.subscription = bus.bus.subscribe<Invalidation>(cacheInvalidation(bus.prefix), (m) => {
        if (typeof m.data?.workflowId === 'string') this.evict(m.data.workflowId);
      });
    }
  }

  key(hash: string): ApiKeyRecord | undefined {
    return this.keys.get(hash);
  }

  rememberKey(rec: ApiKeyRecord): void {
    this.keys.set(rec.hash, rec);
  }

  deployment(workflowId: string): Deployment | undefined {
    return this.deployments.get(workflowId);
  }

  rememberDeployment(d: Deployment): void {
    this.deployments.set(d.workflowId, d);
  }

  /**
   * Forgets the workflow's keys and deployment here and on every other instance. Called after
   * the store has the change, so an instance that reloads reads the new state.
   */
  changed(workflowId: string): void {
    this.evict(workflowId);
    if (this.bus === undefined) return;
    try {
      this.bus.bus.publish(cacheInvalidation(this.bus.prefix), { workflowId } satisfies Invalidation);
    } catch {
      // a bus that is down cannot carry it; the others' entries expire within the TTL
    }
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private evict(workflowId: string): void {
    this.keys.deleteWhere((rec) => rec.workflowId === workflowId);
    this.deployments.deleteWhere((_d, id) => id === workflowId);
  }
}
