import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { ExecutionRepo, Store } from '../../src/store/types.js';
import { runWorkflow, simulatedEngine, testEngine, testRegistry, wf } from '../helpers/runtime.js';

describe('execution records', () => {
  let store: Store;
  let bus: MemoryBus;
  beforeEach(() => {
    store = openSqliteStore(':memory:');
    bus = new MemoryBus();
  });
  afterEach(async () => {
    await bus.close();
    await store.close();
  });

  it('records every run with its logs in start order, context and events', async () => {
    const { engine, clock } = simulatedEngine(bus, { executions: store.executions, secrets: { KEY: 'very-secret-1' } });
    const doc = wf(
      [['start', 'starter'], ['a', 'sleep', { ms: 5, value: 'uses {{KEY}}' }], ['b', 'function', { code: 'return <a.value>' }]],
      [['start', 'a'], ['a', 'b']],
    );
    const { result } = await clock.runUntil(runWorkflow(engine, doc, { city: 'Oslo' }));
    const record = await store.executions.get(result.id);
    expect(record).to.not.equal(null);
    expect(record).to.deep.include({ status: 'completed', workflowId: 'wf-test', version: 1, input: { city: 'Oslo' } });
    expect(record?.output).to.deep.equal({ result: 'uses ***', stdout: '' });
    expect(record?.logs.map((l) => [l.blockId, l.status, l.order])).to.deep.equal([
      ['start', 'completed', 0],
      ['a', 'completed', 1],
      ['b', 'completed', 2],
    ]);
    const a = record?.logs[1];
    expect(a?.input).to.deep.equal({ ms: 5, value: 'uses ***' });
    expect(a?.durationMs).to.be.a('number');
    expect((record?.context as { states: Record<string, string> }).states).to.deep.equal({ start: 'completed', a: 'completed', b: 'completed' });
    // SPEC §2: the context holds the trigger data too, as the record's trigger says it
    expect(record?.context).to.have.all.keys('states', 'outputs', 'activeConnections', 'decisions', 'iterations', 'trigger');
    expect((record?.context as { trigger: unknown }).trigger).to.deep.equal(record?.trigger).and.to.have.property('type');
    const events = await store.executions.listEvents(result.id);
    expect(events.map((e) => e.event)).to.include.members(['block.started', 'block.completed', 'done']);
    expect(JSON.stringify(record)).not.to.contain('very-secret-1');
  });

  it('redacts secrets in what it records, not in the data the blocks compute on', async () => {
    const engine = testEngine(bus, { executions: store.executions, secrets: { KEY: 'hunter2' } });
    const doc = {
      id: 'wf-test',
      name: 'test',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'a', type: 'sleep', name: 'a', config: { ms: 1, value: 'key={{KEY}}' } },
        { id: 'par', type: 'parallel', name: 'par', config: { kind: 'collection', items: '<start.words>' } },
        { id: 'echo', type: 'function', name: 'echo', parent: 'par', config: { code: 'return <parallel.item>' } },
        { id: 'b', type: 'function', name: 'b', config: { code: 'return { n: <start.word>.length, m: <a.value>.length, r: <par.results>.map((x) => x.echo.result.length) }' } },
      ],
      connections: [{ from: 'start', to: 'a' }, { from: 'start', to: 'par' }, { from: 'a', to: 'b' }, { from: 'par', to: 'b' }],
    };
    // the input happens to hold the secret's value: blocks downstream must see it as it is
    const { result } = await runWorkflow(engine, doc, { word: 'hunter2', words: ['hunter2', 'x'] });
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result.output).to.deep.equal({ result: { n: 7, m: 11, r: [7, 1] }, stdout: '' });
    const record = await store.executions.get(result.id);
    expect(record?.input).to.deep.equal({ word: '***', words: ['***', 'x'] });
    const par = record?.logs.find((l) => l.blockId === 'par');
    expect(par?.output).to.deep.equal({ results: [{ echo: { result: '***', stdout: '' } }, { echo: { result: 'x', stdout: '' } }] });
    expect(JSON.stringify(record)).not.to.contain('hunter2');
    expect(JSON.stringify(await store.executions.listEvents(result.id))).not.to.contain('hunter2');
  });

  it('redacts a container error that quotes a secret value it computed on', async () => {
    const engine = testEngine(bus, { executions: store.executions, secrets: { KEY: 'hun"ter2' } });
    const doc = {
      id: 'wf-test',
      name: 'test',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'a', type: 'sleep', name: 'a', config: { ms: 1, value: '{{KEY}}' } },
        { id: 'lp', type: 'function', name: 'lp', config: { code: 'throw new Error(JSON.stringify(<start.word>))' } },
        { id: 'wl', type: 'loop', name: 'wl', config: { kind: 'while', condition: 'JSON.parse(<start.word>)' } },
        { id: 'body2', type: 'function', name: 'body2', parent: 'wl', config: { code: 'return 1' } },
        { id: 'handled', type: 'function', name: 'handled', config: { code: 'return <lp.error.message>.length' } },
      ],
      connections: [{ from: 'start', to: 'a' }, { from: 'start', to: 'lp' }, { from: 'start', to: 'wl' }, { from: 'lp', to: 'handled', handle: 'error' }, { from: 'wl', to: 'handled', handle: 'error' }],
    };
    // the loop's condition error quotes the value as it is; the function's error quotes it with
    // JSON.stringify, which escapes its quote
    const { result } = await runWorkflow(engine, doc, { word: 'hun"ter2' });
    const record = await store.executions.get(result.id);
    const errors = (record?.logs ?? []).filter((l) => l.blockId === 'lp' || l.blockId === 'wl').map((l) => (l.error as { message?: string } | null)?.message ?? '');
    expect(errors).to.have.length(2);
    for (const message of errors) expect(message, message).to.contain('***');
    expect(JSON.stringify(record)).not.to.contain('ter2');
    expect(JSON.stringify(await store.executions.listEvents(result.id))).not.to.contain('ter2');
    expect(JSON.stringify(result)).not.to.contain('ter2');
  });

  it('keeps one log per iteration of a nested container, each naming its whole iteration path', async () => {
    const engine = testEngine(bus, { executions: store.executions });
    const doc = {
      id: 'wf-test',
      name: 'test',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'outer', type: 'parallel', name: 'outer', config: { kind: 'count', count: 2 } },
        { id: 'inner', type: 'loop', name: 'inner', parent: 'outer', config: { kind: 'for', iterations: 2 } },
        { id: 'cell', type: 'function', name: 'cell', parent: 'inner', config: { code: 'return <parallel.index> * 10 + <loop.index>' } },
      ],
      connections: [{ from: 'start', to: 'outer' }],
    };
    const { result } = await runWorkflow(engine, doc);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    const record = await store.executions.get(result.id);
    const cells = (record?.logs ?? []).filter((l) => l.blockId === 'cell');
    const seen = cells.map((l) => [(l.iteration as { outer: { index: number } }).outer.index, (l.iteration as { index: number }).index, (l.output as { result: number }).result]);
    expect(seen.sort()).to.deep.equal([[0, 0, 0], [0, 1, 1], [1, 0, 10], [1, 1, 11]]);
    expect(cells[0]?.iteration).to.deep.include({ container: 'inner', outer: { container: 'outer', index: (cells[0]?.iteration as { outer: { index: number } }).outer.index } });
    expect(record?.logs.filter((l) => l.blockId === 'inner')).to.have.length(2);
    // and the inner loop's iteration state is kept per outer iteration
    const iterations = (record?.context as { iterations: Record<string, { finished: number }> }).iterations;
    expect(Object.keys(iterations).sort()).to.deep.equal(['inner@outer#0', 'inner@outer#1', 'outer']);
    expect(iterations['inner@outer#1']?.finished).to.equal(2);
  });

  it('keeps the logs of a failed run, with running blocks marked cancelled', async () => {
    const { engine, clock } = simulatedEngine(bus, { executions: store.executions });
    const doc = wf(
      [['start', 'starter'], ['slow', 'sleep', { ms: 5000 }], ['bad', 'fail', { message: 'kaput' }], ['after', 'sleep', { ms: 0 }]],
      [['start', 'slow'], ['start', 'bad'], ['slow', 'after']],
    );
    const { result } = await clock.runUntil(runWorkflow(engine, doc));
    const record = await store.executions.get(result.id);
    expect(record?.status).to.equal('failed');
    expect(record?.error).to.deep.include({ code: 'FUNCTION_ERROR', blockId: 'bad' });
    const byId = Object.fromEntries((record?.logs ?? []).map((l) => [l.blockId, l.status]));
    expect(byId).to.deep.equal({ start: 'completed', slow: 'cancelled', bad: 'failed' });
    // the context agrees with the logs, the cancelled block had begun its first attempt, and the
    // one that never started is no longer pending (it has no log)
    expect((record?.context as { states: Record<string, string> }).states).to.deep.equal({ start: 'completed', slow: 'cancelled', bad: 'failed', after: 'cancelled' });
    expect(record?.logs.find((l) => l.blockId === 'slow')?.attempts).to.equal(1);
  });

  it('a block cancelled mid-run keeps the input it was running with, inside a container too', async () => {
    const { engine, clock } = simulatedEngine(bus, { executions: store.executions, secrets: { KEY: 'very-secret-1' } });
    const doc = wf(
      [
        ['start', 'starter'],
        ['slow', 'sleep', { ms: 5000, value: 'for <start.city> with {{KEY}}' }],
        ['lp', 'loop', { kind: 'forEach', items: '<start.list>' }],
        ['inner', 'sleep', { ms: 5000, value: '<loop.item>' }],
        ['wait', 'sleep', { ms: 30 }],
        ['bad', 'fail', { message: 'kaput' }],
      ],
      [['start', 'slow'], ['start', 'lp'], ['start', 'wait'], ['wait', 'bad']],
    );
    (doc['blocks'] as { id: string; parent?: string }[]).find((b) => b.id === 'inner')!.parent = 'lp';
    const { result } = await clock.runUntil(runWorkflow(engine, doc, { city: 'Oslo', list: ['x', 'y'] }));
    const record = await store.executions.get(result.id);
    expect(record?.status).to.equal('failed');
    const cancelled = (record?.logs ?? []).filter((l) => l.status === 'cancelled').map((l) => [l.blockId, l.input]);
    // it used to be null: no outcome comes for a block stopped mid-run
    expect(cancelled).to.deep.equal([
      ['slow', { ms: 5000, value: 'for Oslo with ***' }],
      ['lp', { kind: 'forEach', items: ['x', 'y'] }],
      ['inner', { ms: 5000, value: 'x' }],
    ]);
  });

  it('stores the input of a block while it runs, inside a container too: what restart recovery reads after a crash', async () => {
    // resolves once a committed boundary holds both blocks running: the store as a SIGKILL would leave it
    let stored!: () => void;
    const bothRunning = new Promise<void>((resolve) => (stored = resolve));
    const executions: ExecutionRepo = {
      ...store.executions,
      saveBoundaries: async (items) => {
        const results = await store.executions.saveBoundaries(items);
        const logs = (await store.executions.get(items[0]!.id))?.logs ?? [];
        if (['slow', 'inner'].every((id) => logs.some((l) => l.blockId === id && l.status === 'running'))) stored();
        return results;
      },
    };
    const engine = testEngine(bus, { executions, secrets: { KEY: 'very-secret-1' } });
    const doc = wf(
      [
        ['start', 'starter'],
        ['slow', 'sleep', { ms: 60_000, value: 'for <start.city> with {{KEY}}' }],
        ['lp', 'loop', { kind: 'forEach', items: '<start.list>' }],
        ['inner', 'sleep', { ms: 60_000, value: '<loop.item>' }],
      ],
      [['start', 'slow'], ['start', 'lp']],
    );
    (doc['blocks'] as { id: string; parent?: string }[]).find((b) => b.id === 'inner')!.parent = 'lp';
    const { compiled } = loadWorkflow(doc, testRegistry);
    const handle = await engine.start(compiled, { workflowId: 'wf-test', version: 1, input: { city: 'Oslo', list: ['x'] }, trigger: { type: 'api' } });
    await bothRunning;
    const running = ((await store.executions.get(handle.id))?.logs ?? []).filter((l) => l.status === 'running').map((l) => [l.blockId, l.input]);
    engine.cancel(handle.id);
    await handle.done;
    // it used to be null until the block settled, so a log that recovery cancels had no input
    expect(running).to.deep.equal([
      ['slow', { ms: 60_000, value: 'for Oslo with ***' }],
      ['lp', { kind: 'forEach', items: ['x'] }],
      ['inner', { ms: 60_000, value: 'x' }],
    ]);
  });

  it('shows a running block in the record while it runs, its log then replaced by its settle', async () => {
    // resolves once a committed boundary holds the block running
    let stored!: () => void;
    const runningStored = new Promise<void>((resolve) => (stored = resolve));
    const executions: ExecutionRepo = {
      ...store.executions,
      saveBoundaries: async (items) => {
        const results = await store.executions.saveBoundaries(items);
        const logs = (await store.executions.get(items[0]!.id))?.logs ?? [];
        if (logs.some((l) => l.blockId === 'slow' && l.status === 'running')) stored();
        return results;
      },
    };
    const { engine, clock } = simulatedEngine(bus, { executions });
    const { compiled } = loadWorkflow(wf([['start', 'starter'], ['slow', 'sleep', { ms: 300, value: 1 }]], [['start', 'slow']]), testRegistry);
    const handle = await engine.start(compiled, { workflowId: 'wf-test', version: 1, input: {}, trigger: { type: 'api' } });
    // the block sleeps on the simulated clock: it runs until the clock moves, however long the store takes
    await clock.runUntil(runningStored);
    const running = (await store.executions.get(handle.id))?.logs.find((l) => l.blockId === 'slow' && l.status === 'running')?.startedAt ?? undefined;
    expect(running, 'a running log while the block sleeps').to.be.a('string');
    await clock.runUntil(handle.done);
    const logs = (await store.executions.get(handle.id))?.logs ?? [];
    expect(logs.map((l) => [l.blockId, l.status])).to.deep.equal([['start', 'completed'], ['slow', 'completed']]);
    expect(logs[1]?.startedAt).to.equal(running);
    expect(Date.parse(logs[1]?.endedAt ?? '') - Date.parse(running ?? ''), 'its 300 ms, on the simulated clock').to.equal(300);
  });

  describe('awaitRecord: false (a caller that answers only at the end)', () => {
    const doc = wf([['start', 'starter'], ['a', 'sleep', { ms: 0, value: 1 }]], [['start', 'a']]);
    const start = (engine: ReturnType<typeof testEngine>) => {
      const { compiled } = loadWorkflow(doc, testRegistry);
      return engine.start(compiled, { workflowId: 'wf-test', version: 1, input: {}, trigger: { type: 'api' }, awaitRecord: false });
    };

    it('writes the record created and ended in one batch, and resolves done only once it is in the store', async () => {
      const engine = testEngine(bus, { executions: store.executions });
      const handle = await start(engine);
      const result = await handle.done;
      await handle.recorded;
      const record = await store.executions.get(handle.id);
      expect(record).to.deep.include({ status: 'completed', endedAt: result.endedAt });
      expect(record?.logs.map((l) => l.blockId)).to.deep.equal(['start', 'a']);
    });

    it('puts a run on record, running, while it waits for something outside (a timer here): it could be resumed from it', async () => {
      const engine = testEngine(bus, { executions: store.executions });
      // shorter than the longest hold: what ends the hold is the run going quiet, not a time
      const { compiled } = loadWorkflow(wf([['start', 'starter'], ['a', 'sleep', { ms: 60, value: 1 }]], [['start', 'a']]), testRegistry);
      const handle = await engine.start(compiled, { workflowId: 'wf-test', version: 1, input: {}, trigger: { type: 'api' }, awaitRecord: false });
      const first = await Promise.race([handle.recorded.then(() => 'recorded'), handle.done.then(() => 'done')]);
      expect(first).to.equal('recorded');
      const record = await store.executions.get(handle.id);
      expect(record?.status).to.equal('running');
      expect(record?.logs.map((l) => [l.blockId, l.status])).to.deep.equal([['start', 'completed'], ['a', 'running']]);
      expect((await handle.done).status).to.equal('completed');
    });

    it('fails done with the store error when the record cannot be written', async () => {
      const failing: ExecutionRepo = {
        ...store.executions,
        saveBoundaries: async (items) => items.map(() => new Error('disk full')),
      };
      const engine = testEngine(bus, { executions: failing });
      const handle = await start(engine);
      const outcome = await handle.done.then(() => 'resolved', (err: Error) => err.message);
      expect(outcome).to.equal('disk full');
      expect(await handle.recorded.then(() => 'written', () => 'not written')).to.equal('not written');
    });
  });
});
