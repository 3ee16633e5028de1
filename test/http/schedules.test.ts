import { expect } from 'chai';
import { delayToNextTick } from '../../src/model/scheduler.js';
import { auth, makeHarness, otherInstance, type Harness } from './support.js';

interface View {
  id: string;
  active: boolean;
  nextRuns: string[];
  timezone: string;
  lastResult: { dueAt: string; executionId: string | null; status: string } | null;
  lastRun: { dueAt: string; executionId: string | null; status: string } | null;
}

function scheduled(id: string, trigger: Record<string, unknown>, napMs = 0): Record<string, unknown> {
  return {
    id,
    name: `Scheduled ${id}`,
    triggers: [{ type: 'schedule', id: 'tick', cron: '*/5 * * * *', input: { from: 'cron' }, ...trigger }],
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'nap', type: 'sleep', name: 'Nap', config: { ms: napMs, value: '<start.from>' } },
    ],
    connections: [{ from: 'start', to: 'nap' }],
  };
}

describe('http: schedules', () => {
  let h: Harness;
  let t = 0;
  const at = (iso: string): void => {
    t = Date.parse(iso);
  };
  beforeEach(() => {
    at('2026-03-02T10:00:30.000Z');
    h = makeHarness({ now: () => t });
  });
  afterEach(() => h.close());

  async function create(doc: Record<string, unknown>, deploy = true): Promise<void> {
    await h.http.post('/api/workflows').set(auth).send(doc).expect(201);
    if (deploy) await h.http.post(`/api/workflows/${String(doc['id'])}/deploy`).set(auth).expect(201);
  }

  async function views(id: string): Promise<View[]> {
    const res = await h.http.get(`/api/workflows/${id}/schedules`).set(auth).expect(200);
    expect(res.body.nextCursor).to.equal(null);
    return res.body.items as View[];
  }

  async function history(id: string): Promise<{ id: string; status: string; trigger: Record<string, unknown>; input: unknown }[]> {
    for (let i = 0; i < 100; i++) {
      const res = await h.http.get(`/api/workflows/${id}/executions`).set(auth).expect(200);
      const items = res.body.items as { id: string; status: string; trigger: Record<string, unknown>; input: unknown }[];
      if (items.every((x) => x.status !== 'running')) return items;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('executions did not end');
  }

  it('shows next run times only while deployed; 404 for an unknown workflow', async () => {
    await create(scheduled('s', {}), false);
    expect(await views('s')).to.deep.equal([
      {
        id: 'tick', cron: '*/5 * * * *', timezone: 'UTC', overlap: 'skip', catchUp: 'none', input: { from: 'cron' },
        active: false, nextRuns: [], nextRunAt: null, lastResult: null, lastRun: null,
      },
    ]);
    await h.http.post('/api/workflows/s/deploy').set(auth).expect(201);
    const [v] = await views('s');
    expect(v?.active).to.equal(true);
    expect(v?.nextRuns).to.deep.equal(['10:05', '10:10', '10:15', '10:20', '10:25'].map((m) => `2026-03-02T${m}:00.000Z`));
    await h.http.get('/api/workflows/nope/schedules').set(auth).expect(404);
    await h.http.get('/api/workflows/s/schedules').expect(401);
  });

  it('follows the IANA zone: 09:00 in Tokyo is 00:00Z', async () => {
    await create(scheduled('tz', { cron: '0 9 * * *', timezone: 'Asia/Tokyo' }));
    const [v] = await views('tz');
    expect(v?.timezone).to.equal('Asia/Tokyo');
    expect(v?.nextRuns[0]).to.equal('2026-03-03T00:00:00.000Z');
  });

  it('fires each due time once, with its input, even with two instances ticking', async () => {
    await create(scheduled('once', {}));
    const other = otherInstance(h, { now: () => t });
    at('2026-03-02T10:05:00.400Z');
    const started = (await h.services.schedules.tick()) + (await other.services.schedules.tick()) + (await h.services.schedules.tick());
    expect(started).to.equal(1);
    const runs = await history('once');
    expect(runs).to.have.length(1);
    expect(runs[0]?.trigger).to.deep.equal({ type: 'schedule', triggerId: 'tick', dueAt: '2026-03-02T10:05:00.000Z' });
    expect(runs[0]?.input).to.deep.equal({ from: 'cron' });
    expect(runs[0]?.status).to.equal('completed');
    const [v] = await views('once');
    expect(v?.lastResult).to.deep.include({ dueAt: '2026-03-02T10:05:00.000Z', executionId: runs[0]?.id, status: 'completed' });
    expect(v?.nextRuns[0]).to.equal('2026-03-02T10:10:00.000Z');
  });

  it('overlap "skip" skips a due time while the previous run is running; "allow" runs both', async () => {
    at('2026-03-02T10:00:30.500Z');
    await create(scheduled('skip', { cron: '* * * * * *' }, 400));
    await create(scheduled('allow', { cron: '* * * * * *', overlap: 'allow' }, 400));
    at('2026-03-02T10:00:31.100Z');
    expect(await h.services.schedules.tick()).to.equal(2);
    at('2026-03-02T10:00:32.100Z');
    expect(await h.services.schedules.tick()).to.equal(1);
    const [skip] = await views('skip');
    expect(skip?.lastResult).to.deep.include({ dueAt: '2026-03-02T10:00:32.000Z', status: 'skipped', executionId: null });
    expect(skip?.lastRun, 'the skip does not hide the run').to.deep.include({ dueAt: '2026-03-02T10:00:31.000Z' });
    expect(await history('skip')).to.have.length(1);
    expect(await history('allow')).to.have.length(2);
  });

  it('overlap "skip": a run still going in this process blocks the next one however long it has run', async () => {
    // the scheduler's clock runs ahead of the real one, which stamps the run's startedAt
    at('2027-03-02T10:00:30.500Z');
    await create(scheduled('long', { cron: '* * * * * *' }, 700));
    at('2027-03-02T10:00:31.100Z');
    expect(await h.services.schedules.tick()).to.equal(1);
    // the scheduler's clock jumps past the time limit + 60 s: the run is still here, so it blocks
    at('2027-03-02T10:06:40.100Z');
    expect(await h.services.schedules.tick()).to.equal(0);
    expect((await views('long'))[0]?.lastResult).to.deep.include({ status: 'skipped' });
    expect(await history('long')).to.have.length(1);
  });

  it('after downtime: catchUp "none" runs nothing missed, "last" runs the latest missed one once', async () => {
    await create(scheduled('none', {}));
    await create(scheduled('last', { catchUp: 'last' }));
    at('2026-03-02T10:00:31.000Z');
    await h.services.schedules.tick();
    at('2026-03-02T10:31:10.000Z'); // the service was down since: 10:05 … 10:30 fell meanwhile
    const restarted = otherInstance(h, { now: () => t }).services.schedules;
    expect(await restarted.tick()).to.equal(1);
    expect(await restarted.tick()).to.equal(0);
    const runs = await history('last');
    expect(runs.map((r) => r.trigger['dueAt'])).to.deep.equal(['2026-03-02T10:30:00.000Z']);
    expect(await history('none')).to.have.length(0);
    expect((await views('none'))[0]?.nextRuns[0], 'what was passed over is not due any more').to.equal('2026-03-02T10:35:00.000Z');
    at('2026-03-02T10:35:00.200Z');
    expect(await restarted.tick()).to.equal(2);
  });

  it('a tick that is late while the service runs fires what came due, whatever catchUp says', async () => {
    await create(scheduled('late', {}));
    at('2026-03-02T10:04:50.000Z');
    await h.services.schedules.tick();
    at('2026-03-02T10:05:20.000Z'); // 30 s without a tick, but this instance was up
    expect(await h.services.schedules.tick()).to.equal(1);
  });

  it('fires only while deployed, on the pinned version; deleting the workflow ends it', async () => {
    await create(scheduled('pin', {}));
    await h.http.put('/api/workflows/pin').set(auth).send(scheduled('pin', { input: { from: 'edited' } })).expect(200);
    at('2026-03-02T10:05:00.100Z');
    expect(await h.services.schedules.tick()).to.equal(1);
    expect((await history('pin'))[0]?.input, 'the deployed version runs').to.deep.equal({ from: 'cron' });
    await h.http.delete('/api/workflows/pin/deploy').set(auth).expect(204);
    at('2026-03-02T10:10:00.100Z');
    expect(await h.services.schedules.tick()).to.equal(0);
    expect((await views('pin'))[0]).to.deep.include({ active: false, nextRuns: [] });
    await h.http.post('/api/workflows/pin/deploy').set(auth).expect(201);
    at('2026-03-02T10:15:00.100Z');
    expect(await h.services.schedules.tick()).to.equal(1);
    expect((await history('pin'))[0]?.input, 'redeployed: the edit runs').to.deep.equal({ from: 'edited' });
    await h.http.delete('/api/workflows/pin').set(auth).expect(204);
    at('2026-03-02T10:20:00.100Z');
    expect(await h.services.schedules.tick()).to.equal(0);
    expect(await h.store.schedules.list()).to.deep.equal([]);
  });

  it('a redeploy with the same cron drops no due time; a stalled tick still fires what came due', async () => {
    await create(scheduled('re', {}));
    at('2026-03-02T10:04:59.000Z');
    expect(await h.services.schedules.tick()).to.equal(0);
    at('2026-03-02T10:05:00.300Z');
    await h.http.post('/api/workflows/re/deploy').set(auth).expect(201);
    at('2026-03-02T10:05:00.900Z');
    expect(await h.services.schedules.tick(), 'due before the redeploy, ticked after it').to.equal(1);
    await history('re'); // let that run end: overlap skip would skip the next one
    at('2026-03-02T10:09:59.000Z');
    await h.services.schedules.tick();
    at('2026-03-02T10:10:25.000Z'); // a 26 s stall, not downtime
    expect(await h.services.schedules.tick()).to.equal(1);
    expect((await history('re')).map((r) => r.trigger['dueAt'])).to.deep.equal(['2026-03-02T10:10:00.000Z', '2026-03-02T10:05:00.000Z']);
  });

  it('one schedule that cannot start holds up no other, and is retried', async () => {
    await create(scheduled('bad', {}));
    await create(scheduled('good', {}));
    const executions = h.services.executions;
    const real = executions.start.bind(executions);
    let broken = true;
    executions.start = async (loaded, input, trigger, opts) => {
      if (broken && loaded.workflowId === 'bad') throw new Error('cannot start');
      return real(loaded, input, trigger, opts);
    };
    at('2026-03-02T10:05:00.100Z');
    expect(await h.services.schedules.tick()).to.equal(1);
    expect(await history('good')).to.have.length(1);
    expect((await views('bad'))[0]?.lastResult?.status).to.equal('starting');
    broken = false;
    at('2026-03-02T10:05:08.000Z');
    expect(await h.services.schedules.tick(), 'the claim is started later').to.equal(1);
    expect((await history('bad')).map((r) => r.trigger['dueAt'])).to.deep.equal(['2026-03-02T10:05:00.000Z']);
  });

  it('accepts a schedule whose input the starter refuses (the SPEC §1 example): its runs fail with INVALID_INPUT', async () => {
    const doc = scheduled('strict', {});
    (doc['blocks'] as { config: Record<string, unknown> }[])[0]!.config = { inputFormat: [{ name: 'city', type: 'string', required: true }] };
    await create(doc);
    at('2026-03-02T10:05:00.100Z');
    expect(await h.services.schedules.tick()).to.equal(1);
    const [run] = await history('strict');
    expect(run?.status).to.equal('failed');
    const rec = await h.http.get(`/api/executions/${run?.id ?? ''}`).set(auth).expect(200);
    expect(rec.body.error).to.include({ code: 'INVALID_INPUT', blockId: 'start' });
  });

  it('refuses a cron that never comes due (422)', async () => {
    const never = await h.http.post('/api/workflows').set(auth).send(scheduled('never', { cron: '0 0 30 2 *' })).expect(422);
    expect(JSON.stringify(never.body.error.details)).to.include('never comes due');
    await h.http.post('/api/workflows').set(auth).send(scheduled('alias', { cron: '@daily' })).expect(201);
  });

  it('once stopped, the scheduler claims nothing more', async () => {
    await create(scheduled('stop', {}));
    await h.services.schedules.stop();
    at('2026-03-02T10:05:00.100Z');
    expect(await h.services.schedules.tick()).to.equal(0);
    expect(await h.store.schedules.lastFires('stop', 'tick', 5)).to.deep.equal([]);
  });

  it('ticks just after each whole second, so a seconds schedule fires as its second begins', () => {
    // started at .420 of a second, the next tick is at .005 of the next one, not at .420
    expect(delayToNextTick(Date.parse('2026-03-02T10:00:30.420Z'), 1_000)).to.equal(585);
    expect(delayToNextTick(Date.parse('2026-03-02T10:00:30.999Z'), 1_000)).to.equal(6);
    expect(delayToNextTick(Date.parse('2026-03-02T10:00:31.000Z'), 1_000)).to.equal(1_005);
    expect(delayToNextTick(-250, 1_000), 'a clock before 1970 too').to.equal(255);
  });
});
