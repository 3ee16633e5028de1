/**
 * One block run in an execution (a BlockRunId: a block, in the iteration it runs in) and every
 * string form of it, encoded here and nowhere else:
 *
 * - the run key (`root|b` at the top level, `root/loop/0|b` in iteration 0 of `loop`,
 *   `root/loop/0/inner/2|b` nested): the block actors' inboxes and group keys, their
 *   containers' keys, and, prefixed with the execution id, what idempotency keys, wait keys and
 *   child workflow keys derive from. A scope (the part before `|`) is also one token of a
 *   block's inbox subject.
 * - the log key (`b@loop#0`, innermost iteration first): keys the ledger's logs and the stored
 *   `context.iterations` of a record.
 * - the iteration key (the iteration as JSON, keys sorted; `''` at the top level): a stored
 *   block log's identity in the stores' log tables.
 *
 * All of them are stored, in records or upstream (the Idempotency-Key an API sent), so none may
 * change across an upgrade (test/model/block-run.test.ts pins each against its former code).
 * A run's whole-block attempts share all of them: a retried run is the same run to an upstream.
 */
import { hash } from 'node:crypto';

/** The iteration a block runs in: its container's and index, then the container's own (`outer`). */
export interface IterationPath {
  container: string;
  index: number;
  outer?: IterationPath;
}

/** One run of a block within its execution. */
export interface BlockRunId {
  blockId: string;
  /** null at the top level */
  iteration: IterationPath | null;
}

/** The scope of the top-level blocks. */
export const ROOT_SCOPE = 'root';

/** The scope of the blocks of iteration `index` of container `containerId`, which runs in `scope`. */
export function iterationScope(scope: string, containerId: string, index: number): string {
  return `${scope}/${containerId}/${index}`;
}

/** The scope of an iteration path: its containers outermost first. */
export function scopeOf(iteration: IterationPath | null): string {
  return iteration === null ? ROOT_SCOPE : iterationScope(scopeOf(iteration.outer ?? null), iteration.container, iteration.index);
}

/** The key of block `blockId`'s run in `scope`. */
export function blockRunKey(scope: string, blockId: string): string {
  return `${scope}|${blockId}`;
}

/** The run key of a block run. */
export function runKeyOf(id: BlockRunId): string {
  return blockRunKey(scopeOf(id.iteration), id.blockId);
}

/** The block id of a block run key. */
export function blockOfRunKey(key: string): string {
  return key.slice(key.lastIndexOf('|') + 1);
}

/** The key of the container machine (loop, parallel) that a container block's run starts. */
export function containerRunKey(runKey: string): string {
  return `${runKey}#container`;
}

/**
 * A run key within the whole service: the execution's id before it (a block's `runKey`, which
 * wait, approval and child workflow keys are). Without a run key the block id stands alone.
 */
export function executionRunKey(executionId: string, runKey: string | undefined, blockId: string): string {
  return `${executionId}|${runKey ?? blockId}`;
}

/**
 * The run key within its execution from a block's `runKey` (executionRunKey's form): the
 * execution id taken off again. Wait, approval and child workflow keys are this.
 */
export function localRunKey(executionId: string, runKey: string | undefined, blockId: string): string {
  const key = runKey ?? blockId;
  return key.startsWith(`${executionId}|`) ? key.slice(executionId.length + 1) : key;
}

/** The run key of a top-level block (an approval's key, which a decision names by block id). */
export function topLevelRunKey(blockId: string): string {
  return blockRunKey(ROOT_SCOPE, blockId);
}

/**
 * A UUID-shaped Idempotency-Key from an execution run key: the same for every attempt of the
 * run, for its whole-block retries, and for its run again after a crash resumed the execution,
 * so a server that honours Idempotency-Key applies the request once.
 */
export function idempotencyKeyOf(executionRunKey: string): string {
  const h = hash('sha256', `troupe-idempotency|${executionRunKey}`, 'hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The log key of a block run: the block id, then each iteration innermost first. */
export function logKeyOf(id: BlockRunId): string {
  let key = id.blockId;
  for (let at = id.iteration ?? undefined; at !== undefined; at = at.outer) key += `@${at.container}#${at.index}`;
  return key;
}

/** The log key of a block run (the ledger's form of logKeyOf). */
export function logKey(blockId: string, iteration: IterationPath | null): string {
  return logKeyOf({ blockId, iteration });
}

/**
 * The iteration key of a stored log: the same for equal iterations whatever their key order.
 * Stored logs come back as parsed JSON, so any value is encoded the same canonical way.
 */
export function iterationKeyOf(iteration: IterationPath | null | undefined): string;
export function iterationKeyOf(iteration: unknown): string;
export function iterationKeyOf(iteration: unknown): string {
  if (iteration === null || iteration === undefined) return '';
  return JSON.stringify(sortKeys(iteration));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}
