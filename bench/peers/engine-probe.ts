/**
 * Profiling aid for the S1 gap (not part of `make bench` or `make bench-peers`): one S1 execute's
 * engine path in process, without HTTP or store writes, so that a change of the execution
 * machine or the engine shows in CPU and allocation per execution without the socket, the
 * writer thread and the load generator around it. The ExecutionService starts executions on a
 * TrackedEngine whose persister's store takes every batch at once; INFLIGHT at a time (20), in
 * ROUNDS rounds (5) of N (10,000) after a round of warm-up; it prints CPU µs per execution (the
 * process's, min and median of the rounds: on a loaded machine the min is the steadier figure)
 * and the bytes allocated per execution (sampling heap profiler, collected objects included).
 *
 * It loads the compiled build of PROFILE_ROOT (default: this checkout), so two builds compare
 * by alternating them: `PROFILE_ROOT=/tmp/before npx tsx bench/peers/engine-probe.ts`, then
 * without PROFILE_ROOT, and again. TOP=30 also lists the 30 biggest allocation sites.
 */
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runMain } from '../lib/run-main.js';

const ROOT = process.env['PROFILE_ROOT'] ?? new URL('../../', import.meta.url).pathname;
const num = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
// the other build's modules: their types are this checkout's at best, so they are read loosely
const load = async (path: string): Promise<any> => import(pathToFileURL(join(ROOT, 'dist', path)).href);

interface Profile {
  head: ProfileNode;
}
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const S1 = {
  id: 's1', name: 's1', connections: [{ from: 'start', to: 'respond' }],
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'respond', type: 'response', name: 'Respond', config: { status: 200, data: '<start.input>' } },
  ],
};

async function main(): Promise<void> {
  const { blockTypeRegistry, blockTypes } = await load('src/blocks/index.js');
  const { MemoryBus } = await load('src/bus/memory.js');
  const { systemClock } = await load('src/runtime/clock.js');
  const { TrackedEngine } = await load('src/server/tracked-engine.js');
  const { ExecutionService } = await load('src/service/executions.js');
  const { loadWorkflow } = await load('src/runtime/workflows.js');
  const { default: pino } = await import('pino');
  const repo = { saveBoundaries: async (items: unknown[]) => items.map(() => null) };
  const engine = new TrackedEngine({
    bus: new MemoryBus(), blockTypes, secrets: { get: async () => undefined }, busPrefix: 'probe', executionTimeoutMs: 600_000, executions: repo,
    services: { sandbox: undefined, clock: systemClock, functionTimeoutMs: 5000, functionMemoryMb: 64 },
  });
  const service = new ExecutionService({
    store: {}, engine, logger: pino({ level: 'silent' }), maxInflight: 100_000, observer: { blockSettled: () => undefined, executionEnded: () => undefined },
  });
  const loaded = { compiled: loadWorkflow(S1, blockTypeRegistry(blockTypes)).compiled, workflowId: 's1', version: 1, starterConfig: {} };
  const inflight = num('INFLIGHT', 20);
  const n = num('N', 10_000);
  const batch = async (): Promise<void> => {
    let left = n;
    const worker = async (): Promise<void> => {
      while (left-- > 0) {
        const handle = await service.start(loaded, { n: 42, msg: 'hello' }, { type: 'api', keyId: 'k' }, { awaitRecord: false });
        const result = (await handle.done) as { status: string };
        if (result.status !== 'completed') throw new Error(`execution ${result.status}`);
      }
    };
    await Promise.all(Array.from({ length: inflight }, worker));
  };
  await batch();
  const cpu: number[] = [];
  for (let r = 0; r < num('ROUNDS', 5); r++) {
    const before = process.cpuUsage();
    await batch();
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / n);
  }
  cpu.sort((a, b) => a - b);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  await batch();
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: Profile };
  const sites = new Map<string, number>();
  let total = 0;
  const walk = (node: ProfileNode): void => {
    const f = node.callFrame;
    const site = `${f.functionName || '(anonymous)'} ${f.url.replace(/.*\/(node_modules\/)?/, '')}:${f.lineNumber + 1}`;
    total += node.selfSize;
    sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const median = cpu[Math.floor(cpu.length / 2)] ?? 0;
  console.log(`S1 engine path: CPU min ${(cpu[0] ?? 0).toFixed(1)}, median ${median.toFixed(1)} µs per execution; ~${(total / n / 1024).toFixed(1)} KB allocated per execution`);
  const top = num('TOP', 0);
  for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(bytes / n).toFixed(0).padStart(7)} B  ${site}`);
}

runMain(main);
