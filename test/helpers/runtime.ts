/**
 * A real runtime for tests: real block types, the isolated-vm sandbox, the given bus, plus a few
 * test-only block types whose behaviour the test controls (sleep, fail, pick) so that
 * concurrency and routing can be observed rather than assumed.
 */
import { z } from 'zod';
import { blockTypes as realBlockTypes, blockTypeRegistry } from '../../src/blocks/index.js';
import type { AnyBlockType, BlockServices, BlockType, Clock } from '../../src/blocks/types.js';
import type { Bus, BusMsg, SubscribeOptions } from '../../src/bus/types.js';
import { TroupeError } from '../../src/errors.js';
import { DEFAULT_LIMITS, type ExecutionLimits } from '../../src/model/limits.js';
import { systemClock } from '../../src/runtime/clock.js';
import { Engine } from '../../src/engine/engine.js';
import type { ExecutionEvent, ExecutionResult, SecretSource } from '../../src/runtime/types.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { FakeClock } from './fake-clock.js';
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

/** Waits `ms` on the engine's clock, then outputs `value` (default: its own name); honours cancellation. */
const sleepBlock: BlockType<{ ms: number | string; value?: unknown }> = {
  type: 'sleep',
  configSchema: z.object({ ms: z.union([z.number().int().min(0), z.string()]), value: z.unknown().optional() }),
  handles: () => ['success', 'error'],
  run: (ctx) =>
    track(ctx.block.name, async () => {
      await ctx.services.clock.sleep(Number(ctx.config.ms), ctx.signal);
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
        await ctx.services.clock.sleep(ctx.config.gapMs ?? 1, ctx.signal);
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
  /** the engine's clock (default the system clock); a FakeClock also hears of the sandbox's real work */
  clock?: Clock;
  /** a wait falling due further away parks the execution (TROUPE_SYNC_WAIT_MS); absent: never parks */
  parkAfterMs?: number;
}

/** The store's calls take real time (its writer thread): a simulated clock waits for them too. */
function executionsFor(clock: Clock, repo: ExecutionRepo): ExecutionRepo {
  if (!(clock instanceof FakeClock)) return repo;
  return new Proxy(repo, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const out: unknown = value.apply(target, args);
        return out instanceof Promise ? clock.hold(out) : out;
      };
    },
  });
}

/** The sandbox's calls take real time on its thread: a simulated clock must wait for them, not jump past them. */
function sandboxFor(clock: Clock): Sandbox {
  const sandbox = sharedSandbox();
  if (!(clock instanceof FakeClock)) return sandbox;
  return {
    runFunction: (code, bindings, limits) => clock.hold(sandbox.runFunction(code, bindings, limits)),
    evaluate: (expression, bindings, limits) => clock.hold(sandbox.evaluate(expression, bindings, limits)),
    dispose: () => sandbox.dispose(),
  };
}

export function testEngine(bus: Bus, opts: TestEngineOptions = {}): Engine {
  const secrets: SecretSource = { get: async (name) => opts.secrets?.[name] };
  return new Engine({
    bus,
    blockTypes: testBlockTypes,
    services: {
      sandbox: sandboxFor(opts.clock ?? systemClock),
      clock: opts.clock ?? systemClock,
      functionTimeoutMs: opts.functionTimeoutMs ?? 2000,
      functionMemoryMb: opts.functionMemoryMb ?? 32,
      ...(opts.models ? { models: opts.models } : {}),
      ...(opts.memory ? { memory: opts.memory } : {}),
    },
    secrets,
    ...(opts.executions ? { executions: executionsFor(opts.clock ?? systemClock, opts.executions) } : {}),
    busPrefix: 'troupetest',
    ...(opts.redact ? { redact: opts.redact } : {}),
    executionTimeoutMs: opts.executionTimeoutMs ?? 20_000,
    ...(opts.limits ? { limits: { ...DEFAULT_LIMITS, ...opts.limits } } : {}),
    ...(opts.parkAfterMs === undefined ? {} : { parkAfterMs: opts.parkAfterMs }),
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

/**
 * An engine on a simulated clock (fake-clock.ts). The clock lets the bus deliver before it moves
 * time, and counts the bus's messages so that it settles until a chain of them has run out.
 */
export function simulatedEngine(bus: Bus, opts: TestEngineOptions = {}): { engine: Engine; clock: FakeClock } {
  let messages = 0;
  const counted: Bus = {
    kind: bus.kind,
    get connected() {
      return bus.connected;
    },
    publish(subject, data, options) {
      messages += 1;
      bus.publish(subject, data, options);
    },
    subscribe<T>(subject: string, handler: (msg: BusMsg<T>) => void, options?: SubscribeOptions) {
      return bus.subscribe<T>(subject, (msg) => {
        messages += 1;
        handler(msg);
      }, options);
    },
    request: (subject, data, options) => bus.request(subject, data, options),
    reply: (msg, data, options) => bus.reply(msg, data, options),
    publishDurable: (subject, data, options) => bus.publishDurable(subject, data, options),
    flush: () => bus.flush(),
    close: () => bus.close(),
  };
  // a closed bus has nothing left to deliver
  const clock = new FakeClock({ idle: () => (bus.connected ? bus.flush() : Promise.resolve()), activity: () => messages });
  return { engine: testEngine(counted, { ...opts, clock }), clock };
}

/** runWorkflow on a simulated clock: every wait, time limit and backoff passes without real time. */
export async function runSimulated(bus: Bus, doc: unknown, input: unknown = {}, opts: TestEngineOptions & { timeoutMs?: number } = {}): Promise<RunOutcome & { clock: FakeClock }> {
  const { engine, clock } = simulatedEngine(bus, opts);
  const outcome = await clock.runUntil(runWorkflow(engine, doc, input, opts.timeoutMs));
  return { ...outcome, clock };
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
