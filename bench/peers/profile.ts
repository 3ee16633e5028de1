/**
 * Profiling aid for the S1 gap (not part of `make bench-peers`): starts `troupe serve` from the
 * compiled build with extra node flags (PROFILE_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"),
 * deploys one scenario (SCENARIO, default s1), loads it for DURATION s with CONNECTIONS
 * connections on loopback, prints req/s, p99, peak RSS and CPU, then stops the server with
 * SIGTERM so that a CPU profile is written. Usage: npx tsx bench/peers/profile.ts
 */
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminClient } from '../../src/server/admin-client.js';
import { generateSecret } from '../../src/server/secrets-at-rest.js';
import { startUpstream } from '../lib/stored-probe.js';
import { scenarioWorkflows, type ScenarioKey } from '../lib/scenarios.js';
import { BODY } from './engines.js';
import { load, send, type Target } from './load.js';
import { runMain } from '../lib/run-main.js';
import { envNum, ROOT } from './build-under-test.js';

/** `n` requests over `connections` keep-alive connections (a fixed count, for instruction counts). */
async function counted(target: Target, connections: number, n: number): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let left = n;
  const worker = async (): Promise<void> => {
    while (left > 0) {
      left -= 1;
      const res = await send(agent, target);
      if (res.status !== 200) throw new Error(`status ${res.status}: ${res.body.slice(0, 200)}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  agent.destroy();
}


async function main(): Promise<void> {
  const key = (process.env['SCENARIO'] ?? 's1') as ScenarioKey;
  const dataDir = mkdtempSync(join(tmpdir(), 'troupe-profile-'));
  const upstream = await startUpstream();
  const token = generateSecret();
  const extra = (process.env['PROFILE_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  // PROFILE_CALLGRIND=1: under valgrind's callgrind, collecting only during the counted requests
  // (REQUESTS after WARMUP_REQUESTS). Slow: on the loaded 2-core machine of session 13 the
  // service took minutes to start under it, and no run finished there; untried on a quiet one.
  const callgrind = process.env['PROFILE_CALLGRIND'] === '1';
  const cmd = callgrind ? 'valgrind' : process.execPath;
  const cgArgs = ['--tool=callgrind', '--collect-atstart=no', `--callgrind-out-file=${process.env['CALLGRIND_OUT'] ?? '/tmp/callgrind.out'}`, process.execPath];
  const child = spawn(cmd, [...(callgrind ? cgArgs : []), ...extra, join(ROOT, 'bin/troupe.js'), 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'], HOME: process.env['HOME'], TROUPE_PORT: '0', TROUPE_DATA_DIR: dataDir, TROUPE_ADMIN_TOKEN: token,
      TROUPE_LOG_LEVEL: 'warn', TROUPE_ALLOW_PRIVATE_NETWORK: 'true', TROUPE_KEY_RATE_LIMIT: '100000000', TROUPE_MAX_INFLIGHT: '100000',
      TROUPE_HOST_RPS: '100000000', ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('TROUPE_') || k.startsWith('PROFILE_ENV_'))),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString();
      if (process.env['PROFILE_ECHO'] !== undefined) process.stderr.write(c);
      const m = /troupe listening on (http:\/\/\S+)/.exec(text);
      if (m?.[1] !== undefined) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${text}`)));
  });
  try {
    const deployed = await new AdminClient(url, token).deployDocument(scenarioWorkflows(upstream.port)[key]);
    const target = { url: deployed.endpoint, headers: { 'Content-Type': 'application/json', 'X-API-Key': deployed.apiKey.key }, body: JSON.stringify({ input: BODY }) };
    const connections = envNum('CONNECTIONS', 20);
    if (callgrind) {
      await counted(target, connections, envNum('WARMUP_REQUESTS', 300));
      execFileSync('callgrind_control', ['-i', 'on', String(child.pid)]);
      const n = envNum('REQUESTS', 300);
      const t0 = Date.now();
      await counted(target, connections, n);
      execFileSync('callgrind_control', ['-d', String(child.pid)]);
      execFileSync('callgrind_control', ['-i', 'off', String(child.pid)]);
      console.log(`${key} callgrind: ${n} requests in ${Date.now() - t0} ms`);
      return;
    }
    await load(target, connections, envNum('WARMUP', 3), [child.pid ?? 0]);
    const r = await load(target, connections, envNum('DURATION', 10), [child.pid ?? 0]);
    console.log(`${key} ${r.rps.toFixed(0)} req/s  p50 ${r.p50Ms.toFixed(1)} ms  p99 ${r.p99Ms.toFixed(1)} ms  peak RSS ${r.peakRssMiB.toFixed(0)} MiB  errors ${r.errors}  CPU ${r.engineCpu.toFixed(0)} %, other ${r.otherCpu.toFixed(0)} %`);
  } finally {
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
