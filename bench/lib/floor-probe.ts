/**
 * How far the execute benchmark (issue 4: ≥ 0.5× a bare Koa route) can go on this machine under
 * DESIGN.md, measured beside the bare route in the same process and run, with the same load
 * generator (20 keep-alive connections, in-process, loopback). Three routes, each doing a little
 * more of what an execute must, and nothing else (no router, key check, validation, metrics,
 * events or logs):
 *
 * - body:    read and parse the JSON body, answer JSON (what any POST endpoint does);
 * - record:  + one SQLite row per execution committed before the answer (SPEC: nothing
 *            acknowledged is lost; the SIGKILL test of issue 4);
 * - actors:  + the start → response run as an XState machine spawning one actor per block
 *            (DESIGN: "every execution is an XState machine ... one block actor per block").
 *
 * `actors` is the ceiling for any execute built as DESIGN says: Troupe's execute does all of it
 * plus its real work. The 2-core bound is what that route's CPU per request would allow if it
 * were spread perfectly over both cores (no thread arrangement can do better).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { GroupCommit, runExecution, type FloorBlock } from './floor-parts.js';
import { load, median, startBareKoa, type LoadRun, type Target } from './http-probe.js';

export type FloorRoute = 'body' | 'record' | 'actors';
export const FLOOR_ROUTES: readonly FloorRoute[] = ['body', 'record', 'actors'];

export interface FloorFigure {
  /** requests/s of the route over requests/s of the bare route, median over the rounds */
  ratio: number;
  rps: number;
  /** per request: main thread busy, and the whole process's CPU, µs */
  mainThreadUs: number;
  processCpuUs: number;
  /** the ratio if this route's process CPU were spread perfectly over 2 cores */
  twoCoreBound: number;
}

export interface FloorResult {
  bareRps: number;
  routes: Record<FloorRoute, FloorFigure>;
}

const BLOCKS: readonly FloorBlock[] = [
  { id: 'start', next: 'reply', run: (input) => ({ input }) },
  { id: 'reply', next: null, run: (from) => ({ status: 200, headers: {}, data: { ok: true, got: (from as { input: unknown }).input } }) },
];

function readJson(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
    req.on('error', reject);
  });
}

let nextId = 0;

/** One route: the JSON body in, then as much of an execute as `route` says, then the answer. */
function floorApp(route: FloorRoute, commits: GroupCommit): Koa {
  const app = new Koa();
  app.use(async (ctx) => {
    const body = (await readJson(ctx.req)) as { input?: unknown };
    const id = `x${(nextId++).toString(36)}`;
    const startedAt = new Date().toISOString();
    let data: unknown = { ok: true, got: body.input };
    let logs: unknown[] = [];
    if (route === 'actors') {
      const run = await runExecution(BLOCKS, body.input);
      data = run.output?.['data'] ?? null;
      logs = run.logs;
    }
    if (route !== 'body') {
      const record = { id, status: 'completed', input: body.input, output: data, startedAt, endedAt: new Date().toISOString(), logs };
      await commits.add([id, 'bench', 'completed', startedAt, JSON.stringify(record)]);
    }
    ctx.set('X-Execution-Id', id);
    ctx.body = data;
  });
  return app;
}

async function listen(app: Koa): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { server, port: (server.address() as AddressInfo).port };
}

function figure(runs: LoadRun[], bare: LoadRun[]): FloorFigure {
  const cpu = median(runs.map((r) => r.cost.processCpuUs));
  const bareWallUs = 1e6 / median(bare.map((r) => r.rps));
  return {
    ratio: median(runs.map((r, i) => r.rps / (bare[i]?.rps ?? r.rps))),
    rps: median(runs.map((r) => r.rps)),
    mainThreadUs: median(runs.map((r) => r.cost.mainThreadUs)),
    processCpuUs: cpu,
    twoCoreBound: (2 * bareWallUs) / cpu,
  };
}

export async function measureFloor(opts: { requests?: number; rounds?: number; warmup?: number } = {}): Promise<FloorResult> {
  const requests = opts.requests ?? 2000;
  const rounds = opts.rounds ?? 3;
  const connections = 20;
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-floor-'));
  const commits = new GroupCommit(join(dir, 'floor.db'));
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const bare = await startBareKoa();
  const servers = await Promise.all(FLOOR_ROUTES.map((r) => listen(floorApp(r, commits))));
  const body = JSON.stringify({ input: { customer: 'ada', amount: 250 } });
  const headers = { 'Content-Type': 'application/json' };
  const targets: Target[] = [bare.port, ...servers.map((s) => s.port)].map((port) => ({ port, path: '/', headers, body }));
  try {
    const runs: LoadRun[][] = targets.map(() => []);
    for (const t of targets) await load(agent, t, connections, opts.warmup ?? 500);
    for (let i = 0; i < rounds; i++) {
      for (const [k, t] of targets.entries()) runs[k]?.push(await load(agent, t, connections, requests));
    }
    const [bareRuns = [], ...routeRuns] = runs;
    const routes = Object.fromEntries(FLOOR_ROUTES.map((r, k) => [r, figure(routeRuns[k] ?? [], bareRuns)])) as Record<FloorRoute, FloorFigure>;
    return { bareRps: median(bareRuns.map((r) => r.rps)), routes };
  } finally {
    agent.destroy();
    await bare.close();
    for (const { server } of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    await commits.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
