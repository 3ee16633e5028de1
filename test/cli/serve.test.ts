import { expect } from 'chai';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  busyWorkflow,
  call,
  ensureStopped,
  startServe,
  troupeAsync,
  troupeSync,
  type ServeProcess,
} from './serve-helpers.js';

const TERMINAL = ['completed', 'failed', 'cancelled'];

async function deploy(url: string, token: string, doc: unknown): Promise<string> {
  const created = await call(url, 'POST', '/api/workflows', { token, body: doc });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  const deployed = await call(url, 'POST', `/api/workflows/${created.body.id}/deploy`, { token });
  expect(deployed.status, JSON.stringify(deployed.body)).to.equal(201);
  expect(deployed.body.apiKey.key).to.match(/^trp_/);
  return deployed.body.apiKey.key as string;
}

async function waitTerminal(url: string, token: string, ids: string[], boundMs: number): Promise<Map<string, any>> {
  const deadline = Date.now() + boundMs;
  const records = new Map<string, any>();
  for (;;) {
    for (const id of ids) {
      if (TERMINAL.includes(records.get(id)?.status)) continue;
      const r = await call(url, 'GET', `/api/executions/${id}`, { token });
      expect(r.status, `execution ${id} is not recorded: ${JSON.stringify(r.body)}`).to.equal(200);
      records.set(id, r.body);
    }
    const open = ids.filter((id) => !TERMINAL.includes(records.get(id)?.status));
    if (open.length === 0) return records;
    if (Date.now() > deadline) throw new Error(`still unfinished after recovery: ${open.map((id) => `${id}=${records.get(id)?.status}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('troupe serve (child process)', function () {
  this.timeout(180_000);
  const dirs: string[] = [];
  let proc: ServeProcess | undefined;

  const tempDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-serve-'));
    dirs.push(dir);
    return join(dir, 'data');
  };

  afterEach(async () => {
    await ensureStopped(proc);
    proc = undefined;
  });
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('generates the admin token once (mode 0600), reuses it, and sets up the demo', async () => {
    const data = tempDir();
    proc = await startServe(data, ['--demo']);
    const tokenFile = join(data, 'admin-token');
    const token = readFileSync(tokenFile, 'utf8').trim();
    expect(token.length).to.be.at.least(43);
    expect(statSync(tokenFile).mode & 0o777).to.equal(0o600);
    expect(statSync(join(data, 'secret-key')).mode & 0o777).to.equal(0o600);
    expect(statSync(data).mode & 0o777).to.equal(0o700);
    await waitFor(() => /curl -s -X POST/.test(proc?.stdout() ?? ''), 30_000);
    // the database and its WAL hold execution data, webhook payloads and chat histories
    for (const file of ['troupe.db', 'troupe.db-wal', 'troupe.db-shm', 'serve.lock']) {
      if (existsSync(join(data, file))) expect(statSync(join(data, file)).mode & 0o777, file).to.equal(0o600);
    }
    expect(existsSync(join(data, 'troupe.db'))).to.equal(true);
    const first = proc.stdout();
    expect(first.split(token).length - 1, 'token printed exactly once').to.equal(1);
    expect((await call(proc.url, 'GET', '/api/workflows', { token })).status).to.equal(200);
    expect((await call(proc.url, 'GET', '/api/workflows', { token: 'x'.repeat(43) })).status).to.equal(401);

    // the printed curl line works as pasted: its endpoint, its key, its body
    const m = /curl -s -X POST (\S+) -H 'X-API-Key: (trp_[^']+)' -H 'Content-Type: application\/json' -d '([^']+)'/.exec(first);
    expect(m, first).to.not.equal(null);
    const [, endpoint, key, body] = m as unknown as [string, string, string, string];
    const res = await fetch(endpoint, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ message: 'Hello, ada!', nameLength: 3 });

    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);

    proc = await startServe(data, ['--demo']);
    await waitFor(() => /already deployed[\s\S]*the admin token is in/.test(proc?.stdout() ?? ''), 30_000);
    const second = proc.stdout();
    expect(second).to.not.contain(token);
    expect(second).to.contain(tokenFile);
    expect(second).to.match(/\/api\/workflows\/hello\/keys/);
    expect(readFileSync(tokenFile, 'utf8').trim()).to.equal(token);
    expect((await call(proc.url, 'GET', '/api/workflows', { token })).status).to.equal(200);
    // the key issued by the first start survived the restart (the port is new: TROUPE_PORT=0)
    const again = await fetch(proc.url + new URL(endpoint).pathname, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body });
    expect(again.status).to.equal(200);
  });

  it('uses TROUPE_ADMIN_TOKEN when set and writes no token file', async () => {
    const data = tempDir();
    const token = 'env-token-0123456789abcdef';
    proc = await startServe(data, [], { TROUPE_ADMIN_TOKEN: token });
    expect(proc.stdout()).to.not.contain(token);
    expect(() => statSync(join(data, 'admin-token'))).to.throw();
    expect((await call(proc.url, 'GET', '/api/workflows', { token })).status).to.equal(200);
  });

  it('exits non-zero naming the variable when the environment is invalid', () => {
    const r = troupeSync(['serve'], { TROUPE_DATA_DIR: tempDir(), TROUPE_PORT: 'abc' });
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.contain('TROUPE_PORT');
    const level = troupeSync(['serve'], { TROUPE_DATA_DIR: tempDir(), TROUPE_LOG_LEVEL: 'loud' });
    expect(level.code).to.not.equal(0);
    expect(level.stderr).to.contain('TROUPE_LOG_LEVEL');
    // a well-formed value that does not work names its variable too
    const nats = troupeSync(['serve'], { TROUPE_DATA_DIR: tempDir(), NATS_URL: 'nats://127.0.0.1:1' });
    expect(nats.code).to.not.equal(0);
    expect(nats.stderr).to.contain('NATS_URL');
  });

  it('refuses a second service on the same SQLite data dir, and starts again once the first is killed with SIGKILL', async () => {
    const data = tempDir();
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    // sync, with its 60 s kill: a second service that wrongly started would not be left behind
    const second = troupeSync(['serve'], { TROUPE_DATA_DIR: data });
    expect(second.code).to.not.equal(0);
    expect(second.stderr).to.contain(`the data dir ${data} is in use by another troupe serve`);
    expect(second.stdout).to.not.contain('troupe listening');
    expect((await call(proc.url, 'GET', '/api/workflows', { token })).status).to.equal(200);
    proc.child.kill('SIGKILL');
    await proc.exited;
    // the operating system dropped the lock with the killed process: nothing stale to clean up
    proc = await startServe(data);
    expect((await call(proc.url, 'GET', '/api/workflows', { token })).status).to.equal(200);
  });

  it('finishes a running execution on SIGTERM before exiting', async () => {
    const data = tempDir();
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const key = await deploy(proc.url, token, busyWorkflow('slow', 400));
    const ack = await call(proc.url, 'POST', '/api/workflows/slow/execute', { apiKey: key, body: { input: { n: 7 }, async: true } });
    expect(ack.status).to.equal(202);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).to.equal(0);
    proc = await startServe(data);
    const rec = await call(proc.url, 'GET', `/api/executions/${ack.body.executionId}`, { token });
    expect(rec.body.status).to.equal('completed');
    expect(rec.body.output).to.deep.include({ status: 200, data: { n: 7 } });
  });

  it('troupe deploy creates, then updates, and prints the endpoint and a working key', async () => {
    const data = tempDir();
    proc = await startServe(data);
    const file = join(data, '..', 'wf.json');
    writeFileSync(file, JSON.stringify(busyWorkflow('cli-deployed', 1)));
    const env = { TROUPE_DATA_DIR: data };
    const r = await troupeAsync(['deploy', file, '--url', proc.url], env);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('created and deployed (version 1)');
    const endpoint = /endpoint: (\S+)/.exec(r.stdout)?.[1];
    const key = /api key: +(trp_\S+)/.exec(r.stdout)?.[1];
    expect(endpoint).to.equal(`${proc.url}/api/workflows/cli-deployed/execute`);
    const res = await fetch(endpoint ?? '', { method: 'POST', headers: { 'X-API-Key': key ?? '', 'Content-Type': 'application/json' }, body: '{"input":{"n":5}}' });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ n: 5 });

    const again = await troupeAsync(['deploy', file, '--url', proc.url], env);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.contain('updated and deployed (version 2)');

    writeFileSync(file, JSON.stringify({ id: 'broken', blocks: [{ id: 's', type: 'starter', name: 'Start', config: {} }], connections: [{ from: 's', to: 'ghost' }, { from: 'nope', to: 's' }] }));
    const bad = await troupeAsync(['deploy', file, '--url', proc.url], env);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('rejected (422 INVALID_WORKFLOW, 2 issue(s))');
    expect(bad.stderr).to.contain('/connections/0/to');
    expect(bad.stderr).to.contain('/connections/1/from');

    const wrong = await troupeAsync(['deploy', file, '--url', proc.url, '--token', 'not-the-token-at-all'], env);
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.contain('refused the admin token');

    await ensureStopped(proc, 'SIGTERM');
    const down = await troupeAsync(['deploy', file, '--url', proc.url], env);
    expect(down.code).to.equal(1);
    expect(down.stderr).to.contain('not reachable');
  });

  it('loses no acknowledged execution when killed with SIGKILL mid-load', async () => {
    const data = tempDir();
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const key = await deploy(proc.url, token, busyWorkflow('load', 50));
    const url = proc.url;
    const acked: string[] = [];
    const fire = async (n: number): Promise<void> => {
      const sync = n % 5 === 0;
      try {
        const r = await call(url, 'POST', '/api/workflows/load/execute', { apiKey: key, body: sync ? { input: { n } } : { input: { n }, async: true } });
        if (r.status === 202) acked.push(r.body.executionId as string);
        else if (r.status === 200) acked.push(r.headers.get('x-execution-id') ?? 'missing-id');
        else throw new Error(`unexpected ${r.status}: ${JSON.stringify(r.body)}`);
      } catch (err) {
        // the kill cuts requests that were never acknowledged: those are allowed to vanish
        if (!/fetch failed|terminated|other side closed|ECONNRESET|aborted/i.test(String((err as Error).cause ?? err))) throw err;
      }
    };
    const requests: Promise<void>[] = [];
    for (let n = 0; n < 50; n++) {
      requests.push(fire(n));
      if (n % 10 === 9) await new Promise((r) => setTimeout(r, 20));
    }
    // kill only once an acknowledged execution is recorded as running: the crash is mid-load
    await waitForAsync(async () => {
      if (acked.length < 15) return false;
      for (const id of [...acked]) {
        const r = await call(url, 'GET', `/api/executions/${id}`, { token });
        if (r.body?.status === 'running') return true;
      }
      return false;
    }, 30_000);
    proc.child.kill('SIGKILL');
    expect(await proc.exited).to.equal('SIGKILL');
    await Promise.all(requests);
    expect(acked.length).to.be.greaterThan(0);
    expect(acked).to.not.include('missing-id');

    proc = await startServe(data);
    const resumed = Number(/recovered executions left by the previous run: (\d+) resumed/.exec(proc.stdout())?.[1] ?? 0);
    expect(resumed, proc.stdout()).to.be.greaterThan(0);
    // the interrupted ones resumed from their last block boundary: every acknowledged one completes
    const records = await waitTerminal(proc.url, token, acked, 60_000);
    for (const [id, rec] of records) {
      expect(rec.status, `${id}: ${JSON.stringify(rec.error)}`).to.equal('completed');
      expect(rec.output).to.deep.include({ status: 200 });
      expect(rec.logs.map((l: { blockId: string }) => l.blockId)).to.deep.equal(['start', 'work', 'reply']);
    }
    // and the service keeps working after recovery
    const after = await call(proc.url, 'POST', '/api/workflows/load/execute', { apiKey: key, body: { input: { n: 99 } } });
    expect(after.status).to.equal(200);
    expect(after.body).to.deep.equal({ n: 99 });
  });
});

describe('troupe serve: resumption after SIGKILL (child process)', function () {
  this.timeout(120_000);
  let proc: ServeProcess | undefined;
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-resume-'));
  });
  afterEach(async () => {
    await ensureStopped(proc);
    proc = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const twoSteps = {
    id: 'two-steps',
    name: 'Two steps',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'a', type: 'function', name: 'A', config: { code: 'return { token: Math.random(), at: Date.now() };' } },
      { id: 'b', type: 'function', name: 'B', config: { code: 'await new Promise((r) => setTimeout(r, 1500));\nreturn <a.result>;' } },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { a: '<a.result>', b: '<b.result>' } } },
    ],
    connections: [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'reply' }],
  };

  it('resumes an execution from its last block boundary: completed blocks are not run again', async () => {
    const data = join(dir, 'data');
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const key = await deploy(proc.url, token, twoSteps);
    const ack = await call(proc.url, 'POST', '/api/workflows/two-steps/execute', { apiKey: key, body: { input: {}, async: true } });
    expect(ack.status).to.equal(202);
    const id = ack.body.executionId as string;
    let before: any;
    await waitForAsync(async () => {
      before = (await call(proc?.url ?? '', 'GET', `/api/executions/${id}`, { token })).body;
      const states = Object.fromEntries((before.logs as { blockId: string; status: string }[]).map((l) => [l.blockId, l.status]));
      // B is under way: its log says so until it settles
      return states['a'] === 'completed' && states['b'] === 'running' && before.status === 'running';
    }, 30_000);
    proc.child.kill('SIGKILL');
    expect(await proc.exited).to.equal('SIGKILL');

    proc = await startServe(data);
    expect(proc.stdout()).to.match(/1 resumed from their last block boundary/);
    const rec = (await waitTerminal(proc.url, token, [id], 30_000)).get(id);
    expect(rec.status, JSON.stringify(rec.error)).to.equal('completed');
    const a = before.logs.find((l: { blockId: string }) => l.blockId === 'a');
    // A's result before the crash is what B and the response saw after it: A did not run again
    expect(rec.output.data).to.deep.equal({ a: a.output.result, b: a.output.result });
    expect(rec.logs.find((l: { blockId: string }) => l.blockId === 'a')).to.deep.equal(a);
    expect(rec.logs.map((l: { blockId: string; status: string; order: number }) => [l.blockId, l.status, l.order])).to.deep.equal([
      ['start', 'completed', 0], ['a', 'completed', 1], ['b', 'completed', 2], ['reply', 'completed', 3],
    ]);
    expect(rec.startedAt).to.equal(before.startedAt);
    // the events replay both runs in one sequence, ending with done
    const events = await fetch(`${proc.url}/api/executions/${id}/events`, { headers: { Authorization: `Bearer ${token}` } });
    const text = await events.text();
    const seqs = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(seqs).to.deep.equal(seqs.map((_, i) => i + 1));
    expect(text.trim().split('\n\n').at(-1)).to.match(/^event: done/m);
  });

  it('a resumed execution runs in the execution service: cancel ends it here and answers its final status', async () => {
    const data = join(dir, 'data');
    proc = await startServe(data);
    const token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
    const slow = { ...twoSteps, id: 'slow-steps', blocks: twoSteps.blocks.map((b) => (b.id === 'b' ? { ...b, config: { code: 'await new Promise((r) => setTimeout(r, 20000));\nreturn 1;' } } : b)) };
    const key = await deploy(proc.url, token, slow);
    const ack = await call(proc.url, 'POST', '/api/workflows/slow-steps/execute', { apiKey: key, body: { input: {}, async: true } });
    const id = ack.body.executionId as string;
    await waitForAsync(async () => ((await call(proc?.url ?? '', 'GET', `/api/executions/${id}`, { token })).body.logs as unknown[]).length >= 2, 30_000);
    proc.child.kill('SIGKILL');
    await proc.exited;
    proc = await startServe(data);
    const cancelled = await call(proc.url, 'POST', `/api/executions/${id}/cancel`, { token });
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    expect(cancelled.body).to.deep.equal({ executionId: id, status: 'cancelled' });
    const rec = await call(proc.url, 'GET', `/api/executions/${id}`, { token });
    expect(rec.body.status).to.equal('cancelled');
  });
});

async function waitFor(cond: () => boolean, boundMs: number): Promise<void> {
  await waitForAsync(async () => cond(), boundMs);
}

async function waitForAsync(cond: () => Promise<boolean>, boundMs: number): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}
