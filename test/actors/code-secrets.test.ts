import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { runWorkflow, testEngine, wf } from '../helpers/runtime.js';

describe('{{NAME}} in function code and expressions (SPEC §1.2, §6)', () => {
  const bus = new MemoryBus();
  const engine = testEngine(bus, { secrets: { SK: 'sk-live-42', QUOTE: 'it"s \\ tricky' } });
  after(() => bus.close());

  it('reads the secret as a value, in code and inside string literals, and redacts it in what is recorded', async () => {
    const doc = wf(
      [['start', 'starter'], ['f', 'function', { code: 'const k = {{SK}}; return { len: k.length, same: "{{SK}}" === k, text: `key ${{{SK}}}`, q: {{QUOTE}}.length }' }]],
      [['start', 'f']],
    );
    const { result, events } = await runWorkflow(engine, doc);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result.output).to.deep.equal({ result: { len: 10, same: true, text: "key ***", q: 13 }, stdout: '' });
    expect(JSON.stringify(events)).not.to.contain('sk-live-42');
  });

  it('a condition can compare against a secret', async () => {
    const doc = wf(
      [['start', 'starter'], ['c', 'condition', { branches: [{ id: 'yes', expression: '<start.token> === {{SK}}' }], else: true }], ['y', 'function', { code: 'return "in"' }], ['n', 'function', { code: 'return "out"' }]],
      [['start', 'c'], ['c', 'y', 'yes'], ['c', 'n', 'else']],
    );
    expect((await runWorkflow(engine, doc, { token: 'sk-live-42' })).result.output).to.deep.equal({ result: 'in', stdout: '' });
    expect((await runWorkflow(engine, doc, { token: 'guess' })).result.output).to.deep.equal({ result: 'out', stdout: '' });
  });

  it('an unknown name in code fails the block with MISSING_SECRET', async () => {
    const doc = wf([['start', 'starter'], ['f', 'function', { code: 'return "{{NOPE}}"' }]], [['start', 'f']]);
    const { result } = await runWorkflow(engine, doc);
    expect(result.error).to.include({ code: 'MISSING_SECRET', blockId: 'f' });
  });
});
