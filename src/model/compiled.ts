/** Shapes produced by compileWorkflow (graph.ts). */
import type { RetryPolicy } from './types.js';

export interface CompiledConnection {
  /** position in the definition's `connections` array (stable id of the connection) */
  index: number;
  from: string;
  to: string;
  handle: string;
}

export interface CompiledBlock {
  id: string;
  type: string;
  name: string;
  normName: string;
  config: Record<string, unknown>;
  /** definition order */
  index: number;
  parent?: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
  incoming: CompiledConnection[];
  outgoing: CompiledConnection[];
  /** for containers: child ids in definition order */
  children: string[];
  hasErrorConnection: boolean;
  /** normalized block names its config references (disabled blocks included) */
  references: string[];
  /**
   * names whose outputs must be available when this block runs and that are produced outside it:
   * its own references plus, for a container, its descendants' references to blocks outside it.
   * A container hands these to its children (they cannot arrive over child connections).
   */
  needs: string[];
}

export interface CompiledWorkflow {
  id?: string;
  name: string;
  /** the `{{NAME}}`s its triggers use (a webhook's signing secret): redacted like the blocks' */
  triggerSecretNames?: readonly string[];
  variables: Readonly<Record<string, unknown>>;
  blocks: ReadonlyMap<string, CompiledBlock>;
  /** definition order, top level and children */
  order: string[];
  /** normName → id, enabled blocks only; `start` → the starter */
  byName: ReadonlyMap<string, string>;
  starterId: string;
  /** every name a reference may use: all blocks, disabled ones too (they resolve to null), and `start` */
  blockNames: ReadonlySet<string>;
  /** ids with no parent, definition order */
  topLevel: string[];
  connections: CompiledConnection[];
  /**
   * connection index → normalized names whose outputs travel along that connection (on every
   * message it carries, active or not): the names read by the target or by any block downstream
   * of it in the same scope (for containers, by their descendants too) whose block is the source
   * or an ancestor of it in that scope. Outputs of blocks outside a container reach its children
   * through the container, never over child connections.
   */
  carry: ReadonlyMap<number, string[]>;
}
