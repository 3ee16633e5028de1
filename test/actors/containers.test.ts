import { expect } from 'chai';
import { forEachBus } from '../helpers/buses.js';
import { resetProbe, runSimulated } from '../helpers/runtime.js';

interface B {
  id: string;
  type: string;
  name?: string;
  parent?: string;
  config?: Record<string, unknown>;
}

function doc(blocks: B[], connections: [string, string, string?][]): Record<string, unknown> {
  return {
    id: 'containers',
    name: 'containers',
    blocks: blocks.map((b) => ({ id: b.id, type: b.type, name: b.name ?? (b.type === 'starter' ? 'Start' : b.id), config: b.config ?? {}, ...(b.parent ? { parent: b.parent } : {}) })),
    connections: connections.map(([from, to, handle]) => (handle ? { from, to, handle } : { from, to })),
  };
}

const start: B = { id: 'start', type: 'starter' };

/** A loop/parallel `c` whose body is the given children, followed by a function reading its results. */
function around(container: B, children: B[], childConns: [string, string, string?][] = []): Record<string, unknown> {
  return doc(
    [start, container, ...children.map((c) => ({ ...c, parent: container.id })), { id: 'after', type: 'function', config: { code: `return <${container.id}.results>` } }],
    [['start', container.id], [container.id, 'after'], ...childConns],
  );
}

const resultsOf = (output: unknown): unknown => (output as { result: unknown }).result;

forEachBus('loop and parallel (SPEC §1.1)', (getBus) => {
  it('for: runs the body `iterations` times with <loop.index>', async () => {
    const d = around({ id: 'lp', type: 'loop', config: { kind: 'for', iterations: 3 } }, [{ id: 'dbl', type: 'function', config: { code: 'return <loop.index> * 2' } }]);
    const { result, events } = await runSimulated(getBus(), d);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(resultsOf(result.output)).to.deep.equal([0, 2, 4].map((r) => ({ dbl: { result: r, stdout: '' } })));
    const iterations = events.flatMap((e) => (e.type === 'block.completed' && e.data.blockId === 'dbl' ? [e.data.iteration] : []));
    expect(iterations).to.deep.equal([0, 1, 2].map((index) => ({ container: 'lp', index })));
  });

  it('forEach: arrays, objects as [key, value], JSON strings and references', async () => {
    const body = [{ id: 'item', type: 'function', config: { code: 'return <loop.item>' } }];
    const cases: [unknown, unknown[]][] = [
      [['a', 'b'], ['a', 'b']],
      [{ x: 1, y: 2 }, [['x', 1], ['y', 2]]],
      ['[3,4]', [3, 4]],
      ['<start.list>', [7, 8, 9]],
    ];
    for (const [items, expected] of cases) {
      const d = around({ id: 'lp', type: 'loop', config: { kind: 'forEach', items } }, body);
      const { result } = await runSimulated(getBus(), d, { list: [7, 8, 9] });
      expect(resultsOf(result.output)).to.deep.equal(expected.map((v) => ({ item: { result: v, stdout: '' } })));
    }
  });

  it('a response block inside a loop ends the execution on the first iteration that reaches it', async () => {
    const d = around({ id: 'lp', type: 'loop', config: { kind: 'for', iterations: 3 } }, [{ id: 'r', type: 'response', config: { status: 201, data: { at: '<loop.index>' } } }]);
    const { result, events } = await runSimulated(getBus(), d);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result.response).to.deep.include({ status: 201, data: { at: 0 } });
    const ran = events.flatMap((e) => (e.type === 'block.started' ? [e.data.blockId] : []));
    expect(ran).to.deep.equal(['start', 'lp', 'r']);
  });

  it('nothing more runs in a loop or parallel once a response inside it completed', async () => {
    for (const container of [
      { id: 'lp', type: 'loop', config: { kind: 'for', iterations: 3 } },
      { id: 'lp', type: 'parallel', config: { kind: 'count', count: 3, concurrency: 1 } },
    ]) {
      const probe = resetProbe();
      const d = around(container, [
        { id: 'side', type: 'sleep', config: { ms: 0 } },
        { id: 'r', type: 'response', config: { data: 'done' } },
      ], [['side', 'r']]);
      const { result } = await runSimulated(getBus(), d);
      expect(result.status, JSON.stringify(result.error)).to.equal('completed');
      expect(result.response).to.deep.include({ data: 'done' });
      expect(probe.runs['side'], container.type).to.equal(1);
    }
  });

  it('a response deeper inside halts every container around it: no new branch starts', async () => {
    const probe = resetProbe();
    const d = doc([
      start,
      { id: 'op', type: 'parallel', config: { kind: 'collection', items: ['yes', 'no', 'no'], concurrency: 2 } },
      { id: 'il', type: 'loop', parent: 'op', config: { kind: 'for', iterations: 1 } },
      { id: 'p', type: 'pick', parent: 'il', config: { handles: ['yes', 'no'], choose: ['<parallel.item>'] } },
      { id: 'r', type: 'response', parent: 'il', config: { data: 'done' } },
      { id: 'n1', type: 'pick', parent: 'il', config: { handles: ['ok'], choose: ['ok'] } },
      { id: 'n2', type: 'pick', parent: 'il', config: { handles: ['ok'], choose: ['ok'] } },
    ], [['start', 'op'], ['p', 'r', 'yes'], ['p', 'n1', 'no'], ['n1', 'n2', 'ok']]);
    const { result } = await runSimulated(getBus(), d);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result.response).to.deep.include({ data: 'done' });
    // branches 0 and 1 started together; branch 2 must not start once branch 0 responded
    expect(probe.runs['p']).to.equal(2);
  });

  it('an empty collection skips the body and gives results: []', async () => {
    const probe = resetProbe();
    const d = around({ id: 'lp', type: 'loop', config: { kind: 'forEach', items: [] } }, [{ id: 'body', type: 'sleep', config: { ms: 0 } }]);
    const { result } = await runSimulated(getBus(), d);
    expect(result.status).to.equal('completed');
    expect(resultsOf(result.output)).to.deep.equal([]);
    expect(probe.runs['body']).to.equal(undefined);
  });

  it('a parallel with no child block finishes every branch, even more than `concurrency` of them', async () => {
    // empty branches finish as they start: the next batch used to wait for a settle that never came
    const d = around({ id: 'par', type: 'parallel', config: { kind: 'count', count: 5, concurrency: 2 } }, []);
    const { result } = await runSimulated(getBus(), d, {}, { timeoutMs: 2000 });
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(resultsOf(result.output)).to.deep.equal([{}, {}, {}, {}, {}]);
  });

  it('while checks before each pass; doWhile runs at least once', async () => {
    const body = [{ id: 'n', type: 'function', config: { code: 'return <loop.index>' } }];
    const w = await runSimulated(getBus(), around({ id: 'lp', type: 'loop', config: { kind: 'while', condition: '<loop.index> < 3' } }, body));
    expect(resultsOf(w.result.output)).to.have.length(3);
    const never = await runSimulated(getBus(), around({ id: 'lp', type: 'loop', config: { kind: 'while', condition: 'false' } }, body));
    expect(resultsOf(never.result.output)).to.deep.equal([]);
    const once = await runSimulated(getBus(), around({ id: 'lp', type: 'loop', config: { kind: 'doWhile', condition: 'false' } }, body));
    expect(resultsOf(once.result.output)).to.deep.equal([{ n: { result: 0, stdout: '' } }]);
    const byOutput = await runSimulated(getBus(), around({ id: 'lp', type: 'loop', config: { kind: 'doWhile', condition: '<n.result> < 4' } }, body));
    expect(resultsOf(byOutput.result.output)).to.have.length(5);
  });

  it('maxIterations stops a runaway loop with MAX_ITERATIONS; the loop error connection takes it', async () => {
    const body = [{ id: 'n', type: 'sleep', config: { ms: 0 } }];
    const runaway = await runSimulated(getBus(), around({ id: 'lp', type: 'loop', config: { kind: 'while', condition: 'true', maxIterations: 5 } }, body));
    expect(runaway.result.status).to.equal('failed');
    expect(runaway.result.error).to.deep.include({ code: 'MAX_ITERATIONS', blockId: 'lp' });
    const tooMany = await runSimulated(getBus(), around({ id: 'lp', type: 'loop', config: { kind: 'for', iterations: 10, maxIterations: 5 } }, body));
    expect(tooMany.result.error?.code).to.equal('MAX_ITERATIONS');
    const handled = doc(
      [start, { id: 'lp', type: 'loop', config: { kind: 'while', condition: 'true', maxIterations: 3 } }, { ...body[0]!, parent: 'lp' }, { id: 'oops', type: 'function', config: { code: 'return <lp.error.code>' } }],
      [['start', 'lp'], ['lp', 'oops', 'error']],
    );
    const h = await runSimulated(getBus(), handled);
    expect(h.result.status).to.equal('completed');
    expect(h.result.output).to.deep.equal({ result: 'MAX_ITERATIONS', stdout: '' });
  });

  it("a for/forEach over more items than maxIterations is not retried: the loop's config alone decides it", async () => {
    const loop = (config: Record<string, unknown>): Record<string, unknown> => ({
      id: 'containers',
      name: 'containers',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'lp', type: 'loop', name: 'lp', retry: { maxAttempts: 3, backoffMs: 5 }, config: { maxIterations: 2, ...config } },
        { id: 'n', type: 'sleep', name: 'n', parent: 'lp', config: { ms: 0 } },
      ],
      connections: [{ from: 'start', to: 'lp' }],
    });
    const attemptsOf = (events: { type: string; data: unknown }[]): unknown =>
      events.flatMap((e) => (e.type === 'block.failed' && (e.data as { blockId: string }).blockId === 'lp' ? [(e.data as { attempts: number }).attempts] : []));
    const forEach = await runSimulated(getBus(), loop({ kind: 'forEach', items: [1, 2, 3] }));
    expect(forEach.result.error).to.deep.include({ code: 'MAX_ITERATIONS', blockId: 'lp' });
    expect(attemptsOf(forEach.events)).to.deep.equal([1]);
    // a while loop's condition reads what its iterations computed: another attempt may end in time
    const runaway = await runSimulated(getBus(), loop({ kind: 'while', condition: 'true' }));
    expect(runaway.result.error?.code).to.equal('MAX_ITERATIONS');
    expect(attemptsOf(runaway.events)).to.deep.equal([3]);
  });

  it('parallel: results ordered by branch index although branches finish in reverse order', async () => {
    const probe = resetProbe();
    const d = around({ id: 'par', type: 'parallel', config: { kind: 'collection', items: [90, 60, 30, 0] } }, [{ id: 'wait', type: 'sleep', config: { ms: '<parallel.item>', value: '<parallel.index>' } }]);
    const { result } = await runSimulated(getBus(), d);
    expect(result.status).to.equal('completed');
    expect(resultsOf(result.output)).to.deep.equal([0, 1, 2, 3].map((i) => ({ wait: { value: i } })));
    expect(probe.maxInflight).to.equal(4);
    expect(result.durationMs, 'side by side: the longest branch, on the simulated clock').to.equal(90);
  });

  it('parallel: never more branches at once than `concurrency` (observed)', async () => {
    const probe = resetProbe();
    const d = around({ id: 'par', type: 'parallel', config: { kind: 'count', count: 7, concurrency: 2 } }, [{ id: 'wait', type: 'sleep', config: { ms: 15, value: '<parallel.index>' } }]);
    const { result } = await runSimulated(getBus(), d);
    expect(resultsOf(result.output)).to.have.length(7);
    expect(probe.runs['wait']).to.equal(7);
    expect(probe.maxInflight).to.equal(2);
    expect(result.durationMs, 'four rounds of at most two 15 ms branches').to.equal(60);
  });

  it('nests two levels: a parallel inside a loop and a loop inside a parallel', async () => {
    const inLoop = doc(
      [start, { id: 'outer', type: 'loop', config: { kind: 'for', iterations: 2 } }, { id: 'inner', type: 'parallel', parent: 'outer', config: { kind: 'count', count: 3 } }, { id: 'cell', type: 'function', parent: 'inner', config: { code: 'return <loop.index> * 10 + <parallel.index>' } }],
      [['start', 'outer']],
    );
    const a = await runSimulated(getBus(), inLoop);
    expect(a.result.status, JSON.stringify(a.result.error)).to.equal('completed');
    const cells = (a.result.output as { results: { inner: { results: { cell: { result: number } }[] } }[] }).results.map((r) => r.inner.results.map((c) => c.cell.result));
    expect(cells).to.deep.equal([[0, 1, 2], [10, 11, 12]]);
    const inPar = doc(
      [start, { id: 'outer', type: 'parallel', config: { kind: 'collection', items: ['a', 'b'] } }, { id: 'inner', type: 'loop', parent: 'outer', config: { kind: 'for', iterations: 2 } }, { id: 'cell', type: 'function', parent: 'inner', config: { code: 'return <parallel.item> + <loop.index>' } }],
      [['start', 'outer']],
    );
    const b = await runSimulated(getBus(), inPar);
    const words = (b.result.output as { results: { inner: { results: { cell: { result: string } }[] } }[] }).results.map((r) => r.inner.results.map((c) => c.cell.result));
    expect(words).to.deep.equal([['a0', 'a1'], ['b0', 'b1']]);
  });

  it('a condition inside a loop that leads nowhere still ends the iteration', async () => {
    const d = around(
      { id: 'lp', type: 'loop', config: { kind: 'for', iterations: 3 } },
      [
        { id: 'cond', type: 'condition', config: { branches: [{ id: 'odd', expression: '<loop.index> % 2 === 1' }] } },
        { id: 'mark', type: 'function', config: { code: 'return "odd " + <loop.index>' } },
      ],
      [['cond', 'mark', 'odd']],
    );
    const { result } = await runSimulated(getBus(), d);
    expect(result.status).to.equal('completed');
    const marks = (resultsOf(result.output) as { mark?: { result: string } }[]).map((r) => r.mark?.result ?? null);
    expect(marks).to.deep.equal([null, 'odd 1', null]);
  });

  it('an error inside a parallel branch: handled by its error connection, or failing the container', async () => {
    const handled = around(
      { id: 'par', type: 'parallel', config: { kind: 'count', count: 2 } },
      [{ id: 'bad', type: 'fail', config: { message: 'branch broke' } }, { id: 'fix', type: 'function', config: { code: 'return <bad.error.message>' } }],
      [['bad', 'fix', 'error']],
    );
    const h = await runSimulated(getBus(), handled);
    expect(h.result.status).to.equal('completed');
    expect((resultsOf(h.result.output) as { fix: { result: string } }[]).map((r) => r.fix.result)).to.deep.equal(['branch broke', 'branch broke']);

    const unhandled = around({ id: 'par', type: 'parallel', config: { kind: 'count', count: 2 } }, [{ id: 'bad', type: 'fail', config: { message: 'branch broke' } }]);
    const u = await runSimulated(getBus(), unhandled);
    expect(u.result.status).to.equal('failed');
    expect(u.result.error).to.deep.include({ code: 'FUNCTION_ERROR', message: 'branch broke', blockId: 'par' });

    const containerPath = doc(
      [start, { id: 'par', type: 'parallel', config: { kind: 'count', count: 2 } }, { id: 'bad', type: 'fail', parent: 'par', config: {} }, { id: 'rescue', type: 'function', config: { code: 'return <par.error.code>' } }],
      [['start', 'par'], ['par', 'rescue', 'error']],
    );
    const c = await runSimulated(getBus(), containerPath);
    expect(c.result.status).to.equal('completed');
    expect(c.result.output).to.deep.equal({ result: 'FUNCTION_ERROR', stdout: '' });
  });

  it("a container's timeoutMs fails it with BLOCK_TIMEOUT and stops its running children; the error connection takes it", async () => {
    const nap = { id: 'nap', type: 'sleep', name: 'nap', config: { ms: 150, value: 1 } };
    const d = {
      id: 'timed', name: 'timed',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'lp', type: 'loop', name: 'lp', timeoutMs: 400, config: { kind: 'for', iterations: 20 } },
        { ...nap, parent: 'lp' },
        { id: 'par', type: 'parallel', name: 'par', timeoutMs: 100, config: { kind: 'count', count: 2 } },
        { ...nap, id: 'nap2', name: 'nap2', parent: 'par' },
        { id: 'late', type: 'function', name: 'late', config: { code: 'return <par.error.code>;' } },
      ],
      connections: [{ from: 'start', to: 'lp' }, { from: 'start', to: 'par' }, { from: 'par', to: 'late', handle: 'error' }],
    };
    const { result, events, clock } = await runSimulated(getBus(), d);
    expect(result.status).to.equal('failed');
    expect(result.error).to.deep.include({ code: 'BLOCK_TIMEOUT', blockId: 'lp' });
    expect(result.durationMs, 'the loop\'s limit, on the simulated clock').to.equal(400);
    const settled = (id: string) => events.find((e) => e.type.startsWith('block.') && e.type !== 'block.started' && (e.data as { blockId: string; iteration: unknown }).blockId === id && (e.data as { iteration: unknown }).iteration === null);
    expect(settled('par')?.data).to.deep.include({ status: 'failed', errorHandled: true, attempts: 1 });
    expect((settled('late')?.data as { output: unknown }).output).to.deep.equal({ result: 'BLOCK_TIMEOUT', stdout: '' });
    // the loop ran two 150 ms iterations before its 400 ms were up, and its third was stopped
    const naps = events.filter((e) => e.type === 'block.completed' && (e.data as { blockId: string }).blockId === 'nap').length;
    expect(naps).to.equal(2);
    expect(events.filter((e) => e.type === 'block.completed' && (e.data as { blockId: string }).blockId === 'nap2')).to.have.length(0);
    expect(clock.pending, 'no timer left behind').to.equal(0);
  });

  it('children read blocks outside the container', async () => {
    const d = doc(
      [start, { id: 'base', type: 'function', config: { code: 'return 100' } }, { id: 'lp', type: 'loop', config: { kind: 'for', iterations: 2 } }, { id: 'add', type: 'function', parent: 'lp', config: { code: 'return <base.result> + <start.k> + <loop.index>' } }],
      [['start', 'base'], ['base', 'lp']],
    );
    const { result } = await runSimulated(getBus(), d, { k: 5 });
    expect((result.output as { results: { add: { result: number } }[] }).results.map((r) => r.add.result)).to.deep.equal([105, 106]);
  });
});
