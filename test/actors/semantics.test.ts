import { expect } from 'chai';
import { forEachBus } from '../helpers/buses.js';
import { resetProbe, runSimulated, runWorkflow, simulatedEngine, statusesByName, wf } from '../helpers/runtime.js';

forEachBus('execution semantics (SPEC §2)', (getBus) => {
  it('runs parallel branches concurrently and joins once', async () => {
    const probe = resetProbe();
    const doc = wf(
      [['start', 'starter'], ['a', 'sleep', { ms: 80 }], ['b', 'sleep', { ms: 80 }], ['c', 'sleep', { ms: 80 }], ['join', 'sleep', { ms: 0 }]],
      [['start', 'a'], ['start', 'b'], ['start', 'c'], ['a', 'join'], ['b', 'join'], ['c', 'join']],
    );
    const { result, events } = await runSimulated(getBus(), doc);
    expect(result.status).to.equal('completed');
    expect(probe.maxInflight).to.equal(3);
    expect(probe.runs['join']).to.equal(1);
    expect(events.filter((e) => e.type === 'block.started' && e.data.blockId === 'join')).to.have.length(1);
    expect(result.output).to.deep.equal({ value: 'join' });
  });

  it('merges a diamond once', async () => {
    const probe = resetProbe();
    const doc = wf(
      [['start', 'starter'], ['left', 'sleep', { ms: 5 }], ['right', 'sleep', { ms: 30 }], ['merge', 'function', { code: 'return [<left.value>, <right.value>]' }]],
      [['start', 'left'], ['start', 'right'], ['left', 'merge'], ['right', 'merge']],
    );
    const { result, events } = await runSimulated(getBus(), doc);
    expect(result.status).to.equal('completed');
    expect(events.filter((e) => e.type === 'block.completed' && e.data.blockId === 'merge')).to.have.length(1);
    expect(result.output).to.deep.equal({ result: ['left', 'right'], stdout: '' });
    expect(probe.runs['left']).to.equal(1);
  });

  it('condition: first true branch wins, the others are skipped', async () => {
    const doc = wf(
      [
        ['start', 'starter'],
        ['cond', 'condition', { branches: [{ id: 'one', expression: '<start.n> > 1' }, { id: 'two', expression: '<start.n> > 0' }], else: true }],
        ['a', 'sleep', { ms: 0 }],
        ['b', 'sleep', { ms: 0 }],
        ['c', 'sleep', { ms: 0 }],
      ],
      [['start', 'cond'], ['cond', 'a', 'one'], ['cond', 'b', 'two'], ['cond', 'c', 'else']],
    );
    const { result, events } = await runSimulated(getBus(), doc, { n: 5 });
    expect(result.status).to.equal('completed');
    expect(statusesByName(events)).to.include({ a: 'completed', b: 'skipped', c: 'skipped' });
    const cond = events.find((e) => e.type === 'block.completed' && e.data.blockId === 'cond');
    expect(cond?.type === 'block.completed' && cond.data.output).to.deep.equal({ selectedBranch: 'one', result: true });
  });

  it('condition with no true branch and no else skips downstream and still succeeds', async () => {
    const doc = wf(
      [['start', 'starter'], ['cond', 'condition', { branches: [{ id: 'yes', expression: 'false' }] }], ['a', 'sleep', { ms: 0 }], ['after', 'sleep', { ms: 0 }]],
      [['start', 'cond'], ['cond', 'a', 'yes'], ['a', 'after']],
    );
    const { result, events } = await runSimulated(getBus(), doc);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(statusesByName(events)).to.include({ a: 'skipped', after: 'skipped' });
    expect(result.output).to.equal(null);
  });

  it('takes the error connection and continues; the log says errorHandled', async () => {
    const doc = wf(
      [['start', 'starter'], ['bad', 'fail', { message: 'nope' }], ['ok', 'sleep', { ms: 0 }], ['recover', 'function', { code: 'return <bad.error.message>' }]],
      [['start', 'bad'], ['bad', 'ok'], ['bad', 'recover', 'error']],
    );
    const { result, events } = await runSimulated(getBus(), doc);
    expect(result.status).to.equal('completed');
    const bad = events.find((e) => e.type === 'block.failed' && e.data.blockId === 'bad');
    expect(bad?.type === 'block.failed' && bad.data.errorHandled).to.equal(true);
    expect(statusesByName(events)).to.include({ ok: 'skipped', recover: 'completed' });
    expect(result.output).to.deep.equal({ result: 'nope', stdout: '' });
  });

  it('a function that throws hands downstream its error as thrown: <block.error.message> is the message', async () => {
    const doc = wf(
      [['start', 'starter'], ['bad', 'function', { code: "throw new Error('kaput')" }], ['recover', 'function', { code: 'return { message: <bad.error.message>, code: <bad.error.code> }' }]],
      [['start', 'bad'], ['bad', 'recover', 'error']],
    );
    const { result } = await runSimulated(getBus(), doc);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result.output).to.deep.equal({ result: { message: 'kaput', code: 'FUNCTION_ERROR' }, stdout: '' });
  });

  it('a failure without an error connection fails the run and keeps the earlier logs', async () => {
    const probe = resetProbe();
    const doc = wf(
      [['start', 'starter'], ['first', 'sleep', { ms: 0 }], ['bad', 'fail', { message: 'broken' }], ['never', 'sleep', { ms: 0 }], ['slow', 'sleep', { ms: 5000 }]],
      [['start', 'first'], ['first', 'bad'], ['bad', 'never'], ['start', 'slow']],
    );
    const { result, events } = await runSimulated(getBus(), doc);
    expect(result.status).to.equal('failed');
    expect(result.error).to.deep.include({ code: 'FUNCTION_ERROR', message: 'broken', blockId: 'bad' });
    expect(probe.runs['never']).to.equal(undefined);
    expect(statusesByName(events)).to.include({ first: 'completed', bad: 'failed' });
    expect(result.durationMs, 'the slow block is not waited for').to.equal(0);
  });

  it('the first response block to complete wins; later ones never run', async () => {
    const probe = resetProbe();
    const doc = wf(
      [
        ['start', 'starter'],
        ['fast', 'response', { status: 201, data: { who: 'fast' } }],
        ['wait', 'sleep', { ms: 200 }],
        ['slow', 'response', { status: 202, data: { who: 'slow' } }],
      ],
      [['start', 'fast'], ['start', 'wait'], ['wait', 'slow']],
    );
    const { result } = await runSimulated(getBus(), doc);
    expect(result.status).to.equal('completed');
    expect(result.response).to.deep.equal({ status: 201, headers: {}, data: { who: 'fast' } });
    expect(probe.runs['slow']).to.equal(undefined);
  });

  it('a reference to a block on an inactive path resolves to null', async () => {
    const doc = wf(
      [
        ['start', 'starter'],
        ['cond', 'condition', { branches: [{ id: 'yes', expression: 'true' }], else: true }],
        ['taken', 'sleep', { ms: 0 }],
        ['nottaken', 'sleep', { ms: 0 }],
        ['read', 'function', { code: 'return { t: <taken.value>, n: <nottaken.value>, whole: <nottaken> }' }],
      ],
      [['start', 'cond'], ['cond', 'taken', 'yes'], ['cond', 'nottaken', 'else'], ['taken', 'read'], ['nottaken', 'read']],
    );
    const { result } = await runSimulated(getBus(), doc);
    expect(result.output).to.deep.equal({ result: { t: 'taken', n: null, whole: null }, stdout: '' });
  });

  it('is deterministic over repeated runs', async () => {
    const doc = wf(
      [
        ['start', 'starter'],
        ['a', 'sleep', { ms: 3, value: 1 }],
        ['b', 'sleep', { ms: 1, value: 2 }],
        ['c', 'function', { code: 'return <a.value> + <b.value>' }],
        ['d', 'sleep', { ms: 0, value: 'd' }],
      ],
      [['start', 'a'], ['start', 'b'], ['a', 'c'], ['b', 'c'], ['start', 'd']],
    );
    const { engine, clock } = simulatedEngine(getBus());
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const { result, events } = await clock.runUntil(runWorkflow(engine, doc));
      // blocks running side by side may settle in either order: determinism is about what they produce
      const statuses = Object.entries(statusesByName(events)).sort(([a], [b]) => a.localeCompare(b));
      seen.add(JSON.stringify({ output: result.output, statuses }));
    }
    expect(seen.size).to.equal(1);
    expect(JSON.parse([...seen][0] as string).output).to.deep.equal({ c: { result: 3, stdout: '' }, d: { value: 'd' } });
  });

  it('fails the execution, not the process, when the bus refuses a block publish', async () => {
    const bus = getBus();
    const { engine, clock } = simulatedEngine(bus);
    const doc = wf([['start', 'starter'], ['a', 'sleep', { ms: 60, value: 1 }], ['b', 'sleep', { ms: 0 }]], [['start', 'a'], ['a', 'b']]);
    const outcome = runWorkflow(engine, doc);
    await clock.advance(20);
    await bus.close();
    const { result } = await clock.runUntil(outcome);
    expect(result.status).to.equal('failed');
    expect(result.error).to.deep.equal({ code: 'BUS_CLOSED', message: 'the bus is closed', blockId: 'a' });
  });

  it('enforces the execution time limit and cancels running blocks', async () => {
    const doc = wf([['start', 'starter'], ['slow', 'sleep', { ms: 10_000 }]], [['start', 'slow']]);
    const { result, clock } = await runSimulated(getBus(), doc, {}, { timeoutMs: 150 });
    expect(result.status).to.equal('failed');
    expect(result.error?.code).to.equal('EXECUTION_TIMEOUT');
    expect(result.durationMs).to.equal(150);
    expect(clock.pending, 'the running block was cancelled, its sleep with it').to.equal(0);
  });

  it("a block's timeoutMs bounds each attempt and its retry waits its doubling backoff, all on the engine's clock", async () => {
    const retry = { maxAttempts: 3, backoffMs: 100 };
    const blocks = [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'slow', type: 'sleep', name: 'slow', timeoutMs: 50, retry, config: { ms: 1000 } },
    ];
    const timed = { id: 'timed', name: 'timed', blocks, connections: [{ from: 'start', to: 'slow' }] };
    const { result, events, clock } = await runSimulated(getBus(), timed);
    expect(result.error).to.deep.include({ code: 'BLOCK_TIMEOUT', blockId: 'slow' });
    const slow = events.find((e) => e.type === 'block.failed' && e.data.blockId === 'slow');
    expect(slow?.data).to.deep.include({ attempts: 3 });
    // three 50 ms attempts, 100 then 200 ms apart
    expect(result.durationMs).to.equal(3 * 50 + 100 + 200);
    expect(clock.pending, 'no timer left behind').to.equal(0);

    const failing = { ...timed, blocks: [blocks[0], { id: 'bad', type: 'fail', name: 'bad', retry, config: {} }], connections: [{ from: 'start', to: 'bad' }] };
    const failed = await runSimulated(getBus(), failing);
    expect(failed.result.error).to.deep.include({ code: 'FUNCTION_ERROR', blockId: 'bad' });
    expect(failed.result.durationMs).to.equal(100 + 200);
  });

  it("a block run under its own timeoutMs sees the whole context: methods, fields and the attempt's signal", async () => {
    const blocks = [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'talk', type: 'talk', name: 'talk', timeoutMs: 5000, config: { text: 'one two three' } },
      { id: 'keyed', type: 'runkey', name: 'keyed', timeoutMs: 5000, config: {} },
    ];
    const doc = { id: 'timed-ctx', name: 'timed-ctx', blocks, connections: [{ from: 'start', to: 'talk' }, { from: 'talk', to: 'keyed' }] };
    const { result, events } = await runSimulated(getBus(), doc);
    expect(result.status).to.equal('completed');
    const chunks = events.filter((e) => e.type === 'chunk').map((e) => (e.data as { text: string }).text);
    expect(chunks.join('')).to.equal('one two three');
    const keyed = events.find((e) => e.type === 'block.completed' && e.data.blockId === 'keyed');
    expect((keyed?.data as { output: { key: unknown } }).output.key).to.be.a('string').and.include('keyed');
  });

  it('can be cancelled', async () => {
    const { engine, clock } = simulatedEngine(getBus());
    const { loadWorkflow } = await import('../../src/runtime/workflows.js');
    const { testRegistry } = await import('../helpers/runtime.js');
    const { compiled } = loadWorkflow(wf([['start', 'starter'], ['slow', 'sleep', { ms: 10_000 }]], [['start', 'slow']]), testRegistry);
    const handle = await engine.start(compiled, { workflowId: 'w', version: 1, input: {}, trigger: { type: 'manual' } });
    await clock.advance(50);
    engine.cancel(handle.id);
    const result = await clock.runUntil(handle.done);
    expect(result.status).to.equal('cancelled');
    expect(result.durationMs).to.equal(50);
  });

  it('validates starter input against inputFormat', async () => {
    const doc = wf([['start', 'starter', { inputFormat: [{ name: 'city', type: 'string', required: true }] }], ['x', 'sleep', { ms: 0 }]], [['start', 'x']]);
    const { result } = await runSimulated(getBus(), doc, { city: 3 });
    expect(result.status).to.equal('failed');
    expect(result.error?.code).to.equal('INVALID_INPUT');
  });

  it('substitutes secrets and redacts them from everything recorded', async () => {
    const doc = wf(
      [['start', 'starter'], ['echo', 'sleep', { ms: 0, value: 'token={{API_TOKEN}}' }]],
      [['start', 'echo']],
    );
    const { result, events } = await runSimulated(getBus(), doc, {}, { secrets: { API_TOKEN: 's3cr3t-value' } });
    expect(result.status).to.equal('completed');
    expect(JSON.stringify(events)).not.to.contain('s3cr3t-value');
    expect(result.output).to.deep.equal({ value: 'token=***' });
  });

  it('fails a block that uses an unknown secret with MISSING_SECRET', async () => {
    const doc = wf([['start', 'starter'], ['echo', 'sleep', { ms: 0, value: '{{NOPE}}' }]], [['start', 'echo']]);
    const { result } = await runSimulated(getBus(), doc);
    expect(result.error?.code).to.equal('MISSING_SECRET');
  });
});
