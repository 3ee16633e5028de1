import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { executionEvents } from '../../src/bus/subjects.js';
import { systemClock } from '../../src/runtime/clock.js';
import { Engine } from '../../src/engine/engine.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { runWorkflow, sharedSandbox, testBlockTypes, wf } from '../helpers/runtime.js';

/**
 * Every stored secret's value is redacted in every run, named or not (SPEC §3). Ordinary words
 * stored as secrets once reshaped Troupe's own structure: the status became `***`, the
 * `completed` event was never published, `startedAt` became `***edAt`, a function's `result`
 * field `***`. Only user data is redacted now.
 */
describe('stored secrets that are ordinary words', () => {
  const stored = new Map([
    ['WORD', 'completed'], ['START', 'start'], ['RESULT', 'result'], ['TYPE', 'function'], ['KIND', 'manual'], ['BLANK', '    '], ['TAB', ' \t  '],
  ]);
  let store: Store;
  let bus: MemoryBus;
  let engine: Engine;
  beforeEach(() => {
    store = openSqliteStore(':memory:');
    bus = new MemoryBus();
    engine = new Engine({
      bus,
      blockTypes: testBlockTypes,
      services: { sandbox: sharedSandbox(), clock: systemClock, functionTimeoutMs: 2000, functionMemoryMb: 32 },
      secrets: { get: async (name) => stored.get(name), values: () => stored },
      executions: store.executions,
      busPrefix: 'words',
      executionTimeoutMs: 20_000,
    });
  });
  afterEach(async () => {
    await bus.close();
    await store.close();
  });

  const doc = wf(
    [['start', 'starter'], ['fn', 'function', { code: 'return { n: 6, [<start.key>]: 1, text: `${<start.words>} completed` }' }]],
    [['start', 'fn']],
  );

  it("keeps the run's status, ids, timestamps, field names and block types; publishes its end", async () => {
    const ended: unknown[] = [];
    bus.subscribe(executionEvents('words', '*'), (m) => ended.push(m.data));
    const { result, events } = await runWorkflow(engine, doc, { key: 'my-result-key', words: 'a    b' });
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result).to.have.keys('id', 'workflowId', 'version', 'status', 'output', 'error', 'response', 'startedAt', 'endedAt', 'durationMs');
    // the function's own field `result` is Troupe's; its value is user data, keys included
    expect(result.output).to.deep.equal({ result: { n: 6, 'my-***-key': 1, text: 'a    b ***' }, stdout: '' });
    expect(events.at(-1)).to.deep.include({ type: 'done' });
    await bus.flush();
    expect(ended.map((e) => (e as { status: string }).status)).to.deep.equal(['running', 'completed']);

    const record = await store.executions.get(result.id);
    expect(record).to.deep.include({ status: 'completed', trigger: { type: 'manual' } });
    expect(record?.input).to.deep.equal({ key: 'my-***-key', words: 'a    b' });
    expect(record?.logs.map((l) => [l.blockId, l.blockType, l.status])).to.deep.equal([['start', 'starter', 'completed'], ['fn', 'function', 'completed']]);
    expect(record?.logs[0]?.output).to.deep.include({ key: 'my-***-key', trigger: { type: 'manual' } });
    expect(record?.startedAt).to.be.a('string');
    expect((record?.context as { states: Record<string, string> }).states).to.deep.equal({ start: 'completed', fn: 'completed' });
    const stored = await store.executions.listEvents(result.id);
    expect(stored.map((e) => e.event)).to.include.members(['block.started', 'block.completed', 'done']);
  });

  it('redacts a blank value only where the workflow names it', async () => {
    const naming = wf([['start', 'starter'], ['pad', 'sleep', { ms: 0, value: '[{{BLANK}}]' }]], [['start', 'pad']]);
    const { result } = await runWorkflow(engine, naming, { words: 'a    b' });
    const record = await store.executions.get(result.id);
    expect(record?.input).to.deep.equal({ words: 'a***b' });
    expect(record?.output).to.deep.equal({ value: '[***]' });
  });

  it("keeps a block's error code and the execution's error shape, redacting the message", async () => {
    const failing = wf([['start', 'starter'], ['fn', 'function', { code: 'throw new Error("start: " + <start.words>)' }]], [['start', 'fn']]);
    const { result } = await runWorkflow(engine, failing, { words: 'completed' });
    expect(result.status).to.equal('failed');
    expect(result.error).to.deep.equal({ code: 'FUNCTION_ERROR', message: '***: ***', blockId: 'fn' });
  });

  it("keeps a container's child block names and the children's own fields in its results and iteration state", async () => {
    const each = {
      id: 'wf-test', name: 'test',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'par', type: 'parallel', name: 'par', config: { kind: 'collection', items: '<start.items>' } },
        { id: 'c', type: 'function', name: 'Completed', parent: 'par', config: { code: 'return <parallel.item>' } },
      ],
      connections: [{ from: 'start', to: 'par' }],
    };
    const { result } = await runWorkflow(engine, each, { items: ['completed', 'x'] });
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    const expected = [{ completed: { result: '***', stdout: '' } }, { completed: { result: 'x', stdout: '' } }];
    expect(result.output).to.deep.equal({ results: expected });
    const record = await store.executions.get(result.id);
    const iterations = (record?.context as { iterations: Record<string, { results?: unknown[] }> }).iterations;
    expect(JSON.stringify(iterations)).to.contain('"completed":{"result":"***"');
    expect(JSON.stringify(iterations)).not.to.contain('"***":{');
  });
});
