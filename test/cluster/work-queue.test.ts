/**
 * The cluster's work queue (SPEC §9): async executions posted to one instance are queued in
 * JetStream and taken by whichever instance has room, each by exactly one; the 202 points at a
 * record that exists at once.
 */
import { expect } from 'chai';
import { call } from '../cli/serve-helpers.js';
import { deploy, eventually, startTestCluster, startUpstream, TOKEN, twoCallsWorkflow, type TestCluster, type Upstream } from './support.js';

const COUNT = 8;

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
});
