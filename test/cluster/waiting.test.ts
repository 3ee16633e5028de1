/**
 * Waiting executions with several instances (SPEC §2.1, §9; docs/waiting.md "Several
 * instances"): an execution parked by an instance that is then SIGKILLed is woken by another at
 * its due time, from the shared store's due-time index through the work queue, and resumed once; an approval of an
 * execution parked by the dead instance is decided through another, which resumes it.
 */
import { expect } from 'chai';
import { call, ensureStopped, type ServeProcess } from '../cli/serve-helpers.js';
import { deploy, eventually, startTestCluster, startUpstream, TOKEN, type TestCluster, type Upstream } from './support.js';

const WAIT_MS = 6_000;
// short enough that a sync execute parks at once, polled often so the due time is met closely
const WAITING_ENV = { TROUPE_SYNC_WAIT_MS: '100', TROUPE_WAIT_POLL_MS: '200', TROUPE_LOG_LEVEL: 'info' };
// the calls before and after the wait outlast a lease renewal period (2 s): the instance parking
// it held its lease, and the one resuming it renews one
const SLOW_MS = 3_000;

/** start → a slow call → a wait of WAIT_MS → a slow call counted by the upstream → response. */
function waitWorkflow(id: string, upstream: string): unknown {
  return {
    id,
    name: `Wait ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'before', type: 'api', name: 'Before', config: { url: `${upstream}/slow-wait`, method: 'POST', body: {} } },
      { id: 'pause', type: 'wait', name: 'Pause', config: { duration: WAIT_MS } },
      { id: 'after', type: 'api', name: 'After', config: { url: `${upstream}/slow-after`, method: 'POST', body: {} } },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { waitedMs: '<pause.waitedMs>', n: '<after.data.n>' } } },
    ],
    connections: [
      { from: 'start', to: 'before' },
      { from: 'before', to: 'pause' },
      { from: 'pause', to: 'after' },
      { from: 'after', to: 'reply' },
    ],
  };
}

/** start → a slow call → an approval → a slow call counted by the upstream → response. */
function approvalWorkflow(id: string, upstream: string): unknown {
  return {
    id,
    name: `Approval ${id}`,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'before', type: 'api', name: 'Before', config: { url: `${upstream}/slow-approval`, method: 'POST', body: {} } },
      { id: 'ok', type: 'approval', name: 'Review', config: { message: 'Ship it?', inputFormat: [{ name: 'note', type: 'string' }] } },
      { id: 'after', type: 'api', name: 'After', config: { url: `${upstream}/slow-approved`, method: 'POST', body: {} } },
      { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { decision: '<review.decision>', data: '<review.data>', by: '<review.decidedBy>', n: '<after.data.n>' } } },
    ],
    connections: [
      { from: 'start', to: 'before' },
      { from: 'before', to: 'ok' },
      { from: 'ok', handle: 'approved', to: 'after' },
      { from: 'after', to: 'reply' },
    ],
  };
}

async function record(p: ServeProcess, id: string): Promise<any> {
  const got = await call(p.url, 'GET', `/api/executions/${id}`, { token: TOKEN });
  expect(got.status, JSON.stringify(got.body)).to.equal(200);
  return got.body;
}

async function ended(p: ServeProcess, id: string, ms: number): Promise<any> {
  return eventually(`execution ${id} ended`, ms, async () => {
    const rec = await record(p, id);
    return ['completed', 'failed', 'cancelled'].includes(rec.status) ? rec : undefined;
  });
}

/** Kills `p` at once (no handover, no grace): what a lost machine does. */
async function kill(p: ServeProcess): Promise<void> {
  p.child.kill('SIGKILL');
  await p.exited;
}

/** A sync execute through `p` (it runs there) that parks: 202 waiting; returns the execution id. */
async function parkThrough(p: ServeProcess, workflowId: string, apiKey: string): Promise<string> {
  const r = await call(p.url, 'POST', `/api/workflows/${workflowId}/execute`, { apiKey, body: { input: {} } });
  expect(r.status, JSON.stringify(r.body)).to.equal(202);
  expect(r.body.status).to.equal('waiting');
  return r.body.executionId as string;
}

describe('waiting executions with several instances (child processes)', function () {
  this.timeout(180_000);
  let cluster: TestCluster;
  let upstream: Upstream;

  before(async () => {
    cluster = await startTestCluster();
    upstream = await startUpstream(SLOW_MS);
  });

  after(async () => {
    await cluster?.close();
    await upstream?.close();
  });

  it('wakes a wait parked by a SIGKILLed instance on another at its due time, and resumes it once', async () => {
    const a = await cluster.serve('wait-a', WAITING_ENV);
    const b = await cluster.serve('wait-b', WAITING_ENV);
    const apiKey = await deploy(a.url, waitWorkflow('napper', upstream.url));
    const id = await parkThrough(a, 'napper', apiKey);
    const parked = await record(b, id);
    expect(parked.status).to.equal('waiting');
    expect(parked.waiting).to.have.length(1);
    const due = Date.parse(parked.waiting[0].until as string);
    expect(due - Date.now(), 'still parked when its instance dies').to.be.above(2_000);
    await kill(a);
    expect((await record(b, id)).status, 'nothing resumes it before its due time').to.equal('waiting');

    const done = await ended(b, id, WAIT_MS + 30_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data.n, 'the block after the wait ran once').to.equal(1);
    expect(done.output.data.waitedMs).to.be.at.least(WAIT_MS);
    const wait = done.logs.find((l: { blockId: string }) => l.blockId === 'pause');
    expect(wait.status).to.equal('completed');
    expect(Date.parse(wait.output.resumedAt as string), 'not before its due time').to.be.at.least(due);
    // generous: one poll period, plus the claim and start on a loaded machine
    expect(Date.parse(wait.output.resumedAt as string) - due, 'at its due time').to.be.below(10_000);
    const logs = b.stdout() + b.stderr();
    expect(logs).to.match(/woke a waiting execution/);
    expect(logs, 'the wake-up came through the work queue').to.match(/wake-up taken from the work queue.*"outcome":"resumed"|"outcome":"resumed".*wake-up taken from the work queue/);
    expect(logs, 'not stopped as lost to the dead instance, nor taken over').to.not.match(/another instance took this execution over|took over an execution/);

    // exactly once: one call after the wait (one block run, one key, called once), and it stays so
    await new Promise((r) => setTimeout(r, 3_000));
    const afters = [...upstream.calls].filter(([k]) => k.startsWith('/slow-after '));
    expect(afters.map(([, n]) => n), JSON.stringify(afters)).to.deep.equal([1]);
    const again = await record(b, id);
    expect(again.status).to.equal('completed');
    expect(again.logs.filter((l: { blockId: string }) => l.blockId === 'after')).to.have.length(1);
    expect(again.logs.filter((l: { blockId: string }) => l.blockId === 'pause')).to.have.length(1);
    await ensureStopped(b, 'SIGTERM');
  });

  it('completes an approval decided through another instance for an execution parked by a SIGKILLed one', async () => {
    const a = await cluster.serve('approve-a', WAITING_ENV);
    const b = await cluster.serve('approve-b', WAITING_ENV);
    const apiKey = await deploy(a.url, approvalWorkflow('reviewed', upstream.url));
    const id = await parkThrough(a, 'reviewed', apiKey);
    await kill(a);
    const parked = await record(b, id);
    expect(parked.status).to.equal('waiting');
    expect(parked.waiting[0]).to.include({ blockId: 'ok', kind: 'approval' });

    const decided = await call(b.url, 'POST', `/api/executions/${id}/approvals/ok`, { apiKey, body: { decision: 'approved', data: { note: 'go' } } });
    expect(decided.status, JSON.stringify(decided.body)).to.equal(200);
    const done = await ended(b, id, 30_000);
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data).to.deep.equal({ decision: 'approved', data: { note: 'go' }, by: 'apiKey', n: 1 });
    await new Promise((r) => setTimeout(r, 2_000));
    const approved = [...upstream.calls].filter(([k]) => k.startsWith('/slow-approved '));
    expect(approved.map(([, n]) => n), JSON.stringify(approved)).to.deep.equal([1]);
    const logs = b.stdout() + b.stderr();
    expect(logs).to.match(/woke a waiting execution/);
    expect(logs, 'not stopped as lost to the dead instance, nor taken over').to.not.match(/another instance took this execution over|took over an execution/);
    const late = await call(b.url, 'POST', `/api/executions/${id}/approvals/ok`, { token: TOKEN, body: { decision: 'rejected' } });
    expect(late.status).to.equal(409);
    expect(late.body.error.code).to.equal('NOT_WAITING');
    await ensureStopped(b, 'SIGTERM');
  });
});
