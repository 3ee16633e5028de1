/**
 * The shapes block actors and container actors share: what a block actor is given, its private
 * context, and what a container actor is given and reports. Kept apart from the logic so that the
 * container files and the block's effects need not import the block actor (which imports them).
 */
import type { AnyActorLogic } from 'xstate';
import type { AnyBlockType } from '../src/blocks/types.js';
import type { Bus } from '../src/bus/types.js';
import type { ErrorInfo } from '../src/errors.js';
import type { CompiledBlock, CompiledWorkflow } from '../src/model/graph.js';
import type { InputState } from '../src/model/readiness.js';
import type { IterationScope } from '../src/model/references.js';
import type { BudgetClaim, ExecutionBudget } from '../src/runtime/budget.js';
import type { BlockRunInput } from '../src/runtime/run-block.js';
import type { IterationRef } from '../src/runtime/types.js';
import type { CancelScope } from './cancel-scope.js';
import type { ActorGroup } from './group.js';
import type { BlockReport } from './messages.js';

/** What a parent hands a block actor: the static parts of its run plus where to talk. */
export interface BlockActorInput {
  bus: Bus;
  prefix: string;
  /** scope this actor lives in: "root", or a container iteration (`root/loop1/3`) */
  scopeKey: string;
  workflow: CompiledWorkflow;
  block: CompiledBlock;
  run: Omit<BlockRunInput, 'block' | 'scope' | 'emitChunk' | 'type'>;
  blockTypes: Readonly<Record<string, AnyBlockType>>;
  variables: Readonly<Record<string, unknown>>;
  loop?: IterationScope;
  parallel?: IterationScope;
  iteration: IterationRef | null;
  /** outputs known before any input arrives (a container's children get what reached the container) */
  known?: Record<string, unknown>;
  /** the actors of this execution (containers spawn their iterations into it) */
  group: ActorGroup;
  /** ends with the scope: the execution, or the container iteration set this block is in */
  cancel: CancelScope;
  /** the execution's limits and what its containers hold against them */
  budget: ExecutionBudget;
  /** how this actor tells its parent (execution or container actor) what happened */
  report(event: BlockReport | ContainerEvent): void;
}

/**
 * A block actor's context: what its parent handed it (`input`, shared by every snapshot and never
 * copied) and what its inputs have settled so far. A transition that changes the latter makes a
 * new context of these six fields, not a copy of the input's twenty.
 */
export interface BlockContext {
  readonly input: BlockActorInput;
  /** per incoming connection, in the order of `input.block.incoming` */
  readonly inputs: readonly InputState[];
  readonly pending: number;
  readonly active: number;
  /** the outputs received so far, by normalized block name (a transition that adds some makes a new object) */
  readonly known: Record<string, unknown>;
  readonly startedAt: number | null;
}

/** What a container actor (loop or parallel) gets from the block actor of its container block. */
export interface ContainerActorInput {
  /** the container block's own actor input (its scope, known outputs, services) */
  owner: BlockActorInput;
  /** config with references resolved (the loop condition stays raw) */
  config: Record<string, unknown>;
  /** the block actor logic, handed in so container files need not import it (no import cycle) */
  blockLogic: AnyActorLogic;
  /**
   * what this attempt holds of the execution's budget: the container gives it back when it ends;
   * its block actor does when it is stopped first (XState runs no exit action on a stop)
   */
  claim: BudgetClaim;
}

export interface ContainerOutput {
  ok: boolean;
  results: Record<string, Record<string, unknown>>[];
  error: ErrorInfo | null;
  /** the failure came from the config alone: the block's `retry` would only repeat it */
  repeats?: boolean;
}

export interface IterationProgress {
  remaining: number;
  outputs: Map<string, Record<string, unknown>>;
  /** inbox keys of this iteration's actors, stopped when it ends */
  keys: string[];
}

/** A response completed inside: the container stops where it is (see routeReports). */
export interface ContainerHalt {
  type: 'CONTAINER.HALT';
}

export type ContainerEvent =
  | BlockReport
  | { type: 'CONTAINER.ITERATION'; containerId: string; outer?: IterationRef; index: number; phase: 'started' | 'finished'; total: number | null; result?: unknown };

/**
 * Ends the container's current attempt as failed with `error` (its attempt's signal aborted: its
 * block's time limit ran out, or its scope ended): it stops what still runs in it, like a child
 * failure does.
 */
export interface ContainerAbort {
  type: 'CONTAINER.ABORT';
  error: ErrorInfo;
}

/** What a container machine receives: its children's reports, a halt from deeper down, an abort from its block. */
export type ContainerMachineEvent = ContainerEvent | ContainerHalt | ContainerAbort;

