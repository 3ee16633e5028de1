/**
 * Pure decisions of the loop and parallel containers (SPEC §1.1): what a collection iterates
 * over, when a loop goes on, which parallel branches may start. The container actor carries
 * them out.
 */
import { setOwn } from './own.js';

export type LoopKind = 'for' | 'forEach' | 'while' | 'doWhile';
export type ParallelKind = 'count' | 'collection';

export type Items = { ok: true; items: unknown[] } | { ok: false; message: string };

/**
 * A collection as a list: an array as is; an object as `[key, value]` pairs; a JSON string
 * holding either; null/undefined as empty (a reference to a block that did not run).
 */
export function collectionItems(value: unknown): Items {
  if (value === null || value === undefined) return { ok: true, items: [] };
  if (Array.isArray(value)) return { ok: true, items: value };
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return { ok: true, items: [] };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { ok: false, message: 'items is a string that is not a JSON array or object' };
    }
    if (typeof parsed === 'string') return { ok: false, message: 'items is a JSON string, not an array or object' };
    return collectionItems(parsed);
  }
  if (typeof value === 'object') return { ok: true, items: Object.entries(value as Record<string, unknown>) };
  return { ok: false, message: `items must be an array, an object or a JSON string, got ${typeof value}` };
}

/** A count given as a number or a numeric string (from a reference inserted as text). */
export function countOf(value: unknown, what: string): { ok: true; count: number } | { ok: false; message: string } {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    return { ok: false, message: `${what} must be a whole number ≥ 0, got ${JSON.stringify(value)}` };
  }
  return { ok: true, count: n };
}

export interface LoopState {
  kind: LoopKind;
  /** iterations finished so far */
  done: number;
  /** for `for` and `forEach`: how many iterations in all */
  total: number | null;
  maxIterations: number;
}

export type LoopStep =
  | { next: 'iterate' }
  | { next: 'evaluate' }
  | { next: 'finish' }
  /**
   * `repeats`: the config alone decided it (a for/forEach with more items than maxIterations),
   * so another attempt of the loop would fail the same way before its first iteration.
   */
  | { next: 'fail'; message: string; repeats: boolean };

/**
 * What a loop does after `done` iterations. `conditionHolds` is the last evaluation of a
 * while/doWhile condition (undefined when not evaluated for this step yet).
 */
export function loopStep(state: LoopState, conditionHolds?: boolean): LoopStep {
  const { kind, done, total, maxIterations } = state;
  if (kind === 'for' || kind === 'forEach') {
    if ((total ?? 0) > maxIterations) return { next: 'fail', message: tooMany(maxIterations, total ?? 0), repeats: true };
    return done < (total ?? 0) ? { next: 'iterate' } : { next: 'finish' };
  }
  if (kind === 'doWhile' && done === 0) return { next: 'iterate' };
  if (conditionHolds === undefined) return { next: 'evaluate' };
  if (!conditionHolds) return { next: 'finish' };
  // a while/doWhile condition reads what the iterations computed, which may differ next attempt
  if (done >= maxIterations) return { next: 'fail', message: tooMany(maxIterations), repeats: false };
  return { next: 'iterate' };
}

function tooMany(max: number, wanted?: number): string {
  return wanted === undefined
    ? `loop exceeded maxIterations (${max})`
    : `loop would run ${wanted} iterations, more than maxIterations (${max})`;
}

/**
 * Branch indexes a parallel may start now: in index order, never more than `concurrency` at once.
 * A branch with no child block (an empty body, or every child disabled) finishes as it starts
 * and never holds a slot, so all the remaining ones start at once: nothing else would come back
 * to start the next batch, and the parallel used to wait for the execution's time limit.
 */
export function branchesToStart(total: number, nextIndex: number, running: number, concurrency: number, emptyBody = false): number[] {
  const room = emptyBody ? total : Math.max(0, concurrency - running);
  const out: number[] = [];
  for (let i = nextIndex; i < total && out.length < room; i++) out.push(i);
  return out;
}

/** Per-iteration result: child block normalized name → output, children in definition order. */
export function iterationResult(
  childNames: readonly string[],
  outputs: ReadonlyMap<string, Record<string, unknown>>,
): Record<string, Record<string, unknown>> {
  const result: Record<string, Record<string, unknown>> = {};
  for (const name of childNames) {
    const output = outputs.get(name);
    if (output !== undefined) setOwn(result, name, output);
  }
  return result;
}
