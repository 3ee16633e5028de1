/**
 * Memory held per waiting execution (target: 10,000 parked executions add < 50 MB of RSS):
 *   npx tsx bench/waiting.bench.ts
 */
import { measureWaitingMemory } from './lib/waiting-probe.js';
import { runMain } from './lib/run-main.js';

async function main(): Promise<void> {
  const r = await measureWaitingMemory();
  console.log(`waiting executions parked         ${String(r.parked).padStart(8)} of ${r.count}`);
  console.log(`RSS growth (target < 50 MB)       ${r.rssMiB.toFixed(1).padStart(8)} MiB`);
  console.log(`per waiting execution             ${(r.bytesPer / 1024).toFixed(2).padStart(8)} KiB`);
}

runMain(main);
