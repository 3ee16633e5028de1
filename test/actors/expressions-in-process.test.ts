import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { runWorkflow, sharedSandbox, testEngine } from '../helpers/runtime.js';

/**
 * Condition branches, rules-router values and while/doWhile conditions in the expression subset
 * are evaluated in-process (docs/expressions.md): a whole workflow of them never asks the
 * sandbox for an expression, and one outside the subset still does.
 */
describe('expressions in-process, through the engine', function () {
  this.timeout(20_000);
  const asked: string[] = [];
  let restore: (() => void) | undefined;
  beforeEach(() => {
    asked.length = 0;
    const sandbox = sharedSandbox();
    const evaluate = sandbox.evaluate.bind(sandbox);
    sandbox.evaluate = (expression, bindings, limits) => {
      asked.push(expression);
      return evaluate(expression, bindings, limits);
    };
    restore = () => {
      sandbox.evaluate = evaluate;
    };
  });
  afterEach(() => restore?.());

  const workflow = (condition: string) => ({
    id: 'in-process',
    name: 'in-process',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'lp', type: 'loop', name: 'lp', config: { kind: 'while', condition } },
      { id: 'n', type: 'function', name: 'n', parent: 'lp', config: { code: 'return <loop.index> * 10' } },
      { id: 'check', type: 'condition', name: 'check', config: { branches: [{ id: 'big', expression: '<lp.results>.length >= 3 && <start.tier> === "gold"' }], else: true } },
      { id: 'route', type: 'router', name: 'route', config: { value: '<start.tier>.toUpperCase()', routes: [{ id: 'gold', equals: 'GOLD' }], default: 'gold' } },
      { id: 'done', type: 'function', name: 'done', config: { code: 'return "done"' } },
    ],
    connections: [
      { from: 'start', to: 'lp' },
      { from: 'lp', to: 'check' },
      { from: 'check', to: 'route', handle: 'big' },
      { from: 'route', to: 'done', handle: 'gold' },
    ],
  });

  it('runs a while loop, a condition and a router without asking the sandbox for an expression', async () => {
    const bus = new MemoryBus();
    try {
      const { result } = await runWorkflow(testEngine(bus), workflow('<loop.index> < 3'), { tier: 'gold' });
      expect(result.status, JSON.stringify(result.error)).to.equal('completed');
      expect(result.output).to.deep.equal({ result: 'done', stdout: '' });
      expect(asked).to.deep.equal([]);
    } finally {
      await bus.close();
    }
  });

  it('asks the sandbox for a loop condition outside the subset', async () => {
    const bus = new MemoryBus();
    try {
      const { result } = await runWorkflow(testEngine(bus), workflow('[0, 1, 2].some((i) => i === <loop.index>)'), { tier: 'gold' });
      expect(result.status, JSON.stringify(result.error)).to.equal('completed');
      expect(asked.filter((source) => source.includes('some('))).to.have.length(4);
    } finally {
      await bus.close();
    }
  });
});
