/**
 * Execution leases (SPEC §9): the decisions, free of effects. The keeping, renewing and taking
 * over are src/server/cluster/leases.ts; the lifecycle is docs/architecture.md.
 */

/** What an execution's entry in the lease bucket says. */
export interface Lease {
  /** the instance running it */
  owner: string;
  /** ms since the epoch, on the owner's clock */
  renewedAt: number;
  /** set by an owner that stopped (SIGTERM) and handed it over: anyone may take it at once */
  released?: boolean;
}

export interface LeaseTiming {
  /** how often an owner renews its leases */
  renewMs: number;
  /** a lease not renewed for this long is expired, and its execution may be taken over */
  expireMs: number;
}

export const DEFAULT_LEASE_TIMING: LeaseTiming = { renewMs: 2_000, expireMs: 10_000 };

/**
 * Whether a running execution may be taken over now. `claimedAt` is when its record last
 * showed it alive (its start or its latest resumption): a record without a lease yet may belong
 * to a run that has just started and not renewed once, so it waits for the same expiry.
 */
export function mayTakeOver(lease: Lease | null, claimedAt: number, now: number, timing: LeaseTiming): boolean {
  if (lease === null) return now - claimedAt >= timing.expireMs;
  if (lease.released === true) return true;
  return now - lease.renewedAt >= timing.expireMs;
}

/** A lease entry read back; null when it is not one (an entry of another version, or damaged). */
export function parseLease(value: unknown): Lease | null {
  if (value === null || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  if (typeof v.owner !== 'string' || typeof v.renewedAt !== 'number') return null;
  return { owner: v.owner, renewedAt: v.renewedAt, ...(v.released === true ? { released: true } : {}) };
}
