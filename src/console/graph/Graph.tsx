/**
 * A workflow's graph (SPEC §8) with @xyflow/react: blocks laid out by elkjs, containers around
 * their children, connections labelled by handle, each block's state and issues drawn on it.
 * Blocks are buttons for the keyboard too (Tab to one, Enter to select).
 */
import { Background, Controls, MarkerType, ReactFlow, useReactFlow, type Edge } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useEffect, useMemo, useRef, useState } from 'react';
import type { Block, Connection } from '../types';
import { BlockNode, ContainerNode, type BlockNodeType } from './BlockNode';
import { layout, type Placed } from './layout';
import { Legend } from './status';

export interface GraphProps {
  blocks: Block[];
  connections: Connection[];
  states?: Record<string, string>;
  issues?: Record<string, string[]>;
  selected?: string;
  onSelect?: (blockId: string) => void;
}

const nodeTypes = { block: BlockNode, container: ContainerNode };

function toNodes(placed: Placed[], p: Pick<GraphProps, 'states' | 'issues' | 'selected'>): BlockNodeType[] {
  return placed.map((pl) => ({
    id: pl.block.id,
    type: pl.container ? 'container' : 'block',
    position: { x: pl.x, y: pl.y },
    ...(pl.block.parent !== undefined && placed.some((o) => o.block.id === pl.block.parent) ? { parentId: pl.block.parent, extent: 'parent' as const } : {}),
    // width and height on the node, not only in its style: React Flow hides a node it has no
    // dimensions for until it has measured it again, and a node object rebuilt on a live update
    // (a state changed) comes without its measurement, so it blinked out on every update
    width: pl.width,
    height: pl.height,
    style: { width: pl.width, height: pl.height },
    draggable: false,
    ariaLabel: `${pl.block.name} (${pl.block.type})${p.states?.[pl.block.id] ? `, ${p.states[pl.block.id]}` : ''}`,
    data: { block: pl.block, status: p.states?.[pl.block.id], issues: p.issues?.[pl.block.id] ?? [], selected: p.selected === pl.block.id },
  }));
}

function toEdges(connections: Connection[], blocks: Block[]): Edge[] {
  const ids = new Set(blocks.map((b) => b.id));
  return connections
    .filter((c) => ids.has(c.from) && ids.has(c.to))
    .map((c, i) => ({
      id: `e${i}`, source: c.from, target: c.to, zIndex: 1,
      ...(c.handle !== undefined && c.handle !== 'success' ? { label: c.handle } : {}),
      markerEnd: { type: MarkerType.ArrowClosed },
      className: c.handle === 'error' ? 'edge-error' : '',
    }));
}

/** Fits the graph again when its box changes size (an inspector opening beside it). */
function FitOnResize({ box }: { box: React.RefObject<HTMLDivElement | null> }): null {
  const flow = useReactFlow();
  useEffect(() => {
    if (box.current === null) return undefined;
    const watcher = new ResizeObserver(() => void flow.fitView());
    watcher.observe(box.current);
    return () => watcher.disconnect();
  }, [box, flow]);
  return null;
}

export function Graph(p: GraphProps): React.JSX.Element {
  const [placed, setPlaced] = useState<Placed[] | undefined>();
  const box = useRef<HTMLDivElement>(null);
  const [problem, setProblem] = useState<string | undefined>();
  const shape = JSON.stringify([p.blocks.map((b) => [b.id, b.parent, b.type]), p.connections]);
  useEffect(() => {
    let live = true;
    layout(p.blocks, p.connections).then(
      (r) => live && setPlaced(r),
      (err: unknown) => live && setProblem(`The graph could not be laid out (${String(err)}); the definition is still editable.`),
    );
    return () => {
      live = false;
    };
  }, [shape]);
  const { states, issues, selected } = p;
  const nodes = useMemo(() => (placed ? toNodes(placed, { states, issues, selected }) : []), [placed, states, issues, selected]);
  const edges = useMemo(() => toEdges(p.connections, p.blocks), [p.connections, p.blocks]);
  if (problem !== undefined) return <p className="error">{problem}</p>;
  return (
    <div className="graph-wrap">
      <div className="graph" data-testid="graph" ref={box}>
        {placed && (
          <ReactFlow
            nodes={nodes} edges={edges} nodeTypes={nodeTypes} fitView minZoom={0.2} nodesConnectable={false}
            onNodeClick={(_e, n) => p.onSelect?.(n.id)} proOptions={{ hideAttribution: true }}
            onNodesChange={(changes) => changes.forEach((c) => c.type === 'select' && c.selected && p.onSelect?.(c.id))}
          >
            <Background />
            <FitOnResize box={box} />
            <Controls showInteractive={false} />
          </ReactFlow>
        )}
      </div>
      <Legend />
    </div>
  );
}
