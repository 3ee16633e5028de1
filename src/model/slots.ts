/**
 * An immutable map from small whole numbers (branch indexes) to values, for a container's
 * running branches. Setting or removing one copies only the path to it in a 32-way trie (one
 * 32-slot array per level: two levels up to 1,024 branches, three up to 32,768) and shares the
 * rest, where a Map copied per update made a parallel of n branches O(n²): 1,000 branches each
 * settling copied a 1,000-entry map, ~90 MB of garbage per run.
 */
type Node<V> = readonly (V | Node<V> | undefined)[];

const BITS = 5;
const WIDTH = 1 << BITS;
const MASK = WIDTH - 1;

export interface Slots<V> {
  readonly root: Node<V> | undefined;
  /** levels of the trie: enough for every index below the capacity it was made for */
  readonly depth: number;
  readonly size: number;
}

/** An empty map for indexes 0 ≤ i < capacity (larger indexes are refused). */
export function emptySlots<V>(capacity: number): Slots<V> {
  let depth = 1;
  while (WIDTH ** depth < capacity) depth += 1;
  return { root: undefined, depth, size: 0 };
}

function slotOf(index: number, level: number): number {
  return Math.floor(index / WIDTH ** level) & MASK;
}

function checked(slots: Slots<unknown>, index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= WIDTH ** slots.depth) throw new RangeError(`slot ${index} outside 0..${WIDTH ** slots.depth - 1}`);
}

export function getSlot<V>(slots: Slots<V>, index: number): V | undefined {
  if (!Number.isInteger(index) || index < 0 || index >= WIDTH ** slots.depth) return undefined;
  let node: Node<V> | undefined = slots.root;
  for (let level = slots.depth - 1; level > 0 && node !== undefined; level--) node = node[slotOf(index, level)] as Node<V> | undefined;
  return node === undefined ? undefined : (node[index & MASK] as V | undefined);
}

function withValue<V>(node: Node<V> | undefined, index: number, level: number, value: V | undefined): Node<V> {
  const copy: (V | Node<V> | undefined)[] = node === undefined ? new Array<undefined>(WIDTH).fill(undefined) : node.slice();
  const at = slotOf(index, level);
  copy[at] = level === 0 ? value : withValue(node?.[at] as Node<V> | undefined, index, level - 1, value);
  return copy;
}

/** A new map with `index` set to `value` (undefined is not a value: use withoutSlot). */
export function withSlot<V>(slots: Slots<V>, index: number, value: V): Slots<V> {
  checked(slots, index);
  const had = getSlot(slots, index) !== undefined;
  return { root: withValue(slots.root, index, slots.depth - 1, value), depth: slots.depth, size: had ? slots.size : slots.size + 1 };
}

/** A new map without `index`; the same one when it held nothing there. */
export function withoutSlot<V>(slots: Slots<V>, index: number): Slots<V> {
  if (getSlot(slots, index) === undefined) return slots;
  return { root: withValue(slots.root, index, slots.depth - 1, undefined), depth: slots.depth, size: slots.size - 1 };
}

/** The values in index order. */
export function slotValues<V>(slots: Slots<V>): V[] {
  const out: V[] = [];
  const walk = (node: Node<V> | undefined, level: number): void => {
    if (node === undefined) return;
    for (const entry of node) {
      if (entry === undefined) continue;
      if (level === 0) out.push(entry as V);
      else walk(entry as Node<V>, level - 1);
    }
  };
  walk(slots.root, slots.depth - 1);
  return out;
}
