import { expect } from 'chai';
import type { ScheduleFire } from '../../../src/store/types.js';
import type { ContractContext } from './context.js';
import { workflowDef } from './context.js';

function fire(dueAt: string, outcome: ScheduleFire['outcome'] = 'claimed', firedAt = dueAt, triggerId = 'every'): ScheduleFire {
  return { workflowId: 'wf', triggerId, dueAt, executionId: outcome === 'skipped' ? null : `x-${dueAt}`, outcome, firedAt };
}

const T0 = '2024-03-01T10:00:00.000Z';
const T1 = '2024-03-01T10:05:00.000Z';
const T2 = '2024-03-01T10:10:00.000Z';

export function schedulesContract(ctx: ContractContext): void {
  describe('schedules', () => {
    it('puts, lists and replaces the schedules of a workflow; a kept trigger keeps its window while its spec is the same', async () => {
      const s = ctx.store();
      await s.schedules.put('wf', [{ triggerId: 'a', version: 1, spec: 'c|UTC' }, { triggerId: 'b', version: 1, spec: 'c|UTC' }], T0);
      await s.schedules.put('other', [{ triggerId: 'z', version: 3, spec: 'c|UTC' }], T0);
      expect(await s.schedules.list()).to.deep.equal([
        { workflowId: 'other', triggerId: 'z', spec: 'c|UTC', version: 3, activeFrom: T0, lastDueAt: null },
        { workflowId: 'wf', triggerId: 'a', spec: 'c|UTC', version: 1, activeFrom: T0, lastDueAt: null },
        { workflowId: 'wf', triggerId: 'b', spec: 'c|UTC', version: 1, activeFrom: T0, lastDueAt: null },
      ]);
      await s.schedules.pass('wf', 'a', T1);
      await s.schedules.put('wf', [{ triggerId: 'a', version: 2, spec: 'c|UTC' }], T2);
      expect(await s.schedules.listByWorkflow('wf'), 'same spec: window kept').to.deep.equal([
        { workflowId: 'wf', triggerId: 'a', spec: 'c|UTC', version: 2, activeFrom: T0, lastDueAt: T1 },
      ]);
      await s.schedules.put('wf', [{ triggerId: 'a', version: 3, spec: 'd|UTC' }], T2);
      expect(await s.schedules.listByWorkflow('wf'), 'new spec: afresh').to.deep.equal([
        { workflowId: 'wf', triggerId: 'a', spec: 'd|UTC', version: 3, activeFrom: T2, lastDueAt: null },
      ]);
      expect(await s.schedules.deleteByWorkflow('wf')).to.equal(1);
      expect(await s.schedules.listByWorkflow('wf')).to.deep.equal([]);
    });

    it('claims a due time once, advancing the last due time only forwards', async () => {
      const s = ctx.store();
      await s.schedules.put('wf', [{ triggerId: 'every', version: 1, spec: 'c|UTC' }], T0);
      expect(await s.schedules.claim(fire(T1))).to.equal(true);
      expect(await s.schedules.claim({ ...fire(T1), executionId: 'someone-else' }), 'the same due time again').to.equal(false);
      expect(await s.schedules.claim(fire(T0, 'skipped'))).to.equal(true);
      expect((await s.schedules.listByWorkflow('wf'))[0]?.lastDueAt, 'never moves back').to.equal(T1);
      await s.schedules.pass('wf', 'every', T2);
      await s.schedules.pass('wf', 'every', T0);
      expect((await s.schedules.listByWorkflow('wf'))[0]?.lastDueAt).to.equal(T2);
      expect((await s.schedules.lastFires('wf', 'every', 10)).map((f) => [f.dueAt, f.outcome, f.executionId])).to.deep.equal([
        [T1, 'claimed', `x-${T1}`],
        [T0, 'skipped', null],
      ]);
    });

    it('lists claimed fires for the sweep and marks them started once', async () => {
      const s = ctx.store();
      await s.schedules.claim(fire(T1, 'claimed', '2024-03-01T10:05:01.000Z'));
      await s.schedules.claim(fire(T0, 'claimed', '2024-03-01T10:00:01.000Z'));
      await s.schedules.claim(fire(T2, 'started', '2024-03-01T10:10:01.000Z'));
      expect((await s.schedules.listClaimed('2024-03-01T11:00:00.000Z', 10)).map((f) => f.dueAt)).to.deep.equal([T0, T1]);
      expect((await s.schedules.listClaimed('2024-03-01T10:03:00.000Z', 10)).map((f) => f.dueAt)).to.deep.equal([T0]);
      expect(await s.schedules.markStarted('wf', 'every', T0)).to.equal(true);
      expect(await s.schedules.markStarted('wf', 'every', T0)).to.equal(false);
      expect(await s.schedules.markStarted('wf', 'every', T2), 'already started').to.equal(false);
      expect((await s.schedules.listClaimed('2024-03-01T11:00:00.000Z', 10)).map((f) => f.dueAt)).to.deep.equal([T1]);
    });

    it('keeps schedules and fires across a reopen; deleting the workflow removes them', async () => {
      await ctx.store().workflows.create(workflowDef('wf'));
      await ctx.store().schedules.put('wf', [{ triggerId: 'every', version: 1, spec: 'c|UTC' }], T0);
      await ctx.store().schedules.claim(fire(T1));
      const s = await ctx.reopen();
      expect(await s.schedules.listByWorkflow('wf')).to.have.length(1);
      expect(await s.schedules.lastFires('wf', 'every', 5)).to.have.length(1);
      await s.workflows.delete('wf');
      expect(await s.schedules.listByWorkflow('wf')).to.deep.equal([]);
      expect(await s.schedules.lastFires('wf', 'every', 5)).to.deep.equal([]);
    });

    it('purges skipped fires after the last run, and the fires of a trigger no longer scheduled', async () => {
      const s = ctx.store();
      const at = (min: number): string => new Date(Date.parse(T0) + min * 60_000).toISOString();
      await s.schedules.put('wf', [{ triggerId: 'every', version: 1, spec: 'c|UTC' }], T0);
      await s.schedules.claim(fire(at(0), 'started'));
      for (let m = 1; m <= 5; m++) await s.schedules.claim(fire(at(m), 'skipped'));
      // 'gone' was dropped by a redeploy: its fires stay, purged like any schedule's
      await s.schedules.claim(fire(at(0), 'claimed', at(0), 'gone'));
      for (let m = 1; m <= 3; m++) await s.schedules.claim(fire(at(m), 'started', at(m), 'gone'));
      await s.schedules.claim(fire(at(4), 'skipped', at(4), 'gone'));
      await s.schedules.put('wf', [{ triggerId: 'every', version: 2, spec: 'c|UTC' }], T0);
      expect(await s.schedules.purgeFires(at(8))).to.equal(4 + 2);
      expect((await s.schedules.lastFires('wf', 'every', 10)).map((f) => f.dueAt)).to.deep.equal([at(5), at(0)]);
      expect((await s.schedules.lastFires('wf', 'gone', 10)).map((f) => f.dueAt), 'newest, last run and the claimed one stay').to.deep.equal([at(4), at(3), at(0)]);
      expect(await s.schedules.purgeFires(at(8)), 'nothing more').to.equal(0);
    });

    it('lets one of several concurrent claims of a due time win, and all of them advance the last due time', async () => {
      const s = ctx.store();
      await s.schedules.put('wf', [{ triggerId: 'every', version: 1, spec: 'c|UTC' }], T0);
      const won = await Promise.all(Array.from({ length: 6 }, (_, i) => s.schedules.claim({ ...fire(T1), executionId: `x${i}` })));
      expect(won.filter(Boolean)).to.have.length(1);
      expect((await s.schedules.lastFires('wf', 'every', 10)).map((f) => f.executionId)).to.deep.equal([`x${won.indexOf(true)}`]);
      expect((await s.schedules.listByWorkflow('wf'))[0]?.lastDueAt).to.equal(T1);
    });

    it('finds the last run, purges old fires but the newest and the last run, keeps a heartbeat that only moves forward', async () => {
      const s = ctx.store();
      await s.schedules.put('wf', [{ triggerId: 'every', version: 1, spec: 'c|UTC' }], T0);
      await s.schedules.claim(fire(T0, 'started'));
      await s.schedules.claim(fire(T1, 'skipped'));
      await s.schedules.claim(fire(T2, 'skipped'));
      expect((await s.schedules.lastRun('wf', 'every'))?.dueAt).to.equal(T0);
      expect(await s.schedules.lastRun('wf', 'none')).to.equal(null);
      expect(await s.schedules.purgeFires('2024-03-02T00:00:00.000Z')).to.equal(1);
      expect((await s.schedules.lastFires('wf', 'every', 10)).map((f) => f.dueAt)).to.deep.equal([T2, T0]);
      expect(await s.schedules.heartbeat()).to.equal(null);
      await s.schedules.beat(T1);
      await s.schedules.beat(T0);
      expect(await s.schedules.heartbeat()).to.equal(T1);
      await s.schedules.beat(T2);
      expect(await s.schedules.heartbeat()).to.equal(T2);
    });
  });
}
