/**
 * Bytes the main thread allocates per execution of `make bench`'s memory-bus workflows, collected
 * garbage included (V8's sampling heap profiler, one sample per KiB): unlike wall or CPU time,
 * the figure does not move with what else the machine runs, so two builds compare in one run
 * each. The function blocks' own work runs in the sandbox's isolates and is not counted here.
 *   npx tsx bench/alloc.bench.ts [chain|ten|wide] [top]
 */
import { Session } from 'node:inspector/promises';
import { MemoryBus } from '../src/bus/memory.js';
import { IsolatedVmSandbox } from '../src/sandbox/isolated.js';
import { benchEngine, chainDoc, parallelDoc, runCompiled, tenBlockDoc } from './lib/runtime-probe.js';
import { runMain } from './lib/run-main.js';

interface ProfileNode {
  callFrame: { functionName: string; url: string };
  selfSize: number;
  children: ProfileNode[];
}

const SHAPES = {
  chain: { doc: chainDoc(100), runs: 50, inflight: 1, label: '100-block function chain' },
  ten: { doc: tenBlockDoc(), runs: 2000, inflight: 100, label: '10-block workflow, 100 in flight' },
  wide: { doc: parallelDoc(1000), runs: 5, inflight: 1, label: 'parallel of 1,000 function branches' },
} as const;

async function runAll(engine: ReturnType<typeof benchEngine>, doc: unknown, runs: number, inflight: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < runs) {
      next += 1;
      await runCompiled(engine, doc);
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
}

/** Self bytes by function (name and file), summed over the profile's tree. */
function bySite(head: ProfileNode): { total: number; sites: Map<string, number> } {
  const sites = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode): void => {
    total += node.selfSize;
    if (node.selfSize > 0) {
      const file = node.callFrame.url.replace(/^.*\/(node_modules\/[^/]+|src|actors|bench)\//, '$1/');
      const key = `${node.callFrame.functionName || '(anonymous)'} ${file}`;
      sites.set(key, (sites.get(key) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child);
  };
  walk(head);
  return { total, sites };
}

async function main(): Promise<void> {
  const which = (process.argv[2] ?? 'ten') as keyof typeof SHAPES;
  const shape = SHAPES[which];
  if (shape === undefined) throw new Error(`unknown shape ${which}: chain, ten or wide`);
  const top = Number(process.argv[3] ?? 15);
  const sandbox = new IsolatedVmSandbox();
  const bus = new MemoryBus();
  const engine = benchEngine(bus, sandbox);
  // twice before sampling: the JIT's first tiers allocate differently
  await runAll(engine, shape.doc, shape.runs, shape.inflight);
  await runAll(engine, shape.doc, shape.runs, shape.inflight);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await runAll(engine, shape.doc, shape.runs, shape.inflight);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: ProfileNode } };
  session.disconnect();
  const { total, sites } = bySite(profile.head);
  const kib = (bytes: number): string => (bytes / shape.runs / 1024).toFixed(1).padStart(10);
  console.log(`${shape.label}: ${kib(total).trim()} KiB allocated per execution (${shape.runs} executions)`);
  for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${kib(bytes)}  ${site}`);
  await bus.close();
  await sandbox.dispose();
}

runMain(main);
