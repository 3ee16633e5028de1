/**
 * The one encoding of a block run (src/model/block-run.ts): the key a block's run gets at the top
 * level and inside nested containers. Idempotency keys, wait keys and child workflow keys are
 * derived from it and stored, so its form is pinned here.
 */
import { expect } from 'chai';
import { MemoryBus } from '../../src/bus/memory.js';
import { blockOfRunKey, blockRunKey, containerRunKey, iterationScope, ROOT_SCOPE } from '../../src/model/block-run.js';
import { runWorkflow, testEngine } from '../helpers/runtime.js';

const doc = {
  id: 'keys', name: 'keys',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: {} },
    { id: 'top', type: 'runkey', name: 'Top', config: {} },
    { id: 'outer', type: 'loop', name: 'Outer', config: { kind: 'for', iterations: 2 } },
    { id: 'inner', type: 'parallel', name: 'Inner', parent: 'outer', config: { kind: 'count', count: 2 } },
    { id: 'cell', type: 'runkey', name: 'Cell', parent: 'inner', config: {} },
  ],
  connections: [{ from: 'start', to: 'top' }, { from: 'top', to: 'outer' }],
};

describe('block run keys', () => {
  it('keeps the stored form: root|b at the top level, root/c/i|b in an iteration, nested one level per container', async () => {
    const bus = new MemoryBus();
    try {
      const { result, events } = await runWorkflow(testEngine(bus), doc);
      expect(result.status, JSON.stringify(result.error)).to.equal('completed');
      const keys = events.flatMap((e) => (e.type === 'block.completed' && (e.data.blockId === 'top' || e.data.blockId === 'cell') ? [(e.data.output as { key: string }).key] : []));
      const run = `${result.id}|`;
      expect(keys.map((k) => k.slice(run.length)).sort()).to.deep.equal([
        'root/outer/0/inner/0|cell', 'root/outer/0/inner/1|cell', 'root/outer/1/inner/0|cell', 'root/outer/1/inner/1|cell', 'root|top',
      ]);
    } finally {
      await bus.close();
    }
  });

  it('builds and reads keys with one encoder', () => {
    const scope = iterationScope(iterationScope(ROOT_SCOPE, 'outer', 1), 'inner', 0);
    expect(blockRunKey(scope, 'cell')).to.equal('root/outer/1/inner/0|cell');
    expect(blockOfRunKey(blockRunKey(scope, 'cell'))).to.equal('cell');
    expect(containerRunKey(blockRunKey(ROOT_SCOPE, 'outer'))).to.equal('root|outer#container');
  });
});
