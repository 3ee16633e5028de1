/**
 * BoundaryPersister's held creation (src/runtime/persister.ts): the record of a run whose starter
 * answers only at its end waits while the run works, so a short run is inserted once, already
 * ended; it goes as soon as the run waits for something outside the process, because that is
 * when a crash would leave a run that has called out without the record to resume it from.
 */
import { expect } from 'chai';
import { BoundaryPersister, HOLD_CREATE_MS } from '../../src/runtime/persister.js';
import type { BlockLogEntry } from '../../src/runtime/types.js';
import type { BoundaryBatch, ExecutionRecord, ExecutionRepo } from '../../src/store/types.js';
import { FakeClock } from '../helpers/fake-clock.js';

const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/** A repo that keeps what it is given and commits one turn later, as a writer thread would. */
function spyRepo(): { repo: ExecutionRepo; items: { id: string; batch: BoundaryBatch }[] } {
  const items: { id: string; batch: BoundaryBatch }[] = [];
  const repo = {
    saveBoundaries: async (batch: { id: string; batch: BoundaryBatch }[]) => {
      items.push(...batch);
      await turn();
      return batch.map(() => null);
    },
  } as unknown as ExecutionRepo;
  return { repo, items };
}

function running(id: string): ExecutionRecord {
  return { id, workflowId: 'wf', version: 1, status: 'running', trigger: { type: 'api' }, input: {}, output: null, error: null, startedAt: new Date().toISOString(), endedAt: null, durationMs: null };
}

function log(blockId: string, status: BlockLogEntry['status']): BlockLogEntry {
  return { blockId, blockName: blockId, blockType: 'x', status, input: {}, output: null, error: null, startedAt: new Date().toISOString(), endedAt: null, durationMs: null, order: 0, attempts: 1, iteration: null } as unknown as BlockLogEntry;
}

const creates = (items: { id: string; batch: BoundaryBatch }[], id: string) => items.filter((i) => i.id === id && i.batch.create !== undefined);

describe('BoundaryPersister: a held creation', () => {
  it('waits while its run records something every turn, then goes once, already ended, with the end', async () => {
    const { repo, items } = spyRepo();
    const p = new BoundaryPersister(repo, (err) => { throw err; });
    const recorded = p.create(running('e1'), true);
    for (let i = 0; i < 6; i++) {
      await turn();
      p.log('e1', log(`b${i}`, 'completed'));
      p.event('e1', i + 1, 'block.completed', {});
    }
    expect(items, 'nothing written while the run works').to.have.length(0);
    p.patch('e1', { status: 'completed', endedAt: new Date().toISOString(), durationMs: 1 });
    await Promise.all([p.commit('e1'), recorded]);
    expect(items).to.have.length(1);
    expect(items[0]?.batch.create?.status).to.equal('completed');
    expect(items[0]?.batch.patch).to.equal(undefined);
    expect(items[0]?.batch.logs).to.have.length(6);
  });

  it('goes with the second write after its run went quiet (waiting for a call, a timer, the sandbox)', async () => {
    const { repo, items } = spyRepo();
    const p = new BoundaryPersister(repo, (err) => { throw err; });
    void p.create(running('e2'), true);
    p.log('e2', log('call', 'running'));
    // the run now waits for its call: two turns of the loop and the record is on its way
    await turn();
    await turn();
    expect(creates(items, 'e2').map((i) => i.batch.create?.status), 'written, still running').to.deep.equal(['running']);
  });

  it('does not wait for a waiting block: an approval may be decided from outside at once', async () => {
    const { repo, items } = spyRepo();
    const p = new BoundaryPersister(repo, (err) => { throw err; });
    void p.create(running('e3'), true);
    p.log('e3', log('ok', 'waiting'));
    await turn();
    expect(creates(items, 'e3')).to.have.length(1);
  });

  it('is written as running after HOLD_CREATE_MS even while its run keeps working', async () => {
    const { repo, items } = spyRepo();
    const clock = new FakeClock();
    const p = new BoundaryPersister(repo, (err) => { throw err; }, clock);
    void p.create(running('e4'), true);
    for (let i = 0; i < 3; i++) {
      await turn();
      p.log('e4', log(`b${i}`, 'completed'));
    }
    expect(items).to.have.length(0);
    await clock.advance(HOLD_CREATE_MS);
    for (let i = 3; i < 6; i++) {
      await turn();
      p.log('e4', log(`b${i}`, 'completed'));
    }
    expect(creates(items, 'e4').map((i) => i.batch.create?.status)).to.deep.equal(['running']);
  });

  it('is not held unless asked: the first write takes it', async () => {
    const { repo, items } = spyRepo();
    const p = new BoundaryPersister(repo, (err) => { throw err; });
    void p.create(running('e5'));
    await turn();
    p.log('e5', log('a', 'completed'));
    expect(creates(items, 'e5')).to.have.length(1);
  });
});
