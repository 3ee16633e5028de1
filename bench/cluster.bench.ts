/**
 * Several instances of one service (SPEC §9, issue 25), part of `make bench`, or alone:
 *   npx tsx bench/cluster.bench.ts
 * A nats-server (JetStream) and a PostgreSQL database of its own (created, then dropped), and
 * `troupe serve` instances of the compiled build (bin/troupe.js) on free loopback ports.
 *
 * 1. Throughput: sync executes (start → function → API block to a local upstream → response,
 *    answered when the run ends) spread round-robin over 1, 2 and 3 instances, printed as req/s,
 *    p99 and the ratio to one instance. Instances are added to one cluster (one database).
 * 2. Takeover: executions held in an API call on one instance, which is SIGKILLed; the time
 *    until another instance runs them again, against the 15 s target (bench/lib/cluster-takeover.ts).
 *
 * Settings (env): CLUSTER_WARMUP (s, default 2), CLUSTER_DURATION (s, default 8),
 * CLUSTER_CONNECTIONS (default 20), CLUSTER_TAKEOVER_EXECUTIONS (per round, default 5).
 */
import { cpus } from 'node:os';
import { DEFAULT_LEASE_TIMING } from '../src/model/lease.js';
import type { Target } from './peers/load.js';
import type { ServeProcess } from '../test/cli/serve-helpers.js';
import { deploy, startTestCluster, type TestCluster } from '../test/cluster/support.js';
import { loadAverage, pidsMatching, spreadLoad, type SpreadResult } from './lib/cluster-load.js';
import { takeoverRound, type TakeoverRound } from './lib/cluster-takeover.js';
import { throughputWorkflow } from './lib/cluster-upstream.js';
import { holdWorkflow, startHoldingUpstream, type HoldingUpstream } from '../test/cluster/holding-upstream.js';
import { runMain } from './lib/run-main.js';

const num = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const WARMUP = num('CLUSTER_WARMUP', 2);
const DURATION = num('CLUSTER_DURATION', 8);
const CONNECTIONS = num('CLUSTER_CONNECTIONS', 20);
const HELD = num('CLUSTER_TAKEOVER_EXECUTIONS', 5);
const TAKEOVER_TARGET_MS = 15_000;

/** the limits a load would hit otherwise (per key, in flight, per upstream host) */
const UNTHROTTLED = { TROUPE_KEY_RATE_LIMIT: '100000000', TROUPE_MAX_INFLIGHT: '100000', TROUPE_HOST_RPS: '100000000' };

type Instance = ServeProcess & { name: string };

const f1 = (n: number): string => n.toFixed(1);
const s1 = (ms: number): string => (ms / 1000).toFixed(1);
const line = (label: string, value: string, note = ''): void => console.log(`${label.padEnd(58)} ${value.padStart(12)}  ${note}`);

async function addInstance(cluster: TestCluster, instances: Instance[]): Promise<void> {
  const name = `bench-${instances.length + 1}`;
  instances.push({ name, ...(await cluster.serve(name, UNTHROTTLED)) });
}

/** One answer from each instance, checked: the workflow runs there before it is loaded. */
async function checkAnswers(targets: readonly Target[]): Promise<void> {
  for (const t of targets) {
    const res = await fetch(t.url, { method: 'POST', headers: t.headers, body: t.body });
    const body = await res.text();
    if (res.status !== 200 || !body.includes('"square":49')) throw new Error(`${t.url}: unexpected answer ${res.status} ${body.slice(0, 300)}`);
  }
}

async function throughput(cluster: TestCluster, instances: Instance[], upstream: HoldingUpstream): Promise<SpreadResult[]> {
  const natsPort = new URL(cluster.nats.url).port;
  // PostgreSQL's processes are the whole server's (other databases on it count too), NATS's is ours
  const services = (): number[] => pidsMatching((cmd) => cmd.startsWith('postgres: ') || cmd.includes('/bin/postgres\0')
    || (cmd.includes('nats-server') && cmd.includes(`\0-p\0${natsPort}\0`)));
  await addInstance(cluster, instances);
  const apiKey = await deploy((instances[0] as Instance).url, throughputWorkflow(upstream.port));
  const rows: SpreadResult[] = [];
  for (let count = 1; count <= 3; count++) {
    while (instances.length < count) await addInstance(cluster, instances);
    const targets = instances.map((i): Target => ({
      url: `${i.url}/api/workflows/bench-cluster/execute`,
      headers: { 'Content-Type': 'application/json', 'X-API-Key': apiKey },
      body: JSON.stringify({ input: { n: 7 } }),
    }));
    await checkAnswers(targets);
    const pids = instances.map((i) => i.child.pid ?? 0);
    await spreadLoad(targets, CONNECTIONS, WARMUP, pids, services);
    const r = await spreadLoad(targets, CONNECTIONS, DURATION, pids, services);
    rows.push(r);
    const base = rows[0] as SpreadResult;
    line(`${count} instance${count > 1 ? 's' : ''}${count === 1 ? ' (baseline)' : ''}`, `${f1(r.rps)} req/s`,
      `= ${(r.rps / base.rps).toFixed(2)}× one instance; p50 ${f1(r.p50Ms)} ms, p99 ${f1(r.p99Ms)} ms; ${r.errors} errors`);
    line('', '', `CPU (100 % = one core): instances ${r.instancesCpu.toFixed(0)} %, load generator ${r.loaderCpu.toFixed(0)} %, `
      + `PostgreSQL + NATS ${r.servicesCpu.toFixed(0)} %, anything else ${r.otherCpu.toFixed(0)} %; load avg ${r.loadAvg.toFixed(2)}`);
  }
  return rows;
}

async function takeover(instances: Instance[], upstream: HoldingUpstream): Promise<TakeoverRound[]> {
  const apiKey = await deploy((instances[0] as Instance).url, holdWorkflow(upstream.port));
  const rounds: TakeoverRound[] = [];
  // each round kills the first instance left; the last one stays to take the second round over
  for (let round = 0; instances.length > 1; round++) {
    const [victim, ...survivors] = instances as [Instance, ...Instance[]];
    const inputs = Array.from({ length: HELD }, (_, i) => (round + 1) * 1000 + i);
    const r = await takeoverRound({ victim, survivors, upstream, apiKey, workflowId: 'bench-takeover', inputs, completedBefore: round * HELD });
    instances.shift();
    rounds.push(r);
    const sorted = [...r.takeoverMs].sort((a, b) => a - b);
    const worst = sorted.at(-1) ?? 0;
    line(`SIGKILL ${r.victim} holding ${r.executions}: taken over after`, `${s1(sorted[0] ?? 0)}–${s1(worst)} s`,
      `${worst <= TAKEOVER_TARGET_MS ? 'within' : 'ABOVE'} the 15 s target; all completed ${s1(r.completedMs)} s after the kill; by ${Object.entries(r.takenBy).map(([n, c]) => `${n} ${c}`).join(', ')}`);
  }
  return rounds;
}

export async function clusterBench(): Promise<void> {
  const { renewMs, expireMs } = DEFAULT_LEASE_TIMING;
  console.log(`\n## several instances (PostgreSQL + NATS; sync execute of start → function → API block → response, ${CONNECTIONS} connections round-robin, ${DURATION} s each)`);
  console.log(`   ${cpus().length} cores for the instances, the load generator, PostgreSQL and NATS together (load avg ${loadAverage().toFixed(2)} at the start):`);
  console.log('   the ratio says how the instances share one machine, little about instances on machines of their own');
  const cluster = await startTestCluster();
  const upstream = await startHoldingUpstream();
  const instances: Instance[] = [];
  try {
    await throughput(cluster, instances, upstream);
    console.log(`   takeover: lease renewed every ${s1(renewMs)} s, expired after ${s1(expireMs)} s, swept for by every instance every ${s1(renewMs)} s (src/model/lease.ts)`);
    await takeover(instances, upstream);
  } finally {
    await upstream.close();
    await cluster.close();
  }
}

if (process.argv[1]?.endsWith('cluster.bench.ts') === true) {
  runMain(clusterBench);
}
