import { expect } from 'chai';
import { ancestors, compileWorkflow, startBlocks, topologicalOrder, type CompiledWorkflow } from '../../src/model/graph.js';
import { validateWorkflow } from '../../src/model/validate.js';
import type { WorkflowDef } from '../../src/model/types.js';
import { registry, workflow, type BlockSpec } from './fixtures.js';

function compile(def: WorkflowDef): CompiledWorkflow {
  const result = validateWorkflow(def, registry);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return compileWorkflow(result.workflow, registry);
}

const reads = (id: string, code: string, extra: Partial<BlockSpec> = {}): BlockSpec => ({ id, config: { code }, ...extra });
const carryOf = (c: CompiledWorkflow): Record<number, string[]> => Object.fromEntries(c.carry);

describe('model/compileWorkflow', () => {
  it('builds blocks, connections, names and order', () => {
    const c = compile(workflow([{ id: 'a', name: 'My A' }, { id: 'b' }], ['start>a', 'a>b', 'a>b:error']));
    expect(c.starterId).to.equal('start');
    expect(c.order).to.deep.equal(['start', 'a', 'b']);
    expect(c.topLevel).to.deep.equal(['start', 'a', 'b']);
    const a = c.blocks.get('a')!;
    expect(a).to.deep.include({ normName: 'mya', index: 1, hasErrorConnection: true, children: [] });
    expect(a.outgoing).to.deep.equal([
      { index: 1, from: 'a', to: 'b', handle: 'success' },
      { index: 2, from: 'a', to: 'b', handle: 'error' },
    ]);
    expect(c.blocks.get('b')!.incoming.map((x) => x.index)).to.deep.equal([1, 2]);
    expect([...c.byName]).to.deep.equal([['start', 'start'], ['mya', 'a'], ['b', 'b']]);
  });

  it('names the starter "start" whatever its display name', () => {
    const def = workflow([{ id: 'a' }], ['start>a']);
    def.blocks[0]!.name = 'Trigger';
    const c = compile(def);
    expect(c.blocks.get('start')!.normName).to.equal('start');
    expect(c.byName.get('start')).to.equal('start');
    expect(c.blockNames.has('trigger')).to.equal(false);
  });

  it('drops disabled blocks, their children and their connections, keeping connection indexes', () => {
    const c = compile(
      workflow(
        [{ id: 'off', enabled: false }, { id: 'l', type: 'loop', enabled: false }, { id: 'kid', parent: 'l' }, reads('b', 'return <off.result>')],
        ['start>off', 'off>b', 'start>b'],
      ),
    );
    expect(c.order).to.deep.equal(['start', 'b']);
    expect(c.blocks.get('b')!.incoming.map((x) => x.index)).to.deep.equal([2]);
    expect(c.blockNames.has('off')).to.equal(true);
    expect(c.byName.has('off')).to.equal(false);
    expect(c.blocks.get('b')!.references).to.deep.equal(['off']);
    expect(c.carry.get(2)).to.deep.equal([]);
  });

  it('records references by normalized name, ignoring prefixes and non-references', () => {
    const c = compile(workflow([{ id: 'a', name: 'My API' }, reads('b', 'return <My API.data> + <myapi> + <start.x> + <variable.v> + (1 < 2) + "<div>"')], ['start>a', 'a>b']));
    expect(c.blocks.get('b')!.references).to.deep.equal(['myapi', 'start']);
  });

  describe('carry', () => {
    it('chain: outputs travel every hop from producer to reader', () => {
      const c = compile(workflow([{ id: 'a' }, { id: 'b' }, reads('c', 'return <a.result> + <start.x>')], ['start>a', 'a>b', 'b>c']));
      expect(carryOf(c)).to.deep.equal({ 0: ['start'], 1: ['start', 'a'], 2: ['start', 'a'] });
    });

    it('skipping levels: only hops between producer and reader carry', () => {
      const c = compile(workflow([{ id: 'a' }, { id: 'b' }, { id: 'c' }, reads('d', 'return <a.result>')], ['start>a', 'a>b', 'b>c', 'c>d']));
      expect(carryOf(c)).to.deep.equal({ 0: [], 1: ['a'], 2: ['a'], 3: ['a'] });
    });

    it('diamond: each branch carries only its own ancestors', () => {
      const c = compile(
        workflow([{ id: 'a' }, { id: 'b' }, reads('d', 'return [<a.result>, <b.result>, <start.q>]')], ['start>a', 'start>b', 'a>d', 'b>d']),
      );
      expect(carryOf(c)).to.deep.equal({ 0: ['start'], 1: ['start'], 2: ['start', 'a'], 3: ['start', 'b'] });
    });

    it('carries names read further downstream of the target, and nothing for non-ancestors', () => {
      const c = compile(
        workflow([{ id: 'a' }, { id: 'side' }, { id: 'b' }, reads('e', 'return <a.result> + <side.result>')], ['start>a', 'start>side', 'a>b', 'b>e']),
      );
      expect(carryOf(c)).to.deep.equal({ 0: [], 1: [], 2: ['a'], 3: ['a'] });
    });

    it('containers: outside outputs enter through the container, children pass their own', () => {
      const c = compile(
        workflow(
          [
            { id: 'a' },
            { id: 'l', type: 'loop', name: 'L1', config: { items: '<start.list>' } },
            { id: 'x', parent: 'l' },
            reads('y', 'return <a.result> + <x.result> + <loop.index>', { parent: 'l' }),
            reads('after', 'return <l1.results>'),
          ],
          ['start>a', 'a>l', 'x>y', 'l>after'],
        ),
      );
      expect(carryOf(c)).to.deep.equal({ 0: ['start'], 1: ['start', 'a'], 2: ['x'], 3: ['l1'] });
      expect(c.blocks.get('l')!.children).to.deep.equal(['x', 'y']);
      expect(c.blocks.get('l')!.needs).to.deep.equal(['start', 'a']);
      expect(c.blocks.get('y')!.needs).to.deep.equal(['a', 'x']);
      expect(c.topLevel).to.deep.equal(['start', 'a', 'l', 'after']);
    });

    it('nested containers forward outside outputs two levels down', () => {
      const c = compile(
        workflow(
          [
            { id: 'a' },
            { id: 'p', type: 'parallel' },
            { id: 'inner', type: 'loop', parent: 'p' },
            { id: 'k', parent: 'p' },
            reads('z', 'return <a.result> + <k.result>', { parent: 'inner' }),
          ],
          ['start>a', 'a>p', 'k>inner'],
        ),
      );
      expect(c.blocks.get('inner')!.needs).to.deep.equal(['a', 'k']);
      expect(c.blocks.get('p')!.needs).to.deep.equal(['a']);
      expect(carryOf(c)).to.deep.equal({ 0: [], 1: ['a'], 2: ['k'] });
    });
  });

  describe('scopes', () => {
    const def = workflow(
      [{ id: 'a' }, { id: 'b' }, { id: 'orphan' }, { id: 'l', type: 'loop' }, { id: 'x', parent: 'l' }, { id: 'y', parent: 'l' }, { id: 'w', parent: 'l' }],
      ['start>b', 'start>a', 'a>l', 'b>l', 'x>y'],
    );
    it('ancestors stay in the block\'s scope, in definition order', () => {
      const c = compile(def);
      expect(ancestors(c, 'l')).to.deep.equal(['start', 'a', 'b']);
      expect(ancestors(c, 'y')).to.deep.equal(['x']);
      expect(ancestors(c, 'start')).to.deep.equal([]);
    });
    it('startBlocks lists blocks without incoming sibling connections', () => {
      const c = compile(def);
      expect(startBlocks(c)).to.deep.equal(['start', 'orphan']);
      expect(startBlocks(c, 'l')).to.deep.equal(['x', 'w']);
    });
    it('topologicalOrder breaks ties by definition order', () => {
      const c = compile(def);
      expect(topologicalOrder(c)).to.deep.equal(['start', 'a', 'b', 'orphan', 'l']);
      expect(topologicalOrder(c, 'l')).to.deep.equal(['x', 'y', 'w']);
    });
  });
});
