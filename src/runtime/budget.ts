import type { ErrorInfo } from '../errors.js';
import { branchesBreach, memoryBreach, type ExecutionLimits, type LimitBreach } from '../model/limits.js';

/**
 * What one execution's containers hold at once, counted against its limits: the iterations and
 * branches running (nested ones included) and the bytes of the results they keep. One per
 * execution, shared by its container actors, which release what they took when they end or stop.
 */
export class ExecutionBudget {
  private live = 0;
  private held = 0;

  constructor(readonly limits: Readonly<ExecutionLimits>) {}

  /** Takes `count` more running iterations or branches for `block`, or says the limit it would pass (nothing taken). */
  openBranches(block: string, count: number): LimitBreach | null {
    const breach = branchesBreach(block, this.live, count, this.limits);
    if (breach === null) this.live += count;
    return breach;
  }

  closeBranches(count: number): void {
    this.live = Math.max(0, this.live - count);
  }

  /** Adds `bytes` of results the execution holds; the breach when that passes its memory limit. */
  hold(block: string, bytes: number): LimitBreach | null {
    this.held += bytes;
    return memoryBreach(block, this.held, this.limits);
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }

  get liveBranches(): number {
    return this.live;
  }

  get heldBytes(): number {
    return this.held;
  }
}

/**
 * What a container actor has taken from the budget: given back once, whichever way it ends (a
 * final state, or a stop when its iteration or execution ended first).
 */
export interface BudgetClaim {
  branches: number;
  bytes: number;
}

/** A fresh claim on the execution's budget, for one attempt of a container. */
export function newClaim(): BudgetClaim {
  return { branches: 0, bytes: 0 };
}

/** Gives back the claim's branches and, unless the container's results live on in its output, its bytes. */
export function releaseClaim(budget: ExecutionBudget, claim: BudgetClaim, keepBytes: boolean): void {
  budget.closeBranches(claim.branches);
  claim.branches = 0;
  // kept: they stay counted for the rest of the execution, and a later stop must not give them back
  if (!keepBytes) budget.release(claim.bytes);
  claim.bytes = 0;
}

/** A breach as the error a container fails with: code, message, and which setting to change. */
export function breachError(breach: LimitBreach): ErrorInfo {
  return { code: breach.code, message: breach.message, ...breach.details };
}
