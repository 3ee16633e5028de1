/**
 * Automatic layout (SPEC §8): elkjs's layered algorithm, left to right, with each loop or
 * parallel block a compound node drawn around its children. Positions come out relative to
 * the parent, as @xyflow/react wants them for child nodes.
 */
import ELK, { type ElkExtendedEdge, type ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { Block, Connection } from '../types';

export const BLOCK_W = 190;
export const BLOCK_H = 62;

export interface Placed {
  block: Block;
  x: number;
  y: number;
  width: number;
  height: number;
  container: boolean;
}

const elk = new ELK();

const LAYERED = {
  'elk.algorithm': 'layered',
  'elk.direction': 'RIGHT',
  'elk.layered.spacing.nodeNodeBetweenLayers': '70',
  'elk.spacing.nodeNode': '30',
  'elk.edgeLabels.inline': 'true',
};

function elkNode(block: Block, childrenOf: Map<string, Block[]>, edgesOf: Map<string, ElkExtendedEdge[]>): ElkNode {
  const children = childrenOf.get(block.id) ?? [];
  if (children.length === 0 && block.type !== 'loop' && block.type !== 'parallel') {
    return { id: block.id, width: BLOCK_W, height: BLOCK_H };
  }
  return {
    id: block.id,
    layoutOptions: { ...LAYERED, 'elk.padding': '[top=56,left=20,bottom=20,right=20]' },
    children: children.map((c) => elkNode(c, childrenOf, edgesOf)),
    edges: edgesOf.get(block.id) ?? [],
    ...(children.length === 0 ? { width: BLOCK_W + 40, height: BLOCK_H + 60 } : {}),
  };
}

function group(blocks: Block[], connections: Connection[]): { childrenOf: Map<string, Block[]>; edgesOf: Map<string, ElkExtendedEdge[]> } {
  const ids = new Set(blocks.map((b) => b.id));
  const parentOf = new Map(blocks.map((b) => [b.id, b.parent !== undefined && ids.has(b.parent) ? b.parent : '']));
  const childrenOf = new Map<string, Block[]>();
  for (const b of blocks) {
    const p = parentOf.get(b.id) ?? '';
    childrenOf.set(p, [...(childrenOf.get(p) ?? []), b]);
  }
  const edgesOf = new Map<string, ElkExtendedEdge[]>();
  connections.forEach((c, i) => {
    if (!ids.has(c.from) || !ids.has(c.to)) return;
    // an edge lives in the container holding both ends (the validator refuses any other)
    const p = parentOf.get(c.from) === parentOf.get(c.to) ? (parentOf.get(c.from) ?? '') : '';
    edgesOf.set(p, [...(edgesOf.get(p) ?? []), { id: `e${i}`, sources: [c.from], targets: [c.to] }]);
  });
  return { childrenOf, edgesOf };
}

function flatten(node: ElkNode, byId: Map<string, Block>, out: Placed[]): void {
  for (const child of node.children ?? []) {
    const block = byId.get(child.id);
    if (block === undefined) continue;
    out.push({
      block, x: child.x ?? 0, y: child.y ?? 0, width: child.width ?? BLOCK_W, height: child.height ?? BLOCK_H,
      container: child.children !== undefined,
    });
    flatten(child, byId, out);
  }
}

/** Parents come before their children in the result, as @xyflow/react requires. */
export async function layout(blocks: Block[], connections: Connection[]): Promise<Placed[]> {
  const { childrenOf, edgesOf } = group(blocks, connections);
  const root: ElkNode = {
    id: '__root',
    layoutOptions: { ...LAYERED, 'elk.hierarchyHandling': 'INCLUDE_CHILDREN' },
    children: (childrenOf.get('') ?? []).map((b) => elkNode(b, childrenOf, edgesOf)),
    edges: edgesOf.get('') ?? [],
  };
  const done = await elk.layout(root);
  const out: Placed[] = [];
  flatten(done, new Map(blocks.map((b) => [b.id, b])), out);
  return out;
}
