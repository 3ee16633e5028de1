/**
 * Bus latency on this machine, in-process and over a real nats-server started for the run:
 *   npx tsx bench/bus.bench.ts [iterations]
 * Prints one line per measurement.
 */
import { MemoryBus } from '../src/bus/memory.js';
import { NatsBus } from '../src/bus/nats.js';
import type { Bus } from '../src/bus/types.js';
import { startNatsServer } from '../test/helpers/nats-server.js';
import { measurePublishDeliverP50, measurePublishThroughput, measureRequestReplyP50 } from './lib/bus-probe.js';

const iterations = Number(process.argv[2] ?? 2000);

async function measure(label: string, bus: Bus): Promise<void> {
  const pubsub = await measurePublishDeliverP50(bus, iterations);
  console.log(`bus ${label.padEnd(6)} publish→deliver p50      ${pubsub.toFixed(1).padStart(8)} µs  (n=${iterations})`);
  const rr = await measureRequestReplyP50(bus, iterations);
  console.log(`bus ${label.padEnd(6)} request/reply p50        ${rr.toFixed(1).padStart(8)} µs  (n=${iterations})`);
  const rate = await measurePublishThroughput(bus, 100_000);
  console.log(`bus ${label.padEnd(6)} publish throughput       ${Math.round(rate).toString().padStart(8)} msg/s (n=100000)`);
}

async function main(): Promise<void> {
  const memory = new MemoryBus();
  try {
    await measure('memory', memory);
  } finally {
    await memory.close();
  }
  const server = await startNatsServer();
  try {
    const nats = await NatsBus.connect(server.url, { name: 'troupe-bench' });
    try {
      await measure('nats', nats);
    } finally {
      await nats.close();
    }
  } finally {
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
