/**
 * The workflow block through `troupe serve` (SPEC §1.1, §2.1): a three-level chain returns the
 * innermost output with the records linked both ways; the depth limit; cancelling a parent
 * cancels its children (the parent parked while its child waits); a literal unknown workflow is
 * 422 at save.
 */
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, ensureStopped, startServe, type ServeProcess } from './serve-helpers.js';
import { deploy, ended, until } from './waiting-helpers.js';

/** start → workflow block calling `child` with `{ n: <start.n> + ... }` → response of its output */
function caller(id: string, child: string, version: unknown = 'deployed'): unknown {
  return {
    id,
    name: `Caller ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: true }] } },
      { id: 'call', type: 'workflow', name: 'Call', config: { workflowId: child, version, input: { n: '<start.n>' } } },
      { id: 'r', type: 'response', name: 'Reply', config: { status: 200, data: { via: id, inner: '<call.output>', child: '<call.executionId>' } } },
    ],
    connections: [{ from: 'start', to: 'call' }, { from: 'call', to: 'r' }],
  };
}

const innermost = {
  id: 'inner',
  name: 'Inner',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'n', type: 'number', required: true }] } },
    { id: 'f', type: 'function', name: 'Double', config: { code: 'return <start.n> * 2;' } },
  ],
  connections: [{ from: 'start', to: 'f' }],
};

describe('workflow block through troupe serve', function () {
  this.timeout(120_000);
  let proc: ServeProcess | undefined;
  let token = '';
  const dirs: string[] = [];

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-children-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    proc = await startServe(data, [], { TROUPE_WAIT_POLL_MS: '200', TROUPE_SYNC_WAIT_MS: '1000', TROUPE_MAX_CALL_DEPTH: '3' });
    token = readFileSync(join(data, 'admin-token'), 'utf8').trim();
  });
  after(async () => {
    await ensureStopped(proc);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a three-level chain returns the innermost output, each child linked to its parent both ways', async () => {
    const url = proc!.url;
    await deploy(url, token, innermost);
    await deploy(url, token, caller('middle', 'inner'));
    const key = await deploy(url, token, caller('outer', 'middle', 'current'));
    const r = await call(url, 'POST', '/api/workflows/outer/execute', { apiKey: key, body: { input: { n: 21 } } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.via).to.equal('outer');
    expect(r.body.inner.data.via).to.equal('middle');
    expect(r.body.inner.data.inner).to.deep.equal({ result: 42, stdout: '' });
    const outerId = r.headers.get('x-execution-id') as string;
    const middleId = r.body.child as string;
    const middle = await call(url, 'GET', `/api/executions/${middleId}`, { token });
    expect(middle.body.trigger).to.include({ type: 'workflow', parentExecutionId: outerId, blockId: 'call' });
    const innerId = middle.body.output.data.child as string;
    const inner = await call(url, 'GET', `/api/executions/${innerId}`, { token });
    expect(inner.body.trigger).to.include({ type: 'workflow', parentExecutionId: middleId, blockId: 'call', depth: 2 });
    const outer = await call(url, 'GET', `/api/executions/${outerId}`, { token });
    expect(outer.body.logs.find((l: { blockId: string }) => l.blockId === 'call').output).to.include({ executionId: middleId, status: 'completed' });
  });

  it('nesting past TROUPE_MAX_CALL_DEPTH fails with CALL_DEPTH_EXCEEDED, and the caller with CHILD_FAILED', async () => {
    const url = proc!.url;
    // a workflow calling itself: depth 1, 2, 3, then the fourth call is refused
    const key = await deploy(url, token, caller('again', 'again', 'current'));
    const r = await call(url, 'POST', '/api/workflows/again/execute', { apiKey: key, body: { input: { n: 1 } } });
    expect(r.status).to.equal(500);
    expect(r.body.error).to.include({ code: 'CHILD_FAILED', blockId: 'call' });
    let rec = await call(url, 'GET', `/api/executions/${r.body.executionId}`, { token });
    const codes: string[] = [];
    for (;;) {
      const log = rec.body.logs.find((l: { blockId: string }) => l.blockId === 'call');
      codes.push(log.error.code);
      if (typeof log.error.childExecutionId !== 'string') break;
      rec = await call(url, 'GET', `/api/executions/${log.error.childExecutionId}`, { token });
    }
    expect(codes).to.deep.equal(['CHILD_FAILED', 'CHILD_FAILED', 'CHILD_FAILED', 'CALL_DEPTH_EXCEEDED']);
  });

  it('a waiting child makes its parent wait; cancelling the parent cancels the child', async () => {
    const url = proc!.url;
    await deploy(url, token, {
      id: 'sleepy', name: 'Sleepy',
      blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 'w', type: 'wait', name: 'Nap', config: { duration: 'PT1H' } }],
      connections: [{ from: 'start', to: 'w' }],
    });
    const key = await deploy(url, token, caller('waiter', 'sleepy'));
    const r = await call(url, 'POST', '/api/workflows/waiter/execute', { apiKey: key, body: { input: { n: 1 } } });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const parentId = r.body.executionId as string;
    const parent = await until(async () => {
      const rec = await call(url, 'GET', `/api/executions/${parentId}`, { token });
      return rec.body.status === 'waiting' ? rec.body : null;
    }, 10_000, 'the parent to park');
    const childId = parent.waiting[0].childExecutionId as string;
    expect(parent.waiting[0]).to.include({ blockId: 'call', kind: 'workflow' });
    expect((await call(url, 'GET', `/api/executions/${childId}`, { token })).body.status).to.equal('waiting');
    const cancel = await call(url, 'POST', `/api/executions/${parentId}/cancel`, { token });
    expect(cancel.body.status).to.equal('cancelled');
    const child = await ended(url, token, childId);
    expect(child.status).to.equal('cancelled');
  });

  it('a parent parked on a parked child is woken when the child ends, and completes with its output', async () => {
    const url = proc!.url;
    await deploy(url, token, {
      id: 'napper', name: 'Napper',
      blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 'w', type: 'wait', name: 'Nap', config: { duration: 2500 } }],
      connections: [{ from: 'start', to: 'w' }],
    });
    const key = await deploy(url, token, caller('patient', 'napper'));
    const r = await call(url, 'POST', '/api/workflows/patient/execute', { apiKey: key, body: { input: { n: 1 } } });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    const done = await ended(url, token, r.body.executionId as string);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data.inner.waitedMs).to.be.at.least(2500);
  });

  it('cancelling a parent whose child runs cancels the child', async () => {
    const url = proc!.url;
    await deploy(url, token, {
      id: 'busy', name: 'Busy',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'f', type: 'function', name: 'Spin', config: { code: 'await new Promise((r) => setTimeout(r, 4000)); return 1;' } },
      ],
      connections: [{ from: 'start', to: 'f' }],
    });
    const key = await deploy(url, token, caller('boss', 'busy'));
    const r = await call(url, 'POST', '/api/workflows/boss/execute', { apiKey: key, body: { input: { n: 1 }, async: true } });
    const parentId = r.body.executionId as string;
    const childId = await until(async () => {
      const rec = await call(url, 'GET', `/api/executions/${parentId}`, { token });
      const log = rec.body.logs.find((l: { blockId: string }) => l.blockId === 'call');
      if (log?.status !== 'running') return null;
      const listed = await call(url, 'GET', '/api/executions?workflowId=busy', { token });
      return (listed.body.items[0]?.id as string | undefined) ?? null;
    }, 10_000, 'the child to start');
    const cancel = await call(url, 'POST', `/api/executions/${parentId}/cancel`, { token });
    expect(cancel.body.status).to.equal('cancelled');
    const child = await ended(url, token, childId);
    expect(child.status).to.equal('cancelled');
    expect(child.trigger).to.include({ type: 'workflow', parentExecutionId: parentId });
  });

  it('a literal unknown workflowId is 422 at save', async () => {
    const bad = await call(proc!.url, 'POST', '/api/workflows', { token, body: caller('lost', 'nowhere') });
    expect(bad.status).to.equal(422);
    expect(bad.body.error.details.issues).to.deep.include({ path: '/blocks/1/config/workflowId', message: 'workflow "nowhere" does not exist' });
  });
});
