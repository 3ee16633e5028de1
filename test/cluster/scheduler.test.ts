/**
 * One scheduler per cluster (SPEC §9): of two instances one leads the scheduler (a lease in a
 * JetStream key-value bucket); when it is SIGKILLed the other leads within the lease time, and
 * no due time of a per-second schedule fires twice; the ones that fell while nobody led go by
 * the schedule's catchUp.
 */
import { expect } from 'chai';
import { call, type ServeProcess } from '../cli/serve-helpers.js';
import { deploy, eventually, startTestCluster, TOKEN, type TestCluster } from './support.js';

const ticking = {
  id: 'ticking',
  name: 'Ticking',
  triggers: [{ type: 'schedule', id: 'every', cron: '* * * * * *', overlap: 'allow', catchUp: 'last', input: { from: 'cron' } }],
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'reply', type: 'response', name: 'Reply', config: { status: 200, data: { ok: true } } },
  ],
  connections: [{ from: 'start', to: 'reply' }],
};

const LEADS = /this instance leads the scheduler/;

function leads(p: ServeProcess): boolean {
  return LEADS.test(p.stdout() + p.stderr());
}

/** The due times of the schedule's executions, oldest first, with their statuses. */
async function fires(url: string): Promise<{ dueAt: string; status: string }[]> {
  const out: { dueAt: string; status: string }[] = [];
  let cursor: string | null = null;
  do {
    const page = await call(url, 'GET', `/api/executions?workflowId=ticking&limit=100${cursor === null ? '' : `&cursor=${cursor}`}`, { token: TOKEN });
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    for (const r of page.body.items as { trigger: { dueAt: string }; status: string }[]) out.push({ dueAt: r.trigger.dueAt, status: r.status });
    cursor = page.body.nextCursor as string | null;
  } while (cursor !== null);
  return out.sort((a, b) => a.dueAt.localeCompare(b.dueAt));
}

describe('the scheduler of a cluster (child processes)', function () {
  this.timeout(180_000);
  let cluster: TestCluster;

  before(async () => {
    cluster = await startTestCluster();
  });

  after(async () => {
    await cluster?.close();
  });

  it('runs on one instance, fails over to another within the lease time, and fires no due time twice', async () => {
    const a = await cluster.serve('north');
    const b = await cluster.serve('south');
    await deploy(a.url, ticking);
    await eventually('some fires', 20_000, async () => ((await fires(a.url)).length >= 4 ? true : undefined));
    expect([leads(a), leads(b)].filter(Boolean)).to.have.length(1);
    const [leader, other] = leads(a) ? [a, b] : [b, a];
    leader.child.kill('SIGKILL');
    const killedAt = Date.now();
    await leader.exited;
    await eventually('the other instance leads', 20_000, async () => (leads(other) ? true : undefined));
    expect(Date.now() - killedAt, 'failover within the lease time (10 s) and a renewal period').to.be.below(15_000);
    const before = (await fires(other.url)).length;
    await eventually('fires go on', 20_000, async () => ((await fires(other.url)).length >= before + 4 ? true : undefined));
    // the last ones get a moment to end
    await new Promise((r) => setTimeout(r, 1_500));
    const all = await fires(other.url);
    const seconds = all.map((f) => Date.parse(f.dueAt) / 1000);
    expect(new Set(seconds).size, 'no due time fired twice').to.equal(seconds.length);
    const first = seconds[0] as number;
    const last = seconds[seconds.length - 1] as number;
    // due times that fell while no instance led go by catchUp (SPEC §9): 'last' fires the latest
    // of them, so there is one gap at most, shorter than the failover
    const gaps = seconds.slice(1).map((t, i) => t - (seconds[i] as number)).filter((d) => d > 1);
    expect(gaps.length, `gaps: ${JSON.stringify(gaps)}`).to.be.at.most(1);
    expect(gaps.every((d) => d < 15), `gaps: ${JSON.stringify(gaps)}`).to.equal(true);
    expect(last - first + 1 - seconds.length, 'due times not fired').to.be.below(15);
    // the ones the dead leader had started were resumed or ended; none is left running for good
    await eventually('every fire ended', 30_000, async () => ((await fires(other.url)).filter((f) => f.dueAt <= all[all.length - 1]!.dueAt).every((f) => f.status === 'completed') ? true : undefined));
  });
});
