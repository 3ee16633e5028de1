import { expect } from 'chai';
import { compileWorkflow } from '../../src/model/graph.js';
import { planResume, type PriorLog } from '../../src/model/resume.js';
import { registry, workflow } from './fixtures.js';

const log = (blockId: string, order: number, status: string, output: unknown, activated?: number[], iteration: unknown = null): PriorLog => ({
  blockId, order, status, output, error: null, errorHandled: false, iteration, ...(activated ? { activated } : {}),
});

describe('model/resume', () => {
  // start → a → b → d, and start → c (skipped by a dead-end condition) → d; d reads a and start
  const compiled = compileWorkflow(
    workflow(
      [
        { id: 'a', config: { code: 'return 1' } },
        { id: 'b', config: { code: 'return <a.result>' } },
        { id: 'k', type: 'condition', config: { branches: [{ id: 'yes', expression: 'false' }] } },
        { id: 'c', config: { code: 'return 2' } },
        { id: 'd', config: { code: 'return [<a.result>, <start.x>, <c.result>]' } },
      ],
      ['start>a', 'a>b', 'b>d', 'start>k', 'k>c:yes', 'c>d'],
    ),
    registry,
  );

  it('takes the settled top-level blocks and replays what they told the blocks not yet settled', () => {
    const planned = planResume(compiled, [
      log('start', 0, 'completed', { x: 5 }, [0, 3]),
      log('a', 1, 'completed', { result: 1 }, [1]),
      log('k', 2, 'completed', { selectedBranch: null, result: false }, []),
      log('c', 4, 'skipped', null, []),
      log('b', 3, 'running', null),
    ]);
    if (!('plan' in planned)) throw new Error(planned.reason);
    const { plan } = planned;
    expect(plan.settled.map((s) => s.blockId)).to.deep.equal(['start', 'a', 'k', 'c']);
    expect(plan.nextOrder).to.equal(5);
    // b runs again with a's output; d hears c's skip now and b's settle later, carrying what it reads
    expect(plan.replay).to.deep.equal([
      { connection: 1, to: 'b', active: true, carried: { a: { result: 1 }, start: { x: 5 } } },
      { connection: 5, to: 'd', active: false, carried: { start: { x: 5 } } },
    ]);
  });

  it('carries what each connection carries, and ignores the logs of container iterations', () => {
    const planned = planResume(compiled, [
      log('start', 0, 'completed', { x: 5 }, [0, 3]),
      log('a', 1, 'completed', { result: 1 }, [1]),
      log('a', 2, 'running', null, undefined, { container: 'l', index: 0 }),
    ]);
    if (!('plan' in planned)) throw new Error(planned.reason);
    expect(planned.plan.replay.map((m) => [m.connection, m.to, Object.keys(m.carried).sort()])).to.deep.equal([
      [3, 'k', ['start']],
      [1, 'b', ['a', 'start']],
    ]);
    expect(planned.plan.nextOrder).to.equal(3);
  });

  it('has no plan when a settled log does not say what it activated, or names a block the version does not have', () => {
    expect(planResume(compiled, [log('start', 0, 'completed', { x: 5 })])).to.have.property('reason').that.matches(/activated/);
    expect(planResume(compiled, [log('zz', 0, 'completed', {}, [])])).to.have.property('reason').that.matches(/does not fit/);
  });

  it('an execution with nothing settled starts over', () => {
    const planned = planResume(compiled, []);
    expect(planned).to.deep.equal({ plan: { settled: [], replay: [], nextOrder: 0 } });
  });
});
