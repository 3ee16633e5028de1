/**
 * Connection rules (SPEC §1, §1.1, issue 5): endpoints exist, handles exist, no crossing of a
 * container boundary, nothing flows into the starter, and no cycles. Connections touching a
 * disabled block are dropped silently, like the block itself.
 */
import { isEntry } from './capabilities.js';
import type { ConnectionDef } from './types.js';
import type { BlockEntry, ValidationContext } from './validate-context.js';

export interface ConnectionEntry {
  index: number;
  def: ConnectionDef;
}

function endpoints(ctx: ValidationContext, conn: ConnectionEntry): [BlockEntry, BlockEntry] | null {
  const from = ctx.byId.get(conn.def.from);
  const to = ctx.byId.get(conn.def.to);
  // an id that belongs to a structurally broken block is already reported at that block
  if (from === undefined && !ctx.rawIds.has(conn.def.from)) ctx.add(['connections', conn.index, 'from'], `no block with id "${conn.def.from}"`);
  if (to === undefined && !ctx.rawIds.has(conn.def.to)) ctx.add(['connections', conn.index, 'to'], `no block with id "${conn.def.to}"`);
  return from && to ? [from, to] : null;
}

function checkHandle(ctx: ValidationContext, conn: ConnectionEntry, from: BlockEntry): void {
  const handles = ctx.handlesOf(from);
  if (handles === undefined) return;
  const handle = conn.def.handle ?? 'success';
  if (handles.includes(handle)) return;
  const path = conn.def.handle === undefined ? ['connections', conn.index] : ['connections', conn.index, 'handle'];
  const list = handles.length === 0 ? 'it has no outgoing handles' : `its handles are ${handles.map((h) => `"${h}"`).join(', ')}`;
  ctx.add(path, `block "${from.def.id}" (${from.def.type}) has no "${handle}" handle; ${list}`);
}

/** Whether `target` is reachable from `source` over the accepted edges. */
function reaches(edges: ReadonlyMap<string, string[]>, source: string, target: string): string[] | null {
  const previous = new Map<string, string>([[source, source]]);
  const queue = [source];
  while (queue.length > 0) {
    const node = queue.shift() as string;
    if (node === target) {
      const path = [node];
      for (let n = node; n !== source; ) path.unshift((n = previous.get(n) as string));
      return path;
    }
    for (const next of edges.get(node) ?? []) {
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return null;
}

/** Edges are accepted in document order; the first one that closes a cycle is reported. */
function checkCycles(ctx: ValidationContext, accepted: ConnectionEntry[]): void {
  const edges = new Map<string, string[]>();
  for (const conn of accepted) {
    const { from, to } = conn.def;
    const back = reaches(edges, to, from);
    if (back !== null) {
      const loop = [...back, to].map((id) => `"${id}"`).join(' → ');
      ctx.add(['connections', conn.index], `connection "${from}" → "${to}" closes a cycle (${loop}); repeat work with a loop block instead`);
      continue;
    }
    edges.set(from, [...(edges.get(from) ?? []), to]);
  }
}

export function checkConnections(ctx: ValidationContext, connections: ConnectionEntry[]): void {
  const accepted: ConnectionEntry[] = [];
  for (const conn of connections) {
    const pair = endpoints(ctx, conn);
    if (pair === null) continue;
    const [from, to] = pair;
    if (!from.enabled || !to.enabled) continue;
    checkHandle(ctx, conn, from);
    if (isEntry(to.def.type) && to === ctx.starter) {
      ctx.add(['connections', conn.index, 'to'], 'the starter block cannot have incoming connections');
      continue;
    }
    if (from.def.parent !== to.def.parent) {
      ctx.add(['connections', conn.index], crossingMessage(from, to));
      continue;
    }
    accepted.push(conn);
  }
  checkCycles(ctx, accepted);
}

function crossingMessage(from: BlockEntry, to: BlockEntry): string {
  const where = (b: BlockEntry): string => (b.def.parent === undefined ? 'the top level' : `container "${b.def.parent}"`);
  return `connection "${from.def.id}" → "${to.def.id}" crosses a container boundary (from ${where(from)} to ${where(to)}); ` +
    "connect to and from the container block itself: its children with no incoming connection start each iteration";
}
