import { expect } from 'chai';
import { conditionBlock, conditionConfigSchema, type ConditionConfig } from '../../src/blocks/condition.js';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { TroupeError } from '../../src/errors.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
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
