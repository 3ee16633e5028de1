/**
 * Bounded executions (issue 21, finding 2), through `troupe serve` as a child process: the
 * probe's hostile workflows, with the limits scaled down by configuration where that keeps the
 * test fast. Each fails its own execution with a *_LIMIT code, or is refused when saved, while
 * the service keeps answering.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, ensureStopped, startServe, troupeSync, type ServeProcess } from './serve-helpers.js';

const TOKEN = 'limits-admin-token-0123456789';

type Block = { id: string; type: string; name: string; parent?: string; config: Record<string, unknown> };

function workflow(id: string, blocks: Block[], connections: { from: string; to: string }[]): unknown {
  return { id, name: id, blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, ...blocks], connections };
}

/** start → a container whose one child is a function with `code`. */
function container(id: string, type: 'loop' | 'parallel', config: Record<string, unknown>, code = 'return 1;'): unknown {
  return workflow(
    id,
    [
      { id: 'c', type, name: 'C', config },
      { id: 'f', type: 'function', name: 'F', parent: 'c', config: { code } },
    ],
    [{ from: 'start', to: 'c' }],
  );
}

describe('execution limits (troupe serve)', function () {
  this.timeout(180_000);
  let dir: string;
  let proc: ServeProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-limits-'));
    proc = await startServe(join(dir, 'data'), [], {
      TROUPE_ADMIN_TOKEN: TOKEN,
      TROUPE_MAX_ITERATIONS: '1000',
      TROUPE_MAX_RESULTS_BYTES: '800000',
      TROUPE_MAX_RUN_MEMORY_MB: '1',
      TROUPE_MAX_LOG_BYTES: '20000',
    });
  });
  after(async () => {
    await ensureStopped(proc);
    rmSync(dir, { recursive: true, force: true });
  });

  async function deploy(doc: unknown): Promise<string> {
    const created = await call(proc.url, 'POST', '/api/workflows', { token: TOKEN, body: doc });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const deployed = await call(proc.url, 'POST', `/api/workflows/${created.body.id}/deploy`, { token: TOKEN });
    expect(deployed.status, JSON.stringify(deployed.body)).to.equal(201);
    return deployed.body.apiKey.key as string;
  }

  /** Runs a deployed workflow (sync) while checking that /healthz keeps answering; returns the answer. */
  async function runHealthy(id: string, key: string, input: unknown): Promise<{ status: number; body: any }> {
    const running = call(proc.url, 'POST', `/api/workflows/${id}/execute`, { apiKey: key, body: { input } });
    let settled = false;
    void running.finally(() => (settled = true));
    let probes = 0;
    while (!settled || probes === 0) {
      const started = Date.now();
      const health = await call(proc.url, 'GET', '/healthz');
      expect(health.status).to.equal(200);
      // generous: a service that stopped answering would take far longer (or never answer)
      expect(Date.now() - started).to.be.below(5000);
      probes += 1;
      await new Promise((r) => setTimeout(r, 20));
    }
    return running;
  }

  async function record(id: string): Promise<{ status: number; body: any; bytes: number }> {
    const res = await fetch(`${proc.url}/api/executions/${id}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text), bytes: Buffer.byteLength(text) };
  }

  it('refuses at save a parallel of count 100000 and concurrency 10000, at the right JSON pointers', async () => {
    const doc = container('wide', 'parallel', { kind: 'count', count: 100000, concurrency: 10000 });
    const res = await call(proc.url, 'POST', '/api/workflows', { token: TOKEN, body: doc });
    expect(res.status).to.equal(422);
    expect(res.body.error.code).to.equal('INVALID_WORKFLOW');
    const issues = res.body.error.details.issues as { path: string; message: string }[];
    expect(issues.map((i) => i.path).sort()).to.deep.equal(['/blocks/1/config/concurrency', '/blocks/1/config/count']);
    expect(issues.find((i) => i.path.endsWith('/count'))?.message).to.contain('TROUPE_MAX_ITERATIONS');
    expect(issues.find((i) => i.path.endsWith('/concurrency'))?.message).to.contain('TROUPE_MAX_LIVE_BRANCHES');
    // and a literal loop of 1e6 iterations, and a literal collection longer than the limit
    const loop = await call(proc.url, 'POST', '/api/workflows', { token: TOKEN, body: container('long', 'loop', { kind: 'for', iterations: 1_000_000 }) });
    expect(loop.status).to.equal(422);
    expect(loop.body.error.details.issues.map((i: { path: string }) => i.path)).to.deep.equal(['/blocks/1/config/iterations']);
    const items = Array.from({ length: 1001 }, (_, i) => i);
    const many = await call(proc.url, 'POST', '/api/workflows', { token: TOKEN, body: container('many', 'parallel', { kind: 'collection', items }) });
    expect(many.status).to.equal(422);
    expect(many.body.error.details.issues.map((i: { path: string }) => i.path)).to.deep.equal(['/blocks/1/config/items']);
    expect((await call(proc.url, 'GET', '/healthz')).status).to.equal(200);
  });

  it('fails with ITERATION_LIMIT a deployed parallel given 100,000 items through <start.items> (concurrency 1000); the service stays healthy', async () => {
    const key = await deploy(container('fanout', 'parallel', { kind: 'collection', items: '<start.items>', concurrency: 1000 }));
    const items = Array.from({ length: 100_000 }, (_, i) => i);
    const res = await runHealthy('fanout', key, { items });
    expect(res.status).to.equal(500);
    expect(res.body.success).to.equal(false);
    expect(res.body.error).to.deep.include({ code: 'ITERATION_LIMIT', blockId: 'c' });
    expect(res.body.error.message).to.contain('TROUPE_MAX_ITERATIONS');
    // the next execution of the same workflow runs
    const ok = await call(proc.url, 'POST', '/api/workflows/fanout/execute', { apiKey: key, body: { input: { items: [1, 2, 3] } } });
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.body.output.results).to.have.length(3);
  });

  it('fails with ITERATION_LIMIT a for-loop of 1e6 iterations given by reference, with a small record', async () => {
    const key = await deploy(container('million', 'loop', { kind: 'for', iterations: '<start.n>' }));
    const res = await runHealthy('million', key, { n: 1_000_000 });
    expect(res.body.error).to.deep.include({ code: 'ITERATION_LIMIT', blockId: 'c' });
    const rec = await record(res.body.executionId);
    expect(rec.body.status).to.equal('failed');
    expect(rec.bytes).to.be.below(50_000);
  });

  it('fails with BRANCH_LIMIT nested parallels that would run more branches at once than the execution may', async () => {
    const doc = workflow(
      'nested',
      [
        { id: 'outer', type: 'parallel', name: 'Outer', config: { kind: 'count', count: 20, concurrency: 20 } },
        { id: 'inner', type: 'parallel', name: 'Inner', parent: 'outer', config: { kind: 'count', count: 100, concurrency: 100 } },
        { id: 'f', type: 'function', name: 'F', parent: 'inner', config: { code: 'return 1;' } },
      ],
      [{ from: 'start', to: 'outer' }],
    );
    const key = await deploy(doc);
    const res = await runHealthy('nested', key, {});
    expect(res.body.error).to.deep.include({ code: 'BRANCH_LIMIT', blockId: 'outer' });
    expect(res.body.error.message).to.contain('TROUPE_MAX_LIVE_BRANCHES');
  });

  it("fails with RESULTS_LIMIT a loop whose results pass the limit, even through the loop's error connection", async () => {
    const doc = workflow(
      'big-results',
      [
        { id: 'c', type: 'loop', name: 'C', config: { kind: 'for', iterations: 100 } },
        { id: 'f', type: 'function', name: 'F', parent: 'c', config: { code: "return 'x'.repeat(10000);" } },
        { id: 'h', type: 'function', name: 'H', config: { code: "return 'handled';" } },
      ],
      [{ from: 'start', to: 'c' }, { from: 'c', to: 'h', handle: 'error' } as { from: string; to: string }],
    );
    const key = await deploy(doc);
    const res = await runHealthy('big-results', key, {});
    expect(res.body.error).to.deep.include({ code: 'RESULTS_LIMIT', blockId: 'c' });
    expect(res.body.error.message).to.contain('TROUPE_MAX_RESULTS_BYTES');
  });

  it('fails with MEMORY_LIMIT an execution whose containers together hold more results than it may', async () => {
    const doc = workflow(
      'two-loops',
      [
        { id: 'a', type: 'loop', name: 'A', config: { kind: 'for', iterations: 60 } },
        { id: 'fa', type: 'function', name: 'FA', parent: 'a', config: { code: "return 'x'.repeat(10000);" } },
        { id: 'b', type: 'loop', name: 'B', config: { kind: 'for', iterations: 60 } },
        { id: 'fb', type: 'function', name: 'FB', parent: 'b', config: { code: "return 'y'.repeat(10000);" } },
      ],
      [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }],
    );
    const key = await deploy(doc);
    const res = await runHealthy('two-loops', key, {});
    expect(res.body.error).to.deep.include({ code: 'MEMORY_LIMIT', blockId: 'b' });
    expect(res.body.error.message).to.contain('TROUPE_MAX_RUN_MEMORY_MB');
  });

  it('keeps the first iteration logs whole and summarises those past TROUPE_MAX_LOG_BYTES', async () => {
    const key = await deploy(container('chatty', 'loop', { kind: 'for', iterations: 300 }, "return 'z'.repeat(200);"));
    const res = await call(proc.url, 'POST', '/api/workflows/chatty/execute', { apiKey: key, body: { input: {} } });
    expect(res.status, JSON.stringify(res.body).slice(0, 500)).to.equal(200);
    // the run's own result is whole: only the record summarises
    expect(res.body.output.results).to.have.length(300);
    expect(res.body.output.results[299]).to.deep.equal({ f: { result: 'z'.repeat(200), stdout: '' } });
    const rec = await record(res.body.executionId);
    const logs = (rec.body.logs as { blockId: string; output: any }[]).filter((l) => l.blockId === 'f');
    expect(logs).to.have.length(300);
    expect(logs[0]?.output).to.deep.equal({ result: 'z'.repeat(200), stdout: '' });
    expect(logs[299]?.output).to.deep.include({ summarised: true });
    expect(logs[299]?.output.bytes).to.be.above(200);
  });

  it('troupe validate checks a file within the limits of its environment', () => {
    const file = join(dir, 'wide.json');
    writeFileSync(file, JSON.stringify(container('wide', 'parallel', { kind: 'count', count: 50, concurrency: 5 })));
    const within = troupeSync(['validate', file], {});
    expect(within.code, within.stderr).to.equal(0);
    const over = troupeSync(['validate', file], { TROUPE_MAX_ITERATIONS: '20' });
    expect(over.code).to.equal(1);
    expect(over.stdout).to.contain('/blocks/1/config/count: 50 is more than the 20 iterations');
  });
});
