/**
 * The one encoding of a block run in an execution (a block, in the iteration it runs in), used
 * for the block actors' inboxes and group keys, their containers' keys, and the `runKey` that
 * idempotency keys, wait keys and child workflow keys derive from. Those are stored, so the
 * encoding must not change: `root|b` at the top level, `root/loop/0|b` in iteration 0 of `loop`,
 * `root/loop/0/inner/2|b` nested. A scope (the part before `|`) is also one token of a block's
 * inbox subject.
 *
 * The ledger's log keys (`logKey`, `b@loop#0`) are another, older encoding: they key the stored
 * `context.iterations` of a record, so they stay as they are.
 */

/** The scope of the top-level blocks. */
export const ROOT_SCOPE = 'root';

/** The scope of the blocks of iteration `index` of container `containerId`, which runs in `scope`. */
export function iterationScope(scope: string, containerId: string, index: number): string {
  return `${scope}/${containerId}/${index}`;
}

/** The key of block `blockId`'s run in `scope`. */
export function blockRunKey(scope: string, blockId: string): string {
  return `${scope}|${blockId}`;
}

/** The block id of a block run key. */
export function blockOfRunKey(key: string): string {
  return key.slice(key.lastIndexOf('|') + 1);
}

/** The key of the container machine (loop, parallel) that a container block's run starts. */
export function containerRunKey(runKey: string): string {
  return `${runKey}#container`;
}
