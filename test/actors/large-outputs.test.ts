/**
 * Block outputs larger than NATS's default max_payload (1 MiB) travel between block actors in
 * bus messages: a run over NATS must not depend on that limit (SPEC §3 lets an output reach
 * 10 MiB), and must end as it does on the in-process bus.
 */
import { expect } from 'chai';
import { forEachBus } from '../helpers/buses.js';
import { runWorkflow, testEngine, wf } from '../helpers/runtime.js';

forEachBus('block outputs over 1 MiB', (getBus) => {
  it('a function returning 2 MB is read by the block after it', async () => {
    const engine = testEngine(getBus());
    const doc = wf(
      [
        ['start', 'starter'],
        ['make', 'function', { code: 'return "x".repeat(2000000)' }],
        ['read', 'function', { code: 'return { length: <make.result>.length, tail: <make.result>.slice(-3) }' }],
      ],
      [['start', 'make'], ['make', 'read']],
    );
    const { result } = await runWorkflow(engine, doc);
    expect(result.error).to.equal(null);
    expect(result.status).to.equal('completed');
    expect(result.output).to.deep.equal({ result: { length: 2_000_000, tail: 'xxx' }, stdout: '' });
  });

  it('a 600 000-character input (held twice by the starter) reaches a response block', async () => {
    const engine = testEngine(getBus());
    const doc = wf(
      [['start', 'starter'], ['reply', 'response', { status: 200, data: { name: '<start.name>', again: '<start.input.name>' } }]],
      [['start', 'reply']],
    );
    const name = 'n'.repeat(600_000);
    const { result } = await runWorkflow(engine, doc, { name });
    expect(result.error).to.equal(null);
    expect((result.output as { data: unknown }).data).to.deep.equal({ name, again: name });
  });
});
