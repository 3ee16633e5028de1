import { expect } from 'chai';
import { compileWorkflow } from '../../src/model/graph.js';
import { planRerun, remapActivated, type RecordedLog } from '../../src/model/rerun.js';
import { registry, workflow } from './fixtures.js';

const log = (blockId: string, order: number, status: string, output: unknown, activated?: number[], iteration: unknown = null): RecordedLog => ({
  blockId, order, status, output, error: null, errorHandled: false, iteration, ...(activated ? { activated } : {}),
});

describe('model/rerun', () => {
  // start → a → b → d; start → c → d; start → lp (loop with child x) → e
  const doc = workflow(
    [
      { id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' },
      { id: 'lp', type: 'loop', config: { kind: 'for', iterations: 2 } },
      { id: 'x', parent: 'lp' },
      { id: 'e' },
    ],
    ['start>a', 'a>b', 'b>d', 'start>c', 'c>d', 'start>lp', 'lp>e'],
  );
  const compiled = compileWorkflow(doc, registry);
  const it0 = { container: 'lp', index: 0 };
  const it1 = { container: 'lp', index: 1 };
  const logs = [
    log('start', 0, 'completed', { input: {} }, [0, 3, 5]),
    log('a', 1, 'completed', { result: 1 }, [1]),
    log('c', 2, 'completed', { result: 3 }, [4]),
    log('lp', 3, 'completed', { results: [] }, [6]),
    log('x', 4, 'completed', { result: 1 }, undefined, it0),
    log('x', 5, 'completed', { result: 1 }, undefined, it1),
    log('b', 6, 'completed', { result: 2 }, [2]),
    log('e', 7, 'completed', { result: 5 }, []),
    log('d', 8, 'completed', { result: 4 }, []),
  ];

  it('keeps every settled block that is neither the chosen one nor downstream of it, with its iterations', () => {
    const planned = planRerun(compiled, logs, 'b');
    if ('message' in planned) throw new Error(planned.message);
    expect(planned.carried.map((l) => l.blockId)).to.deep.equal(['start', 'a', 'c', 'lp', 'x', 'x', 'e']);
    expect(planned.plan.settled.map((s) => s.blockId)).to.deep.equal(['start', 'a', 'c', 'lp', 'e']);
    // b hears a again; d hears c (b's message comes when b settles)
    expect(planned.plan.replay.map((m) => [m.connection, m.to, m.active])).to.deep.equal([[1, 'b', true], [4, 'd', true]]);
    expect(planned.plan.nextOrder).to.equal(8);
  });

  it('from the starter nothing is kept; from a container, its iterations are not kept', () => {
    const fromStart = planRerun(compiled, logs, 'start');
    if ('message' in fromStart) throw new Error(fromStart.message);
    expect(fromStart.carried).to.deep.equal([]);
    const fromLoop = planRerun(compiled, logs, 'lp');
    if ('message' in fromLoop) throw new Error(fromLoop.message);
    expect(fromLoop.carried.map((l) => l.blockId)).to.deep.equal(['start', 'a', 'c', 'b', 'd']);
  });

  it('does not carry blocks that had not settled (running, cancelled): they run again', () => {
    const cut = [...logs.slice(0, 4), log('b', 6, 'cancelled', null), log('e', 7, 'running', null)];
    const planned = planRerun(compiled, cut, 'c');
    if ('message' in planned) throw new Error(planned.message);
    expect(planned.carried.map((l) => l.blockId)).to.deep.equal(['start', 'a', 'lp']);
  });

  it('refuses an unknown block, a child of a container, a block that was skipped or never ran', () => {
    const skipped = logs.map((l) => (l.blockId === 'c' ? { ...l, status: 'skipped' } : l));
    const cases: [readonly RecordedLog[], string, RegExp][] = [
      [logs, 'nope', /block nope is not in the workflow/],
      [logs, 'x', /block x is inside lp: a rerun starts from a top-level block \(rerun from lp\)/],
      [skipped, 'c', /block c did not run in this execution \(it was skipped\)/],
      [logs.filter((l) => l.blockId !== 'd'), 'd', /block d did not run in this execution: rerun from a block that ran/],
    ];
    for (const [given, from, message] of cases) {
      const planned = planRerun(compiled, given, from);
      expect('message' in planned && planned.path, from).to.equal('/fromBlock');
      expect('message' in planned ? planned.message : '', from).to.match(message);
    }
  });

  it('refuses when a kept log does not fit the version (recorded before resumption kept activated connections)', () => {
    const old = logs.map((l) => (l.blockId === 'a' ? { ...l, activated: undefined } : l));
    const planned = planRerun(compiled, old, 'd');
    expect('message' in planned ? planned.message : '').to.match(/cannot be carried over: the log of block a does not record/);
  });

  it('reads activated connections against another version by source, handle and target; drops the ones it lacks', () => {
    const moved = compileWorkflow(workflow([{ id: 'a' }, { id: 'b' }, { id: 'c' }], ['a>b', 'start>a', 'start>c']), registry);
    const before = compileWorkflow(workflow([{ id: 'a' }, { id: 'b' }, { id: 'c' }], ['start>a', 'a>b', 'a>c']), registry);
    expect(remapActivated(before, moved, [0, 1, 2, 9])).to.deep.equal([1, 0]);
  });
});
