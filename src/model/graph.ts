/**
 * compileWorkflow: a validated definition turned into the lookup structure the runtime walks.
 * Disabled blocks (and children of disabled containers) and their connections are dropped.
 *
 * Naming: the starter's `normName` is always `start` (it is read as `<start.x>` and its output
 * travels under that name); every other block keeps its normalized name.
 */
import { isEntry } from './capabilities.js';
import { carrySets, computeNeeds } from './carry.js';
import { normalizeName } from './names.js';
import { findSecretNames } from './secrets.js';
import { collectReferences, interpretReference, referenceableNames } from './ref-parse.js';
import type { CompiledBlock, CompiledConnection, CompiledWorkflow } from './compiled.js';
import type { BlockDef, BlockTypeRegistry, WorkflowDef } from './types.js';

export type { CompiledBlock, CompiledConnection, CompiledWorkflow } from './compiled.js';

function enabledIds(defs: readonly BlockDef[]): Set<string> {
  const byId = new Map(defs.map((d) => [d.id, d]));
  const ok = (def: BlockDef, depth: number): boolean => {
    if (def.enabled === false || depth > defs.length) return false;
    if (def.parent === undefined) return true;
    const parent = byId.get(def.parent);
    return parent !== undefined && ok(parent, depth + 1);
  };
  return new Set(defs.filter((d) => ok(d, 0)).map((d) => d.id));
}

function blockReferences(config: Record<string, unknown>, names: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const token of collectReferences(config)) {
    const { kind, ref } = interpretReference(token, names);
    if (kind === 'block') out.add(ref.root);
  }
  return [...out];
}

function makeBlock(def: BlockDef, index: number, names: ReadonlySet<string>): CompiledBlock {
  return {
    id: def.id,
    type: def.type,
    name: def.name,
    normName: isEntry(def.type) ? 'start' : normalizeName(def.name),
    config: def.config,
    index,
    ...(def.parent === undefined ? {} : { parent: def.parent }),
    ...(def.timeoutMs === undefined ? {} : { timeoutMs: def.timeoutMs }),
    ...(def.retry === undefined ? {} : { retry: def.retry }),
    incoming: [],
    outgoing: [],
    children: [],
    hasErrorConnection: false,
    references: blockReferences(def.config, names),
    needs: [],
  };
}

/** Assumes `def` passed validateWorkflow. */
export function compileWorkflow(def: WorkflowDef, registry: BlockTypeRegistry): CompiledWorkflow {
  void registry; // part of the contract for type-specific compilation; nothing needs it yet
  const enabled = enabledIds(def.blocks);
  const blockNames = referenceableNames(def.blocks.map((b) => ({ normName: normalizeName(b.name), def: b })));
  const blocks = new Map<string, CompiledBlock>();
  def.blocks.forEach((b, i) => {
    if (enabled.has(b.id)) blocks.set(b.id, makeBlock(b, i, blockNames));
  });
  const connections: CompiledConnection[] = [];
  def.connections.forEach((c, index) => {
    const from = blocks.get(c.from);
    const to = blocks.get(c.to);
    if (from === undefined || to === undefined) return;
    const conn: CompiledConnection = { index, from: c.from, to: c.to, handle: c.handle ?? 'success' };
    connections.push(conn);
    from.outgoing.push(conn);
    to.incoming.push(conn);
    if (conn.handle === 'error') from.hasErrorConnection = true;
  });
  for (const block of blocks.values()) {
    if (block.parent !== undefined) blocks.get(block.parent)?.children.push(block.id);
  }
  const byName = new Map<string, string>();
  for (const block of blocks.values()) byName.set(block.normName, block.id);
  const starter = [...blocks.values()].find((b) => isEntry(b.type));
  computeNeeds(blocks, byName);
  return {
    ...(def.id === undefined ? {} : { id: def.id }),
    name: def.name,
    triggerSecretNames: findSecretNames(def.triggers ?? []),
    variables: def.variables ?? {},
    blocks,
    order: [...blocks.keys()],
    byName,
    starterId: starter?.id ?? '',
    blockNames,
    topLevel: [...blocks.values()].filter((b) => b.parent === undefined).map((b) => b.id),
    connections,
    carry: carrySets(blocks, byName),
  };
}

/** Blocks of one scope (top level when `scopeParent` is undefined), definition order. */
export function scopeBlocks(compiled: CompiledWorkflow, scopeParent?: string): CompiledBlock[] {
  return compiled.order.map((id) => compiled.blocks.get(id) as CompiledBlock).filter((b) => b.parent === scopeParent);
}

/** Upstream blocks of `id` in its scope (transitively), definition order, without `id`. */
export function ancestors(compiled: CompiledWorkflow, id: string): string[] {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const block = compiled.blocks.get(stack.pop() as string);
    for (const conn of block?.incoming ?? []) {
      if (!seen.has(conn.from)) {
        seen.add(conn.from);
        stack.push(conn.from);
      }
    }
  }
  return compiled.order.filter((b) => seen.has(b));
}

/**
 * Blocks of a scope with no incoming connection from a sibling, definition order. Inside a
 * container these start each iteration. At the top level this is the starter plus any block
 * nothing leads to; those orphans never run (see startDecision in readiness.ts).
 */
export function startBlocks(compiled: CompiledWorkflow, scopeParent?: string): string[] {
  return scopeBlocks(compiled, scopeParent).filter((b) => b.incoming.length === 0).map((b) => b.id);
}

/** Topological order of a scope; ties are broken by definition order, so it is deterministic. */
export function topologicalOrder(compiled: CompiledWorkflow, scopeParent?: string): string[] {
  const scope = scopeBlocks(compiled, scopeParent);
  const pending = new Map(scope.map((b) => [b.id, b.incoming.length]));
  const ready = scope.filter((b) => b.incoming.length === 0);
  const out: string[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => a.index - b.index);
    const block = ready.shift() as CompiledBlock;
    out.push(block.id);
    for (const conn of block.outgoing) {
      const left = (pending.get(conn.to) ?? 0) - 1;
      pending.set(conn.to, left);
      if (left === 0) ready.push(compiled.blocks.get(conn.to) as CompiledBlock);
    }
  }
  return out;
}
