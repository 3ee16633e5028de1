/**
 * API-block overhead against a local upstream, as a ratio to a bare axios call measured in the
 * same run (issue 3 target ≤ 1.3×), and requests/s through the per-host throttle.
 * Shared by bench/api.bench.ts and the main benchmark.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import axios from 'axios';
import { apiBlock, apiConfigSchema, type ApiConfig } from '../../src/blocks/api.js';
import type { BlockRunContext, HttpClientPort } from '../../src/blocks/types.js';
import { createOutboundClient } from '../../src/outbound/client.js';
import { systemClock } from '../../src/runtime/clock.js';
import type { Sandbox } from '../../src/sandbox/types.js';

export interface ApiOverhead {
  /** p50 of one sequential GET with a bare keep-alive axios instance, µs */
  bareAxiosUs: number;
  /** p50 of one sequential apiBlock.run through the real outbound client, µs */
  apiBlockUs: number;
  ratio: number;
  /** completed requests per second through a client limited to `throttleLimit` per host */
  throttleRps: number;
  throttleLimit: number;
}

const BODY = JSON.stringify({ ok: true, items: [1, 2, 3], name: 'upstream' });

async function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(BODY) });
    res.end(BODY);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/data`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function p50(samplesNs: bigint[]): number {
  const sorted = samplesNs.map(Number).sort((a, b) => a - b);
  return (sorted[Math.floor(sorted.length / 2)] ?? 0) / 1000;
}

async function timed(samples: bigint[], fn: () => Promise<unknown>): Promise<void> {
  const t0 = process.hrtime.bigint();
  await fn();
  samples.push(process.hrtime.bigint() - t0);
}

function blockContext(url: string, http: HttpClientPort): BlockRunContext<ApiConfig> {
  return {
    executionId: 'bench',
    workflowId: 'bench',
    block: { id: 'api', name: 'Api', type: 'api' },
    config: apiConfigSchema.parse({ url, method: 'GET', params: [{ key: 'q', value: 'bench' }] }),
    input: {},
    trigger: { type: 'manual' },
    bindCode: () => {
      throw new Error('not used');
    },
    resolve: (v) => v,
    hasErrorConnection: false,
    signal: new AbortController().signal,
    services: { sandbox: {} as Sandbox, clock: systemClock, http, functionTimeoutMs: 5000, functionMemoryMb: 64 },
    emitChunk: () => undefined,
  };
}

/** Sequential requests, bare and through the block in alternating rounds so drift hits both. */
async function measureOverhead(url: string, rounds: number, perRound: number): Promise<{ bare: number; block: number }> {
  const agent = new http.Agent({ keepAlive: true });
  const bare = axios.create({ httpAgent: agent });
  const client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 1e6, hostMaxInflight: 100 });
  const ctx = blockContext(url, client);
  try {
    for (let i = 0; i < 300; i++) {
      await bare.get(url, { params: { q: 'bench' } });
      await apiBlock.run(ctx);
    }
    const bareSamples: bigint[] = [];
    const blockSamples: bigint[] = [];
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < perRound; i++) await timed(bareSamples, () => bare.get(url, { params: { q: 'bench' } }));
      for (let i = 0; i < perRound; i++) await timed(blockSamples, () => apiBlock.run(ctx));
    }
    return { bare: p50(bareSamples), block: p50(blockSamples) };
  } finally {
    client.close();
    agent.destroy();
  }
}

/** Many concurrent senders against one host for about `durationMs`: the throttle sets the pace. */
async function measureThrottle(url: string, rps: number, durationMs: number): Promise<number> {
  const client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: rps, hostMaxInflight: 50 });
  const request = { url, method: 'GET' as const, headers: {}, timeoutMs: 10_000, retries: 0, retryBaseMs: 0, retryMaxMs: 0, maxResponseBytes: 1 << 20 };
  const signal = new AbortController().signal;
  let done = 0;
  try {
    await client.send(request, signal); // connection warm-up; its slot opens the timeline
    const started = process.hrtime.bigint();
    const deadline = started + BigInt(durationMs) * 1_000_000n;
    const worker = async (): Promise<void> => {
      while (process.hrtime.bigint() < deadline) {
        await client.send(request, signal);
        done += 1;
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return done / seconds;
  } finally {
    client.close();
  }
}

export async function measureApiOverhead(options: { rounds?: number; perRound?: number; throttleRps?: number; throttleMs?: number } = {}): Promise<ApiOverhead> {
  const upstream = await startUpstream();
  try {
    const { bare, block } = await measureOverhead(upstream.url, options.rounds ?? 10, options.perRound ?? 200);
    const throttleLimit = options.throttleRps ?? 200;
    const throttleRps = await measureThrottle(upstream.url, throttleLimit, options.throttleMs ?? 1000);
    return { bareAxiosUs: bare, apiBlockUs: block, ratio: block / bare, throttleRps, throttleLimit };
  } finally {
    await upstream.close();
  }
}
