import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { runWorkflow, testEngine } from '../helpers/runtime.js';

type Block = { id: string; type: string; name: string; parent?: string; config: Record<string, unknown> };

function doc(blocks: Block[], connections: Record<string, string>[]): unknown {
  return { id: 'budget', name: 'budget', blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, ...blocks], connections };
}

describe('execution budget', () => {
  const bus = new MemoryBus();
  after(() => bus.close());

  it('gives back the branches of containers stopped before their end: a later parallel may use all of them', async () => {
    const engine = testEngine(bus, { limits: { maxLiveBranches: 10 } });
    // each branch of `outer` runs a 4-branch parallel that is still sleeping when its sibling fails:
    // the failure stops both inner parallels (8 branches), and `after` then needs all 10
    const workflow = doc(
      [
        { id: 'outer', type: 'parallel', name: 'Outer', config: { kind: 'count', count: 2, concurrency: 2 } },
        { id: 'inner', type: 'parallel', name: 'Inner', parent: 'outer', config: { kind: 'count', count: 4, concurrency: 4 } },
        { id: 'nap', type: 'sleep', name: 'Nap', parent: 'inner', config: { ms: 5000 } },
        { id: 'bad', type: 'fail', name: 'Bad', parent: 'outer', config: {} },
        { id: 'after', type: 'parallel', name: 'After', config: { kind: 'count', count: 10, concurrency: 10 } },
        { id: 'one', type: 'function', name: 'One', parent: 'after', config: { code: 'return 1;' } },
      ],
      [{ from: 'start', to: 'outer' }, { from: 'outer', to: 'after', handle: 'error' }],
    );
    const { result } = await runWorkflow(engine, workflow);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect((result.output as { results: unknown[] }).results).to.have.length(10);
  });

  it('fails with BRANCH_LIMIT, not through the error connection, a parallel that would pass the live branches', async () => {
    const engine = testEngine(bus, { limits: { maxLiveBranches: 10 } });
    const workflow = doc(
      [
        { id: 'wide', type: 'parallel', name: 'Wide', config: { kind: 'count', count: 11, concurrency: '<start.c>' } },
        { id: 'one', type: 'function', name: 'One', parent: 'wide', config: { code: 'return 1;' } },
        { id: 'handler', type: 'function', name: 'Handler', config: { code: 'return 2;' } },
      ],
      [{ from: 'start', to: 'wide' }, { from: 'wide', to: 'handler', handle: 'error' }],
    );
    const { result, events } = await runWorkflow(engine, workflow, { c: 11 });
    expect(result.status).to.equal('failed');
    expect(result.error).to.deep.include({ code: 'BRANCH_LIMIT', blockId: 'wide' });
    expect(events.some((e) => e.type === 'block.started' && e.data.blockId === 'handler')).to.equal(false);
  });

  it('fails with BRANCH_LIMIT a loop whose iteration would pass the live branches, inside a parallel that holds them', async () => {
    const engine = testEngine(bus, { limits: { maxLiveBranches: 10 } });
    const workflow = doc(
      [
        { id: 'fan', type: 'parallel', name: 'Fan', config: { kind: 'count', count: 10, concurrency: 10 } },
        { id: 'each', type: 'loop', name: 'Each', parent: 'fan', config: { kind: 'for', iterations: 2 } },
        { id: 'one', type: 'function', name: 'One', parent: 'each', config: { code: 'return 1;' } },
      ],
      [{ from: 'start', to: 'fan' }],
    );
    const { result } = await runWorkflow(engine, workflow);
    expect(result.status).to.equal('failed');
    expect(result.error).to.deep.include({ code: 'BRANCH_LIMIT', blockId: 'fan' });
    expect(result.error?.message).to.contain('"Each"');
  });

  it('stops a while loop at TROUPE_MAX_ITERATIONS with ITERATION_LIMIT when its own maxIterations is higher', async () => {
    const engine = testEngine(bus, { limits: { maxIterations: 5 } });
    const loop = (maxIterations?: number): unknown => doc(
      [
        { id: 'w', type: 'loop', name: 'W', config: { kind: 'while', condition: 'true', ...(maxIterations === undefined ? {} : { maxIterations }) } },
        { id: 'one', type: 'function', name: 'One', parent: 'w', config: { code: 'return 1;' } },
      ],
      [{ from: 'start', to: 'w' }],
    );
    const { result, events } = await runWorkflow(engine, loop());
    expect(result.error).to.deep.include({ code: 'ITERATION_LIMIT', blockId: 'w' });
    expect(events.filter((e) => e.type === 'block.completed' && e.data.blockId === 'one')).to.have.length(5);
    // its own, lower, maxIterations still says MAX_ITERATIONS
    const own = await runWorkflow(engine, loop(3));
    expect(own.result.error).to.deep.include({ code: 'MAX_ITERATIONS', blockId: 'w' });
  });
});
