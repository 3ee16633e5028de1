/**
 * A cluster for tests: one nats-server (JetStream) and one PostgreSQL database of the test's
 * own, `troupe serve` instances on both as child processes, and a local upstream the API blocks
 * call that counts the calls per path and Idempotency-Key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, ensureStopped, startServe, type ServeProcess } from '../cli/serve-helpers.js';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.js';
import { createTestDatabase, type TestDatabase } from '../store/postgres-db.js';

export const TOKEN = 'cluster-admin-token-0123456789abcdef';
const SECRET_KEY = 'cluster-secret-key-0123456789abcdef';

export interface Upstream {
  url: string;
  /** calls so far, by `path key` */
  calls: Map<string, number>;
  /** resolves once a call to `path` has arrived */
  arrived(path: string): Promise<void>;
  close(): Promise<void>;
}

/** Answers `/slow…` after `slowMs`, everything else at once, with `{ path, n }`. */
export async function startUpstream(slowMs: number): Promise<Upstream> {
  const calls = new Map<string, number>();
  const waiting = new Map<string, (() => void)[]>();
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const key = `${path} ${String(req.headers['idempotency-key'] ?? '-')}`;
    const n = (calls.get(key) ?? 0) + 1;
    calls.set(key, n);
    for (const wake of waiting.get(path) ?? []) wake();
    waiting.delete(path);
    const answer = (): void => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ path, n }));
    };
    if (path.startsWith('/slow')) setTimeout(answer, slowMs).unref();
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    arrived: (path) => new Promise((resolve) => waiting.set(path, [...(waiting.get(path) ?? []), resolve])),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

export interface TestCluster {
  nats: NatsServerHandle;
  db: TestDatabase;
  /** starts one more instance named `id` */
  serve(id: string, extra?: Record<string, string>): Promise<ServeProcess>;
  close(): Promise<void>;
}

export async function startTestCluster(): Promise<TestCluster> {
  const nats = await startNatsServer();
  const db = await createTestDatabase('troupe_cluster');
  const procs: ServeProcess[] = [];
  const dirs: string[] = [];
  return {
    nats,
    db,
    async serve(id, extra = {}) {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-cluster-'));
      dirs.push(dir);
      const p = await startServe(dir, [], {
        NATS_URL: nats.url, DATABASE_URL: db.url, TROUPE_ADMIN_TOKEN: TOKEN, TROUPE_SECRET_KEY: SECRET_KEY,
        TROUPE_INSTANCE_ID: id, TROUPE_ALLOW_PRIVATE_NETWORK: 'true', ...extra,
      });
      procs.push(p);
      return p;
    },
    async close() {
      for (const p of procs) await ensureStopped(p);
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
      await db.drop();
      await nats.stop();
    },
  };
}

/** start → `first` (a quick call) → `slow` (a call answered after the upstream's delay) → response. */
export function twoCallsWorkflow(id: string, upstream: string): unknown {
  return {
    id,
    name: `Two calls ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: true }] } },
      { id: 'first', type: 'api', name: 'First', config: { url: `${upstream}/first`, method: 'POST', body: { n: '<start.n>' } } },
      { id: 'slow', type: 'api', name: 'Slow', config: { url: `${upstream}/slow`, method: 'POST', body: { n: '<start.n>' }, timeoutMs: 60_000 } },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { first: '<first.data.n>', slow: '<slow.data.n>' } } },
    ],
    connections: [
      { from: 'start', to: 'first' },
      { from: 'first', to: 'slow' },
      { from: 'slow', to: 'reply' },
    ],
  };
}

/** Creates and deploys the workflow through `url`; returns its API key. */
export async function deploy(url: string, def: unknown): Promise<string> {
  const created = await call(url, 'POST', '/api/workflows', { token: TOKEN, body: def });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
  const id = (def as { id: string }).id;
  const deployed = await call(url, 'POST', `/api/workflows/${id}/deploy`, { token: TOKEN });
  if (deployed.status !== 201) throw new Error(`deploy: ${deployed.status} ${JSON.stringify(deployed.body)}`);
  return deployed.body.apiKey.key as string;
}

/** Polls `probe` every 200 ms until it returns a value, or fails after `ms`. */
export async function eventually<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const got = await probe();
      if (got !== undefined) return got;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last === undefined ? '' : ` (${String(last)})`}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
