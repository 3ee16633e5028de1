import { expect } from 'chai';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { jsonEqual, routerBlock, routerConfigSchema, type RouterConfig } from '../../src/blocks/router.js';
import { TroupeError } from '../../src/errors.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import { makeContext } from './context.js';

async function failure(promise: Promise<unknown>): Promise<TroupeError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(TroupeError);
    return err as TroupeError;
  }
  expect.fail('expected a failure');
}

describe('blocks/router', function () {
  this.timeout(10_000);
  let sandbox: IsolatedVmSandbox;
  before(() => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1 });
  });
  after(async () => {
    await sandbox.dispose();
  });

  const config = (raw: unknown): RouterConfig => routerConfigSchema.parse(raw);
  const run = (cfg: RouterConfig, outputs: Record<string, unknown>) => routerBlock.run(makeContext({ config: cfg, sandbox, outputs }));

  const byTier = config({
    mode: 'rules',
    value: '<start.tier>',
    routes: [
      { id: 'gold', equals: 'gold' },
      { id: 'three', equals: 3 },
      { id: 'shape', equals: { kind: 'box', sizes: [1, 2] } },
    ],
  });

  it('matches a single reference against the routes, first match wins', async () => {
    const result = await run(byTier, { start: { tier: 'gold' } });
    expect(result.handles).to.deep.equal(['gold']);
    expect(result.output).to.deep.equal({ selectedRoute: 'gold', reasoning: `value "gold" matched route 'gold'` });
  });

  it('compares strictly: "3" does not equal 3', async () => {
    expect((await run(byTier, { start: { tier: 3 } })).output.selectedRoute).to.equal('three');
    const err = await failure(run(byTier, { start: { tier: '3' } }));
    expect(err.code).to.equal('NO_ROUTE');
    expect(err.message).to.contain('"3"');
  });

  it('compares objects and arrays by value', async () => {
    const result = await run(byTier, { start: { tier: { sizes: [1, 2], kind: 'box' } } });
    expect(result.output.selectedRoute).to.equal('shape');
    expect(jsonEqual([1, { a: null }], [1, { a: null }])).to.equal(true);
    expect(jsonEqual([1, 2], [2, 1])).to.equal(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: undefined })).to.equal(false);
    expect(jsonEqual(null, {})).to.equal(false);
  });

  it('evaluates an expression value and falls back to the default route', async () => {
    const cfg = config({
      value: '<api.count> > 10 ? "many" : "few"',
      routes: [
        { id: 'many', equals: 'many' },
        { id: 'other', equals: 'never' },
      ],
      default: 'other',
    });
    expect((await run(cfg, { api: { count: 50 } })).output.selectedRoute).to.equal('many');
    const fallback = await run(cfg, { api: { count: 1 } });
    expect(fallback.handles).to.deep.equal(['other']);
    expect(fallback.output.reasoning).to.match(/matched no route; took the default route 'other'/);
  });

  it('reports expression errors as EXPRESSION_ERROR', async () => {
    const cfg = config({ mode: 'rules', value: 'missing + 1', routes: [{ id: 'a', equals: 1 }] });
    const err = await failure(run(cfg, {}));
    expect(err.code).to.equal('EXPRESSION_ERROR');
    expect(err.message).to.match(/^router value: ReferenceError/);
  });

  it('validates llm mode: routes become handles, a model is required (runs in agent-workflows.test.ts)', () => {
    const info = blockTypeRegistry().router!;
    const llm = { mode: 'llm', prompt: 'Pick one', routes: [{ id: 'a', description: 'A' }, { id: 'b', description: 'B' }], model: 'gpt-x' };
    expect(info.validateConfig(llm)).to.deep.equal([]);
    expect(info.handles(llm)).to.deep.equal(['a', 'b', 'error']);
    const { model: _model, ...noModel } = llm;
    expect(info.validateConfig(noModel).map((i) => i.path)).to.deep.equal(['/model']);
    expect(info.validateConfig({ ...llm, baseURL: 'not a url' }).map((i) => i.path)).to.deep.equal(['/baseURL']);
    expect(info.validateConfig({ ...llm, default: 'b' })).to.deep.equal([]);
    expect(info.validateConfig({ ...llm, default: 'zzz' }).map((i) => i.path)).to.deep.equal(['/default']);
  });

  it('declares handles, code fields and validates its config', () => {
    const info = blockTypeRegistry().router!;
    expect(info.handles({ mode: 'rules', value: '1', routes: [{ id: 'a', equals: 1 }, { id: 'b', equals: 2 }] })).to.deep.equal(['a', 'b', 'error']);
    expect(info.handles({ value: '1', routes: [{ id: 'x', equals: 1 }] })).to.deep.equal(['x', 'error']);
    expect(info.codeFields).to.deep.equal(['value']);
    const bad = info.validateConfig({ mode: 'rules', value: '1', routes: [{ id: 'a', equals: 1 }, { id: 'a', equals: 2 }], default: 'zzz' });
    expect(bad.map((i) => i.path)).to.deep.equal(['/routes/1/id', '/default']);
    expect(info.validateConfig({ mode: 'rules', routes: [{ id: 'a', equals: 1 }] }).map((i) => i.path)).to.deep.equal(['/value']);
    expect(info.validateConfig({ mode: 'llm', routes: [] }).length).to.be.greaterThan(0);
    expect(info.validateConfig({ mode: 'magic', value: '1', routes: [] }).length).to.be.greaterThan(0);
  });
});
