/** One block on the graph: its name, type, state (colour and icon), issues and whether it is disabled. */
import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import type { Block } from '../types';
import { look } from './status';

export interface BlockData extends Record<string, unknown> {
  block: Block;
  status?: string;
  issues: string[];
  selected: boolean;
}

export type BlockNodeType = Node<BlockData, 'block' | 'container'>;

function Badge({ data }: { data: BlockData }): React.JSX.Element {
  const l = look(data.status);
  return (
    <span className="block-state" style={{ background: l.color }} title={l.label} aria-label={`state: ${l.label}`}>
      {l.icon}
    </span>
  );
}

function classes(data: BlockData, container: boolean): string {
  return [
    container ? 'graph-container' : 'graph-block',
    data.block.enabled === false ? 'disabled' : '',
    data.issues.length > 0 ? 'has-issue' : '',
    data.selected ? 'selected' : '',
  ].filter((c) => c !== '').join(' ');
}

function Body({ data, container }: { data: BlockData; container: boolean }): React.JSX.Element {
  const { block } = data;
  return (
    <div
      className={classes(data, container)}
      data-block-id={block.id}
      data-status={data.status ?? 'pending'}
      style={{ borderColor: data.issues.length > 0 ? '#dc2626' : look(data.status).color }}
      title={data.issues.join('\n') || undefined}
    >
      <div className="block-head">
        <Badge data={data} />
        <span className="block-name">{block.name}</span>
        {block.enabled === false && <span className="block-disabled" aria-label="disabled">∅ disabled</span>}
      </div>
      <div className="block-type">{block.type}{block.id !== block.name ? ` · ${block.id}` : ''}</div>
      {data.issues.length > 0 && <div className="block-issue" role="note">! {data.issues[0]}{data.issues.length > 1 ? ` (+${data.issues.length - 1})` : ''}</div>}
      <Handle type="target" position={Position.Left} />
      <Handle type="source" position={Position.Right} />
    </div>
  );
}

export function BlockNode({ data }: NodeProps<BlockNodeType>): React.JSX.Element {
  return <Body data={data} container={false} />;
}

export function ContainerNode({ data }: NodeProps<BlockNodeType>): React.JSX.Element {
  return <Body data={data} container={true} />;
}
