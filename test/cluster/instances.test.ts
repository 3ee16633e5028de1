/**
 * Several `troupe serve` on one NATS and one PostgreSQL (SPEC §9): each announces itself and
 * GET /api/cluster lists the live ones from any of them (and /metrics its view of the cluster); an execution of a SIGKILLed instance
 * is taken over by another and resumed from its last block boundary.
 */
import { expect } from 'chai';
import { call, ensureStopped, type ServeProcess } from '../cli/serve-helpers.js';
import { deploy, eventually, startTestCluster, startUpstream, TOKEN, twoCallsWorkflow, type TestCluster, type Upstream } from './support.js';

interface Listed {
  id: string;
  host: string;
  version: string;
  startedAt: string;
  lastSeenAt: string;
  running: number;
}

async function instances(p: ServeProcess): Promise<Listed[]> {
  const got = await call(p.url, 'GET', '/api/cluster', { token: TOKEN });
  expect(got.status, JSON.stringify(got.body)).to.equal(200);
  return got.body.items as Listed[];
}

/** [the instance running the one execution, the other], as their announcements say (`aId` names `a`). */
async function runner(a: ServeProcess, aId: string, b: ServeProcess): Promise<[ServeProcess, ServeProcess]> {
  const busy = await eventually('an instance shows the running execution', 10_000, async () => (await instances(b)).find((i) => i.running === 1)?.id);
  return busy === aId ? [a, b] : [b, a];
}

describe('several instances on NATS and PostgreSQL (child processes)', function () {
  this.timeout(180_000);
  let cluster: TestCluster;
  let upstream: Upstream;

  before(async () => {
    cluster = await startTestCluster();
    upstream = await startUpstream(6_000);
  });

  after(async () => {
    await cluster?.close();
    await upstream?.close();
  });

  it('lists every live instance from any of them, and drops one SIGKILLed within the lease expiry', async () => {
    const a = await cluster.serve('alpha');
    const b = await cluster.serve('beta');
    for (const p of [a, b]) {
      const listed = await instances(p);
      expect(listed.map((i) => i.id)).to.deep.equal(['alpha', 'beta']);
      for (const i of listed) {
        expect(i.running).to.equal(0);
        expect(Date.parse(i.lastSeenAt)).to.be.at.least(Date.parse(i.startedAt));
        expect(i.version).to.match(/^\d+\.\d+\.\d+/);
      }
    }
    // each instance's /metrics tells its view: two instances, and one scheduler leader among them
    const scraped = await Promise.all([a, b].map(async (p) => (await fetch(`${p.url}/metrics`)).text()));
    for (const text of scraped) expect(text).to.match(/^troupe_cluster_instances 2$/m);
    await eventually('one scheduler leader', 10_000, async () => {
      const texts = await Promise.all([a, b].map(async (p) => (await fetch(`${p.url}/metrics`)).text()));
      const leaders = texts.filter((t) => /^troupe_cluster_scheduler_leader 1$/m.test(t));
      return leaders.length === 1 ? true : undefined;
    });
    a.child.kill('SIGKILL');
    await a.exited;
    await eventually('alpha leaves the list', 20_000, async () => {
      const ids = (await instances(b)).map((i) => i.id);
      return ids.length === 1 ? ids : undefined;
    }).then((ids) => expect(ids).to.deep.equal(['beta']));
    expect((await call(b.url, 'GET', '/readyz')).status).to.equal(200);
    await ensureStopped(b, 'SIGTERM');
  });

  it('resumes the execution of a SIGKILLed instance on another within 15 s, without running its completed blocks again', async () => {
    const a = await cluster.serve('gamma');
    const b = await cluster.serve('delta');
    const apiKey = await deploy(a.url, twoCallsWorkflow('twocalls', upstream.url));
    const slowArrived = upstream.arrived('/slow');
    const ack = await call(a.url, 'POST', '/api/workflows/twocalls/execute', { apiKey, body: { input: { n: 1 }, async: true } });
    expect(ack.status, JSON.stringify(ack.body)).to.equal(202);
    const id = ack.body.executionId as string;
    await slowArrived;
    // the first block's end reaches the store (a group commit) before the kill
    await eventually('the first block recorded', 10_000, async () => {
      const rec = (await call(b.url, 'GET', `/api/executions/${id}`, { token: TOKEN })).body;
      return (rec.logs as { blockId: string; status: string }[]).some((l) => l.blockId === 'first' && l.status === 'completed') ? true : undefined;
    });
    // the work queue gave it to either: each instance announces how many executions it runs
    const [owner, survivor] = await runner(a, 'gamma', b);
    owner.child.kill('SIGKILL');
    const killedAt = Date.now();
    await owner.exited;
    const done = await eventually('the execution completed elsewhere', 40_000, async () => {
      const rec = (await call(survivor.url, 'GET', `/api/executions/${id}`, { token: TOKEN })).body;
      return rec.status === 'completed' ? rec : undefined;
    });
    const slowCalls = [...upstream.calls].filter(([k]) => k.startsWith('/slow '));
    // the slow call started again on delta (the same block run: the same Idempotency-Key)
    expect(slowCalls).to.have.length(1);
    expect(slowCalls[0]?.[1]).to.equal(2);
    const resumedAt = Date.now() - killedAt;
    expect(resumedAt, 'taken over and finished (lease expiry + the slow call)').to.be.below(15_000 + 6_000 + 5_000);
    const firstCalls = [...upstream.calls].filter(([k]) => k.startsWith('/first '));
    expect(firstCalls.map(([, n]) => n), 'the completed first block did not run again').to.deep.equal([1]);
    expect(done.output).to.deep.equal({ status: 200, headers: {}, data: { first: 1, slow: 2 } });
    expect(survivor.stdout() + survivor.stderr()).to.match(/took over an execution/);
    await ensureStopped(survivor, 'SIGTERM');
  });

  it('hands its unfinished executions over on SIGTERM instead of cancelling them: another resumes them at once', async () => {
    const a = await cluster.serve('epsilon', { TROUPE_SHUTDOWN_GRACE_MS: '500' });
    const b = await cluster.serve('zeta', { TROUPE_SHUTDOWN_GRACE_MS: '500' });
    const apiKey = await deploy(a.url, twoCallsWorkflow('handover', upstream.url));
    upstream.calls.clear();
    const slowArrived = upstream.arrived('/slow');
    const ack = await call(a.url, 'POST', '/api/workflows/handover/execute', { apiKey, body: { input: { n: 2 }, async: true } });
    expect(ack.status, JSON.stringify(ack.body)).to.equal(202);
    const id = ack.body.executionId as string;
    await slowArrived;
    await eventually('the first block recorded', 10_000, async () => {
      const rec = (await call(b.url, 'GET', `/api/executions/${id}`, { token: TOKEN })).body;
      return (rec.logs as { blockId: string; status: string }[]).some((l) => l.blockId === 'first' && l.status === 'completed') ? true : undefined;
    });
    const [owner, survivor] = await runner(a, 'epsilon', b);
    const again = upstream.arrived('/slow');
    const stoppedAt = Date.now();
    owner.child.kill('SIGTERM');
    expect(await owner.exited).to.equal(0);
    expect(owner.stdout() + owner.stderr()).to.match(/handed over to another instance/);
    await again;
    // released, not expired: taken at the next sweep, well before the 10 s lease expiry
    expect(Date.now() - stoppedAt).to.be.below(8_000);
    const done = await eventually('the execution completed on the other', 30_000, async () => {
      const rec = (await call(survivor.url, 'GET', `/api/executions/${id}`, { token: TOKEN })).body;
      return rec.status === 'completed' || rec.status === 'failed' || rec.status === 'cancelled' ? rec : undefined;
    });
    expect(done.status, JSON.stringify(done.error)).to.equal('completed');
    expect(done.output.data).to.deep.equal({ first: 1, slow: 2 });
    expect([...upstream.calls].filter(([k]) => k.startsWith('/first ')).map(([, n]) => n)).to.deep.equal([1]);
  });
});
