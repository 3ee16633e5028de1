/**
 * The sandbox's cost per call, and ten chained function blocks through the engine:
 *   npx tsx bench/sandbox.bench.ts [hostile|http]   (also part of `make bench`)
 * A call that names its workflow runs in that workflow's hardened realm; one that names none gets
 * a realm of its own, used once (what every call paid before realms were kept).
 */
import { performance } from 'node:perf_hooks';
import { MemoryBus } from '../src/bus/memory.js';
import { IsolatedVmSandbox } from '../src/sandbox/isolated.js';
import type { SandboxLimits } from '../src/sandbox/types.js';
import { measureChainOverHttp } from './lib/chain-http-probe.js';
import { benchEngine, chainDoc, runCompiled } from './lib/runtime-probe.js';
import { runMain } from './lib/run-main.js';

const f1 = (n: number): string => n.toFixed(1);
const line = (label: string, value: string, note = ''): void => console.log(`${label.padEnd(58)} ${value.padStart(14)}  ${note}`);

const CODE = 'const total = items.reduce((s, v) => s + v, 0);\nreturn { total, n: <start.n> };';
const BINDINGS = { items: [1, 2, 3], __ref0: 7 };
const SOURCE = CODE.replace('<start.n>', '__ref0');

async function perCall(sandbox: IsolatedVmSandbox, limits: SandboxLimits, calls: number, inflight: number): Promise<number> {
  for (let i = 0; i < 200; i++) await sandbox.runFunction(SOURCE, BINDINGS, limits);
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < calls) {
      next += 1;
      await sandbox.runFunction(SOURCE, BINDINGS, limits);
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  return ((performance.now() - t0) * 1000) / calls;
}

/** ten function blocks in a chain: executions per second with `inflight` at once */
async function chainThroughput(sandbox: IsolatedVmSandbox, total: number, inflight: number): Promise<number> {
  const engine = benchEngine(new MemoryBus(), sandbox);
  const doc = chainDoc(10);
  for (let i = 0; i < 50; i++) await runCompiled(engine, doc);
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < total) {
      next += 1;
      await runCompiled(engine, doc);
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
  return (total * 1000) / (performance.now() - t0);
}

const mib = (): number => process.memoryUsage().rss / 2 ** 20;

/**
 * Issue 21's hostile load on one sandbox: 200 calls of one workflow that sleep 2 s, and 32 of
 * another that leave a timer pending and compute until their 2 s limit; RSS before, at its peak
 * during, and once the pool has disposed its extra isolates; and a third workflow's trivial call
 * made in the middle of it.
 */
async function hostileLoad(): Promise<void> {
  const sandbox = new IsolatedVmSandbox({ idleMs: 1000 });
  const of = (workflowId: string): SandboxLimits => ({ timeoutMs: 2000, memoryMb: 64, caller: { workflowId } });
  try {
    await sandbox.runFunction('return 1', {}, of('warm'));
    const before = mib();
    let peak = before;
    let peakIsolates = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, mib());
      peakIsolates = Math.max(peakIsolates, sandbox.isolates);
    }, 20);
    const sleepers = Array.from({ length: 200 }, () => sandbox.runFunction('await new Promise((r) => setTimeout(r, 2000)); return 1;', {}, { ...of('chat'), timeoutMs: 60_000 }));
    const burners = Array.from({ length: 32 }, () => sandbox.runFunction('setTimeout(() => {}, 60000); const a = []; while (true) a.push({ n: a.length }); ', {}, of('burn')).catch(() => 'limit'));
    await new Promise((r) => setTimeout(r, 500));
    const t0 = performance.now();
    await sandbox.runFunction('return 1', {}, of('neighbour'));
    const neighbourMs = performance.now() - t0;
    await Promise.all([...sleepers, ...burners]);
    clearInterval(sampler);
    const ended = mib();
    await new Promise((r) => setTimeout(r, 2500));
    global.gc?.();
    console.log('\n## sandbox under the hostile load of issue 21 (200 sleeping calls, 32 computing with timers)');
    line('process RSS before', `${f1(before)} MiB`);
    line('process RSS peak during', `${f1(peak)} MiB`, `(peak isolates ${peakIsolates})`);
    line('process RSS when the load ended', `${f1(ended)} MiB`);
    line('process RSS 2.5 s later (extra isolates disposed)', `${f1(mib())} MiB`, `(isolates ${sandbox.isolates})`);
    line("a neighbour workflow's trivial call during the load", `${f1(neighbourMs)} ms`);
  } finally {
    await sandbox.dispose();
  }
}

/** S1 and S3f through the service over HTTP: S3f ÷ S1 against Node-RED's 0.60 */
async function overHttp(): Promise<void> {
  console.log('\n## ten chained function blocks over HTTP (S3f) beside start → response (S1), 20 connections');
  for (const round of await measureChainOverHttp()) {
    line('S1 / S3f', `${f1(round.s1Rps)} / ${f1(round.s3fRps)} req/s`, `S3f ÷ S1 = ${(round.s3fRps / round.s1Rps).toFixed(2)} (Node-RED 0.60)`);
  }
}

export async function sandboxBench(): Promise<void> {
  const sandbox = new IsolatedVmSandbox();
  try {
    const realm: SandboxLimits = { timeoutMs: 5000, memoryMb: 64, caller: { workflowId: 'bench', version: 1 } };
    const single: SandboxLimits = { timeoutMs: 5000, memoryMb: 64 };
    console.log('\n## sandbox');
    line('function call, sequential, a realm used once (baseline)', `${f1(await perCall(sandbox, single, 500, 1))} µs`);
    line('function call, sequential, the workflow\'s realm', `${f1(await perCall(sandbox, realm, 3000, 1))} µs`, 'target tens of µs');
    line('function call, 20 in flight, the workflow\'s realm', `${f1(await perCall(sandbox, realm, 5000, 20))} µs`, '(wall / calls)');
    line('ten chained function blocks, 1 in flight', `${f1(await chainThroughput(sandbox, 300, 1))} exec/s`);
    line('ten chained function blocks, 20 in flight', `${f1(await chainThroughput(sandbox, 2000, 20))} exec/s`);
  } finally {
    await sandbox.dispose();
  }
  await hostileLoad();
  await overHttp();
}

if (process.argv[1]?.endsWith('sandbox.bench.ts') === true) {
  // `hostile` alone: the RSS figures from a fresh process
  const only: Record<string, () => Promise<void>> = { hostile: hostileLoad, http: overHttp };
  runMain(only[process.argv[2] ?? ''] ?? sandboxBench);
}
