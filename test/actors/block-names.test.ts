import { expect } from 'chai';
import { ValidationError } from '../../src/errors.js';
import { openSqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { loadWorkflow } from '../../src/runtime/workflows.js';
import { forEachBus } from '../helpers/buses.js';
import { runWorkflow, testEngine, testRegistry } from '../helpers/runtime.js';

interface Block {
  id: string;
  type: string;
  name: string;
  config: Record<string, unknown>;
  parent?: string;
}

/** A chain start → blocks[0] → blocks[1] → …; every block reads the ones before it. */
function chain(blocks: Block[]): Record<string, unknown> {
  const all = [{ id: 'start', type: 'starter', name: 'Start', config: {} }, ...blocks];
  const top = all.filter((b) => !('parent' in b) || b.parent === undefined);
  return { id: 'names', name: 'names', blocks: all, connections: top.slice(1).map((b, i) => ({ from: top[i]?.id, to: b.id })) };
}

const fn = (id: string, name: string, code: string): Block => ({ id, type: 'function', name, config: { code } });

describe('block names the SPEC allows, when saved', () => {
  it('an unknown name of that shape is a validation error', () => {
    const doc = chain([fn('f1', 'Fetch (v2)', 'return 1'), fn('f2', 'g', 'return <Fetch (v3).result>')]);
    let issues: unknown;
    try {
      loadWorkflow(doc, testRegistry);
    } catch (err) {
      issues = err instanceof ValidationError ? err.issues : err;
    }
    expect(issues).to.deep.equal([{ path: '/blocks/2/config/code', message: '<Fetch (v3).result> names a block that does not exist ("Fetch (v3)")' }]);
  });
});

forEachBus('block names the SPEC allows, through the engine (SPEC §1, §1.2)', (getBus) => {
  it('references names with parentheses, #, digits first, punctuation, tabs and unicode, in config and in code', async () => {
    const doc = chain([
      fn('f1', 'Fetch (v2)', "return 'paren'"),
      fn('f2', 'Step #1', 'return <Fetch (v2).result> + "#"'),
      fn('f3', '1st call', 'return `${<Step #1.result>}1`'),
      fn('f4', 'a+b', 'return { sum: <1st call.result>.length + <Fetch (v2).result>.length }'),
      fn('f5', '$v', "return '<a+b.result.sum>' + 1"),
      fn('f6', 'API: weather', 'return [<$v.result>, <Step\t#1.result>]'),
      fn('f7', 'say "hi"', 'return <API: weather.result>.join("|")'),
      fn('f8', "it's `{x}` / y", 'return "<say "hi".result>!"'),
      fn('f9', 'tab\there\u00a0Ünï 名前', `return <it's \`{x}\` / y.result> + ' ' + <say "hi".stdout>.length`),
      {
        id: 'r',
        type: 'response',
        name: 'Reply',
        config: {
          data: {
            paren: '<Fetch (v2).result>',
            hash: '<Step #1.result>',
            digit: '<1st call.result>',
            sum: '<a+b.result.sum>',
            dollar: '<$v.result>',
            colon: '<api:weather.result>',
            quote: '<say "hi".result>',
            mixed: '<tab\there\u00a0ünï 名前.result>',
            text: 'got <Fetch (v2).result> and <1st call.result>',
          },
        },
      },
    ]);
    const { result } = await runWorkflow(testEngine(getBus()), doc);
    expect(result.status, JSON.stringify(result.error)).to.equal('completed');
    expect(result.response?.data).to.deep.equal({
      paren: 'paren',
      hash: 'paren#',
      digit: 'paren#1',
      sum: 12,
      dollar: '121',
      colon: ['121', 'paren#'],
      quote: '121|paren#',
      mixed: '121|paren#! 0',
      text: 'got paren and paren#1',
    });
  });

  it('blocks whose id and name are __proto__, constructor, toString or hasOwnProperty are read and reported like any', async () => {
    const doc = {
      id: 'proto',
      name: 'proto',
      variables: { constructor: 'mine' },
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: '__proto__', type: 'function', name: '__proto__', config: { code: "return 'p'" } },
        { id: 'constructor', type: 'condition', name: 'constructor', config: { branches: [{ id: 'yes', expression: "<__proto__.result> === 'p'" }], else: true } },
        { id: 'toString', type: 'loop', name: 'toString', config: { kind: 'for', iterations: 2 } },
        { id: 'valueOf', type: 'function', name: '__proto__ inside', parent: 'toString', config: { code: 'return <loop.index> + <__proto__.result>' } },
        { id: 'hasOwnProperty', type: 'function', name: 'hasOwnProperty', config: { code: 'return [<__proto__.result>, <constructor.selectedBranch>, <tostring.results>, <variable.constructor>, <variable.toString>]' } },
        { id: 'side', type: 'function', name: 'valueOf', config: { code: 'return <__proto__>' } },
      ],
      connections: [
        { from: 'start', to: '__proto__' },
        { from: '__proto__', to: 'constructor' },
        { from: 'constructor', to: 'toString', handle: 'yes' },
        { from: 'toString', to: 'hasOwnProperty' },
        { from: '__proto__', to: 'side' },
      ],
    };
    const store: Store = openSqliteStore(':memory:');
    try {
      const { result } = await runWorkflow(testEngine(getBus(), { executions: store.executions }), doc);
      expect(result.status, JSON.stringify(result.error)).to.equal('completed');
      const results = [{ __proto__inside: { result: '0p', stdout: '' } }, { __proto__inside: { result: '1p', stdout: '' } }];
      // two terminal blocks: the output is keyed by normalized name
      expect(JSON.stringify(result.output)).to.equal(
        JSON.stringify({ hasownproperty: { result: ['p', 'yes', results, 'mine', null], stdout: '' }, valueof: { result: { result: 'p', stdout: '' }, stdout: '' } }),
      );
      const record = await store.executions.get(result.id);
      const context = record?.context as Record<string, Record<string, unknown>>;
      const ids = ['start', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'side'];
      expect(Object.keys(context['states'] ?? {}).sort()).to.deep.equal([...ids].sort());
      expect(Object.values(context['states'] ?? {})).to.deep.equal(ids.map(() => 'completed'));
      expect(Object.keys(context['outputs'] ?? {}).sort()).to.deep.equal([...ids].sort());
      expect(JSON.stringify(context['outputs']?.['__proto__'])).to.equal('{"result":"p","stdout":""}');
      expect(JSON.stringify(context['decisions'])).to.equal('{"constructor":"yes"}');
      expect(Object.keys(context['iterations'] ?? {})).to.deep.equal(['toString']);
      expect(record?.logs.filter((l) => l.blockId === 'valueOf')).to.have.length(2);
    } finally {
      await store.close();
    }
  });
});
