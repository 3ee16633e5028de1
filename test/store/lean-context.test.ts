import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import { fullContext, leanContext } from '../../src/store/rows/lean-context.js';
import type { Store } from '../../src/store/types.js';
import { blockLog, execution, rejectsWith } from './contract/context.js';

/** An ended execution's context as the engine writes it: outputs that are the logs' own values. */
function ended(logs: ReturnType<typeof blockLog>[], extraOutputs: Record<string, unknown> = {}): Record<string, unknown> {
  const outputs: Record<string, unknown> = {};
  for (const log of logs) if (log.iteration === null && log.output !== null) outputs[log.blockId] = log.output;
  return { states: { a: 'completed' }, outputs: { ...outputs, ...extraOutputs }, activeConnections: [0], decisions: {}, iterations: {}, trigger: { type: 'api' } };
}

describe('store: lean records (an ended context reads its outputs from the logs)', () => {
  let dir: string;
  let file: string;
  let store: Store;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'troupe-lean-'));
    file = join(dir, 'troupe.db');
    store = openSqliteStore(file);
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function storedContext(id: string): string | null {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare('SELECT context FROM executions WHERE id = ?').get(id) as { context: string | null }).context;
    } finally {
      db.close();
    }
  }

  it('stores the outputs of logs written in the same batch once, and reads the record back as it was written', async () => {
    await store.executions.create(execution('e1', 'wf', { status: 'running' }));
    // `b` settled first: the context's key order is the settle order, not the logs' order
    const logs = [blockLog('a', 0), blockLog('b', 1, { output: { big: 'x'.repeat(200) } }), blockLog('c', 2, { status: 'skipped', output: null })];
    const context = { ...ended(logs), outputs: { b: logs[1]?.output, a: logs[0]?.output, kept: { not: 'a log' } } };
    await store.executions.saveBoundary('e1', { patch: { status: 'completed', output: { done: true }, endedAt: '2024-01-01T00:00:03.000Z', context }, logs });
    const stored = storedContext('e1') ?? '';
    expect(stored).to.not.include('x'.repeat(200));
    expect(stored.length).to.be.below(JSON.stringify(context).length - 150);
    const rec = await store.executions.get('e1');
    expect(JSON.stringify(rec?.context)).to.equal(JSON.stringify(context));
    const [listed] = await store.executions.listByStatus(['completed'], 10);
    expect(JSON.stringify(listed?.context)).to.equal(JSON.stringify(context));
  });

  it('writes a created-and-ended record lean too, and keeps whole what the batch does not prove (earlier logs, equal but other values)', async () => {
    const logs = [blockLog('a', 0), blockLog('b', 1)];
    const context = ended(logs);
    await store.executions.saveBoundary('e2', { create: execution('e2', 'wf', { status: 'completed', context }), logs });
    expect(storedContext('e2')).to.include('$fromLogs');
    expect(JSON.stringify((await store.executions.get('e2'))?.context)).to.equal(JSON.stringify(context));

    // the logs went out in an earlier batch, and an equal copy is not the logged value itself
    await store.executions.create(execution('e3', 'wf', { status: 'running' }));
    const early = [blockLog('a', 0)];
    await store.executions.saveBoundary('e3', { logs: early });
    const copy = { outputs: { a: { result: 0 } } };
    await store.executions.saveBoundary('e3', { patch: { status: 'failed', context: { ...ended(early), ...copy } }, logs: [blockLog('b', 1)] });
    expect(storedContext('e3')).to.not.include('$fromLogs');
    expect((await store.executions.get('e3'))?.context).to.deep.include(copy);
  });

  it('keeps a running or waiting record\'s context as written, so a guard on it still holds', async () => {
    await store.executions.create(execution('e4', 'wf', { status: 'running' }));
    const logs = [blockLog('a', 0)];
    const context = { ...ended(logs), waiting: [], parked: { activeMs: 5, at: '2024-01-01T00:00:03.000Z' } };
    await store.executions.saveBoundary('e4', { patch: { status: 'waiting', context }, logs });
    expect(storedContext('e4')).to.equal(JSON.stringify(context));
    const seen = await store.executions.get('e4');
    await store.executions.saveBoundary('e4', { guard: { status: 'waiting', context: seen?.context ?? null }, patch: { status: 'running' } });
    await rejectsWith(store.executions.saveBoundary('e4', { guard: { status: 'waiting', context: seen?.context ?? null }, patch: { status: 'running' } }), 'CONFLICT');
  });

  it('an update of a missing execution still fails NOT_FOUND and writes nothing of its batch', async () => {
    await rejectsWith(store.executions.saveBoundary('nope', { patch: { status: 'completed' }, logs: [blockLog('a', 0)] }), 'NOT_FOUND');
    expect(await store.executions.get('nope')).to.equal(null);
  });

  it('leaves a context alone when nothing is derivable, and reads `__proto__` block ids back as own outputs', () => {
    const out = { v: 1 };
    const log = blockLog('__proto__', 0, { output: out });
    const outputs = Object.defineProperty({}, '__proto__', { value: out, enumerable: true, writable: true, configurable: true });
    const context = { outputs };
    const lean = leanContext(context, 'completed', [log]);
    expect(lean).to.not.equal(context);
    const back = fullContext(JSON.parse(JSON.stringify(lean)), [JSON.parse(JSON.stringify(log))]) as { outputs: object };
    expect(Object.getOwnPropertyDescriptor(back.outputs, '__proto__')?.value).to.deep.equal(out);
    expect(Object.getPrototypeOf(back.outputs)).to.equal(Object.prototype);
    expect(leanContext(context, 'running', [log])).to.equal(context);
    expect(leanContext(context, 'completed', [blockLog('__proto__', 0, { output: { v: 1 } })])).to.equal(context);
  });

  it('stores an event\'s time once when the event before it in the batch has the same, and lists every event with its own', async () => {
    await store.executions.create(execution('e5', 'wf', { status: 'running' }));
    const ev = (seq: number, at: string) => ({ executionId: 'e5', seq, event: 'block.started', data: { seq }, at });
    const first = [ev(1, '2024-01-01T00:00:01.000Z'), ev(2, '2024-01-01T00:00:01.000Z'), ev(3, '2024-01-01T00:00:02.000Z'), ev(4, '2024-01-01T00:00:02.000Z')];
    await store.executions.saveBoundary('e5', { events: first });
    await store.executions.saveBoundary('e5', { events: [ev(5, '2024-01-01T00:00:02.000Z')] });
    const db = new Database(file, { readonly: true });
    const bodies = db.prepare('SELECT body FROM execution_event_batches WHERE execution_id = ? ORDER BY first_seq').all('e5') as { body: string }[];
    db.close();
    expect(bodies.map((b) => (b.body.match(/"at"/g) ?? []).length)).to.deep.equal([2, 1]);
    expect(await store.executions.listEvents('e5')).to.deep.equal([...first, ev(5, '2024-01-01T00:00:02.000Z')]);
    expect((await store.executions.listEvents('e5', 3)).map((e) => e.at)).to.deep.equal(['2024-01-01T00:00:02.000Z', '2024-01-01T00:00:02.000Z']);
  });
});
