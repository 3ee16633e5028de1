/**
 * Execute-endpoint throughput (start → response, 20 keep-alive connections, sync mode) as a
 * ratio to a bare Koa route in the same process and run, and execute p99 latency:
 *   npx tsx bench/http.bench.ts
 */
import { measureExecuteThroughput } from './lib/http-probe.js';

async function main(): Promise<void> {
  const r = await measureExecuteThroughput();
  console.log(`http bare koa route               ${r.koaBareRps.toFixed(0).padStart(8)} req/s`);
  console.log(`http execute (start → response)   ${r.executeRps.toFixed(0).padStart(8)} req/s`);
  console.log(`http execute/koa ratio (≥0.5)     ${r.ratio.toFixed(2).padStart(8)}`);
  console.log(`http execute p99                  ${r.p99Ms.toFixed(1).padStart(8)} ms`);
  console.log(`http main thread per koa request  ${r.koaCost.mainThreadUs.toFixed(0).padStart(8)} µs  (process CPU ${r.koaCost.processCpuUs.toFixed(0)} µs)`);
  console.log(`http main thread per execute      ${r.executeCost.mainThreadUs.toFixed(0).padStart(8)} µs  (process CPU ${r.executeCost.processCpuUs.toFixed(0)} µs)`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
