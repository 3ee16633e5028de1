/**
 * The ceiling of the execute benchmark under DESIGN.md on this machine (floor-probe.ts):
 *   npx tsx bench/floor.bench.ts
 */
import { FLOOR_ROUTES, measureFloor } from './lib/floor-probe.js';
import { runMain } from './lib/run-main.js';

const LABELS = {
  body: 'read JSON body, answer',
  record: '+ record committed before the answer',
  actors: '+ XState machine and block actors',
} as const;

async function main(): Promise<void> {
  const r = await measureFloor();
  console.log(`bare Koa route (baseline)                        ${r.bareRps.toFixed(0).padStart(8)} req/s`);
  for (const route of FLOOR_ROUTES) {
    const f = r.routes[route];
    console.log(`${LABELS[route].padEnd(48)} ${f.rps.toFixed(0).padStart(8)} req/s = ${f.ratio.toFixed(2)}×  (main ${f.mainThreadUs.toFixed(0)} µs, CPU ${f.processCpuUs.toFixed(0)} µs; 2-core bound ${f.twoCoreBound.toFixed(2)}×)`);
  }
}

runMain(main);
