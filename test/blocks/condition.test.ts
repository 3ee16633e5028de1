import { expect } from 'chai';
import { conditionBlock, conditionConfigSchema, type ConditionConfig } from '../../src/blocks/condition.js';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { TroupeError } from '../../src/errors.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { routerBlock, routerConfigSchema } from '../../src/blocks/router.js';
import { makeContext } from './context.js';

describe('blocks/condition', function () {
  this.timeout(10_000);
  let sandbox: IsolatedVmSandbox;
  before(() => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1 });
  });
  after(async () => {
    await sandbox.dispose();
  });

  const config = (raw: unknown): ConditionConfig => conditionConfigSchema.parse(raw);
  const run = (cfg: ConditionConfig, outputs: Record<string, unknown>) => conditionBlock.run(makeContext({ config: cfg, sandbox, outputs }));

  const tiers = config({
    branches: [
      { id: 'big', expression: '<api.count> > 100' },
      { id: 'some', expression: '<api.count> > 0' },
      { id: 'also', expression: 'true' },
    ],
    else: true,
  });

  it('takes the first true branch, in order', async () => {
    expect(await run(tiers, { api: { count: 500 } })).to.deep.equal({ output: { selectedBranch: 'big', result: true }, handles: ['big'] });
    expect(await run(tiers, { api: { count: 5 } })).to.deep.equal({ output: { selectedBranch: 'some', result: true }, handles: ['some'] });
  });

  it('takes else when no branch is true', async () => {
    const cfg = config({ branches: [{ id: 'yes', expression: '<api.status> === 200' }], else: true });
    expect(await run(cfg, { api: { status: 500 } })).to.deep.equal({ output: { selectedBranch: 'else', result: false }, handles: ['else'] });
  });

  it('activates nothing when no branch is true and there is no else', async () => {
    const cfg = config({ branches: [{ id: 'yes', expression: '<api.status> === 200' }] });
    expect(await run(cfg, { api: { status: 404 } })).to.deep.equal({ output: { selectedBranch: null, result: false }, handles: [] });
  });

  it('uses JavaScript truthiness and reads inactive references as null', async () => {
    const cfg = config({ branches: [{ id: 'a', expression: '<api.items>' }, { id: 'b', expression: '<skipped.x> === null' }] });
    expect((await run(cfg, { api: { items: '' }, skipped: null })).output.selectedBranch).to.equal('b');
  });

  it('binds string values instead of pasting them into the expression', async () => {
    // pasted as source, `true || 1 === "admin"` would be true
    const cfg = config({ branches: [{ id: 'admin', expression: '<start.name> === "admin"' }] });
    const result = await run(cfg, { start: { name: 'true || 1' } });
    expect(result.output.selectedBranch).to.equal(null);
  });

  it('fails with EXPRESSION_ERROR naming the branch', async () => {
    const cfg = config({ branches: [{ id: 'ok', expression: 'false' }, { id: 'broken', expression: 'nope.field' }] });
    try {
      await run(cfg, {});
      expect.fail('expected EXPRESSION_ERROR');
    } catch (err) {
      expect(err).to.be.instanceOf(TroupeError);
      expect((err as TroupeError).code).to.equal('EXPRESSION_ERROR');
      expect((err as TroupeError).message).to.match(/^branch "broken": ReferenceError/);
      expect((err as TroupeError).details).to.include({ branch: 'broken' });
    }
  });

  it('declares handles: branch ids, else when enabled, and error', () => {
    const info = blockTypeRegistry().condition!;
    expect(info.handles({ branches: [{ id: 'yes', expression: 'true' }], else: true })).to.deep.equal(['yes', 'else', 'error']);
    expect(info.handles({ branches: [{ id: 'a', expression: '1' }, { id: 'b', expression: '2' }] })).to.deep.equal(['a', 'b', 'error']);
    expect(info.codeFields).to.deep.equal(['branches']);
  });

  it('validates its config with JSON-pointer paths', () => {
    const info = blockTypeRegistry().condition!;
    expect(info.validateConfig({ branches: [] }).map((i) => i.path)).to.deep.equal(['/branches']);
    expect(info.validateConfig({ branches: [{ id: '', expression: 'x' }] }).map((i) => i.path)).to.deep.equal(['/branches/0/id']);
    const issues = info.validateConfig({
      branches: [
        { id: 'a', expression: 'true' },
        { id: 'a', expression: 'false' },
        { id: 'else', expression: 'false' },
        { id: 'error', expression: 'false' },
      ],
    });
    expect(issues.map((i) => i.path)).to.deep.equal(['/branches/1/id', '/branches/2/id', '/branches/3/id']);
    expect(issues[0]!.message).to.match(/duplicate/);
    expect(info.handles({ branches: 'nope' })).to.deep.equal([]);
  });
});

describe('blocks/condition and router: expressions in the subset run in-process (docs/expressions.md)', function () {
  this.timeout(10_000);
  let real: IsolatedVmSandbox;
  const asked: string[] = [];
  /** the real sandbox, noting each expression it is asked to evaluate */
  let counting: Sandbox;
  before(() => {
    real = new IsolatedVmSandbox({ poolSize: 1 });
    counting = {
      runFunction: (...args) => real.runFunction(...args),
      evaluate: (expression, bindings, limits) => {
        asked.push(expression);
        return real.evaluate(expression, bindings, limits);
      },
      dispose: () => Promise.resolve(),
    };
  });
  beforeEach(() => {
    asked.length = 0;
  });
  after(async () => {
    await real.dispose();
  });

  const condition = (expression: string) => conditionConfigSchema.parse({ branches: [{ id: 'yes', expression }], else: true });

  it('decides a branch without the sandbox', async () => {
    // makeContext's default sandbox fails the test if the block asks it anything
    const ctx = makeContext({ config: condition('<api.status> === 200 && <api.body.tags>.includes("vip")'), outputs: { api: { status: 200, body: { tags: ['vip'] } } } });
    expect((await conditionBlock.run(ctx)).handles).to.deep.equal(['yes']);
  });

  it('takes a rules route without the sandbox', async () => {
    const config = routerConfigSchema.parse({ value: '<api.status> >= 500 ? "retry" : `s${<api.status>}`', routes: [{ id: 'ok', equals: 's200' }, { id: 'retry', equals: 'retry' }] });
    const result = await routerBlock.run(makeContext({ config, outputs: { api: { status: 200 } } }));
    expect(result.handles).to.deep.equal(['ok']);
  });

  it('asks the sandbox for an expression outside the subset, with the same bound source', async () => {
    const ctx = makeContext({ config: condition('<api.items>.some((i) => i > 2)'), sandbox: counting, outputs: { api: { items: [1, 3] } } });
    expect((await conditionBlock.run(ctx)).handles).to.deep.equal(['yes']);
    expect(asked).to.deep.equal(['__ref0.some((i) => i > 2)']);
  });

  it('leaves a failing evaluation to the sandbox, which names the error as before', async () => {
    const ctx = makeContext({ config: condition('<api.body>.status === 200'), sandbox: counting, outputs: { api: { body: null } } });
    const err = await conditionBlock.run(ctx).then(() => undefined, (e: unknown) => e);
    expect(err).to.be.instanceOf(TroupeError);
    expect((err as TroupeError).code).to.equal('EXPRESSION_ERROR');
    expect((err as TroupeError).message).to.equal(`branch "yes": TypeError: Cannot read properties of null (reading 'status')`);
    expect(asked).to.have.length(1);
  });

  it('leaves a cancelled evaluation to the sandbox, which answers CANCELLED', async () => {
    const aborted = new AbortController();
    aborted.abort();
    const ctx = makeContext({ config: condition('1 === 1'), sandbox: counting, signal: aborted.signal });
    const err = await conditionBlock.run(ctx).then(() => undefined, (e: unknown) => e);
    expect((err as TroupeError).code).to.equal('CANCELLED');
  });
});
