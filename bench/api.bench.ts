/**
 * API block overhead per request against a local upstream, as a ratio to a bare axios call in
 * the same run, and requests/s through the per-host throttle:
 *   npx tsx bench/api.bench.ts
 */
import { measureApiOverhead } from './lib/api-probe.js';

async function main(): Promise<void> {
  const r = await measureApiOverhead();
  console.log(`api bare axios GET p50           ${r.bareAxiosUs.toFixed(1).padStart(8)} µs`);
  console.log(`api api-block GET p50            ${r.apiBlockUs.toFixed(1).padStart(8)} µs`);
  console.log(`api overhead ratio (target ≤1.3) ${r.ratio.toFixed(2).padStart(8)} ×`);
  console.log(`api throttled throughput         ${r.throttleRps.toFixed(1).padStart(8)} req/s (hostRps ${r.throttleLimit})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
