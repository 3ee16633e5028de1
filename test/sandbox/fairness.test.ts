import { expect } from 'chai';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import type { SandboxLimits } from '../../src/sandbox/types.js';

const of = (workflowId: string, timeoutMs = 5000): SandboxLimits => ({ timeoutMs, memoryMb: 16, caller: { workflowId, version: 1 } });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pool's isolates, sampled every few ms while `work` runs: the most seen at once. */
async function peakIsolates(sandbox: IsolatedVmSandbox, work: Promise<unknown>): Promise<number> {
  let peak = sandbox.isolates;
  const sampler = setInterval(() => {
    peak = Math.max(peak, sandbox.isolates);
  }, 5);
  try {
    await work;
  } finally {
    clearInterval(sampler);
  }
  return peak;
}

describe('sandbox pool: noisy neighbours (issue 21 finding 3)', function () {
  this.timeout(30_000);
  let sandbox: IsolatedVmSandbox;
  afterEach(() => sandbox.dispose());

  it("serves another workflow's call before a flooding workflow's queue", async () => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1, maxIsolates: 8, perCaller: 4 });
    let floodDone = 0;
    const flood = Array.from({ length: 40 }, () =>
      sandbox.runFunction('await new Promise((r) => setTimeout(r, 300)); return 1;', {}, of('flood')).then(() => {
        floodDone += 1;
      }));
    await pause(20);
    const quick = await sandbox.runFunction('return "served";', {}, of('neighbour'));
    // first come, first served, the neighbour waited behind every queued flood call
    expect([quick.result, floodDone]).to.deep.equal(['served', 0]);
    await Promise.all(flood);
    expect(floodDone).to.equal(40);
  });

  it('serves another workflow while one computes on every isolate, without waiting for those calls to end', async () => {
    sandbox = new IsolatedVmSandbox({ poolSize: 2, maxIsolates: 8 });
    let burnersSettled = 0;
    const burners = Array.from({ length: 4 }, () =>
      sandbox.runFunction('while (true) {}', {}, of('burner', 1500)).catch(() => undefined).then(() => {
        burnersSettled += 1;
      }));
    await pause(100);
    const quick = await sandbox.runFunction('return "served";', {}, of('neighbour'));
    expect([quick.result, burnersSettled]).to.deep.equal(['served', 0]);
    await Promise.all(burners);
  });

  it('keeps calls that compute with a timer pending to the pool size', async () => {
    sandbox = new IsolatedVmSandbox({ poolSize: 2, maxIsolates: 16 });
    const code = 'setTimeout(() => {}, 60000);\nconst end = Date.now() + 250; while (Date.now() < end) {}\nreturn 1;';
    const calls = Promise.all(Array.from({ length: 8 }, () => sandbox.runFunction(code, {}, of('busy'))));
    // with a pending timer counted as asleep, every call got an isolate of its own, all computing
    expect(await peakIsolates(sandbox, calls)).to.be.at.most(2);
  });

  it('still runs sleeping calls side by side, and disposes the isolates beyond its size once idle', async () => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1, maxIsolates: 8, perCaller: 8, idleMs: 100 });
    const sleepers = Promise.all(Array.from({ length: 6 }, (_, i) => sandbox.runFunction('await new Promise((r) => setTimeout(r, 400)); return i;', { i }, of('sleepy'))));
    expect(await peakIsolates(sandbox, sleepers)).to.be.greaterThan(1);
    for (let i = 0; i < 100 && sandbox.isolates > 1; i++) await pause(20);
    expect(sandbox.isolates).to.equal(1);
    expect((await sandbox.runFunction('return "after";', {}, of('sleepy'))).result).to.equal('after');
  });

  it('caps one workflow at its share while another workflow sleeps beside it', async () => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1, maxIsolates: 8, perCaller: 3 });
    const code = 'await new Promise((r) => setTimeout(r, 300)); return 1;';
    const a = Array.from({ length: 12 }, () => sandbox.runFunction(code, {}, of('a')));
    const b = Array.from({ length: 12 }, () => sandbox.runFunction(code, {}, of('b')));
    const peak = await peakIsolates(sandbox, Promise.all([...a, ...b]));
    expect(peak).to.be.at.most(6);
  });

  it('limits hold whatever a call does with timers: a thousand zero-delay intervals, a collected promise', async () => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1 });
    let ticks = 0;
    const interval = setInterval(() => {
      ticks += 1;
    }, 10);
    const flood = await sandbox.runFunction('for (let i = 0; i < 1000; i++) setInterval(() => {}, 0);\nawait new Promise(() => {});', {}, of('flood', 1000)).catch((e: unknown) => e);
    clearInterval(interval);
    expect(flood).to.have.property('code', 'FUNCTION_TIMEOUT');
    // a generous bound: with a host timer per pending interval, the host loop ran a few ticks
    expect(ticks).to.be.greaterThan(30);
    // garbage collected while awaited: isolated-vm calls that promise abandoned; it never settles
    const code = 'let a = []; for (let i = 0; i < 3e5; i++) a.push({ i }); a = null;\nawait new Promise(() => {});';
    const collected = await sandbox.runFunction(code, {}, of('collected', 300)).catch((e: unknown) => e);
    expect(collected).to.have.property('code', 'FUNCTION_TIMEOUT');
  });
});
