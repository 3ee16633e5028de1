/**
 * Runtime benchmarks of issue 2 and 5: per-block overhead on a 100-block chain, fan-out of
 * 8 × 50 ms branches, executions/s with 100 in flight, and a 1,000-branch parallel.
 * "Overhead" is wall time minus the time spent inside the blocks' own run(), measured around
 * each call, so sandbox cost does not hide (or excuse) orchestration cost.
 */
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { blockTypeRegistry, blockTypes, functionBlock } from '../../src/blocks/index.js';
import type { AnyBlockType, BlockType } from '../../src/blocks/types.js';
import type { Bus } from '../../src/bus/types.js';
import { systemClock } from '../../src/runtime/clock.js';
import { Engine } from '../../src/engine/engine.js';
import type { CompiledWorkflow } from '../../src/model/graph.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import type { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';

let insideRunMs = 0;

const timedFunction: BlockType<any> = {
  ...functionBlock,
  async run(ctx) {
    const t0 = performance.now();
    try {
      return await functionBlock.run(ctx);
    } finally {
      insideRunMs += performance.now() - t0;
    }
  },
};

const waitBlock: BlockType<{ ms: number }> = {
  type: 'wait',
  configSchema: z.object({ ms: z.number() }),
  handles: () => ['success', 'error'],
  run: async (ctx) => {
    await systemClock.sleep(ctx.config.ms, ctx.signal);
    return { output: { waited: ctx.config.ms }, handles: ['success'] };
  },
};

/** Does nothing: a chain of these measures orchestration alone. */
const noopBlock: BlockType<Record<string, unknown>> = {
  type: 'noop',
  configSchema: z.object({}).passthrough(),
  handles: () => ['success'],
  run: async () => ({ output: { ok: true }, handles: ['success'] }),
};

const types: Record<string, AnyBlockType> = { ...blockTypes, function: timedFunction, wait: waitBlock, noop: noopBlock };
const registry = blockTypeRegistry(types);

export function benchEngine(bus: Bus, sandbox: IsolatedVmSandbox): Engine {
  return new Engine({
    bus,
    blockTypes: types,
    services: { sandbox, clock: systemClock, functionTimeoutMs: 5000, functionMemoryMb: 64 },
    secrets: { get: async () => undefined },
    busPrefix: 'bench',
    executionTimeoutMs: 600_000,
  });
}

function block(id: string, type: string, config: Record<string, unknown>, name = id): Record<string, unknown> {
  return { id, type, name, config };
}

export function chainDoc(n: number, type = 'function'): unknown {
  const blocks = [block('start', 'starter', {}, 'Start')];
  const connections = [];
  for (let i = 1; i <= n; i++) {
    blocks.push(block(`f${i}`, type, type === 'function' ? { code: 'return 1' } : {}));
    connections.push({ from: i === 1 ? 'start' : `f${i - 1}`, to: `f${i}` });
  }
  return { id: 'chain', name: 'chain', blocks, connections };
}

function fanoutDoc(branches: number, ms: number): unknown {
  const blocks = [block('start', 'starter', {}, 'Start'), block('join', 'wait', { ms: 0 })];
  const connections = [];
  for (let i = 0; i < branches; i++) {
    blocks.push(block(`w${i}`, 'wait', { ms }));
    connections.push({ from: 'start', to: `w${i}` }, { from: `w${i}`, to: 'join' });
  }
  return { id: 'fanout', name: 'fanout', blocks, connections };
}

/** starter → 3 functions in parallel → condition → 2 functions → join function → 2 more: 10 blocks. */
export function tenBlockDoc(): unknown {
  const fn = (id: string, code = 'return 1') => block(id, 'function', { code });
  return {
    id: 'ten',
    name: 'ten',
    blocks: [
      block('start', 'starter', {}, 'Start'), fn('a'), fn('b'), fn('c'),
      block('cond', 'condition', { branches: [{ id: 'yes', expression: 'true' }], else: true }),
      fn('d'), fn('e'), fn('j'), fn('k'), block('r', 'response', { status: 200, data: { ok: true } }),
    ],
    connections: [
      { from: 'start', to: 'a' }, { from: 'start', to: 'b' }, { from: 'start', to: 'c' },
      { from: 'a', to: 'cond' }, { from: 'b', to: 'cond' }, { from: 'c', to: 'cond' },
      { from: 'cond', handle: 'yes', to: 'd' }, { from: 'cond', handle: 'else', to: 'e' },
      { from: 'd', to: 'j' }, { from: 'e', to: 'j' }, { from: 'j', to: 'k' }, { from: 'k', to: 'r' },
    ],
  };
}

export function parallelDoc(branches: number): unknown {
  return {
    id: 'wide',
    name: 'wide',
    blocks: [
      block('start', 'starter', {}, 'Start'),
      block('par', 'parallel', { kind: 'count', count: branches, concurrency: branches }),
      { ...block('cell', 'function', { code: 'return <parallel.index>' }), parent: 'par' },
    ],
    connections: [{ from: 'start', to: 'par' }],
  };
}

/** Compiled once per document: compiling is not what these benchmarks measure. */
const compiledDocs = new WeakMap<object, CompiledWorkflow>();

function compiledOf(doc: unknown): CompiledWorkflow {
  let compiled = compiledDocs.get(doc as object);
  if (compiled === undefined) {
    compiled = loadWorkflow(doc, registry).compiled;
    compiledDocs.set(doc as object, compiled);
  }
  return compiled;
}

/** One execution of `doc` to its end; its wall time in ms. */
export async function runCompiled(engine: Engine, doc: unknown): Promise<number> {
  return runOnce(engine, doc);
}

async function runOnce(engine: Engine, doc: unknown): Promise<number> {
  const compiled = compiledOf(doc);
  const t0 = performance.now();
  const handle = await engine.start(compiled, { workflowId: 'bench', version: 1, input: {}, trigger: { type: 'manual' } });
  const result = await handle.done;
  if (result.status !== 'completed') throw new Error(`bench workflow ${String((doc as { id: string }).id)} ${result.status}: ${JSON.stringify(result.error)}`);
  return performance.now() - t0;
}

export interface ChainFigures {
  totalUsPerBlock: number;
  overheadUsPerBlock: number;
  sandboxUsPerBlock: number;
}

/** Median over `rounds` runs of the 100-block chain. */
export async function measureChain(engine: Engine, rounds = 7, n = 100, type = 'function'): Promise<ChainFigures> {
  const doc = chainDoc(n, type);
  // warm the JIT and the sandbox pool before measuring
  for (let i = 0; i < 15; i++) await runOnce(engine, doc);
  const samples: ChainFigures[] = [];
  for (let r = 0; r < rounds; r++) {
    insideRunMs = 0;
    const wall = await runOnce(engine, doc);
    samples.push({ totalUsPerBlock: (wall * 1000) / n, overheadUsPerBlock: ((wall - insideRunMs) * 1000) / n, sandboxUsPerBlock: (insideRunMs * 1000) / n });
  }
  samples.sort((a, b) => a.overheadUsPerBlock - b.overheadUsPerBlock);
  return samples[Math.floor(samples.length / 2)] as ChainFigures;
}

/** Wall time of 8 branches that each wait 50 ms, as a ratio to 50 ms (median of 5). */
export async function measureFanout(engine: Engine): Promise<number> {
  const doc = fanoutDoc(8, 50);
  await runOnce(engine, doc);
  const ratios: number[] = [];
  for (let i = 0; i < 5; i++) ratios.push((await runOnce(engine, doc)) / 50);
  ratios.sort((a, b) => a - b);
  return ratios[2] as number;
}

/** Executions per second of the 10-block workflow, 100 in flight, `total` executions. */
export async function measureThroughput(engine: Engine, total = 1000, inflight = 100): Promise<number> {
  const doc = tenBlockDoc();
  await runOnce(engine, doc);
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < total) {
      next += 1;
      await runOnce(engine, doc);
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  return (total * 1000) / (performance.now() - t0);
}

/** A 1,000-branch parallel of trivial function blocks: total ms and peak RSS growth (MiB). */
export async function measureWideParallel(engine: Engine, branches = 1000): Promise<{ ms: number; peakRssMiB: number; baseRssMiB: number }> {
  const doc = parallelDoc(branches);
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  try {
    const ms = await runOnce(engine, doc);
    peak = Math.max(peak, process.memoryUsage().rss);
    return { ms, peakRssMiB: (peak - base) / 2 ** 20, baseRssMiB: base / 2 ** 20 };
  } finally {
    clearInterval(sampler);
  }
}
