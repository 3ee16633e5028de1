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
import { runMain } from '../lib/run-main.js';
import { envNum, s1Engine } from './build-under-test.js';

interface Profile {
  head: ProfileNode;
}
interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}


async function main(): Promise<void> {
  const start = await s1Engine({ saveBoundaries: async (items: unknown[]) => items.map(() => null) });
  const inflight = envNum('INFLIGHT', 20);
  const n = envNum('N', 10_000);
  const batch = async (): Promise<void> => {
    let left = n;
    const worker = async (): Promise<void> => {
      while (left-- > 0) {
        const result = await (await start()).done;
        if (result.status !== 'completed') throw new Error(`execution ${result.status}`);
      }
    };
    await Promise.all(Array.from({ length: inflight }, worker));
  };
  await batch();
  const cpu: number[] = [];
  for (let r = 0; r < envNum('ROUNDS', 5); r++) {
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
  const top = envNum('TOP', 0);
  for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(bytes / n).toFixed(0).padStart(7)} B  ${site}`);
}

runMain(main);
