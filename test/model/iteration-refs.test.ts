import { expect } from 'chai';
import { validateWorkflow } from '../../src/model/validate.js';
import { collectionItems, loopStep, branchesToStart } from '../../src/model/iteration.js';
import { blockTypeRegistry } from '../../src/blocks/index.js';

const registry = blockTypeRegistry();

function loopDoc(loopConfig: Record<string, unknown>, childCode = 'return 1'): unknown {
  return {
    name: 'l',
    blocks: [
      { id: 's', type: 'starter', name: 'Start', config: {} },
      { id: 'lp', type: 'loop', name: 'Lp', config: loopConfig },
      { id: 'c', type: 'function', name: 'C', parent: 'lp', config: { code: childCode } },
      { id: 'after', type: 'function', name: 'After', config: { code: 'return <loop.index>' } },
    ],
    connections: [{ from: 's', to: 'lp' }, { from: 'lp', to: 'after' }],
  };
}

describe('iteration references and decisions', () => {
  it("accepts <loop.*> in a while loop's own condition and rejects it outside any loop", () => {
    const result = validateWorkflow(loopDoc({ kind: 'while', condition: '<loop.index> < 3' }), registry);
    expect(result.ok).to.equal(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.path)).to.deep.equal(['/blocks/3/config/code']);
  });

  it('rejects <loop.*> in the loop block\'s other fields (they are read in the parent scope)', () => {
    const result = validateWorkflow(loopDoc({ kind: 'forEach', items: '<loop.items>' }), registry);
    expect(result.ok).to.equal(false);
    if (result.ok) return;
    expect(result.issues.map((i) => i.path)).to.include('/blocks/1/config/items');
  });

  it('turns collections into lists', () => {
    expect(collectionItems({ a: 1 })).to.deep.equal({ ok: true, items: [['a', 1]] });
    expect(collectionItems('[1,2]')).to.deep.equal({ ok: true, items: [1, 2] });
    expect(collectionItems(null)).to.deep.equal({ ok: true, items: [] });
    expect(collectionItems(3).ok).to.equal(false);
    expect(collectionItems('"x"').ok).to.equal(false);
  });

  it('decides loop steps and parallel starts', () => {
    expect(loopStep({ kind: 'for', done: 0, total: 2, maxIterations: 10 })).to.deep.equal({ next: 'iterate' });
    expect(loopStep({ kind: 'for', done: 2, total: 2, maxIterations: 10 })).to.deep.equal({ next: 'finish' });
    expect(loopStep({ kind: 'for', done: 0, total: 11, maxIterations: 10 })).to.deep.include({ next: 'fail', repeats: true });
    expect(loopStep({ kind: 'doWhile', done: 0, total: null, maxIterations: 10 })).to.deep.equal({ next: 'iterate' });
    expect(loopStep({ kind: 'while', done: 0, total: null, maxIterations: 10 })).to.deep.equal({ next: 'evaluate' });
    expect(loopStep({ kind: 'while', done: 10, total: null, maxIterations: 10 }, true)).to.deep.include({ next: 'fail', repeats: false });
    expect(loopStep({ kind: 'while', done: 10, total: null, maxIterations: 10 }, false).next).to.equal('finish');
    expect(branchesToStart(10, 3, 2, 4)).to.deep.equal([3, 4]);
    expect(branchesToStart(4, 3, 0, 20)).to.deep.equal([3]);
    // an empty body holds no slot: every remaining branch starts at once
    expect(branchesToStart(5, 2, 0, 2, true)).to.deep.equal([2, 3, 4]);
  });
});
