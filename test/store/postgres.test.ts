/**
 * What only the PostgreSQL adapter promises (the store contract covers the port): migrations
 * under a lock (idempotent, safe for instances starting together, refusing a newer schema),
 * claims that two instances race for won by exactly one, its error mapping, and openStore's
 * selection by DATABASE_URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { TroupeError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import { openPostgresStore } from '../../src/store/postgres/index.js';
import { MIGRATIONS } from '../../src/store/postgres/schema.js';
import type { Store } from '../../src/store/types.js';
import { blockLog, execution, rejectsWith } from './contract/context.js';
import { createTestDatabase, type TestDatabase } from './postgres-db.js';

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe('store: postgres adapter', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let url: string;
  const open: Store[] = [];

  async function store(): Promise<Store> {
    const s = await openPostgresStore(url);
    open.push(s);
    return s;
  }

  before(async () => {
    db = await createTestDatabase('troupe_pg');
  });
  beforeEach(async () => {
    url = await db.schemaUrl();
  });
  afterEach(async () => {
    for (const s of open.splice(0)) await s.close();
  });
  after(async () => {
    await db?.drop();
  });

  it('applies each migration once, even when several instances start together', async () => {
    const stores = await Promise.all([1, 2, 3, 4].map(() => store()));
    const versions = await withClient(url, (c) => c.query<{ version: number }>('SELECT version FROM troupe_schema_version ORDER BY version'));
    expect(versions.rows.map((r) => r.version)).to.deep.equal(MIGRATIONS.map((_, i) => i + 1));
    await stores[0]?.workflows.create({ id: 'wf', name: 'W', blocks: [], connections: [] });
    const again = await store();
    expect((await again.workflows.get('wf'))?.version).to.equal(1);
  });

  it('has an index for every query: executions by workflow, status and time; logs by order', async () => {
    await store();
    const indexes = await withClient(url, (c) => c.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()'));
    expect(indexes.rows.map((r) => r.indexname)).to.include.members([
      'executions_by_workflow', 'executions_by_workflow_status', 'executions_by_status', 'block_logs_by_order', 'api_keys_by_workflow',
      'webhook_events_by_delivery', 'schedule_fires_by_outcome', 'chat_messages_by_workflow',
    ]);
  });

  it('refuses a database whose schema is newer than this Troupe', async () => {
    await (await store()).close();
    await withClient(url, (c) => c.query('INSERT INTO troupe_schema_version (version, applied_at) VALUES ($1, $2)', [MIGRATIONS.length + 1, new Date().toISOString()]));
    const err = await rejectsWith(openPostgresStore(url), 'STORE_ERROR');
    expect(err.message).to.match(/newer than this Troupe/);
    expect(err.retryable).to.equal(false);
  });

  it('lets exactly one of two instances win a guarded claim of the same execution', async () => {
    const [a, b] = [await store(), await store()];
    await a.executions.create(execution('e1', 'wf', { status: 'running', context: { step: 1 } }));
    const guard = { status: 'running' as const, context: { step: 1 } };
    const claims = await Promise.allSettled([a, b, a, b].map((s, i) => s.executions.saveBoundary('e1', {
      guard, patch: { context: { step: 2, by: i } }, logs: [blockLog(`by${i}`, 1)],
    })));
    const won = claims.filter((c) => c.status === 'fulfilled');
    expect(won).to.have.length(1);
    for (const c of claims) if (c.status === 'rejected') expect((c.reason as TroupeError).code).to.equal('CONFLICT');
    const rec = await b.executions.get('e1');
    expect(rec?.logs).to.have.length(1);
    expect((rec?.context as { by: number }).by).to.equal(Number(rec?.logs[0]?.blockId.slice(2)));
  });

  it('lets one of two instances fire a due time, and de-duplicates one delivery across instances', async () => {
    const [a, b] = [await store(), await store()];
    await a.schedules.put('wf', [{ triggerId: 't', version: 1, spec: '* * * * *|UTC' }], '2024-01-01T00:00:00.000Z');
    const fire = (s: Store, i: number) => s.schedules.claim({ workflowId: 'wf', triggerId: 't', dueAt: '2024-01-01T00:01:00.000Z', executionId: `x${i}`, outcome: 'claimed', firedAt: '2024-01-01T00:01:00.001Z' });
    expect((await Promise.all([a, b, a, b].map(fire))).filter(Boolean)).to.have.length(1);
    const event = (i: number) => ({
      id: `ev${i}`, workflowId: 'wf', triggerId: 'h', version: 1, deliveryId: 'd-1', payload: { i }, receivedAt: '2024-01-01T00:00:00.000Z',
      status: 'pending' as const, executionId: `x${i}`, announced: false,
    });
    const accepted = await Promise.all([a, b, a, b].map((s, i) => s.webhooks.accept(event(i), '2023-12-31T00:00:00.000Z')));
    expect(accepted.filter((r) => !r.duplicate)).to.have.length(1);
    expect(new Set(accepted.map((r) => r.event.id)).size).to.equal(1);
  });

  it('lets one of several workflows racing from two instances take a chat subdomain or a webhook path (CONFLICT for the others)', async () => {
    const [a, b] = [await store(), await store()];
    const T0 = '2024-01-01T00:00:00.000Z';
    const chat = (workflowId: string) => ({
      workflowId, subdomain: 'support', auth: { mode: 'public' as const }, branding: { title: workflowId }, createdAt: T0, updatedAt: T0,
    });
    for (let round = 0; round < 3; round++) {
      const subdomain = `support${round}`;
      const puts = await Promise.allSettled(['w1', 'w2', 'w3', 'w4'].map((wf, i) => (i % 2 ? a : b).chats.put({ ...chat(wf), subdomain })));
      expect(puts.filter((p) => p.status === 'fulfilled'), `round ${round}`).to.have.length(1);
      for (const p of puts) if (p.status === 'rejected') expect((p.reason as TroupeError).code).to.equal('CONFLICT');
      const routes = await Promise.allSettled(['w1', 'w2', 'w3', 'w4'].map((wf, i) => (i % 2 ? a : b).webhooks.putRoutes(wf, [{ path: `hooks/${round}`, triggerId: 't' }])));
      expect(routes.filter((p) => p.status === 'fulfilled'), `round ${round}`).to.have.length(1);
      for (const p of routes) if (p.status === 'rejected') expect((p.reason as TroupeError).code).to.equal('CONFLICT');
    }
  });

  it('gives concurrent memory appends from two instances distinct, consecutive seqs', async () => {
    const [a, b] = [await store(), await store()];
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).memories.append('wf', 'c', [{ role: 'user', content: `m${i}` }, { role: 'assistant', content: `r${i}` }], Infinity)));
    const all = await a.memories.list('wf', 'c');
    expect(all.map((e) => e.seq)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
    // each append's two entries are adjacent: appends never interleave
    for (let i = 0; i < 40; i += 2) expect(all[i + 1]?.content.slice(1)).to.equal(all[i]?.content.slice(1));
  });

  it('writes a group commit of mixed items: creates, patches of different shapes, one execution twice in order', async () => {
    const s = await store();
    await s.executions.create(execution('old', 'wf', { status: 'running' }));
    const ev = (id: string, seq: number) => ({ executionId: id, seq, event: 'block.completed', data: { seq }, at: '2024-01-01T00:00:00.000Z' });
    const results = await s.executions.saveBoundaries([
      { id: 'n1', batch: { create: execution('n1', 'wf', { status: 'running' }), logs: [blockLog('a', 1)], events: [ev('n1', 1)] } },
      { id: 'old', batch: { patch: { status: 'completed', output: { done: true }, durationMs: 12.5 }, logs: [blockLog('a', 1), blockLog('b', 2)], events: [ev('old', 1), ev('old', 2)] } },
      { id: 'n2', batch: { create: execution('n2', 'wf'), patch: { status: 'failed', error: { code: 'X' }, version: 3 } } },
    ]);
    expect(results).to.deep.equal([null, null, null]);
    const [n1, old, n2] = await Promise.all(['n1', 'old', 'n2'].map((id) => s.executions.get(id)));
    expect(n1?.logs.map((l) => l.blockId)).to.deep.equal(['a']);
    expect(old).to.deep.include({ status: 'completed', output: { done: true }, durationMs: 12.5 });
    expect(old?.logs.map((l) => l.blockId)).to.deep.equal(['a', 'b']);
    expect((await s.executions.listEvents('old')).map((e) => e.seq)).to.deep.equal([1, 2]);
    expect(n2).to.deep.include({ status: 'failed', error: { code: 'X' }, version: 3 });
    // the same execution twice in one call: the second item sees the first
    const twice = await s.executions.saveBoundaries([
      { id: 'n3', batch: { create: execution('n3', 'wf') } },
      { id: 'n3', batch: { guard: { status: 'queued', context: null }, patch: { status: 'running' } } },
      { id: 'n3', batch: { create: execution('n3', 'wf') } },
    ]);
    expect(twice.map((r) => (r as TroupeError | null)?.code ?? null)).to.deep.equal([null, null, 'CONFLICT']);
    expect((await s.executions.get('n3'))?.status).to.equal('running');
  });

  it('maps what the server refuses to STORE_ERROR, not retryable, with its SQLSTATE', async () => {
    const s = await store();
    // PostgreSQL text cannot hold a NUL character; SQLite can (a known difference)
    const err = await rejectsWith(s.secrets.put('NUL', 'a\u0000b'), 'STORE_ERROR');
    expect(err.retryable).to.equal(false);
    expect(err.details).to.deep.include({ sqlstate: '22021' });
  });

  it('survives its connections being killed, idle or inside a transaction: a retryable STORE_ERROR, then works again', async () => {
    const warnings: string[] = [];
    const s = await openPostgresStore(url, { onWarning: (m) => warnings.push(m) });
    open.push(s);
    await s.executions.create(execution('e1', 'wf', { status: 'running' }));
    // several pooled connections, so some are idle while the transaction below holds one
    await Promise.all([s.ping(), s.ping(), s.ping()]);
    await withClient(url, async (locker) => {
      // an outside transaction holds the row, so the boundary's transaction waits on its lock
      await locker.query('BEGIN');
      await locker.query("SELECT 1 FROM executions WHERE id = 'e1' FOR UPDATE");
      const pending = s.executions.saveBoundary('e1', { patch: { status: 'completed' } });
      let killed = 0;
      for (let i = 0; i < 100 && killed === 0; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const r = await locker.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'troupe' AND wait_event_type = 'Lock' AND datname = current_database()");
        killed = r.rowCount ?? 0;
      }
      expect(killed, 'the waiting transaction was found').to.equal(1);
      const err = await rejectsWith(pending, 'STORE_ERROR');
      expect(err.retryable).to.equal(true);
      await locker.query('ROLLBACK');
      // the idle ones too: the pool drops them and says so
      await locker.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'troupe' AND state = 'idle' AND datname = current_database()");
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(warnings.join('\n')).to.match(/PostgreSQL connection lost/);
    await s.ping();
    await s.executions.saveBoundary('e1', { patch: { status: 'completed' } });
    expect((await s.executions.get('e1'))?.status).to.equal('completed');
  });

  it('answers ping while open, and STORE_ERROR once closed', async () => {
    const s = await openPostgresStore(url);
    await s.ping();
    await s.close();
    await s.close();
    const err = await rejectsWith(s.ping(), 'STORE_ERROR');
    expect(err.retryable).to.equal(false);
  });

  it('rejects with a retryable STORE_ERROR when no server answers, never showing the password', async () => {
    const err = await rejectsWith(openPostgresStore('postgres://u:s3cr3t-pw@127.0.0.1:1/x', { connectionTimeoutMillis: 2000 }), 'STORE_ERROR');
    expect(err.retryable).to.equal(true);
    expect(err.message).to.include('postgres://u:***@127.0.0.1:1/x');
    expect(err.message).not.to.include('s3cr3t-pw');
    await rejectsWith(openPostgresStore('mysql://127.0.0.1/x'), 'STORE_ERROR');
  });

  it('is what openStore opens for DATABASE_URL, and openStore refuses it with MONGODB_URL', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'troupe-pg-open-'));
    try {
      const s = await openStore({ dataDir, databaseUrl: url });
      open.push(s);
      expect(s.kind).to.equal('postgres');
      await rejectsWith(openStore({ dataDir, databaseUrl: url, mongodbUrl: 'mongodb://127.0.0.1:1/x' }), 'INVALID_CONFIG');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
