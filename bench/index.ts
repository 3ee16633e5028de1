/**
 * `make bench`: every benchmark of the project in one run, each printed as a figure and as a
 * ratio to a baseline measured in the same run (machines are shared and noisy: compare ratios).
 * Loopback only; stops by itself.
 */
import { MemoryBus } from '../src/bus/memory.js';
import { NatsBus } from '../src/bus/nats.js';
import type { Bus } from '../src/bus/types.js';
import { IsolatedVmSandbox } from '../src/sandbox/isolated.js';
import { startNatsServer } from '../test/helpers/nats-server.js';
import { measureRequestReplyP50 } from './lib/bus-probe.js';
import type { StoredBytes } from './lib/stored-probe.js';
import { benchEngine, measureChain, measureFanout, measureThroughput, measureWideParallel } from './lib/runtime-probe.js';
import { runMain } from './lib/run-main.js';

const FLOOR_LABELS = [
  ['body', 'read the JSON body, answer'],
  ['record', '+ a record committed before the answer'],
  ['actors', '+ an XState machine with one actor per block'],
] as const;

const f1 = (n: number): string => n.toFixed(1);
const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const line = (label: string, value: string, note = ''): void => console.log(`${label.padEnd(58)} ${value.padStart(12)}  ${note}`);

async function runtimeOn(kind: 'memory' | 'nats', bus: Bus, sandbox: IsolatedVmSandbox): Promise<void> {
  const engine = benchEngine(bus, sandbox);
  // The round trip is sampled before, between and after the chains and their median taken: one
  // sample alone swings 2x from run to run (78-196 µs here), most often low just after connecting.
  const rtts: number[] = [];
  const sampleRtt = async (): Promise<void> => {
    if (kind === 'nats') rtts.push(await measureRequestReplyP50(bus, 2000));
  };
  await sampleRtt();
  const chain = await measureChain(engine);
  await sampleRtt();
  const noop = await measureChain(engine, 7, 100, 'noop');
  await sampleRtt();
  const rtt = kind === 'nats' ? median(rtts) : null;
  console.log(`\n## runtime on the ${kind} bus`);
  if (rtt !== null) line('NATS request/reply round trip p50 (baseline)', `${f1(rtt)} µs`, `(median of ${rtts.map(f1).join(', ')})`);
  line('100-block function chain: wall per block', `${f1(chain.totalUsPerBlock)} µs`, `(sandbox ${f1(chain.sandboxUsPerBlock)} µs/block inside run())`);
  const target = kind === 'memory' ? 'target ≤ 50 µs' : `= ${f1(chain.overheadUsPerBlock / (rtt ?? 1))}× RTT, target ≤ 1.5×`;
  line('100-block function chain: orchestration overhead per block', `${f1(chain.overheadUsPerBlock)} µs`, target);
  const noopTarget = kind === 'memory' ? 'target ≤ 50 µs' : `= ${f1(noop.overheadUsPerBlock / (rtt ?? 1))}× RTT`;
  line('100-block no-op chain: orchestration per block', `${f1(noop.overheadUsPerBlock)} µs`, noopTarget);
  line('8 parallel branches × 50 ms: wall / 50 ms', f1(await measureFanout(engine)), 'target ≤ 1.2');
  line('10-block workflow, 100 in flight', `${f1(await measureThroughput(engine))} exec/s`);
  const wide = await measureWideParallel(engine);
  line('parallel of 1,000 trivial function branches: total', `${f1(wide.ms)} ms`);
  line('parallel of 1,000 branches: peak RSS growth', `${f1(wide.peakRssMiB)} MiB`, `(process RSS before: ${f1(wide.baseRssMiB)} MiB)`);
}

async function optional(name: string, path: string, fn: (mod: any) => Promise<void>): Promise<void> {
  let mod: unknown;
  try {
    mod = await import(path);
  } catch (err) {
    console.log(`\n## ${name}: not available (${(err as Error).message.split('\n')[0]})`);
    return;
  }
  await fn(mod);
}

async function main(): Promise<void> {
  const sandbox = new IsolatedVmSandbox();
  const memory = new MemoryBus();
  await runtimeOn('memory', memory, sandbox);
  await memory.close();
  const server = await startNatsServer();
  const nats = await NatsBus.connect(server.url, { name: 'bench' });
  try {
    await runtimeOn('nats', nats, sandbox);
  } finally {
    await nats.close();
    await server.stop();
  }
  await sandbox.dispose();
  await optional('sandbox', './sandbox.bench.js', (m) => m.sandboxBench());
  await optional('API block', './lib/api-probe.js', async (m) => {
    const r = await m.measureApiOverhead();
    console.log('\n## API block (local upstream)');
    line('bare axios request (baseline)', `${f1(r.bareAxiosUs)} µs`);
    line('API block request', `${f1(r.apiBlockUs)} µs`, `= ${r.ratio.toFixed(2)}× bare axios, target ≤ 1.3×`);
    line('requests/s through the per-host throttle', `${f1(r.throttleRps)} req/s`, r.throttleLimit ? `(limit ${r.throttleLimit}/s)` : '');
  });
  await optional('execute endpoint', './lib/http-probe.js', async (m) => {
    const r = await m.measureExecuteThroughput();
    console.log('\n## execute endpoint (start → response, 20 connections)');
    line('bare Koa route in the same process (baseline)', `${f1(r.koaBareRps)} req/s`);
    line('POST /api/workflows/{id}/execute', `${f1(r.executeRps)} req/s`, `= ${r.ratio.toFixed(2)}× bare Koa, target ≥ 0.5`);
    line('execute p99 latency', `${f1(r.p99Ms)} ms`);
    // where the time goes (the load generator shares the process, so it is in both)
    line('main thread busy per bare Koa request', `${f1(r.koaCost.mainThreadUs)} µs`, `(process CPU ${f1(r.koaCost.processCpuUs)} µs)`);
    line('main thread busy per execute', `${f1(r.executeCost.mainThreadUs)} µs`, `(process CPU ${f1(r.executeCost.processCpuUs)} µs)`);
  });
  await optional('stored bytes per execution', './lib/stored-probe.js', async (m) => {
    const rows = (await m.measureStoredBytes()) as StoredBytes[];
    console.log('\n## stored bytes per execution (embedded SQLite, through the execute endpoint)');
    for (const r of rows) {
      const target = r.scenario === 's1' ? ', target ≤ 3 KB' : '';
      line(`${r.scenario}: payload (record + logs + events)`, `${f1(r.payloadBytesPerExecution / 1024)} KB`, `(events ${f1(r.eventBytesPerExecution / 1024)} KB${target})`);
      line(`${r.scenario}: SQLite file growth`, `${f1(r.fileBytesPerExecution / 1024)} KB`, `(over ${r.executions} executions)`);
    }
  });
  await optional('waiting executions', './lib/waiting-probe.js', async (m) => {
    const r = await m.measureWaitingMemory();
    console.log('\n## waiting executions (parked on a one-hour wait, SQLite store; docs/waiting.md)');
    line(`${r.count} parked executions: RSS growth`, `${f1(r.rssMiB)} MiB`, `target < 50 MB; ${r.parked} parked`);
    line('memory held per waiting execution', `${(r.bytesPer / 1024).toFixed(2)} KiB`);
  });
  await optional('execute ceiling under DESIGN', './lib/floor-probe.js', async (m) => {
    const r = await m.measureFloor();
    console.log('\n## what an execute built as DESIGN says can reach here, with none of its real work (floor-probe.ts)');
    line('bare Koa route in the same process (baseline)', `${f1(r.bareRps)} req/s`);
    for (const [route, label] of FLOOR_LABELS) {
      const f = r.routes[route];
      line(label, `${f1(f.rps)} req/s`, `= ${f.ratio.toFixed(2)}× bare Koa; main ${f1(f.mainThreadUs)} µs, CPU ${f1(f.processCpuUs)} µs; 2-core bound ${f.twoCoreBound.toFixed(2)}×`);
    }
  });
  // last: it starts instances, PostgreSQL databases and SIGKILLs (docs/benchmarks.md "Several instances")
  await optional('several instances', './cluster.bench.js', (m) => m.clusterBench());
}

runMain(main);
