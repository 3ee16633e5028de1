import { expect } from 'chai';
import { functionBlock } from '../../src/blocks/function.js';
import { blockTypeRegistry } from '../../src/blocks/index.js';
import { TroupeError } from '../../src/errors.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import { makeContext } from './context.js';

describe('blocks/function', function () {
  this.timeout(10_000);
  let sandbox: IsolatedVmSandbox;
  before(() => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1 });
  });
  after(async () => {
    await sandbox.dispose();
  });

  it('runs the code with references bound as values and outputs result and stdout', async () => {
    const code = 'console.log("temp", <weather.data.temp>);\nreturn { city: <start.city>, hot: <weather.data.temp> > 25 };';
    const ctx = makeContext({
      config: { code },
      sandbox,
      outputs: { start: { city: 'Lyon' }, weather: { data: { temp: 31 } } },
    });
    const result = await functionBlock.run(ctx);
    expect(result).to.deep.equal({ output: { result: { city: 'Lyon', hot: true }, stdout: 'temp 31' }, handles: ['success'] });
  });

  it('never pastes a referenced value into the source', async () => {
    const hostile = '"); throw new Error("injected"); ("';
    const ctx = makeContext({ config: { code: 'return <start.name>;' }, sandbox, outputs: { start: { name: hostile } } });
    expect((await functionBlock.run(ctx)).output.result).to.equal(hostile);
  });

  it('fails with FUNCTION_ERROR when the code throws', async () => {
    const ctx = makeContext({ config: { code: 'throw new Error("no weather for " + <start.city>);' }, sandbox, outputs: { start: { city: 'Oslo' } } });
    try {
      await functionBlock.run(ctx);
      expect.fail('expected a failure');
    } catch (err) {
      expect(err).to.be.instanceOf(TroupeError);
      expect((err as TroupeError).code).to.equal('FUNCTION_ERROR');
      expect((err as TroupeError).message).to.contain('no weather for Oslo');
    }
  });

  it('applies the limits from the services', async () => {
    const ctx = makeContext({ config: { code: 'while (true) {}' }, sandbox, timeoutMs: 150 });
    try {
      await functionBlock.run(ctx);
      expect.fail('expected a timeout');
    } catch (err) {
      expect((err as TroupeError).code).to.equal('FUNCTION_TIMEOUT');
      expect((err as TroupeError).message).to.equal('function exceeded its 150 ms time limit');
    }
  });

  it('passes the abort signal to the sandbox', async () => {
    const controller = new AbortController();
    const ctx = makeContext({ config: { code: 'while (true) {}' }, sandbox, timeoutMs: 5000, signal: controller.signal });
    setTimeout(() => controller.abort(), 30);
    try {
      await functionBlock.run(ctx);
      expect.fail('expected cancellation');
    } catch (err) {
      expect((err as TroupeError).code).to.equal('CANCELLED');
    }
  });

  it('declares code as a code field and success/error handles', () => {
    const info = blockTypeRegistry().function!;
    expect(info.codeFields).to.deep.equal(['code']);
    expect(info.handles({ code: '' })).to.deep.equal(['success', 'error']);
    expect(info.validateConfig({ code: 42 }).map((i) => i.path)).to.deep.equal(['/code']);
    expect(info.validateConfig({})).to.have.length(1);
  });
});
