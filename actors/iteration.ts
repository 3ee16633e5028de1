import type { CancelScope } from './cancel-scope.js';
import type { ErrorInfo } from '../src/errors.js';
import { iterationsBreach, jsonBytes, resultsBreach } from '../src/model/limits.js';
import { breachError, releaseClaim, type BudgetClaim } from '../src/runtime/budget.js';
import { iterationResult } from '../src/model/iteration.js';
import { startDecision } from '../src/model/readiness.js';
import { redactIterationResult, type TypeOfName } from '../src/model/redaction.js';
import { redactionValues } from '../src/model/secret-forms.js';
import { inboxKey, isResponseSettle } from './messages.js';
import { iterationScope } from '../src/model/block-run.js';
import type { IterationScope } from '../src/model/references.js';
import type { BlockActorInput, ContainerActorInput, ContainerEvent, ContainerHalt, IterationProgress } from './block-input.js';
import type { BlockReport } from './messages.js';
import type { CompiledWorkflow } from '../src/model/graph.js';

/**
 * Tells the execution an iteration started or finished. A nested container names the iteration
 * it runs in (`outer`), so each of its runs keeps its own state in the execution context.
 */
export function reportIteration(owner: BlockActorInput, index: number, total: number | null, result?: unknown): void {
  const outer = owner.iteration === null ? {} : { outer: owner.iteration };
  const phase = result === undefined ? 'started' : 'finished';
  const recorded = result === undefined ? {} : { result: recordedResult(owner, result) };
  owner.report({ type: 'CONTAINER.ITERATION', containerId: owner.block.id, ...outer, index, phase, total, ...recorded });
}

type Settled = Extract<BlockReport, { type: 'BLOCK.SETTLED' }>;

export function scopeKeyOf(owner: BlockActorInput, index: number): string {
  return iterationScope(owner.scopeKey, owner.block.id, index);
}

/** How a container actor reaches the actors it spawns. */
export interface SpawnScope {
  report(event: BlockReport | ContainerEvent): void;
  cancel: CancelScope;
}

/** The child actors of one iteration, planned before any is spawned (see startIteration). */
export interface IterationPlan {
  children: { key: string; input: BlockActorInput; decision: ReturnType<typeof startDecision> }[];
  progress: IterationProgress;
}

/**
 * What iteration `index` spawns: one child block actor per child block, in this iteration's
 * scope, and the progress record the container keeps for it. Pure: the container assigns the
 * progress and leaves the spawning to an action (startIteration).
 */
export function planIteration(
  input: ContainerActorInput,
  index: number,
  scope: { loop?: IterationScope; parallel?: IterationScope },
  spawn: SpawnScope,
): IterationPlan {
  const { owner } = input;
  const scopeKey = scopeKeyOf(owner, index);
  const children = owner.block.children.map((childId) => {
    const block = owner.workflow.blocks.get(childId);
    if (block === undefined) throw new Error(`unknown child block ${childId}`);
    const childInput: BlockActorInput = {
      ...owner,
      scopeKey,
      block,
      iteration: owner.iteration === null ? { container: owner.block.id, index } : { container: owner.block.id, index, outer: owner.iteration },
      known: owner.known ?? {},
      report: spawn.report,
      cancel: spawn.cancel,
      ...(scope.loop ? { loop: scope.loop } : {}),
      ...(scope.parallel ? { parallel: scope.parallel } : {}),
    };
    return { key: inboxKey(scopeKey, childId), input: childInput, decision: startDecision(owner.workflow, childId) };
  });
  return { children, progress: { remaining: children.length, outputs: new Map(), keys: children.map((c) => c.key) } };
}

/** The action of a planned iteration: spawns its actors into the execution's group, then starts those with no sibling input. */
export function startIteration(owner: BlockActorInput, blockLogic: ContainerActorInput['blockLogic'], plan: IterationPlan): void {
  for (const c of plan.children) owner.group.spawn(c.key, blockLogic, c.input);
  for (const c of plan.children) {
    if (c.decision === 'run') owner.group.send(c.key, { type: 'START' });
    else if (c.decision === 'skip') owner.group.send(c.key, { type: 'SKIP' });
  }
}

/**
 * A container's finished iterations, newest first, as an immutable list: adding one is a new
 * head (no copy of the others, so a long loop stays linear without writing its context in
 * place); the results array is built once, at the end.
 */
export type ResultList = { index: number; result: Record<string, Record<string, unknown>>; rest: ResultList } | null;

export function withResult(list: ResultList, index: number, result: Record<string, Record<string, unknown>>): ResultList {
  return { index, result, rest: list };
}

/** The results ordered by iteration (branch) index. */
export function resultsOf(list: ResultList): Record<string, Record<string, unknown>>[] {
  const out: Record<string, Record<string, unknown>>[] = [];
  for (let node = list; node !== null; node = node.rest) out[node.index] = node.result;
  return out;
}

/**
 * Where the reports of an iteration's actors go: a settle of one of this container's own
 * children comes to the container actor (it decides on it); everything else (starts, chunks,
 * what nested containers pass up) goes straight to the container's owner.
 *
 * A completed response, as a child or deeper, goes up and halts the container: the execution
 * ends with it (SPEC §2) but hears of it only after the current turn (reports are applied once
 * per turn), so no container around it may start another iteration or branch meanwhile. Each
 * one the report passes through halts (its running children are stopped), and the execution's
 * end then stops them.
 */
export function routeReports(owner: BlockActorInput, toContainer: (e: Settled | ContainerHalt) => void): SpawnScope['report'] {
  return (e) => {
    if (isResponseSettle(owner.workflow, e)) {
      owner.report(e);
      toContainer({ type: 'CONTAINER.HALT' });
    } else if (e.type === 'BLOCK.SETTLED' && isOwnChild(owner, e)) toContainer(e);
    else owner.report(e);
  };
}

/** A report from one of this container's own children (nested containers' reports pass through). */
export function isOwnChild(owner: BlockActorInput, event: Settled): boolean {
  return event.iteration !== null && event.iteration.container === owner.block.id;
}

/** A child failure that no error connection handled fails the container. */
export function childFailure(event: Settled): ErrorInfo | null {
  if (event.status !== 'failed' || event.errorHandled) return null;
  return event.error ?? { code: 'INTERNAL', message: `block ${event.blockId} failed` };
}

/** An iteration's result as the record keeps it (its iteration state): secret values as ***. */
export function recordedResult(owner: BlockActorInput, result: unknown): unknown {
  return redactIterationResult(result, redactionValues(owner.run.secrets), typeOfName(owner.workflow));
}

/** The type of a block by its normalized name: which fields of a child's output are Troupe's. */
export function typeOfName(workflow: CompiledWorkflow): TypeOfName {
  return (name) => {
    const id = workflow.byName.get(name);
    return id === undefined ? undefined : workflow.blocks.get(id)?.type;
  };
}

/** Folds a child's settled report into its iteration; returns the iteration's result when it is complete. */
export function settleChild(
  owner: BlockActorInput,
  progress: IterationProgress,
  event: Settled,
): { progress: IterationProgress; result: Record<string, Record<string, unknown>> | null } {
  const block = owner.workflow.blocks.get(event.blockId);
  const outputs = new Map(progress.outputs);
  if (block !== undefined && event.output !== null && event.status !== 'skipped') outputs.set(block.normName, event.live ?? event.output);
  const next = { ...progress, remaining: progress.remaining - 1, outputs };
  if (next.remaining > 0) return { progress: next, result: null };
  const names = owner.block.children.map((id) => owner.workflow.blocks.get(id)?.normName ?? id);
  return { progress: next, result: iterationResult(names, outputs) };
}

/** Takes `count` more running iterations or branches for this container; the limit's error when they do not fit. */
export function openBranches(owner: BlockActorInput, claim: BudgetClaim, count: number): ErrorInfo | null {
  const breach = owner.budget.openBranches(owner.block.name, count);
  if (breach !== null) return breachError(breach);
  claim.branches += count;
  return null;
}

/**
 * An iteration or branch ended with `result`: its place among the running ones is given back,
 * and its result's size counts against the container's results limit and the execution's memory.
 * Returns the limit's error when one is passed.
 */
export function closeIteration(owner: BlockActorInput, claim: BudgetClaim, result: unknown): ErrorInfo | null {
  owner.budget.closeBranches(1);
  claim.branches = Math.max(0, claim.branches - 1);
  const bytes = jsonBytes(result);
  claim.bytes += bytes;
  const breach = owner.budget.hold(owner.block.name, bytes) ?? resultsBreach(owner.block.name, claim.bytes, owner.budget.limits);
  return breach === null ? null : breachError(breach);
}

/**
 * The container's attempt has ended (or was stopped): the branches it still held are given back,
 * and the bytes of its results too unless they live on in its output (`kept`).
 */
export function releaseBudget(owner: BlockActorInput, claim: BudgetClaim, kept: boolean): void {
  releaseClaim(owner.budget, claim, kept);
}

/** A limit a container's plan passes before it starts (its iterations), as its error. */
export function planBreach(owner: BlockActorInput, total: number | null): ErrorInfo | null {
  if (total === null) return null;
  const breach = iterationsBreach(owner.block.name, total, owner.budget.limits);
  return breach === null ? null : breachError(breach);
}
