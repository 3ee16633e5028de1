/**
 * Rerunning an execution from one of its blocks (SPEC §4.2): which recorded blocks a new
 * execution takes over as they were, and the plan that starts it with them settled. The blocks
 * that are neither the chosen block nor downstream of it keep their recorded outputs, states
 * and decisions; the chosen block and everything downstream run. The start itself is the one
 * crash resumption uses (resume.ts): settled blocks get no actor, their messages are replayed.
 */
import type { CompiledWorkflow } from './compiled.js';
import { planResume, type PriorLog, type ResumePlan } from './resume.js';

/** The part of a recorded log a rerun reads (and copies into the new record). */
export interface RecordedLog extends PriorLog {
  blockId: string;
}

export interface RerunPlan<L extends RecordedLog> {
  plan: ResumePlan;
  /** the logs taken over: the kept top-level blocks' and those of the iterations inside them */
  carried: L[];
}

/** Why the rerun cannot start from that block: a message for the client, and where it points. */
export interface RerunRefusal {
  path: string;
  message: string;
}

/** The statuses of a block that ran (a skipped block did not, a pending one has not). */
const RAN = new Set(['completed', 'failed', 'cancelled', 'running']);
const SETTLED = new Set(['completed', 'failed', 'skipped']);

/**
 * The plan of a rerun from `fromBlock` on `workflow`, given the logs of the execution it reruns
 * (already fitted to `workflow`'s connections, see remapActivated), or why there is none.
 */
export function planRerun<L extends RecordedLog>(workflow: CompiledWorkflow, logs: readonly L[], fromBlock: string): RerunPlan<L> | RerunRefusal {
  const block = workflow.blocks.get(fromBlock);
  if (block === undefined) return refuse(`block ${fromBlock} is not in the workflow version the rerun runs`);
  if (block.parent !== undefined) {
    return refuse(`block ${fromBlock} is inside ${block.parent}: a rerun starts from a top-level block (rerun from ${block.parent})`);
  }
  const own = logs.find((l) => l.blockId === fromBlock && isTopLevel(l));
  if (own === undefined || !RAN.has(own.status)) {
    return refuse(`block ${fromBlock} did not run in this execution${own === undefined ? '' : ` (it was ${own.status})`}: rerun from a block that ran`);
  }
  const rerun = downstreamOf(workflow, fromBlock);
  const kept = new Set(logs.filter((l) => isTopLevel(l) && SETTLED.has(l.status) && !rerun.has(l.blockId)).map((l) => l.blockId));
  const carried = logs.filter((l) => {
    const top = outermostBlock(l);
    return top !== null && kept.has(top);
  });
  const planned = planResume(workflow, carried);
  if ('reason' in planned) return refuse(`the recorded blocks cannot be carried over: ${planned.reason}`);
  return { plan: planned.plan, carried };
}

/**
 * A recorded top-level log's `activated` connection indexes, read against another version of
 * the workflow (a rerun on the current version): a connection is the same when its source,
 * handle and target are; one the other version does not have is dropped.
 */
export function remapActivated(from: CompiledWorkflow, to: CompiledWorkflow, activated: readonly number[]): number[] {
  const index = new Map(to.connections.map((c) => [connectionKey(c), c.index]));
  const out: number[] = [];
  for (const i of activated) {
    const conn = from.connections[i];
    const mapped = conn === undefined ? undefined : index.get(connectionKey(conn));
    if (mapped !== undefined) out.push(mapped);
  }
  return out;
}

function connectionKey(c: { from: string; to: string; handle: string }): string {
  return JSON.stringify([c.from, c.handle, c.to]);
}

/** The block and every top-level block reachable from it (whatever the handle). */
function downstreamOf(workflow: CompiledWorkflow, blockId: string): Set<string> {
  const seen = new Set<string>([blockId]);
  const queue = [blockId];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    for (const conn of workflow.blocks.get(id)?.outgoing ?? []) {
      if (seen.has(conn.to)) continue;
      seen.add(conn.to);
      queue.push(conn.to);
    }
  }
  return seen;
}

function isTopLevel(log: { iteration: unknown }): boolean {
  return log.iteration === null || log.iteration === undefined;
}

/** The top-level block a log belongs to: its own block, or the outermost container it ran in. */
function outermostBlock(log: RecordedLog): string | null {
  if (isTopLevel(log)) return log.blockId;
  let at = log.iteration as { container?: unknown; outer?: unknown } | null | undefined;
  while (at?.outer !== null && at?.outer !== undefined) at = at.outer as { container?: unknown; outer?: unknown };
  return typeof at?.container === 'string' ? at.container : null;
}

function refuse(message: string): RerunRefusal {
  return { path: '/fromBlock', message };
}
