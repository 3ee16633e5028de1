/**
 * The cluster's work queue (SPEC §9): async executions posted to one instance are queued in
 * JetStream and taken by whichever instance has room, each by exactly one; the 202 points at a
 * record that exists at once.
 */
import { expect } from 'chai';
import { signHeaders } from '../../src/model/webhook-signature.js';
import { call } from '../cli/serve-helpers.js';
import { deploy, eventually, startTestCluster, startUpstream, TOKEN, twoCallsWorkflow, type TestCluster, type Upstream } from './support.js';

const COUNT = 8;
const HOOK_SECRET = 'cluster-hook-secret-0123456789';

describe('the work queue of a cluster (child processes)', function () {
  this.timeout(180_000);
  let cluster: TestCluster;
  let upstream: Upstream;

  before(async () => {
    cluster = await startTestCluster();
    upstream = await startUpstream(4_000);
  });

  after(async () => {
    await cluster?.close();
    await upstream?.close();
  });

  it('spreads async executions posted to one instance over the instances, each run once', async () => {
    // at most 4 executions at once per instance: 8 posted to one cannot all run there at once
    const a = await cluster.serve('one', { TROUPE_MAX_INFLIGHT: '4' });
    const b = await cluster.serve('two', { TROUPE_MAX_INFLIGHT: '4' });
    const apiKey = await deploy(a.url, twoCallsWorkflow('spread', upstream.url));
    const ids: string[] = [];
    for (let n = 0; n < COUNT; n++) {
      const ack = await call(a.url, 'POST', '/api/workflows/spread/execute', { apiKey, body: { input: { n }, async: true } });
      expect(ack.status, JSON.stringify(ack.body)).to.equal(202);
      const id = ack.body.executionId as string;
      ids.push(id);
      // the record exists as soon as the 202 is out, on any instance
      const rec = await call(b.url, 'GET', `/api/executions/${id}`, { token: TOKEN });
      expect(rec.status, JSON.stringify(rec.body)).to.equal(200);
      expect(['queued', 'running']).to.include(rec.body.status);
    }
    await eventually('both instances run some', 20_000, async () => {
      const items = (await call(a.url, 'GET', '/api/cluster', { token: TOKEN })).body.items as { id: string; running: number }[];
      return items.length === 2 && items.every((i) => i.running > 0) ? true : undefined;
    });
    for (const id of ids) {
      const done = await eventually(`execution ${id} completed`, 60_000, async () => {
        const rec = (await call(a.url, 'GET', `/api/executions/${id}`, { token: TOKEN })).body;
        return rec.status === 'completed' || rec.status === 'failed' ? rec : undefined;
      });
      expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    }
    // each execution's API calls ran once: one key per block run, each called once
    const firsts = [...upstream.calls].filter(([k]) => k.startsWith('/first '));
    expect(firsts).to.have.length(COUNT);
    expect(firsts.every(([, n]) => n === 1), JSON.stringify(firsts)).to.equal(true);
    const slows = [...upstream.calls].filter(([k]) => k.startsWith('/slow '));
    expect(slows.map(([, n]) => n)).to.deep.equal(Array.from({ length: COUNT }, () => 1));
  });

  it('starts a webhook event accepted by a full instance on another at once, through the shared consumer', async () => {
    const full = await cluster.serve('three', { TROUPE_MAX_INFLIGHT: '1' });
    const apiKey = await deploy(full.url, twoCallsWorkflow('occupy', upstream.url));
    expect((await call(full.url, 'PUT', '/api/secrets/HOOK_SECRET', { token: TOKEN, body: { value: HOOK_SECRET } })).status).to.equal(201);
    await deploy(full.url, {
      id: 'hooked', name: 'Hooked',
      triggers: [{ type: 'webhook', id: 'hook', path: 'hooked/in', provider: 'generic', secret: '{{HOOK_SECRET}}' }],
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { got: '<start.input>' } } },
      ],
      connections: [{ from: 'start', to: 'reply' }],
    });
    // a sync execution runs where it was asked: it fills the one place of `three`
    const occupied = upstream.arrived('/slow');
    const busy = call(full.url, 'POST', '/api/workflows/occupy/execute', { apiKey, body: { input: { n: 99 } } });
    await occupied;
    const body = JSON.stringify({ hello: 'cluster' });
    const headers = { 'Content-Type': 'application/json', 'X-Delivery-Id': 'cluster-1', ...signHeaders('generic', HOOK_SECRET, Buffer.from(body), Date.now()) };
    const res = await fetch(`${full.url}/webhooks/hooked/in`, { method: 'POST', headers, body });
    const acceptedAt = Date.now();
    expect(res.status).to.equal(202);
    const executionId = res.headers.get('x-execution-id') as string;
    const done = await eventually('the webhook execution completed', 30_000, async () => {
      const rec = (await call(full.url, 'GET', `/api/executions/${executionId}`, { token: TOKEN })).body;
      return rec.status === 'completed' ? rec : undefined;
    });
    // not left to the store's sweep (which waits 5 s for the instance that accepted it)
    expect(Date.parse(done.startedAt) - acceptedAt, 'started by another instance at once').to.be.below(4_000);
    expect(done.output.data.got.body).to.deep.equal({ hello: 'cluster' });
    expect((await busy).status).to.equal(200);
  });

  it('queues an async rerun for another instance when the one asked is full', async () => {
    const full = await cluster.serve('four', { TROUPE_MAX_INFLIGHT: '1' });
    const apiKey = await deploy(full.url, twoCallsWorkflow('again', upstream.url));
    const original = await call(full.url, 'POST', '/api/workflows/again/execute', { apiKey, body: { input: { n: 7 } } });
    expect(original.status, JSON.stringify(original.body)).to.equal(200);
    const originalId = original.headers.get('x-execution-id') as string;
    const occupied = upstream.arrived('/slow');
    const busy = call(full.url, 'POST', '/api/workflows/again/execute', { apiKey, body: { input: { n: 8 } } });
    await occupied;
    const rerun = await call(full.url, 'POST', `/api/executions/${originalId}/rerun`, { token: TOKEN, body: { async: true } });
    expect(rerun.status, JSON.stringify(rerun.body)).to.equal(202);
    const done = await eventually('the rerun completed', 30_000, async () => {
      const rec = (await call(full.url, 'GET', `/api/executions/${rerun.body.executionId as string}`, { token: TOKEN })).body;
      return rec.status === 'completed' || rec.status === 'failed' ? rec : undefined;
    });
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.trigger).to.deep.equal({ type: 'rerun', of: originalId, fromBlock: null });
    expect(done.input).to.deep.equal({ n: 7 });
    expect((await busy).status).to.equal(200);
  });
});
