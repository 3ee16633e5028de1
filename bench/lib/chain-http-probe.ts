/**
 * Issue 22's S1 and S3f shapes through the real service (startService, SQLite records, HTTP on
 * loopback, 20 keep-alive connections), interleaved so a slow spell of the shared machine weighs
 * on one round rather than on one side: S3f ÷ S1 is the figure to compare with Node-RED's
 * (4,593 ÷ 7,605 = 0.60 in issue 22's run).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { AdminClient } from '../../src/server/admin-client.js';
import { startService } from '../../src/compose.js';
import { benchServiceConfig, load, type Target } from './http-probe.js';

interface Block {
  id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
}

const block = (id: string, type: string, config: Record<string, unknown>): Block => ({ id, type, name: id, config });
const chain = (id: string, blocks: Block[]): unknown => ({
  id,
  name: id,
  blocks,
  connections: blocks.slice(1).map((b, i) => ({ from: blocks[i]!.id, to: b.id })),
});

/** start → response echoing the input; start → ten functions each adding a field → response */
function workflows(): { s1: unknown; s3f: unknown } {
  const start = block('start', 'starter', {});
  const fns = Array.from({ length: 10 }, (_, i) =>
    block(`f${i + 1}`, 'function', { code: `return { ...${i === 0 ? '<start.input>' : `<f${i}.result>`}, f${i + 1}: ${i + 1} };` }));
  return {
    s1: chain('s1', [start, block('respond', 'response', { status: 200, data: '<start.input>' })]),
    s3f: chain('s3f', [start, ...fns, block('respond', 'response', { status: 200, data: '<f10.result>' })]),
  };
}

export interface ChainHttpRound {
  s1Rps: number;
  s3fRps: number;
}

export async function measureChainOverHttp(rounds = 3): Promise<ChainHttpRound[]> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-s3f-'));
  const config = benchServiceConfig(dir);
  const service = await startService(config, { logger: pino({ level: 'silent' }) });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
  try {
    const admin = new AdminClient(service.url, service.secrets.adminToken.value);
    const target = async (doc: unknown): Promise<Target> => {
      const deployed = await admin.deployDocument(doc);
      const headers = { 'X-API-Key': deployed.apiKey.key, 'Content-Type': 'application/json' };
      return { port: service.port, path: new URL(deployed.endpoint).pathname, headers, body: JSON.stringify({ input: { n: 42, msg: 'hello' } }) };
    };
    const { s1, s3f } = workflows();
    const t1 = await target(s1);
    const t3 = await target(s3f);
    await load(agent, t1, 20, 500);
    await load(agent, t3, 20, 300);
    const out: ChainHttpRound[] = [];
    for (let i = 0; i < rounds; i++) {
      const a = await load(agent, t1, 20, 2000);
      const b = await load(agent, t3, 20, 1000);
      out.push({ s1Rps: a.rps, s3fRps: b.rps });
    }
    return out;
  } finally {
    agent.destroy();
    await service.stop('benchmark done');
    rmSync(dir, { recursive: true, force: true });
  }
}
