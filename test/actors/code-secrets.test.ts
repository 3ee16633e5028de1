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

describe('the process\'s own model keys are redacted in every execution', () => {
  const bus = new MemoryBus();
  const engine = testEngine(bus, { redact: ['sk-env-openai-777'] });
  after(() => bus.close());

  it('hides them in outputs and streamed text, and no {{NAME}} can read them', async () => {
    const doc = wf(
      [['start', 'starter'], ['f', 'function', { code: 'return "model said " + <start.k>' }], ['talk', 'talk', { text: 'key: <start.k> end' }]],
      [['start', 'f'], ['f', 'talk']],
    );
    const { events } = await runWorkflow(engine, doc, { k: 'sk-env-openai-777' });
    expect(events.filter((e) => e.type === 'chunk').map((e) => (e.data as { text: string }).text).join('')).to.equal('key: *** end');
    const text = JSON.stringify(events);
    expect(text).not.to.contain('sk-env-openai-777');
    expect(text).to.contain('model said ***');
    const probe = await runWorkflow(engine, wf([['start', 'starter'], ['f', 'function', { code: 'return "{{process:0}}"' }]], [['start', 'f']]));
    expect(probe.result.output).to.deep.equal({ result: '{{process:0}}', stdout: '' });
  });
});
