/**
 * What the execution actor does while blocks wait (actors/waiting.ts, docs/waiting.md), on the
 * simulated clock: a wait shorter than the park threshold is kept in memory with the time limit
 * paused; a longer one parks the execution once nothing else runs for PARK_QUIET_MS.
 */
import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { PARK_QUIET_MS } from '../../actors/waiting.js';
import { runSimulated, wf } from '../helpers/runtime.js';

const HOUR = 3_600_000;

describe('waiting blocks on the simulated clock', () => {
  const bus = new MemoryBus();
  after(() => bus.close());

  it('a short wait runs in memory; its waiting time does not count against the time limit', async () => {
    const doc = wf([['start', 'starter'], ['pause', 'wait', { duration: 5000 }], ['after', 'sleep', { ms: 100, value: 'done' }]], [['start', 'pause'], ['pause', 'after']]);
    const { result, events, clock } = await runSimulated(bus, doc, {}, { parkAfterMs: 60_000, timeoutMs: 1000 });
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result.output).to.deep.equal({ value: 'done' });
    expect(result.durationMs).to.equal(5100);
    const waited = events.find((e) => e.type === 'block.completed' && e.data.blockId === 'pause');
    expect(waited?.type === 'block.completed' && waited.data.output).to.deep.include({ waitedMs: 5000 });
    expect(clock.pending).to.equal(0);
  });

  it('the time limit resumes with what was left once something other than a wait runs', async () => {
    const doc = wf([['start', 'starter'], ['pause', 'wait', { duration: 5000 }], ['after', 'sleep', { ms: 2000 }]], [['start', 'pause'], ['pause', 'after']]);
    const { result } = await runSimulated(bus, doc, {}, { parkAfterMs: 60_000, timeoutMs: 1000 });
    expect(result.error?.code).to.equal('EXECUTION_TIMEOUT');
    // 5 s of waiting, then the whole 1 s limit spent on the sleep
    expect(result.durationMs).to.equal(6000);
  });

  it('a wait further away than parkAfterMs parks the execution once only waits remain for PARK_QUIET_MS', async () => {
    const doc = wf(
      [['start', 'starter'], ['pause', 'wait', { duration: HOUR }], ['busy', 'sleep', { ms: 1000 }]],
      [['start', 'pause'], ['start', 'busy']],
    );
    const { result, clock } = await runSimulated(bus, doc, {}, { parkAfterMs: 60_000 });
    expect(result.status).to.equal('waiting');
    // the sleep holds it for its second, then the park check waits out its quiet period
    expect(result.durationMs).to.equal(1000 + PARK_QUIET_MS);
    expect(result.waiting).to.have.length(1);
    expect(result.waiting?.[0]).to.deep.include({ blockId: 'pause', kind: 'wait' });
    expect(Date.parse(result.waiting?.[0]?.until ?? '') - Date.parse(result.startedAt)).to.equal(HOUR);
    expect(result.activeMs, 'the running time it used before it only waited').to.equal(1000);
    expect(clock.pending, 'its timers went with it').to.equal(0);
  });
});
