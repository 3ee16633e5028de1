/**
 * The limits every execution lives within (docs/config.md "Execution limits"), and the pure
 * decisions on them. Exceeding one fails that execution with a `*_LIMIT` code; a literal config
 * that cannot fit is refused when the workflow is saved.
 */
export interface ExecutionLimits {
  /** loop iterations and parallel branches running at once in one execution, nested ones included */
  maxLiveBranches: number;
  /** iterations or branches one run of a loop or parallel may have */
  maxIterations: number;
  /** serialized size of one loop's or parallel's `results` */
  maxResultsBytes: number;
  /** serialized size of every container's `results` one execution holds at once */
  maxRunBytes: number;
  /** serialized size of the logs of iterations a record keeps whole; later ones are summarised */
  maxLogBytes: number;
}

const MIB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<ExecutionLimits> = Object.freeze({
  maxLiveBranches: 1000,
  maxIterations: 10_000,
  maxResultsBytes: 16 * MIB,
  maxRunBytes: 256 * MIB,
  maxLogBytes: 8 * MIB,
});

/** The setting that changes each limit: named in every message, so the reader knows what to raise. */
export const LIMIT_SETTINGS: Readonly<Record<keyof ExecutionLimits, string>> = Object.freeze({
  maxLiveBranches: 'TROUPE_MAX_LIVE_BRANCHES',
  maxIterations: 'TROUPE_MAX_ITERATIONS',
  maxResultsBytes: 'TROUPE_MAX_RESULTS_BYTES',
  maxRunBytes: 'TROUPE_MAX_RUN_MEMORY_MB',
  maxLogBytes: 'TROUPE_MAX_LOG_BYTES',
});

export type LimitCode = 'BRANCH_LIMIT' | 'ITERATION_LIMIT' | 'RESULTS_LIMIT' | 'MEMORY_LIMIT';

/** A limit an execution ran into: the code it fails with and why, in words. */
export interface LimitBreach {
  code: LimitCode;
  message: string;
  details: { limit: string; max: number; value: number };
}

/** Codes that fail the execution whatever handles errors: an error connection or a retry would only repeat it. */
export function isLimitCode(code: string): code is LimitCode {
  return code === 'BRANCH_LIMIT' || code === 'ITERATION_LIMIT' || code === 'RESULTS_LIMIT' || code === 'MEMORY_LIMIT';
}

function breach(code: LimitCode, key: keyof ExecutionLimits, max: number, value: number, message: string): LimitBreach {
  return { code, message: `${message} (${LIMIT_SETTINGS[key]})`, details: { limit: LIMIT_SETTINGS[key], max, value } };
}

/** A loop or parallel that would run `total` iterations or branches. */
export function iterationsBreach(block: string, total: number, limits: ExecutionLimits): LimitBreach | null {
  if (total <= limits.maxIterations) return null;
  return breach('ITERATION_LIMIT', 'maxIterations', limits.maxIterations, total, `block "${block}" would run ${total} iterations, more than the ${limits.maxIterations} allowed`);
}

/** Starting `more` iterations or branches while `live` run in the execution. */
export function branchesBreach(block: string, live: number, more: number, limits: ExecutionLimits): LimitBreach | null {
  if (live + more <= limits.maxLiveBranches) return null;
  return breach(
    'BRANCH_LIMIT',
    'maxLiveBranches',
    limits.maxLiveBranches,
    live + more,
    `block "${block}" would bring the execution to ${live + more} iterations and branches running at once, more than the ${limits.maxLiveBranches} allowed`,
  );
}

/** One container's `results` reaching `bytes`. */
export function resultsBreach(block: string, bytes: number, limits: ExecutionLimits): LimitBreach | null {
  if (bytes <= limits.maxResultsBytes) return null;
  return breach('RESULTS_LIMIT', 'maxResultsBytes', limits.maxResultsBytes, bytes, `the results of block "${block}" exceed ${limits.maxResultsBytes} bytes`);
}

/** The execution holding `bytes` of results across its containers. */
export function memoryBreach(block: string, bytes: number, limits: ExecutionLimits): LimitBreach | null {
  if (bytes <= limits.maxRunBytes) return null;
  return breach('MEMORY_LIMIT', 'maxRunBytes', limits.maxRunBytes, bytes, `the execution holds more than ${limits.maxRunBytes} bytes of results (at block "${block}")`);
}

/** The serialized size of a value, as a record would store it (0 for what JSON cannot hold). */
export function jsonBytes(value: unknown): number {
  if (value === undefined) return 0;
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    // a cycle or a BigInt: a record could not store it either; the store's write reports it
    return 0;
  }
}

/**
 * What a log keeps of an input or output past the record's log budget: its size, so the reader
 * knows what was left out and why, instead of the value.
 */
export function summarised(bytes: number): { summarised: true; bytes: number; reason: string } {
  return { summarised: true, bytes, reason: `left out of the record: its iteration logs passed ${LIMIT_SETTINGS.maxLogBytes}` };
}
