/**
 * The load of the several-instances benchmark (bench/cluster.bench.ts): `connections`
 * keep-alive connections on loopback, each sending its next request when the previous answer is
 * in, the requests going round-robin over the instances, for a fixed time (bounded: it stops by
 * itself). Also what the machine did meanwhile: the instances' CPU and everyone else's, so a
 * row measured while a neighbour was busy can be told apart.
 */
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { machineBusy, percentile, processTicks, send, TICKS_PER_S, type Target } from '../peers/load.js';

export interface SpreadResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** answers that were not 2xx, and requests that failed */
  errors: number;
  /** CPU % (100 = one core) of the instances, of this process (the load generator), of PostgreSQL (the whole server) and the nats-server, and of everything else */
  instancesCpu: number;
  loaderCpu: number;
  servicesCpu: number;
  otherCpu: number;
  /** the 1-minute load average when the load ended */
  loadAvg: number;
}

/** Processes whose command line `matches` (the NUL-separated /proc/PID/cmdline): PostgreSQL's backends, the nats-server. */
export function pidsMatching(matches: (cmdline: string) => boolean): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (matches(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}

const sumTicks = (pids: readonly number[]): number => pids.reduce((s, pid) => s + processTicks(pid), 0);

/**
 * Starts counting; the returned function gives the CPU % since then of `pids`, of this process,
 * of `services()` (listed again at the end: PostgreSQL starts backends) and of the rest.
 */
function cpuMeter(pids: readonly number[], services: () => number[]): () => { instances: number; loader: number; services: number; other: number } {
  const t0 = performance.now();
  const busy0 = machineBusy();
  const inst0 = sumTicks(pids);
  const services0 = new Map(services().map((pid) => [pid, processTicks(pid)]));
  const own0 = process.cpuUsage();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const inst = sumTicks(pids) - inst0;
    const svc = services().reduce((s, pid) => s + processTicks(pid) - (services0.get(pid) ?? 0), 0);
    const own = process.cpuUsage(own0);
    const ownTicks = ((own.user + own.system) / 1e6) * TICKS_PER_S;
    const other = machineBusy() - busy0 - inst - svc - ownTicks;
    const pct = (ticks: number): number => (ticks / TICKS_PER_S / seconds) * 100;
    return { instances: pct(inst), loader: pct(ownTicks), services: pct(svc), other: Math.max(0, pct(other)) };
  };
}

/** The load, spread round-robin over `targets` (one per instance); `pids` are the instances', `services` lists PostgreSQL's and NATS's. */
export async function spreadLoad(targets: readonly Target[], connections: number, seconds: number, pids: readonly number[], services: () => number[]): Promise<SpreadResult> {
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: connections }));
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const cpu = cpuMeter(pids, services);
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < until) {
      const i = next++ % targets.length;
      const start = performance.now();
      try {
        const res = await send(agents[i] as http.Agent, targets[i] as Target);
        if (res.status < 200 || res.status >= 300) errors += 1;
      } catch {
        errors += 1;
      }
      latencies.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  for (const a of agents) a.destroy();
  const used = cpu();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    errors,
    instancesCpu: used.instances,
    loaderCpu: used.loader,
    servicesCpu: used.services,
    otherCpu: used.other,
    loadAvg: loadAverage(),
  };
}
