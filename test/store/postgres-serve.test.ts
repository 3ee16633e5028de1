/**
 * `troupe serve` with DATABASE_URL (child process) against a database of the test's own: a
 * create → deploy → execute → read record round trip, the record readable by a second
 * instance on the same data dir (the SQLite data-dir lock does not apply), and no API key or
 * secret value in plaintext anywhere in the database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { call, ensureStopped, startServe, troupeSync, type ServeProcess } from '../cli/serve-helpers.js';
import { createTestDatabase, type TestDatabase } from './postgres-db.js';

const TOKEN = 'postgres-serve-admin-token-0123456789';
const SECRET_KEY = 'postgres-serve-secret-key-0123456789';

const greet = {
  id: 'greet',
  name: 'Greet',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'who', type: 'string', required: true }] } },
    { id: 'shout', type: 'function', name: 'Shout', config: { code: 'return { text: "hello " + <start.who>, len: {{GREETING_SUFFIX}}.length };' } },
    { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { said: '<shout.result.text>', len: '<shout.result.len>' } } },
  ],
  connections: [
    { from: 'start', to: 'shout' },
    { from: 'shout', to: 'reply' },
  ],
};

/** Every row of every table of the database, as text. */
async function everyRow(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'");
    expect(tables.rows.map((t) => t.name)).to.include.members(['api_keys', 'secrets', 'executions', 'troupe_schema_version']);
    let all = '';
    for (const t of tables.rows) all += (await client.query<{ row: string }>(`SELECT t::text AS row FROM "${t.name}" t`)).rows.map((r) => r.row).join('\n');
    return all;
  } finally {
    await client.end();
  }
}

describe('troupe serve with DATABASE_URL (PostgreSQL, child process)', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  const dirs: string[] = [];
  const procs: ServeProcess[] = [];

  before(async () => {
    db = await createTestDatabase('troupe_serve');
  });

  after(async () => {
    for (const p of procs) await ensureStopped(p);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await db?.drop();
  });

  function serve(dir = mkdtempSync(join(tmpdir(), 'troupe-pg-serve-'))): Promise<ServeProcess> {
    dirs.push(dir);
    return startServe(dir, [], { DATABASE_URL: db.url, TROUPE_ADMIN_TOKEN: TOKEN, TROUPE_SECRET_KEY: SECRET_KEY }).then((p) => {
      procs.push(p);
      return p;
    });
  }

  it('creates, deploys, executes and reads the record back; a second instance shares it; no key or secret in plaintext', async () => {
    const a = await serve();
    const secretValue = 'from-the-store-7f3a9c1e';
    expect((await call(a.url, 'PUT', '/api/secrets/GREETING_SUFFIX', { token: TOKEN, body: { value: secretValue } })).status).to.equal(201);
    const created = await call(a.url, 'POST', '/api/workflows', { token: TOKEN, body: greet });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const deployed = await call(a.url, 'POST', '/api/workflows/greet/deploy', { token: TOKEN });
    expect(deployed.status, JSON.stringify(deployed.body)).to.equal(201);
    const apiKey = deployed.body.apiKey.key as string;

    const ran = await call(a.url, 'POST', '/api/workflows/greet/execute', { apiKey, body: { input: { who: 'ada' } } });
    expect(ran.status, JSON.stringify(ran.body)).to.equal(200);
    // the secret was read from the store and decrypted (its value is masked in outputs)
    expect(ran.body, JSON.stringify(ran.body)).to.deep.equal({ said: 'hello ada', len: secretValue.length });
    const id = ran.headers.get('x-execution-id') as string;

    const record = await call(a.url, 'GET', `/api/executions/${id}`, { token: TOKEN });
    expect(record.status, JSON.stringify(record.body)).to.equal(200);
    expect(record.body).to.include({ id, workflowId: 'greet', status: 'completed' });
    expect((record.body.logs as { blockId: string }[]).map((l) => l.blockId)).to.deep.equal(['start', 'shout', 'reply']);

    // async: the record is written by the runtime's boundary batches, then read back
    const ack = await call(a.url, 'POST', '/api/workflows/greet/execute', { apiKey, body: { input: { who: 'eve' }, async: true } });
    expect(ack.status, JSON.stringify(ack.body)).to.equal(202);
    const asyncId = ack.body.executionId as string;
    let done: any;
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
      done = (await call(a.url, 'GET', `/api/executions/${asyncId}`, { token: TOKEN })).body;
      if (done.status === 'completed' || done.status === 'failed') break;
    }
    expect(done.status, JSON.stringify(done)).to.equal('completed');
    expect(done.output).to.deep.equal({ status: 200, headers: {}, data: { said: 'hello eve', len: secretValue.length } });

    // another instance on the same data dir and database, while the first runs: the SQLite
    // data-dir lock (one service per SQLite store) does not apply to a shared store
    const b = await serve(dirs[0]);
    const seen = await call(b.url, 'GET', `/api/executions/${id}`, { token: TOKEN });
    expect(seen.status).to.equal(200);
    expect(seen.body.status).to.equal('completed');
    const again = await call(b.url, 'POST', '/api/workflows/greet/execute', { apiKey, body: { input: { who: 'bob' } } });
    expect(again.body).to.deep.equal({ said: 'hello bob', len: secretValue.length });

    const rows = await everyRow(db.url);
    expect(rows).to.include(id);
    expect(rows).not.to.include(apiKey);
    expect(rows).not.to.include(apiKey.slice(4));
    expect(rows).not.to.include(secretValue);
  });

  it('stops the start naming both variables when DATABASE_URL and MONGODB_URL are set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-pg-serve-'));
    dirs.push(dir);
    const r = troupeSync(['serve'], { TROUPE_DATA_DIR: dir, DATABASE_URL: db.url, MONGODB_URL: 'mongodb://127.0.0.1:1/x', TROUPE_PORT: '0' });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/DATABASE_URL and MONGODB_URL: both are set/);
  });

  it('stops the start with a STORE_ERROR naming DATABASE_URL (never its password) when no server answers', () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-pg-serve-'));
    dirs.push(dir);
    const r = troupeSync(['serve'], { TROUPE_DATA_DIR: dir, DATABASE_URL: 'postgres://troupe:hunter2secret@127.0.0.1:1/troupe', TROUPE_PORT: '0' });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.match(/DATABASE_URL: cannot open PostgreSQL store at postgres:\/\/troupe:\*\*\*@127\.0\.0\.1:1\/troupe/);
    expect(r.stderr).not.to.include('hunter2secret');
  });
});
