/**
 * `make bench-peers`: S1, S2, S3f and S4 on Node-RED and on `troupe serve` (embedded defaults,
 * and NATS) in one run, printed as req/s, p99, peak RSS and the ratio to Node-RED per scenario.
 * Node-RED is installed from the npm registry into a temporary folder (kept there for the next
 * run, never in the project). Loopback only; every load is bounded in time. Troupe records every
 * execution (its defaults); Node-RED keeps nothing.
 *
 * Settings (env): WARMUP (s, default 3), DURATION (s, default 10), CONNECTIONS (default 20),
 * BENCH_PEERS_DIR (default $TMPDIR/troupe-bench-peers), NODERED_VERSION (default 4.1.15).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpstream } from '../lib/stored-probe.js';
import { SCENARIOS, type ScenarioKey } from '../lib/scenarios.js';
import { startNodeRed, startTroupe, type Engine } from './engines.js';
import { load, send, type LoadResult } from './load.js';
import { installNodeRed, NODERED_VERSION } from './nodered.js';
import { runMain } from '../lib/run-main.js';

const num = (name: string, fallback: number): number => {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
};
const WARMUP = num('WARMUP', 3);
const DURATION = num('DURATION', 10);
const CONNECTIONS = num('CONNECTIONS', 20);
const ROOT = process.env['BENCH_PEERS_DIR'] ?? join(tmpdir(), 'troupe-bench-peers');

/** What a correct answer holds, per scenario (checked once before the load). */
const EXPECT: Record<ScenarioKey, RegExp> = {
  s1: /"msg":"hello"/,
  s2: /"ok":true/,
  s3f: /"f10":10/,
  s4: /"b8":42/,
};

type Row = Partial<Record<string, LoadResult>>;

async function measureEngine(engine: Engine, rows: Record<ScenarioKey, Row>): Promise<void> {
  const agent = new http.Agent({ keepAlive: true });
  for (const key of SCENARIOS) {
    const target = engine.targets[key];
    const check = await send(agent, target);
    if (check.status !== 200 || !EXPECT[key].test(check.body)) {
      throw new Error(`${engine.name} ${key}: unexpected answer ${check.status} ${check.body.slice(0, 300)}`);
    }
    await load(target, CONNECTIONS, WARMUP, engine.pids);
    const r = await load(target, CONNECTIONS, DURATION, engine.pids);
    rows[key][engine.name] = r;
    console.log(`  ${engine.name.padEnd(16)} ${key.padEnd(4)} ${r.rps.toFixed(0).padStart(6)} req/s  p99 ${r.p99Ms.toFixed(1).padStart(6)} ms  peak RSS ${r.peakRssMiB.toFixed(0).padStart(4)} MiB  errors ${r.errors}  CPU ${r.engineCpu.toFixed(0)} %, other ${r.otherCpu.toFixed(0)} %`);
  }
  agent.destroy();
}

function report(rows: Record<ScenarioKey, Row>, engines: readonly string[]): void {
  const [peer, ...troupes] = engines as [string, ...string[]];
  console.log(`\n## Troupe ÷ Node-RED ${NODERED_VERSION} (${CONNECTIONS} connections, ${DURATION} s per scenario, loader in the same 2 cores)\n`);
  const head = ['scenario', ...engines.map((e) => `${e} req/s (p99 ms, peak RSS MiB)`), ...troupes.map((t) => `${t} ÷ Node-RED`)];
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  let disturbed = 0;
  for (const key of SCENARIOS) {
    const cell = (e: string): string => {
      const r = rows[key][e];
      return r === undefined ? '—' : `${r.rps.toFixed(0)} (${r.p99Ms.toFixed(1)}, ${r.peakRssMiB.toFixed(0)})${r.errors > 0 ? ` ${r.errors} errors` : ''}`;
    };
    const base = rows[key][peer]?.rps;
    const ratios = troupes.map((t) => {
      const r = rows[key][t]?.rps;
      return base === undefined || r === undefined ? '—' : `${(r / base).toFixed(2)}×`;
    });
    console.log(`| ${[key.toUpperCase(), ...engines.map(cell), ...ratios].join(' | ')} |`);
    for (const e of engines) if ((rows[key][e]?.otherCpu ?? 0) > 10) disturbed += 1;
  }
  if (disturbed > 0) console.log(`\n${disturbed} load(s) ran while other processes used more than 10 % of a core: those figures are suspect, rerun on a quiet machine.`);
}

async function main(): Promise<void> {
  const red = installNodeRed(ROOT);
  const runDir = mkdtempSync(join(tmpdir(), 'troupe-bench-peers-run-'));
  const upstream = await startUpstream();
  const rows: Record<ScenarioKey, Row> = { s1: {}, s2: {}, s3f: {}, s4: {} };
  const starters: [string, () => Promise<Engine>][] = [
    ['Node-RED', () => startNodeRed(red, runDir, upstream.port)],
    ['Troupe embedded', () => startTroupe('Troupe embedded', runDir, upstream.port, false)],
    ['Troupe NATS', () => startTroupe('Troupe NATS', runDir, upstream.port, true)],
  ];
  try {
    for (const [name, start] of starters) {
      console.log(`\n${name}:`);
      const engine = await start();
      try {
        await measureEngine(engine, rows);
      } finally {
        await engine.stop();
      }
    }
    report(rows, starters.map(([name]) => name));
  } finally {
    await upstream.close();
    rmSync(runDir, { recursive: true, force: true });
  }
}

runMain(main);
