import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { runWorkflow, testEngine, wf } from '../helpers/runtime.js';

describe('function limits inside a run', () => {
  const bus = new MemoryBus();
  const engine = testEngine(bus, { functionTimeoutMs: 300, functionMemoryMb: 16 });
  after(() => bus.close());

  it('stops an endless loop with FUNCTION_TIMEOUT while other executions and the event loop go on', async () => {
    const forever = wf([['start', 'starter'], ['spin', 'function', { code: 'while (true) {}' }]], [['start', 'spin']]);
    const quick = wf([['start', 'starter'], ['add', 'function', { code: 'return 1 + 1' }]], [['start', 'add']]);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 10);
    try {
      const stuck = runWorkflow(engine, forever);
      const others = await Promise.all([runWorkflow(engine, quick), runWorkflow(engine, quick)]);
      for (const o of others) expect(o.result.output).to.deep.equal({ result: 2, stdout: '' });
      const { result } = await stuck;
      expect(result.status).to.equal('failed');
      expect(result.error).to.deep.include({ code: 'FUNCTION_TIMEOUT', blockId: 'spin' });
      expect(result.error?.message).to.match(/300 ms/);
      expect(ticks).to.be.greaterThan(5);
    } finally {
      clearInterval(timer);
    }
  });

  it('stops an unbounded allocation with FUNCTION_MEMORY and the next run works', async () => {
    const bomb = wf([['start', 'starter'], ['hog', 'function', { code: 'const a = []; for (;;) a.push(new Array(1e5).fill(Math.random()));' }]], [['start', 'hog']]);
    // a time limit the allocation cannot reach first, however slow the machine is today
    const roomy = testEngine(bus, { functionTimeoutMs: 20_000, functionMemoryMb: 16 });
    const { result } = await runWorkflow(roomy, bomb);
    expect(result.status).to.equal('failed');
    expect(result.error?.code).to.equal('FUNCTION_MEMORY');
    const next = await runWorkflow(engine, wf([['start', 'starter'], ['ok', 'function', { code: 'return "fine"' }]], [['start', 'ok']]));
    expect(next.result.output).to.deep.equal({ result: 'fine', stdout: '' });
    expect(process.memoryUsage().rss).to.be.below(2 * 1024 ** 3);
  });

  it('takes the error connection of a function that runs out of time', async () => {
    const doc = wf(
      [['start', 'starter'], ['spin', 'function', { code: 'for (;;) {}' }], ['after', 'function', { code: 'return <spin.error.code>' }]],
      [['start', 'spin'], ['spin', 'after', 'error']],
    );
    const { result } = await runWorkflow(engine, doc);
    expect(result.status).to.equal('completed');
    expect(result.output).to.deep.equal({ result: 'FUNCTION_TIMEOUT', stdout: '' });
  });
});
