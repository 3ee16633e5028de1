/**
 * A live run and a resumed run reach their end through the same function (src/model/end.ts):
 * each workflow runs live, then a second run resumes it from its stored logs with every block it
 * had settled taken as settled; both must end alike (status, output, error, response).
 */
import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { decideEnd, decideEndOf, type SettledFact } from '../../src/model/end.js';
import { planResume } from '../../src/model/resume.js';
import type { ExecutionResult } from '../../src/runtime/types.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { testEngine, testRegistry, wf } from '../helpers/runtime.js';

const cases: [string, Record<string, unknown>][] = [
  ['every block settles', wf([['start', 'starter'], ['a', 'function', { code: 'return 1 + 1;' }]], [['start', 'a']])],
  ['a response ends it', wf(
    [['start', 'starter'], ['r', 'response', { status: 201, data: { ok: true } }], ['slow', 'sleep', { ms: 60_000 }]],
    [['start', 'r'], ['start', 'slow']],
  )],
  ['a failure with no error connection fails it', wf([['start', 'starter'], ['f', 'fail', { code: 'BOOM', message: 'it broke' }]], [['start', 'f']])],
  ['a failure its error connection takes does not', wf(
    [['start', 'starter'], ['f', 'fail', { code: 'BOOM' }], ['h', 'function', { code: 'return "handled";' }]],
    [['start', 'f'], ['f', 'h', 'error']],
  )],
];

function endOf(r: ExecutionResult): unknown {
  return { status: r.status, output: r.output, error: r.error, response: r.response };
}

describe('the end of a live run and of a resumed run', () => {
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

  for (const [name, doc] of cases) {
    it(`${name}: the same end, live and resumed from the blocks it settled`, async () => {
      const { compiled } = loadWorkflow(doc, testRegistry);
      const live = await (await testEngine(bus, { executions: store.executions }).start(compiled, { workflowId: 'wf-test', version: 1, input: {}, trigger: { type: 'manual' } })).done;
      const record = await store.executions.get(live.id);
      const planned = planResume(compiled, record?.logs ?? []);
      if ('reason' in planned) throw new Error(planned.reason);
      expect(planned.plan.settled.length, 'the resumed run starts from settled blocks').to.be.above(0);
      // a run with no store of its own: it resumes from the plan alone and runs no block again
      const resumed = await (await testEngine(bus).start(compiled, {
        workflowId: 'wf-test', version: 1, input: {}, trigger: { type: 'manual' }, executionId: `${live.id}-again`,
        resume: { plan: planned.plan, lastSeq: 0, startedAt: Date.now(), limitMs: 20_000 },
      })).done;
      expect(endOf(resumed)).to.deep.equal(endOf(live));
    });
  }

  it('decideEndOf over settled blocks decides what decideEnd decides meeting them one at a time', () => {
    const { compiled } = loadWorkflow(cases[3]?.[1], testRegistry);
    const settles: SettledFact[] = [
      { blockId: 'start', iteration: null, status: 'completed', output: {}, error: null, errorHandled: false },
      { blockId: 'f', iteration: null, status: 'failed', output: null, error: { code: 'BOOM', message: 'x' }, errorHandled: true },
      { blockId: 'h', iteration: null, status: 'completed', output: { result: 'handled' }, error: null, errorHandled: false },
    ];
    const oneByOne = settles.map((s, i) => decideEnd(compiled, s, i === settles.length - 1)).find((d) => d !== null) ?? null;
    expect(oneByOne).to.deep.equal({ type: 'ALL.SETTLED' });
    expect(decideEndOf(compiled, settles, true)).to.deep.equal(oneByOne);
    const unhandled = settles.map((s) => (s.blockId === 'f' ? { ...s, errorHandled: false } : s));
    expect(decideEndOf(compiled, unhandled, true)).to.deep.equal({ type: 'BLOCK.FAILED', error: { code: 'BOOM', message: 'x', blockId: 'f' } });
    // inside a container a failure is the container's to decide; a response is not
    expect(decideEnd(compiled, { ...unhandled[1] as SettledFact, iteration: { container: 'loop', index: 0 } }, false)).to.equal(null);
  });
});
