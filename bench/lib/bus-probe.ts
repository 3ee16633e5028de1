/**
 * Latency probes for a Bus, shared by bench/bus.bench.ts and the main benchmark (which compares
 * per-block overhead with one request/reply round trip measured in the same run).
 * Each probe runs sequentially (one message in flight) after a warm-up and returns the p50 in µs.
 */
import type { Bus } from '../../src/bus/types.js';

let probes = 0;

function probeSubject(kind: string): string {
  return `bench.${kind}.${process.pid}x${++probes}`;
}

function percentile(samplesNs: bigint[], p: number): number {
  const sorted = samplesNs.map(Number).sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return (sorted[i] ?? 0) / 1000;
}

function warmupCount(n: number): number {
  return Math.min(500, Math.max(20, Math.floor(n / 5)));
}

/** p50 (µs) of request → responder → reply, one request at a time. */
export async function measureRequestReplyP50(bus: Bus, n: number): Promise<number> {
  const subject = probeSubject('rr');
  const sub = bus.subscribe<number>(subject, (msg) => bus.reply(msg, msg.data));
  try {
    await bus.flush();
    for (let i = 0; i < warmupCount(n); i++) await bus.request(subject, i);
    const samples: bigint[] = [];
    for (let i = 0; i < n; i++) {
      const t0 = process.hrtime.bigint();
      await bus.request(subject, i);
      samples.push(process.hrtime.bigint() - t0);
    }
    return percentile(samples, 50);
  } finally {
    sub.unsubscribe();
  }
}

/** p50 (µs) of publish → the subscriber's handler running, one message at a time. */
export async function measurePublishDeliverP50(bus: Bus, n: number): Promise<number> {
  const subject = probeSubject('ps');
  let arrived: (() => void) | undefined;
  const sub = bus.subscribe(subject, () => arrived?.());
  const once = (i: number): Promise<bigint> =>
    new Promise((resolve) => {
      const t0 = process.hrtime.bigint();
      arrived = () => resolve(process.hrtime.bigint() - t0);
      bus.publish(subject, { i });
    });
  try {
    await bus.flush();
    for (let i = 0; i < warmupCount(n); i++) await once(i);
    const samples: bigint[] = [];
    for (let i = 0; i < n; i++) samples.push(await once(i));
    return percentile(samples, 50);
  } finally {
    sub.unsubscribe();
  }
}

/** Messages per second when `n` messages are published back to back to one subscriber. */
export async function measurePublishThroughput(bus: Bus, n: number): Promise<number> {
  const subject = probeSubject('tp');
  let received = 0;
  let done: (() => void) | undefined;
  const sub = bus.subscribe(subject, () => {
    if (++received === n) done?.();
  });
  try {
    await bus.flush();
    const all = new Promise<void>((resolve) => (done = resolve));
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) bus.publish(subject, { i });
    await all;
    return n / (Number(process.hrtime.bigint() - t0) / 1e9);
  } finally {
    sub.unsubscribe();
  }
}
