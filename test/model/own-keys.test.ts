import { expect } from 'chai';
import { compileWorkflow } from '../../src/model/graph.js';
import { iterationResult } from '../../src/model/iteration.js';
import { selectFinalOutput } from '../../src/model/output.js';
import { assignOwn, getOwn, setOwn } from '../../src/model/own.js';
import { resolveConfig, resolveValue, type ReferenceScope } from '../../src/model/references.js';
import { redactFields } from '../../src/model/redaction.js';
import { planResume, type PriorLog } from '../../src/model/resume.js';
import { validateWorkflow } from '../../src/model/validate.js';
import { registry, workflow } from './fixtures.js';

/** Block ids and names that collide with Object.prototype's members. */
const AWKWARD_KEYS = ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'valueOf'];

describe('model: objects keyed by block ids and names keep every key as data', () => {
  it('setOwn / getOwn / assignOwn store __proto__ as an own property and never read inherited members', () => {
    const o: Record<string, unknown> = {};
    for (const key of AWKWARD_KEYS) expect(getOwn(o, key), key).to.equal(undefined);
    setOwn(o, '__proto__', { a: 1 });
    setOwn(o, 'constructor', 2);
    expect(Object.getPrototypeOf(o)).to.equal(Object.prototype);
    expect(Object.keys(o)).to.deep.equal(['__proto__', 'constructor']);
    expect(JSON.stringify(o)).to.equal('{"__proto__":{"a":1},"constructor":2}');
    expect(JSON.stringify(structuredClone(o))).to.equal(JSON.stringify(o));
    const copy: Record<string, unknown> = {};
    assignOwn(copy, JSON.parse('{"__proto__":{"b":2},"toString":3}') as Record<string, unknown>);
    expect(getOwn(copy, '__proto__')).to.deep.equal({ b: 2 });
    expect(getOwn(copy, 'toString')).to.equal(3);
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
  });

  it('resolving and redacting copy a "__proto__" key of data as an own property, not a prototype', () => {
    const data = JSON.parse('{"__proto__":{"x":"<variable.unit>"},"k":"sec-ret","toString":"<variable.unit>"}') as Record<string, unknown>;
    const scope: ReferenceScope = { outputs: {}, blockNames: new Set(), variables: { unit: 'metric' } };
    for (const copy of [resolveConfig(data, scope), resolveValue(data, scope), resolveConfig({ nested: data }, scope)['nested'], redactFields(data, ['sec-ret'])] as Record<string, unknown>[]) {
      expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
      expect(Object.keys(copy)).to.deep.equal(['__proto__', 'k', 'toString']);
      expect(getOwn(copy, '__proto__')).to.be.an('object').with.property('x');
    }
    expect(getOwn(resolveConfig(data, scope), '__proto__')).to.deep.equal({ x: 'metric' });
    expect(getOwn(redactFields(data, ['sec-ret']) as Record<string, unknown>, 'k')).to.equal('***');
  });

  it('keeps workflow variables named like prototype members, __proto__ included, and references read them', () => {
    const doc = workflow([], [], { variables: JSON.parse('{"__proto__":"p","constructor":"c","unit":"metric"}') as Record<string, unknown> });
    const result = validateWorkflow(doc, registry);
    expect(result.ok).to.equal(true);
    if (!result.ok) return;
    const variables = result.workflow.variables ?? {};
    expect(JSON.stringify(variables)).to.equal('{"__proto__":"p","constructor":"c","unit":"metric"}');
    expect(Object.getPrototypeOf(variables)).to.equal(Object.prototype);
    const scope: ReferenceScope = { outputs: {}, blockNames: new Set(['start']), variables };
    expect(resolveValue(['<variable.__proto__>', '<variable.constructor>', '<variable.unit>'], scope)).to.deep.equal(['p', 'c', 'metric']);
  });

  it('references read blocks named like prototype members, and nothing else by those names', () => {
    const outputs: Record<string, unknown> = {};
    for (const key of AWKWARD_KEYS) setOwn(outputs, key.toLowerCase(), { result: key });
    const scope: ReferenceScope = { outputs, blockNames: new Set(['start', ...AWKWARD_KEYS.map((k) => k.toLowerCase())]), variables: { toString: 't' } };
    expect(resolveValue(AWKWARD_KEYS.map((k) => `<${k}.result>`), scope)).to.deep.equal(AWKWARD_KEYS);
    expect(resolveValue(['<variable.constructor>', '<variable.hasOwnProperty>', '<variable.__proto__>', '<variable.toString>'], scope)).to.deep.equal([null, null, null, 't']);
    expect(resolveValue('<__proto__.result.constructor>', scope)).to.equal(null);
    const empty: ReferenceScope = { ...scope, outputs: {} };
    expect(resolveValue(AWKWARD_KEYS.map((k) => `<${k}>`), empty)).to.deep.equal(AWKWARD_KEYS.map(() => null));
  });

  it('validation accepts such ids and names, and still reports them when they name no block', () => {
    const blocks = AWKWARD_KEYS.map((k, i) => ({ id: k, name: k, config: { code: i === 0 ? 'return 1' : `return <${AWKWARD_KEYS[i - 1]}.result>` } }));
    const conns = AWKWARD_KEYS.map((k, i) => (i === 0 ? `start>${k}` : `${AWKWARD_KEYS[i - 1]}>${k}`));
    expect(validateWorkflow(workflow(blocks, conns), registry).ok).to.equal(true);
    const dangling = validateWorkflow(workflow([{ id: 'f', config: { code: 'return <__proto__.result> + <constructor.x>' } }], ['start>f']), registry);
    expect(dangling.ok).to.equal(false);
    expect(!dangling.ok && dangling.issues.map((i) => i.message)).to.deep.equal([
      '<__proto__.result> names a block that does not exist ("__proto__")',
      '<constructor.x> names a block that does not exist ("constructor")',
    ]);
  });

  it('iteration results, the final output and a resumption keep a block named __proto__', () => {
    const result = iterationResult(['__proto__', 'constructor'], new Map([['__proto__', { result: 1 }], ['constructor', { result: 2 }]]));
    expect(JSON.stringify(result)).to.equal('{"__proto__":{"result":1},"constructor":{"result":2}}');
    const compiled = compileWorkflow(
      workflow(
        [
          { id: '__proto__', name: '__proto__' },
          { id: 'toString', name: 'toString' },
          { id: 'd', config: { code: 'return <__proto__.result>' } },
        ],
        ['start>__proto__', 'start>toString', '__proto__>d'],
      ),
      registry,
    );
    const final = selectFinalOutput(compiled, new Map([['toString', { result: 't' }], ['d', { result: 'd' }]]));
    expect(JSON.stringify(final)).to.equal('{"tostring":{"result":"t"},"d":{"result":"d"}}');
    const log = (blockId: string, order: number, output: unknown, activated: number[]): PriorLog =>
      ({ blockId, order, status: 'completed', output, error: null, errorHandled: false, iteration: null, activated });
    const planned = planResume(compiled, [log('start', 0, {}, [0, 1]), log('__proto__', 1, { result: 1 }, [2])]);
    if (!('plan' in planned)) throw new Error(planned.reason);
    const toD = planned.plan.replay.find((m) => m.to === 'd');
    expect(JSON.stringify(toD?.carried)).to.equal('{"__proto__":{"result":1}}');
  });
});
