/**
 * `POST /api/executions/{id}/rerun` (SPEC §4.2): a new execution of a recorded one, with trigger
 * `{ type: "rerun", of, fromBlock }`. Without `fromBlock` it is a plain start; with it, the
 * blocks that are not `fromBlock` and not downstream of it are carried over from the record
 * (src/model/rerun.ts) and the run starts as a crash resumption does, with those settled.
 */
import { toTroupeError, TroupeError, UnprocessableRequest } from '../errors.js';
import { planRerun, remapActivated, type RerunPlan } from '../model/rerun.js';
import type { ExecutionHandle } from '../engine/engine.js';
import { newExecutionId } from '../runtime/ids.js';
import { isoAt } from '../runtime/iso.js';
import type { TriggerInfo } from '../blocks/types.js';
import type { BlockLog, Store, StoredWorkflow } from '../store/types.js';
import type { CompiledCache, LoadedWorkflow } from './compiled-cache.js';
import type { ExecutionDetail, ExecutionService } from './executions.js';
import { workflowNotFound } from './keys.js';

export interface RerunRequest {
  fromBlock?: string;
  /** present when the body had an `input` key */
  input?: { value: unknown };
  version: 'same' | 'current';
}

export interface RerunDeps {
  store: Store;
  cache: CompiledCache;
  executions: ExecutionService;
  executionTimeoutMs: number;
  newId?: () => string;
  now?: () => number;
}

/** A rerun checked and ready to start (what the route does between: its answer mode). */
export interface PreparedRerun {
  loaded: LoadedWorkflow;
  input: unknown;
  trigger: TriggerInfo;
  carried: RerunPlan<BlockLog> | null;
}

export class RerunService {
  constructor(private readonly deps: RerunDeps) {}

  /** Every refusal happens here, before anything is written: 404, 422 INVALID_REQUEST / INVALID_INPUT, 503. */
  async prepare(rec: ExecutionDetail, req: RerunRequest, opts: { queued?: boolean } = {}): Promise<PreparedRerun> {
    if (req.fromBlock !== undefined && req.input !== undefined) {
      throw new UnprocessableRequest('a rerun from a block keeps the recorded outputs of the blocks before it: it takes no input', [
        { path: '/input', message: 'not allowed with fromBlock (the starter is not run again)' },
      ]);
    }
    if ((rec.trigger as { source?: unknown } | null)?.source === 'cli') {
      // its definition was a file's, not a stored version: a stored workflow of that id is another
      throw new UnprocessableRequest('this execution was started by troupe run from a file, whose definition the service does not hold', [
        { path: '/', message: 'rerun it with troupe run' },
      ]);
    }
    const loaded = await this.load(rec, req.version);
    const trigger: TriggerInfo = { type: 'rerun', of: rec.id, fromBlock: req.fromBlock ?? null };
    const input = req.input === undefined ? rec.input : req.input.value;
    const carried = req.fromBlock === undefined ? null : await this.plan(rec, loaded, req.fromBlock);
    // the starter runs again unless it is carried over
    if (carried === null || !carried.carried.some((l) => l.blockId === loaded.compiled.starterId)) this.deps.executions.validateInput(loaded, input);
    // queued (a cluster's work queue): whichever instance has room takes it, not necessarily this one
    if (opts.queued !== true) this.deps.executions.ensureCapacity();
    return { loaded, input, trigger, carried };
  }

  async start(p: PreparedRerun, opts: { awaitRecord: boolean }): Promise<ExecutionHandle> {
    if (p.carried === null) return this.deps.executions.start(p.loaded, p.input, p.trigger, opts);
    const id = this.deps.newId?.() ?? newExecutionId();
    const startedAt = (this.deps.now ?? Date.now)();
    const of = String(p.trigger['of']);
    // the record exists, with the carried logs, before the run starts: as for a resumed run
    await this.deps.store.executions.saveBoundary(id, {
      create: {
        id, workflowId: p.loaded.workflowId, version: p.loaded.version, status: 'running', trigger: p.trigger, input: p.input,
        output: null, error: null, startedAt: isoAt(startedAt), endedAt: null, durationMs: null,
      },
      logs: p.carried.carried.map((log) => ({ ...log, carriedFrom: of })),
    });
    const limitMs = this.deps.executionTimeoutMs;
    try {
      return await this.deps.executions.launch(p.loaded.compiled, {
        workflowId: p.loaded.workflowId, version: p.loaded.version, input: p.input, trigger: p.trigger, executionId: id, timeoutMs: limitMs,
        resume: { plan: p.carried.plan, lastSeq: 0, startedAt, limitMs },
      });
    } catch (err) {
      // a record left `running` would be resumed by the next restart: this run never started
      await this.neverStarted(id, startedAt, err);
      throw err;
    }
  }

  private async neverStarted(id: string, startedAt: number, err: unknown): Promise<void> {
    const endedAt = (this.deps.now ?? Date.now)();
    const cause = toTroupeError(err);
    await this.deps.store.executions.update(id, {
      status: 'failed', error: { code: cause.code, message: cause.message, blockId: null },
      endedAt: isoAt(endedAt), durationMs: endedAt - startedAt,
    }).catch(() => undefined);
  }

  /**
   * The version to run: the one the execution ran, or the workflow's current one. A workflow
   * deleted (and maybe created again under the same id) since is not the one that ran: 404.
   */
  private async load(rec: ExecutionDetail, which: RerunRequest['version']): Promise<LoadedWorkflow> {
    const current = await this.deps.store.workflows.get(rec.workflowId);
    if (current === null || (rec.createdAt !== undefined && rec.createdAt < current.createdAt)) {
      throw new TroupeError('NOT_FOUND', `workflow ${rec.workflowId}, which execution ${rec.id} ran, was deleted`, { details: { workflowId: rec.workflowId } });
    }
    const stored = which === 'current' ? current : await this.deps.store.workflows.getVersion(rec.workflowId, rec.version);
    if (stored === null) throw workflowNotFound(rec.workflowId);
    return this.deps.cache.load(stored, stored.updatedAt);
  }

  /** 422 INVALID_REQUEST when the block cannot be rerun from (unknown, inside a container, did not run). */
  private async plan(rec: ExecutionDetail, loaded: LoadedWorkflow, fromBlock: string): Promise<RerunPlan<BlockLog>> {
    const logs = loaded.version === rec.version ? rec.logs : await this.fitted(rec, loaded);
    const planned = planRerun(loaded.compiled, logs, fromBlock);
    if ('message' in planned) throw new UnprocessableRequest(planned.message, [planned]);
    return planned;
  }

  /** The recorded logs with their activated connections read against the version the rerun runs. */
  private async fitted(rec: ExecutionDetail, loaded: LoadedWorkflow): Promise<BlockLog[]> {
    const ran: StoredWorkflow | null = await this.deps.store.workflows.getVersion(rec.workflowId, rec.version);
    if (ran === null) throw workflowNotFound(rec.workflowId);
    const original = this.deps.cache.load(ran, ran.updatedAt).compiled;
    return rec.logs.map((log) => (Array.isArray(log.activated) ? { ...log, activated: remapActivated(original, loaded.compiled, log.activated) } : log));
  }
}
