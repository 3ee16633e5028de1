/**
 * Which outputs travel along which connection. Block actors are independent: a block only
 * knows what its incoming messages carried (and, inside a container, what the container handed
 * in). For a block D reading name n produced by block X in D's scope, every path X → … → D must
 * carry n, i.e. a connection u → v carries n when X is u or upstream of u and some block at or
 * downstream of v needs n. Names produced outside a scope are the container's business: it
 * needs them itself (CompiledBlock.needs) and hands them to its children.
 */
import type { CompiledBlock } from './compiled.js';

type Blocks = ReadonlyMap<string, CompiledBlock>;

function descendantIds(blocks: Blocks, id: string): Set<string> {
  const out = new Set<string>();
  const stack = [...(blocks.get(id)?.children ?? [])];
  while (stack.length > 0) {
    const child = stack.pop() as string;
    out.add(child);
    stack.push(...(blocks.get(child)?.children ?? []));
  }
  return out;
}

/** Fills `needs` of every block: own references plus descendants' references leaving it. */
export function computeNeeds(blocks: Blocks, byName: ReadonlyMap<string, string>): void {
  const done = new Set<string>();
  const visit = (block: CompiledBlock): void => {
    if (done.has(block.id)) return;
    done.add(block.id);
    const wanted = new Set(block.references);
    for (const childId of block.children) {
      const child = blocks.get(childId);
      if (child === undefined) continue;
      visit(child);
      for (const name of child.needs) wanted.add(name);
    }
    const inside = descendantIds(blocks, block.id);
    inside.add(block.id);
    block.needs = [...wanted].filter((name) => {
      const producer = byName.get(name);
      return producer !== undefined && !inside.has(producer);
    });
  };
  for (const block of blocks.values()) visit(block);
}

function closure(blocks: Blocks, start: string, step: (b: CompiledBlock) => string[], memo: Map<string, Set<string>>): Set<string> {
  const cached = memo.get(start);
  if (cached !== undefined) return cached;
  const out = new Set<string>([start]);
  for (const next of step(blocks.get(start) as CompiledBlock)) {
    for (const id of closure(blocks, next, step, memo)) out.add(id);
  }
  memo.set(start, out);
  return out;
}

export function carrySets(blocks: Blocks, byName: ReadonlyMap<string, string>): Map<number, string[]> {
  const down = new Map<string, Set<string>>();
  const up = new Map<string, Set<string>>();
  const downstream = (id: string): Set<string> => closure(blocks, id, (b) => b.outgoing.map((c) => c.to), down);
  const upstream = (id: string): Set<string> => closure(blocks, id, (b) => b.incoming.map((c) => c.from), up);
  const rank = (name: string): number => blocks.get(byName.get(name) ?? '')?.index ?? Number.MAX_SAFE_INTEGER;
  const carry = new Map<number, string[]>();
  for (const block of blocks.values()) {
    for (const conn of block.outgoing) {
      const sources = upstream(conn.from);
      const names = new Set<string>();
      for (const id of downstream(conn.to)) {
        for (const name of blocks.get(id)?.needs ?? []) {
          const producer = byName.get(name);
          if (producer !== undefined && sources.has(producer)) names.add(name);
        }
      }
      carry.set(conn.index, [...names].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)));
    }
  }
  return carry;
}
