/**
 * The load of `make bench-peers`: `connections` keep-alive connections, each sending its next
 * request when the previous answer is in, for a fixed time (bounded: it stops by itself), on
 * loopback only. Latencies are per request; the engine's peak RSS is sampled from /proc while
 * the load runs.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { performance } from 'node:perf_hooks';

export interface Target {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** answers that were not 2xx, and requests that failed */
  errors: number;
  peakRssMiB: number;
  /** CPU % (100 = one core) of the engine's processes, and of everything else on the machine but the loader: above ~10 % a neighbour was busy and the row is suspect */
  engineCpu: number;
  otherCpu: number;
}

/** jiffies per second in /proc (USER_HZ) */
export const TICKS_PER_S = 100;

/** busy jiffies of the whole machine (/proc/stat) */
export function machineBusy(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return fields.reduce((a, b) => a + b, 0) - idle;
}

/** user + system jiffies of a process (/proc/PID/stat), 0 once it is gone */
export function processTicks(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function cpuMeter(pids: readonly number[]): () => { engine: number; other: number } {
  const t0 = performance.now();
  const busy0 = machineBusy();
  const engine0 = pids.reduce((sum, pid) => sum + processTicks(pid), 0);
  const own0 = process.cpuUsage();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const engine = pids.reduce((sum, pid) => sum + processTicks(pid), 0) - engine0;
    const own = process.cpuUsage(own0);
    const ownTicks = ((own.user + own.system) / 1e6) * TICKS_PER_S;
    const other = machineBusy() - busy0 - engine - ownTicks;
    const pct = (ticks: number): number => (ticks / TICKS_PER_S / seconds) * 100;
    return { engine: pct(engine), other: Math.max(0, pct(other)) };
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

/** One request; resolves with the status and body. */
export function send(agent: http.Agent, target: Target): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(target.url, { method: 'POST', agent, headers: { ...target.headers, 'Content-Length': Buffer.byteLength(target.body) } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(target.body);
  });
}

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m?.[1] === undefined ? 0 : Number(m[1]) / 1024;
  } catch {
    return 0;
  }
}

/** Samples the summed RSS of `pids` every 250 ms until stopped; returns the peak. */
export function rssSampler(pids: readonly number[]): { stop(): number } {
  let peak = 0;
  const sample = (): void => {
    peak = Math.max(peak, pids.reduce((sum, pid) => sum + rssMiB(pid), 0));
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}

export async function load(target: Target, connections: number, seconds: number, pids: readonly number[]): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let errors = 0;
  const rss = rssSampler(pids);
  const cpu = cpuMeter(pids);
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  const worker = async (): Promise<void> => {
    while (performance.now() < until) {
      const start = performance.now();
      try {
        const res = await send(agent, target);
        if (res.status < 200 || res.status >= 300) errors += 1;
      } catch {
        errors += 1;
      }
      latencies.push(performance.now() - start);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  const used = cpu();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    engineCpu: used.engine,
    otherCpu: used.other,
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    errors,
    peakRssMiB: rss.stop(),
  };
}
