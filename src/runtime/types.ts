import type { IterationPath } from '../model/block-run.js';
import type { ResumePlan } from '../model/resume.js';
import type { ExecutionError, ResponseOutput } from '../model/end.js';
import type { Bus } from '../bus/types.js';
import type { AnyBlockType, BlockServices, TriggerInfo, WaitingInfo } from '../blocks/types.js';
import type { ErrorInfo } from '../errors.js';
import type { ExecutionLimits } from '../model/limits.js';
import type { BlockLog, ExecutionRepo } from '../store/types.js';

/** Where `{{NAME}}` values come from (secrets API first, then TROUPE_VAR_NAME). */
export interface SecretSource {
  get(name: string): Promise<string | undefined>;
  /**
   * Every secret value the source holds, by name, so that a run redacts them all, not only those
   * it uses (SPEC §3: every occurrence of a secret's value in anything recorded). A map when it is
   * at hand (the engine then waits for nothing), a promise when it must be read. Absent: the
   * source's values are redacted only where a workflow names them (the environment's).
   */
  values?(): ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>>;
}

export interface RuntimeDeps {
  bus: Bus;
  blockTypes: Readonly<Record<string, AnyBlockType>>;
  services: BlockServices;
  secrets: SecretSource;
  /** execution records; absent in throw-away runs (tests), present in the CLI and the service */
  executions?: ExecutionRepo;
  busPrefix: string;
  executionTimeoutMs: number;
  /** a wait falling due further away than this parks the execution (TROUPE_SYNC_WAIT_MS); absent: never parks */
  parkAfterMs?: number;
  newId?: () => string;
  /**
   * Values every execution redacts as it redacts its secrets, though no `{{NAME}}` reads them:
   * the process's own model keys (OPENAI_API_KEY, ...), which a model could repeat.
   */
  redact?: readonly string[];
  /** what one execution may hold and run at once; DEFAULT_LIMITS when absent */
  limits?: Readonly<ExecutionLimits>;
  /**
   * Another instance resumes what this process runs once it dies (a cluster, SPEC §9): every
   * record is then written as soon as the run starts, never held back (BoundaryPersister.create),
   * so that a run already calling out when its instance dies is on record to be taken over.
   */
  resumedElsewhere?: boolean;
}

export type ExecutionStatus = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export type BlockStatus = 'pending' | 'running' | 'waiting' | 'completed' | 'failed' | 'skipped' | 'cancelled';

/** One entry of a waiting execution's `waiting` list (SPEC §2.1). */
export interface WaitingEntry {
  blockId: string;
  iteration: IterationRef | null;
  kind: 'wait' | 'approval' | 'workflow';
  since: string;
  until?: string;
  message?: string;
  childExecutionId?: string;
  /** an approval's one-time link: added to the record's view for the admin only, never stored */
  approveUrl?: string;
}

/**
 * Which iteration a block ran in: the innermost container and its index, and, inside a nested
 * container, the iteration of the container around it (`outer`), so that the same block in
 * outer iteration 0 and outer iteration 1 has two logs, not one.
 */
export type IterationRef = IterationPath;

/** One block log (SPEC §4.2): the store's shape, with the runtime's narrower field types. */
export interface BlockLogEntry extends BlockLog {
  status: BlockStatus;
  error: ErrorInfo | null;
  iteration: IterationRef | null;
}

export type { ExecutionError, ResponseOutput } from '../model/end.js';

export interface ExecutionResult {
  id: string;
  workflowId: string;
  version: number;
  status: Exclude<ExecutionStatus, 'queued' | 'running'>;
  output: unknown;
  error: ExecutionError | null;
  response: ResponseOutput | null;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  /** status `waiting`: what it waits for, and the running time it had used (the time limit counts only that) */
  waiting?: WaitingEntry[];
  activeMs?: number;
}

/** Live events of one execution: what SSE streams and the CLI prints. */
export type ExecutionEvent =
  | { type: 'block.started'; data: { blockId: string; blockName: string; blockType: string; order: number; iteration: IterationRef | null } }
  | { type: 'block.completed' | 'block.failed' | 'block.skipped'; data: BlockLogEntry }
  | { type: 'chunk'; data: { blockId: string; text: string; iteration: IterationRef | null } }
  | { type: 'done'; data: ExecutionResult }
  /** the execution parked (SPEC §2.1): this run ends here, a later one resumes it */
  | { type: 'waiting'; data: ExecutionResult };

export interface StartRequest {
  workflowId: string;
  version: number;
  input: unknown;
  trigger: TriggerInfo;
  conversationId?: string;
  executionId?: string;
  timeoutMs?: number;
  /**
   * false: the run starts while its record is being written, and `handle.recorded` tells when it
   * is (for callers that answer only once the run has ended, whose end waits for the record
   * anyway). A record that cannot be written cancels the run and fails `done`. Default true:
   * `start` resolves once the record exists.
   */
  awaitRecord?: boolean;
  /**
   * Resumes a run of this execution that a crash interrupted (its record exists, `running`):
   * settled blocks are not run again, events continue after `lastSeq`, and the time limit
   * counts from `startedAt` (src/server/recovery.ts).
   */
  resume?: {
    plan: ResumePlan;
    lastSeq: number;
    startedAt: number;
    /** the execution's whole time limit (`timeoutMs` is what the interrupted runs left of it) */
    limitMs: number;
  };
}

/** Events a block actor sends to its parent (the execution actor or a container actor). */
export type BlockReport =
  | { type: 'BLOCK.STARTED'; blockId: string; at: number; iteration: IterationRef | null }
  | {
      type: 'BLOCK.SETTLED';
      blockId: string;
      iteration: IterationRef | null;
      status: 'completed' | 'failed' | 'skipped';
      startedAt: number | null;
      endedAt: number;
      input: unknown;
      output: Record<string, unknown> | null;
      /** the unredacted output, when it may differ from `output` (see BlockOutcome): containers collect it */
      live?: Record<string, unknown>;
      error: ErrorInfo | null;
      errorHandled: boolean;
      attempts: number;
      /** connection indexes this block activated */
      activated: number[];
      attemptLog?: unknown[];
    }
  | { type: 'BLOCK.CHUNK'; blockId: string; text: string; iteration: IterationRef | null }
  /**
   * a running block resolved its config: `input` is what its log records (secrets as ***). It goes
   * into the running log the persister writes, so a log that restart recovery finds still running
   * after a crash keeps the input too, as one cancelled in a live process does
   */
  | { type: 'BLOCK.INPUT'; blockId: string; iteration: IterationRef | null; input: unknown }
  /** a loop or parallel starts another attempt (its `retry`): its earlier attempt's child logs go */
  /** a top-level block is waiting (SPEC §2.1): the execution may park once nothing else runs */
  | { type: 'BLOCK.WAITING'; blockId: string; iteration: IterationRef | null; info: WaitingInfo }
  | { type: 'CONTAINER.ATTEMPT'; blockId: string; iteration: IterationRef | null };
