/** What only the SQLite adapter promises: file format, migrations, rollback, crash durability. */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { deriveSecretKey, encryptSecret } from '../../src/store/crypto.js';
import { openStore, SQLITE_FILE } from '../../src/store/open.js';
import { MIGRATIONS } from '../../src/store/sqlite/schema.js';
import { NOT_COMPLETED } from '../../src/store/sqlite/executions.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { unflatten } from '../../src/store/sqlite/write-ops.cjs';
import { ThreadWriter, type WriteOp } from '../../src/store/sqlite/writer.js';
import { blockLog, execution, rejectsWith } from './contract/context.js';

const WRITER = fileURLToPath(new URL('./fixtures/sqlite-writer.ts', import.meta.url));

function fileBytes(file: string): Buffer {
  return Buffer.concat([file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)));
}

describe('store: sqlite adapter', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-sqlite-'));
    file = join(dir, 'troupe.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('never writes a plaintext API key or secret value into the database file', async () => {
    const store = openSqliteStore(file);
    const apiKey = `trp_${randomBytes(24).toString('base64url')}`;
    const hash = createHash('sha256').update(apiKey).digest('hex');
    const secretValue = `sk-live-${randomBytes(16).toString('hex')}`;
    await store.apiKeys.create({ id: 'k1', workflowId: 'wf', prefix: apiKey.slice(0, 8), hash, createdAt: new Date().toISOString(), revokedAt: null });
    await store.secrets.put('STRIPE', encryptSecret(deriveSecretKey('test-secret-key-0123456789'), secretValue, 'STRIPE'));
    for (const bytes of [fileBytes(file), (await store.close(), fileBytes(file))]) {
      expect(bytes.includes(hash), 'sanity: the stored hash is in the bytes read').to.equal(true);
      expect(bytes.includes(apiKey)).to.equal(false);
      expect(bytes.includes(apiKey.slice(4))).to.equal(false);
      expect(bytes.includes(secretValue)).to.equal(false);
    }
  });

  it('uses WAL and records the schema version; reopening migrates nothing twice', async () => {
    const store = openSqliteStore(file);
    await store.workflows.create({ id: 'wf', name: 'W', blocks: [], connections: [] });
    await store.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).to.equal('wal');
    expect(raw.pragma('user_version', { simple: true })).to.equal(MIGRATIONS.length);
    raw.close();
    const again = openSqliteStore(file);
    expect((await again.workflows.get('wf'))?.version).to.equal(1);
    await again.close();
  });

  it('moves the events of a version-1 database into event batches, readable as before', async () => {
    const raw = new Database(file);
    raw.exec(MIGRATIONS[0] as string);
    raw.pragma('user_version = 1');
    raw.prepare(`INSERT INTO executions (id, workflow_id, version, status, trigger, input, output, created_at)
      VALUES ('old', 'wf', 1, 'completed', '{"type":"api"}', '{}', 'null', '2024-01-01T00:00:00.000Z')`).run();
    const ins = raw.prepare('INSERT INTO execution_events (execution_id, seq, event, data, at) VALUES (?, ?, ?, ?, ?)');
    ins.run('old', 2, 'done', '{"status":"completed"}', '2024-01-01T00:00:02.000Z');
    ins.run('old', 1, 'block.started', '{"blockId":"a"}', '2024-01-01T00:00:01.000Z');
    raw.close();
    const store = openSqliteStore(file);
    try {
      expect(await store.executions.listEvents('old')).to.deep.equal([
        { executionId: 'old', seq: 1, event: 'block.started', data: { blockId: 'a' }, at: '2024-01-01T00:00:01.000Z' },
        { executionId: 'old', seq: 2, event: 'done', data: { status: 'completed' }, at: '2024-01-01T00:00:02.000Z' },
      ]);
      expect((await store.executions.listEvents('old', 1)).map((e) => e.seq)).to.deep.equal([2]);
    } finally {
      await store.close();
    }
  });

  it('migrates a version-11 database: ascending execution indexes, status indexes without completed ones, logs without an order index', async () => {
    const raw = new Database(file);
    for (const sql of MIGRATIONS.slice(0, 11)) raw.exec(sql);
    raw.pragma('user_version = 11');
    const insert = raw.prepare(`INSERT INTO executions (id, workflow_id, version, status, trigger, input, output, created_at)
      VALUES (?, 'wf', 1, ?, '{"type":"api"}', '{}', 'null', ?)`);
    insert.run('e1', 'completed', '2024-01-01T00:00:01.000Z');
    insert.run('e2', 'failed', '2024-01-01T00:00:02.000Z');
    insert.run('e3', 'completed', '2024-01-01T00:00:03.000Z');
    const log = raw.prepare(`INSERT INTO block_logs (execution_id, block_id, iteration_key, ord, status, body) VALUES ('e1', ?, '', ?, 'completed', ?)`);
    for (const [blockId, order] of [['b', 1], ['a', 0], ['c', 2]] as const) log.run(blockId, order, JSON.stringify(blockLog(blockId, order)));
    raw.close();
    const store = openSqliteStore(file);
    try {
      expect((await store.executions.list('wf', { limit: 2, cursor: null })).items.map((e) => e.id)).to.deep.equal(['e3', 'e2']);
      expect((await store.executions.listAll({ status: 'completed', limit: 10, cursor: null })).items.map((e) => e.id)).to.deep.equal(['e3', 'e1']);
      expect((await store.executions.list('wf', { status: 'failed', limit: 10, cursor: null })).items.map((e) => e.id)).to.deep.equal(['e2']);
      expect((await store.executions.listByStatus(['failed', 'running'], 10)).map((e) => e.id)).to.deep.equal(['e2']);
      expect((await store.executions.get('e1'))?.logs.map((l) => l.blockId)).to.deep.equal(['a', 'b', 'c']);
    } finally {
      await store.close();
    }
    const after = new Database(file, { readonly: true });
    const descending = after.prepare(`SELECT il.name AS name FROM sqlite_schema s, pragma_index_xinfo(s.name) il
      WHERE s.type = 'index' AND s.tbl_name = 'executions' AND il.desc = 1`).all();
    const logIndexes = after.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'block_logs'").all();
    const partial = after.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql LIKE ? ORDER BY name").all(`%WHERE ${NOT_COMPLETED}`);
    after.close();
    expect(descending).to.deep.equal([]);
    expect(logIndexes).to.deep.equal([{ name: 'sqlite_autoindex_block_logs_1' }]);
    expect(partial).to.deep.equal([{ name: 'executions_by_status' }, { name: 'executions_by_workflow_status' }]);
  });

  it('reads every list of executions through an index in its order, never sorting the matches', async () => {
    await openSqliteStore(file).close();
    const raw = new Database(file, { readonly: true });
    const columns = 'SELECT id, workflow_id, status, created_at FROM executions';
    const newest = 'ORDER BY created_at DESC, id DESC LIMIT 50';
    const cursor = 'AND (created_at, id) < (?, ?)';
    // the statements' shapes as SqliteExecutions builds them (listWhere, listByStatus, PURGE_OPS)
    const lists: [string, string, unknown[]][] = [
      ['executions_by_workflow', `${columns} WHERE workflow_id = ? ${cursor} ${newest}`, ['wf', 'a', 'b']],
      ['executions_by_workflow', `${columns} WHERE workflow_id = ? AND status = ? ${cursor} ${newest}`, ['wf', 'completed', 'a', 'b']],
      ['executions_by_workflow_status', `${columns} WHERE workflow_id = ? AND status = ? AND ${NOT_COMPLETED} ${cursor} ${newest}`, ['wf', 'failed', 'a', 'b']],
      ['executions_by_created', `${columns} WHERE status = ? ${cursor} ${newest}`, ['completed', 'a', 'b']],
      ['executions_by_status', `${columns} WHERE status = ? AND ${NOT_COMPLETED} ${cursor} ${newest}`, ['failed', 'a', 'b']],
      ['executions_by_trigger_type', `${columns} WHERE json_extract(trigger, '$.type') = ? ${cursor} ${newest}`, ['webhook', 'a', 'b']],
      ['executions_by_created', `${columns} WHERE created_at >= ? AND created_at < ? ${cursor} ${newest}`, ['a', 'b', 'c', 'd']],
      ['executions_by_created', `${columns} ${newest}`, []],
      ['executions_by_status', `${columns} WHERE status IN (?) AND ${NOT_COMPLETED} AND (created_at > ? OR (created_at = ? AND id > ?)) ORDER BY created_at, id LIMIT 50`, ['running', 'a', 'a', 'b']],
      ['executions_by_created', `SELECT id FROM executions WHERE status IN ('completed', 'failed', 'cancelled') AND created_at < ? AND ended_at < ? LIMIT 50`, ['a', 'a']],
    ];
    try {
      for (const [index, sql, params] of lists) {
        const plan = raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => (r as { detail: string }).detail).join('; ');
        expect(plan, sql).to.match(new RegExp(`INDEX ${index}( |$)`));
        expect(plan, sql).not.to.contain('TEMP B-TREE');
      }
    } finally {
      raw.close();
    }
  });

  it('refuses a database written by a newer schema', () => {
    const raw = new Database(file);
    raw.pragma(`user_version = ${MIGRATIONS.length + 5}`);
    raw.close();
    expect(() => openSqliteStore(file)).to.throw(/newer than this Troupe/);
  });

  it('rolls back the whole batch when the database fails in the middle of it', async () => {
    const store = openSqliteStore(file);
    await store.executions.create(execution('e1'));
    // a failure raised by SQLite itself, after the patch and the first log were written
    const raw = new Database(file);
    raw.exec(`CREATE TRIGGER boom BEFORE INSERT ON block_logs WHEN NEW.block_id = 'boom'
      BEGIN SELECT RAISE(ABORT, 'forced failure'); END`);
    raw.close();
    await rejectsWith(store.executions.saveBoundary('e1', {
      patch: { status: 'completed' },
      logs: [blockLog('a', 0), blockLog('boom', 1)],
      events: [{ executionId: 'e1', seq: 1, event: 'x', data: null, at: new Date().toISOString() }],
    }), 'STORE_ERROR');
    const got = await store.executions.get('e1');
    expect(got?.status).to.equal('queued');
    expect(got?.logs).to.deep.equal([]);
    expect(await store.executions.listEvents('e1')).to.deep.equal([]);
    await store.close();
  });

  it('close waits for the writes in flight on the writer thread; a closed store refuses more', async () => {
    const store = openSqliteStore(file);
    const writes = Array.from({ length: 50 }, (_, i) => store.executions.create(execution(`e${i}`)));
    await store.close();
    await Promise.all(writes);
    await rejectsWith(store.executions.create(execution('late')), 'STORE_ERROR');
    const again = openSqliteStore(file);
    expect((await again.executions.listByStatus(['queued'], 100)).map((r) => r.id)).to.have.length(50);
    await again.close();
  });

  it('the writer thread reports a failed statement per item and refuses a value it cannot send', async () => {
    const store = openSqliteStore(file);
    await store.close();
    const writer = new ThreadWriter(file, { synchronous: 'NORMAL' });
    const results = await writer.run([
      [{ sql: 'CREATE TABLE IF NOT EXISTS scratch (v TEXT)', params: [] }],
      [{ sql: 'INSERT INTO no_such_table VALUES (?)', params: ['x'] }],
      [{ sql: 'INSERT INTO scratch VALUES (?)', params: ['kept'] }],
    ]);
    expect(results[0]).to.deep.equal({ changes: [0] });
    expect(results[1]).to.have.property('code', 'STORE_ERROR');
    expect(results[2]).to.deep.equal({ changes: [1] });
    await rejectsWith(writer.run([[{ sql: 'SELECT 1', params: [() => 1] }]]), 'STORE_ERROR');
    // nothing is left waiting: stop returns
    await writer.stop();
    const raw = new Database(file);
    expect(raw.prepare('SELECT v FROM scratch').all()).to.deep.equal([{ v: 'kept' }]);
    raw.close();
  });

  it('a writer message carries every kind of op in one flat array, each op as it was given', () => {
    const writer = new ThreadWriter(file, { synchronous: 'NORMAL' });
    const items: WriteOp[][] = [
      [
        { sql: 'INSERT INTO t VALUES (?, ?)', params: ['a', null] },
        { sql: 'UPDATE t SET v = ? WHERE k = ?', params: [1.5, 'a'], expect: 'change', code: 'NOT_FOUND', message: 'gone' },
        { sql: 'SELECT 1 FROM t WHERE k = ?', params: ['a'], expect: 'row', code: 'CONFLICT', message: undefined },
      ],
      [],
      [
        { sql: 'DELETE FROM t WHERE k < @cutoff LIMIT @limit', params: [{ cutoff: 'x', limit: 2 }] },
        { sql: 'PRAGMA incremental_vacuum', params: [], expect: undefined, code: undefined, message: undefined, exec: true },
        { sql: 'INSERT INTO t VALUES (?, ?)', params: ['b', 2] },
      ],
    ];
    const learned: [number, string][] = [];
    const flat = writer.flat(items, learned);
    expect(learned.map(([, sql]) => sql)).to.have.length(5);
    expect(flat.every((v) => !Array.isArray(v)), 'no array inside').to.equal(true);
    // the thread's side, after a structured clone as postMessage makes
    expect(unflatten(structuredClone(flat), new Map(learned))).to.deep.equal(items);
    // a statement is sent once per thread: the next message names it only by its number
    const again: [number, string][] = [];
    writer.flat([[{ sql: 'INSERT INTO t VALUES (?, ?)', params: ['c', 3] }]], again);
    expect(again).to.deep.equal([]);
  });

  it('the writer thread checkpoints the WAL into the database file while the service keeps it open', async () => {
    const store = openSqliteStore(file);
    await store.close();
    // held open as the service's connection is: the last connection to close would checkpoint
    const raw = new Database(file);
    const writer = new ThreadWriter(file, { synchronous: 'NORMAL', checkpointMs: 20 });
    try {
      const marker = `checkpointed-${randomBytes(8).toString('hex')}`;
      await writer.run([[{ sql: 'CREATE TABLE IF NOT EXISTS scratch (v TEXT)', params: [] }, { sql: 'INSERT INTO scratch VALUES (?)', params: [marker] }]]);
      expect(readFileSync(file).includes(marker), 'in the WAL only, right after the commit').to.equal(false);
      const until = Date.now() + 5_000;
      while (!readFileSync(file).includes(marker) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(readFileSync(file).includes(marker), 'copied into the database file').to.equal(true);
    } finally {
      await writer.stop();
      raw.close();
    }
  });

  it('starts a new writer thread for the next write when the thread has died', async () => {
    const store = openSqliteStore(file);
    await store.close();
    const writer = new ThreadWriter(file, { synchronous: 'NORMAL' });
    await writer.run([[{ sql: 'CREATE TABLE IF NOT EXISTS scratch (v TEXT)', params: [] }]]);
    // what a crash of the thread looks like from the service's side
    const thread = (writer as unknown as { worker: Worker }).worker;
    const exited = new Promise((resolve) => thread.once('exit', resolve));
    await thread.terminate();
    await exited;
    expect(await writer.run([[{ sql: 'INSERT INTO scratch VALUES (?)', params: ['after'] }]])).to.deep.equal([{ changes: [1] }]);
    await writer.stop();
    const raw = new Database(file);
    expect(raw.prepare('SELECT v FROM scratch').all()).to.deep.equal([{ v: 'after' }]);
    raw.close();
  });

  it('ping fails once closed; close is idempotent', async () => {
    const store = openSqliteStore(':memory:');
    await store.ping();
    await store.close();
    await store.close();
    await rejectsWith(store.ping(), 'STORE_ERROR');
  });

  it('openStore picks SQLite in the data dir when no MongoDB URL is given', async () => {
    const dataDir = join(dir, 'nested', 'data');
    const store = await openStore({ dataDir, mongodbUrl: undefined });
    expect(store.kind).to.equal('sqlite');
    await store.secrets.put('A', 'v1.x');
    await store.close();
    expect(existsSync(join(dataDir, SQLITE_FILE))).to.equal(true);
  });

  it('keeps every acknowledged batch when the writing process is SIGKILLed', async function () {
    this.timeout(60_000);
    const acked = await runAndKill(file, 300);
    expect(acked).to.be.at.least(300);
    const store = openSqliteStore(file);
    const events = await store.executions.listEvents('crash');
    const seqs = new Set(events.map((e) => e.seq));
    for (let seq = 1; seq <= acked; seq++) expect(seqs.has(seq), `acknowledged seq ${seq}`).to.equal(true);
    const rec = await store.executions.get('crash');
    expect(rec?.logs.length).to.be.at.least(acked);
    expect((rec?.context as { lastSeq: number }).lastSeq).to.be.at.least(acked);
    await store.close();
  });
});

/** Starts the writer, SIGKILLs it after `after` acknowledgements, returns the last one seen. */
function runAndKill(file: string, after: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let last = 0;
    let buffered = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) last = Math.max(last, Number(line));
      if (last >= after && child.exitCode === null && !child.killed) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(last);
      else reject(new Error(`writer exited early (code ${code}): ${stderr}`));
    });
  });
}
