/**
 * Execute-endpoint throughput of the real service (createApp, SQLite in a temp dir, in-process
 * bus) as a ratio to a bare Koa route served by the same process in the same run (issue 4
 * target ≥ 0.5), and the p99 latency of execute. Loopback only; 20 keep-alive connections; the
 * two loads alternate over several rounds and the medians are reported.
 * Shared by bench/http.bench.ts and the main benchmark.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Koa from 'koa';
import { pino } from 'pino';
import { loadConfig } from '../../config/load.js';
import { AdminClient } from '../../src/server/admin-client.js';
import { generateSecret } from '../../src/server/secrets-at-rest.js';
import { startService } from '../../src/compose.js';

export interface ExecuteThroughput {
  /** requests/s of `ctx.body = { ok: true }` on a bare Koa app */
  koaBareRps: number;
  /** requests/s of sync execute of a start → response workflow */
  executeRps: number;
  ratio: number;
  /** 99th percentile latency of one execute request under that load, ms */
  p99Ms: number;
  /** where the time goes, per request: the bare route's and execute's */
  koaCost: RequestCost;
  executeCost: RequestCost;
}

/** Per request, over a whole load run (load generator included, as it shares the process). */
export interface RequestCost {
  /** time the main thread's event loop was busy, µs */
  mainThreadUs: number;
  /** CPU time of the whole process (every thread, user + system), µs */
  processCpuUs: number;
}

export interface ProbeOptions {
  connections?: number;
  /** requests per load run */
  requests?: number;
  warmup?: number;
  /**
   * load runs of each kind, interleaved (bare, execute, bare, execute, ...): the figures are the
   * medians over the rounds, each ratio taken within its round, so a slow spell of this shared
   * machine weighs on one round rather than on one side of the comparison
   */
  rounds?: number;
}

const WORKFLOW = {
  id: 'bench-echo',
  name: 'Bench echo',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { ok: true, got: '<start.input>' } } },
  ],
  connections: [{ from: 'start', to: 'reply' }],
};

export interface Target {
  port: number;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** A service of its own on a free port, silent, with the per-key and in-flight limits out of the load's way. */
export function benchServiceConfig(dir: string): ReturnType<typeof loadConfig> {
  return loadConfig({
    TROUPE_DATA_DIR: dir,
    TROUPE_PORT: '0',
    TROUPE_LOG_LEVEL: 'silent',
    TROUPE_ADMIN_TOKEN: generateSecret(),
    TROUPE_KEY_RATE_LIMIT: String(1_000_000_000),
    TROUPE_MAX_INFLIGHT: String(100_000),
  });
}

export async function measureExecuteThroughput(opts: ProbeOptions = {}): Promise<ExecuteThroughput> {
  const connections = opts.connections ?? 20;
  const requests = opts.requests ?? 2000;
  const rounds = opts.rounds ?? 3;
  const warmup = opts.warmup ?? 500;
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-http-'));
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const config = benchServiceConfig(dir);
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  const bare = await startBareKoa();
  try {
    const deployed = await new AdminClient(service.url, service.secrets.adminToken.value).deployDocument(WORKFLOW);
    const execute: Target = {
      port: service.port,
      path: new URL(deployed.endpoint).pathname,
      headers: { 'X-API-Key': deployed.apiKey.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ input: { customer: 'ada', amount: 250 } }),
    };
    const koa: Target = { port: bare.port, path: '/ok', headers: { 'Content-Type': 'application/json' }, body: execute.body };
    await load(agent, koa, connections, warmup);
    await load(agent, execute, connections, warmup);
    const koaRuns: LoadRun[] = [];
    const execRuns: LoadRun[] = [];
    for (let i = 0; i < rounds; i++) {
      koaRuns.push(await load(agent, koa, connections, requests));
      execRuns.push(await load(agent, execute, connections, requests));
    }
    return {
      koaBareRps: median(koaRuns.map((r) => r.rps)),
      executeRps: median(execRuns.map((r) => r.rps)),
      ratio: median(execRuns.map((r, i) => r.rps / (koaRuns[i]?.rps ?? r.rps))),
      p99Ms: median(execRuns.map((r) => percentile(r.latenciesMs, 0.99))),
      koaCost: medianCost(koaRuns),
      executeCost: medianCost(execRuns),
    };
  } finally {
    agent.destroy();
    await bare.close();
    await service.stop('benchmark done');
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startBareKoa(): Promise<{ port: number; close(): Promise<void> }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.body = { ok: true };
  });
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface LoadRun {
  rps: number;
  latenciesMs: number[];
  cost: RequestCost;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

function medianCost(runs: LoadRun[]): RequestCost {
  return { mainThreadUs: median(runs.map((r) => r.cost.mainThreadUs)), processCpuUs: median(runs.map((r) => r.cost.processCpuUs)) };
}

/** `total` POSTs spread over `connections` workers that each send the next one when theirs answers. */
export async function load(agent: http.Agent, target: Target, connections: number, total: number): Promise<LoadRun> {
  let issued = 0;
  const latenciesMs: number[] = [];
  const worker = async (): Promise<void> => {
    while (issued < total) {
      issued++;
      const t0 = process.hrtime.bigint();
      const status = await post(agent, target);
      latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (status !== 200) throw new Error(`${target.path} answered ${status}`);
    }
  };
  const started = process.hrtime.bigint();
  const loop0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: connections }, worker));
  const cpu = process.cpuUsage(cpu0);
  const loop = performance.eventLoopUtilization(loop0);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cost = { mainThreadUs: (loop.active * 1000) / total, processCpuUs: (cpu.user + cpu.system) / total };
  return { rps: total / seconds, latenciesMs, cost };
}

function post(agent: http.Agent, target: Target): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: target.port, path: target.path, method: 'POST', agent, headers: { ...target.headers, 'Content-Length': Buffer.byteLength(target.body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(target.body);
  });
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0;
}
