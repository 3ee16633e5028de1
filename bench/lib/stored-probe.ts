/**
 * Stored bytes per execution of the peer scenarios (S1, S2, S3f, S4), on the embedded store:
 * the service as `troupe serve` runs it (startService, SQLite in a temp dir), each scenario on a
 * fresh database, executed through the execute endpoint. Two figures per scenario:
 * - payload: the bytes of the execution's rows (record, block logs, event batches), what a
 *   store keeps whatever its page layout;
 * - file: how much the SQLite file grew per execution (pages, indexes), checkpointed.
 * Loopback only (the S2 upstream is a local node:http server).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { loadConfig } from '../../config/load.js';
import { AdminClient } from '../../src/server/admin-client.js';
import { generateSecret } from '../../src/server/secrets-at-rest.js';
import { startService, type Service } from '../../src/compose.js';
import { SCENARIO_INPUT, SCENARIOS, scenarioWorkflows, type ScenarioKey } from './scenarios.js';

export interface StoredBytes {
  scenario: ScenarioKey;
  executions: number;
  payloadBytesPerExecution: number;
  /** of which the event stream */
  eventBytesPerExecution: number;
  fileBytesPerExecution: number;
}

const PAYLOAD = `SELECT
  (SELECT coalesce(sum(length(id) + length(workflow_id) + length(status) + length(trigger) + length(input) + length(output)
     + coalesce(length(error), 0) + coalesce(length(started_at), 0) + coalesce(length(ended_at), 0) + coalesce(length(context), 0)
     + length(created_at) + 16), 0) FROM executions) AS records,
  (SELECT coalesce(sum(length(execution_id) + length(block_id) + length(iteration_key) + length(status) + length(body) + 8), 0) FROM block_logs) AS logs,
  (SELECT coalesce(sum(length(execution_id) + length(body) + 16), 0) FROM execution_event_batches) AS events,
  (SELECT count(*) FROM executions) AS n`;

export async function startUpstream(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n'));
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ ok: true, n }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

async function serve(dir: string): Promise<Service> {
  const config = loadConfig({
    TROUPE_DATA_DIR: dir,
    TROUPE_PORT: '0',
    TROUPE_LOG_LEVEL: 'silent',
    TROUPE_ADMIN_TOKEN: generateSecret(),
    TROUPE_ALLOW_PRIVATE_NETWORK: 'true',
    TROUPE_KEY_RATE_LIMIT: String(1_000_000_000),
    TROUPE_HOST_RPS: String(1_000_000),
  });
  return startService(config, { logger: pino({ level: 'silent' }) });
}

async function executeMany(service: Service, path: string, key: string, count: number): Promise<void> {
  const body = JSON.stringify({ input: SCENARIO_INPUT });
  for (let i = 0; i < count; i++) {
    const res = await fetch(service.url + path, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body });
    if (res.status !== 200) throw new Error(`execute answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  }
}

async function measureOne(key: ScenarioKey, doc: Record<string, unknown>, count: number): Promise<StoredBytes> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-stored-'));
  const file = join(dir, 'troupe.db');
  try {
    let service = await serve(dir);
    const deployed = await new AdminClient(service.url, service.secrets.adminToken.value).deployDocument(doc);
    const path = new URL(deployed.endpoint).pathname;
    // a first few executions fill the pages every database has; the growth after them is per execution
    await executeMany(service, path, deployed.apiKey.key, 20);
    await service.stop('measured');
    const before = statSync(file).size;
    service = await serve(dir);
    await executeMany(service, path, deployed.apiKey.key, count);
    await service.stop('measured');
    const after = statSync(file).size;
    const db = new Database(file, { readonly: true });
    try {
      const row = db.prepare(PAYLOAD).get() as { records: number; logs: number; events: number; n: number };
      return {
        scenario: key,
        executions: row.n,
        payloadBytesPerExecution: (row.records + row.logs + row.events) / row.n,
        eventBytesPerExecution: row.events / row.n,
        fileBytesPerExecution: (after - before) / count,
      };
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function measureStoredBytes(count = 300): Promise<StoredBytes[]> {
  const upstream = await startUpstream();
  try {
    const docs = scenarioWorkflows(upstream.port);
    const out: StoredBytes[] = [];
    for (const key of SCENARIOS) out.push(await measureOne(key, docs[key], count));
    return out;
  } finally {
    await upstream.close();
  }
}
