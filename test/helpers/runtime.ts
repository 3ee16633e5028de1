/**
 * A real runtime for tests: real block types, the isolated-vm sandbox, the given bus, plus a few
 * test-only block types whose behaviour the test controls (sleep, fail, pick) so that
 * concurrency and routing can be observed rather than assumed.
 */
import { z } from 'zod';
import { blockTypes as realBlockTypes, blockTypeRegistry } from '../../src/blocks/index.js';
import type { AnyBlockType, BlockServices, BlockType } from '../../src/blocks/types.js';
import type { Bus } from '../../src/bus/types.js';
import { TroupeError } from '../../src/errors.js';
import { DEFAULT_LIMITS, type ExecutionLimits } from '../../src/model/limits.js';
import { systemClock } from '../../src/runtime/clock.js';
import { Engine } from '../../src/engine/engine.js';
import type { ExecutionEvent, ExecutionResult, SecretSource } from '../../src/runtime/types.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import type { ExecutionRepo } from '../../src/store/types.js';

export interface Probe {
  inflight: number;
  maxInflight: number;
  runs: Record<string, number>;
  starts: string[];
}

export function newProbe(): Probe {
  return { inflight: 0, maxInflight: 0, runs: {}, starts: [] };
}

let probe = newProbe();
export function resetProbe(): Probe {
  probe = newProbe();
  return probe;
}

function track<T>(name: string, work: () => Promise<T>): Promise<T> {
  probe.runs[name] = (probe.runs[name] ?? 0) + 1;
  probe.starts.push(name);
  probe.inflight += 1;
  probe.maxInflight = Math.max(probe.maxInflight, probe.inflight);
  return work().finally(() => {
    probe.inflight -= 1;
  });
}

/** Waits `ms`, then outputs `value` (default: its own name); honours cancellation. */
const sleepBlock: BlockType<{ ms: number | string; value?: unknown }> = {
  type: 'sleep',
  configSchema: z.object({ ms: z.union([z.number().int().min(0), z.string()]), value: z.unknown().optional() }),
  handles: () => ['success', 'error'],
  run: (ctx) =>
    track(ctx.block.name, async () => {
      await systemClock.sleep(Number(ctx.config.ms), ctx.signal);
      return { output: { value: ctx.config.value ?? ctx.block.name }, handles: ['success'] };
    }),
};

const failBlock: BlockType<{ code?: string; message?: string }> = {
  type: 'fail',
  configSchema: z.object({ code: z.string().optional(), message: z.string().optional() }),
  handles: () => ['success', 'error'],
  run: (ctx) =>
    track(ctx.block.name, async () => {
      throw new TroupeError('FUNCTION_ERROR', ctx.config.message ?? 'boom');
    }),
};

/** Activates the handles listed in `choose` (any subset of `handles`). */
const pickBlock: BlockType<{ handles: string[]; choose: string[]; value?: unknown }> = {
  type: 'pick',
  configSchema: z.object({ handles: z.array(z.string()), choose: z.array(z.string()), value: z.unknown().optional() }),
  handles: (c) => [...c.handles, 'error'],
  run: (ctx) =>
    track(ctx.block.name, async () => ({ output: { value: ctx.config.value ?? ctx.block.name, chose: ctx.config.choose }, handles: ctx.config.choose })),
};

/** Streams `text` word by word as chunks (as an agent streams tokens), then outputs `{ content }`. */
const talkBlock: BlockType<{ text: string; gapMs?: number }> = {
  type: 'talk',
  configSchema: z.object({ text: z.string(), gapMs: z.number().int().min(0).optional() }),
  handles: () => ['success', 'error'],
  run: (ctx) =>
    track(ctx.block.name, async () => {
      for (const word of ctx.config.text.split(/(?<= )/)) {
        ctx.emitChunk(word);
        await systemClock.sleep(ctx.config.gapMs ?? 1, ctx.signal);
      }
      return { output: { content: ctx.config.text }, handles: ['success'] };
    }),
};

/** Outputs the key of its own run (what idempotency, wait and child workflow keys derive from). */
const runKeyBlock: BlockType<Record<string, unknown>> = {
  type: 'runkey',
  configSchema: z.object({}),
  handles: () => ['success', 'error'],
  run: async (ctx) => ({ output: { key: ctx.runKey ?? null }, handles: ['success'] }),
};

export const testBlockTypes: Record<string, AnyBlockType> = { ...realBlockTypes, sleep: sleepBlock, fail: failBlock, pick: pickBlock, talk: talkBlock, runkey: runKeyBlock };
export const testRegistry = blockTypeRegistry(testBlockTypes);

let sandbox: IsolatedVmSandbox | undefined;
export function sharedSandbox(): IsolatedVmSandbox {
  sandbox ??= new IsolatedVmSandbox();
  return sandbox;
}

export interface TestEngineOptions {
  secrets?: Record<string, string>;
  executions?: ExecutionRepo;
  executionTimeoutMs?: number;
  functionTimeoutMs?: number;
  functionMemoryMb?: number;
  models?: BlockServices['models'];
  memory?: BlockServices['memory'];
  redact?: string[];
  /** what the engine reports off the caller's path (a lifecycle event the bus refused for good) */
  onError?: (err: unknown) => void;
  /** execution limits other than the defaults */
  limits?: Partial<ExecutionLimits>;
}

export function testEngine(bus: Bus, opts: TestEngineOptions = {}): Engine {
  const secrets: SecretSource = { get: async (name) => opts.secrets?.[name] };
  return new Engine({
    bus,
    blockTypes: testBlockTypes,
    services: {
      sandbox: sharedSandbox(),
      clock: systemClock,
      functionTimeoutMs: opts.functionTimeoutMs ?? 2000,
      functionMemoryMb: opts.functionMemoryMb ?? 32,
      ...(opts.models ? { models: opts.models } : {}),
      ...(opts.memory ? { memory: opts.memory } : {}),
    },
    secrets,
    ...(opts.executions ? { executions: opts.executions } : {}),
    busPrefix: 'troupetest',
    ...(opts.redact ? { redact: opts.redact } : {}),
    executionTimeoutMs: opts.executionTimeoutMs ?? 20_000,
    ...(opts.limits ? { limits: { ...DEFAULT_LIMITS, ...opts.limits } } : {}),
  }, opts.onError);
}

export interface RunOutcome {
  result: ExecutionResult;
  events: ExecutionEvent[];
}

/** Validates, compiles and runs `doc` once; returns the result and every event seen. */
export async function runWorkflow(engine: Engine, doc: unknown, input: unknown = {}, timeoutMs?: number): Promise<RunOutcome> {
  const { def, compiled } = loadWorkflow(doc, testRegistry);
  const events: ExecutionEvent[] = [];
  const handle = await engine.start(
    compiled,
    { workflowId: def.id ?? 'test', version: 1, input, trigger: { type: 'manual' }, ...(timeoutMs ? { timeoutMs } : {}) },
    (e) => events.push(e),
  );
  const result = await handle.done;
  return { result, events };
}

/** Final status of each block by name, from the settled events. */
export function statusesByName(events: ExecutionEvent[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of events) {
    if (e.type === 'block.completed' || e.type === 'block.failed' || e.type === 'block.skipped') {
      out[e.data.blockName] = e.data.status;
    }
  }
  return out;
}

/** Small workflow builder for tests. */
export function wf(blocks: [string, string, Record<string, unknown>?][], connections: [string, string, string?][]): Record<string, unknown> {
  return {
    id: 'wf-test',
    name: 'test',
    blocks: blocks.map(([id, type, config]) => ({ id, type, name: id === 'start' ? 'Start' : id, config: config ?? {} })),
    connections: connections.map(([from, to, handle]) => (handle ? { from, to, handle } : { from, to })),
  };
}
