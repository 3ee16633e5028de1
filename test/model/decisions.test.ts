import { expect } from 'chai';
import { compileWorkflow, type CompiledWorkflow } from '../../src/model/graph.js';
import { isResponseBlock, selectFinalOutput, terminalBlocks } from '../../src/model/output.js';
import { planActivation } from '../../src/model/plan.js';
import { activatedConnections, decideReadiness, startDecision } from '../../src/model/readiness.js';
import type { WorkflowDef } from '../../src/model/types.js';
import { registry, workflow } from './fixtures.js';

const compile = (def: WorkflowDef): CompiledWorkflow => compileWorkflow(def, registry);
const cond = (id: string, elseHandle = true) => ({ id, type: 'condition', config: { branches: [{ id: 'yes', expression: 'x' }], else: elseHandle } });

describe('model/readiness', () => {
  it('waits while any input is pending, runs with one active, skips otherwise', () => {
    expect(decideReadiness(['active', 'pending'])).to.equal('wait');
    expect(decideReadiness(['inactive', 'active'])).to.equal('run');
    expect(decideReadiness(['active'])).to.equal('run');
    expect(decideReadiness(['inactive', 'inactive'])).to.equal('skip');
    expect(decideReadiness([])).to.equal('skip');
  });

  it('splits outgoing connections by the chosen handles', () => {
    const c = compile(workflow([cond('c'), { id: 'a' }, { id: 'b' }, { id: 'e' }], ['start>c', 'c>a:yes', 'c>b:else', 'c>e:error', 'c>b:yes']));
    const split = activatedConnections(c.blocks.get('c')!, ['yes']);
    expect(split.active.map((x) => x.index)).to.deep.equal([1, 4]);
    expect(split.inactive.map((x) => x.index)).to.deep.equal([2, 3]);
    expect(activatedConnections(c.blocks.get('c')!, []).active).to.deep.equal([]);
  });

  it('starts the starter and container start children, skips top-level orphans', () => {
    const c = compile(workflow([{ id: 'a' }, { id: 'orphan' }, { id: 'l', type: 'loop' }, { id: 'x', parent: 'l' }, { id: 'y', parent: 'l' }], ['start>a', 'a>l', 'x>y']));
    expect(['start', 'a', 'orphan', 'l', 'x', 'y', 'ghost'].map((id) => startDecision(c, id))).to.deep.equal(['run', 'wait', 'skip', 'wait', 'run', 'wait', 'skip']);
  });
});

describe('model/output', () => {
  const c = compile(workflow([{ id: 'a', name: 'A One' }, { id: 'b' }, { id: 'r', type: 'response' }, { id: 'l', type: 'loop' }, { id: 'kid', parent: 'l' }], ['start>a', 'start>b', 'b>r', 'start>l']));

  it('finds top-level terminals', () => {
    expect(terminalBlocks(c)).to.deep.equal(['a', 'r', 'l']);
    expect(isResponseBlock(c.blocks.get('r')!)).to.equal(true);
    expect(isResponseBlock(c.blocks.get('a')!)).to.equal(false);
  });

  it('returns the outputs of the single completed terminal', () => {
    const out = { result: 1, stdout: '' };
    expect(selectFinalOutput(c, new Map<string, Record<string, unknown>>([['start', { input: 1 }], ['b', { result: 0 }], ['a', out]]))).to.equal(out);
  });

  it('keys several terminals by normalized name in definition order', () => {
    const out = selectFinalOutput(c, new Map([['l', { results: [] }], ['a', { result: 1 }]]));
    expect(out).to.deep.equal({ aone: { result: 1 }, l: { results: [] } });
    expect(Object.keys(out as object)).to.deep.equal(['aone', 'l']);
  });

  it('returns null when no terminal completed', () => {
    expect(selectFinalOutput(c, new Map<string, Record<string, unknown>>([['start', {}], ['b', {}]]))).to.equal(null);
  });
});

describe('model/planActivation', () => {
  it('follows chosen handles and propagates skips', () => {
    const c = compile(
      workflow([cond('c', false), { id: 'yes' }, { id: 'after' }, { id: 'err' }, { id: 'join' }], ['start>c', 'c>yes:yes', 'yes>after', 'c>err:error', 'after>join', 'err>join']),
    );
    const plan = (c1: string[]) => Object.fromEntries(planActivation(c, (id) => (id === 'c' ? c1 : ['success'])));
    expect(plan(['yes'])).to.deep.equal({ start: 'ran', c: 'ran', yes: 'ran', after: 'ran', err: 'skipped', join: 'ran' });
    expect(plan([])).to.deep.equal({ start: 'ran', c: 'ran', yes: 'skipped', after: 'skipped', err: 'skipped', join: 'skipped' });
    expect(plan(['error'])).to.deep.equal({ start: 'ran', c: 'ran', yes: 'skipped', after: 'skipped', err: 'ran', join: 'ran' });
  });

  it('skips blocks nothing leads to', () => {
    const c = compile(workflow([{ id: 'a' }, { id: 'orphan' }, { id: 'next' }], ['start>a', 'orphan>next']));
    expect(Object.fromEntries(planActivation(c, () => ['success']))).to.deep.equal({ start: 'ran', a: 'ran', orphan: 'skipped', next: 'skipped' });
  });
});
