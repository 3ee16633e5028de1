import { expect } from 'chai';
import { TroupeError } from '../../src/errors.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import type { SandboxLimits } from '../../src/sandbox/types.js';

const limits: SandboxLimits = { timeoutMs: 200, memoryMb: 16 };

async function failure(promise: Promise<unknown>): Promise<TroupeError> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(TroupeError);
    return err as TroupeError;
  }
  expect.fail('expected the call to fail');
}

/** Counts host event-loop ticks while `work` runs, to prove the host was never blocked. */
async function ticksDuring<T>(work: Promise<T>): Promise<{ ticks: number; settled: PromiseSettledResult<T> }> {
  let ticks = 0;
  const interval = setInterval(() => {
    ticks += 1;
  }, 10);
  try {
    const [settled] = await Promise.allSettled([work]);
    return { ticks, settled: settled! };
  } finally {
    clearInterval(interval);
  }
}

describe('sandbox/isolated', function () {
  this.timeout(10_000);
  let sandbox: IsolatedVmSandbox;

  beforeEach(() => {
    sandbox = new IsolatedVmSandbox({ poolSize: 2 });
  });
  afterEach(async () => {
    await sandbox.dispose();
  });

  describe('runFunction', () => {
    it('has setTimeout, setInterval and their clear functions, in delay order', async () => {
      const code = [
        'const seen = [];',
        'await new Promise((done) => { setTimeout(() => seen.push("b"), 30); setTimeout((x) => { seen.push(x); }, 5, "a"); setTimeout(done, 60); });',
        'const cancelled = setTimeout(() => seen.push("never"), 1); clearTimeout(cancelled);',
        'let n = 0; await new Promise((done) => { const id = setInterval(() => { n += 1; if (n === 3) { clearInterval(id); done(); } }, 2); });',
        'await new Promise((done) => setTimeout(done, 10));',
        'return { seen, n };',
      ].join('\n');
      const out = await sandbox.runFunction(code, {}, { ...limits, timeoutMs: 2000 });
      expect(out.result).to.deep.equal({ seen: ['a', 'b'], n: 3 });
    });

    it('a timer past the time limit ends the call with FUNCTION_TIMEOUT', async () => {
      const err = await failure(sandbox.runFunction('await new Promise((done) => setTimeout(done, 5000)); return 1;', {}, limits));
      expect(err.code).to.equal('FUNCTION_TIMEOUT');
      expect((await sandbox.runFunction('return 2;', {}, limits)).result, 'the sandbox carries on').to.equal(2);
    });

    it('returns the value of a function body', async () => {
      const out = await sandbox.runFunction('return { sum: a + b.c, list: [1, "x"] };', { a: 2, b: { c: 3 } }, limits);
      expect(out).to.deep.equal({ result: { sum: 5, list: [1, 'x'] }, stdout: '' });
    });

    it('supports await and async helpers', async () => {
      const code = 'const wait = async (v) => v * 2;\nlet s = 0;\nfor (const v of items) s += await wait(v);\nreturn s;';
      const out = await sandbox.runFunction(code, { items: [1, 2, 3] }, limits);
      expect(out.result).to.equal(12);
    });

    it('turns undefined into null, inside arrays too', async () => {
      expect((await sandbox.runFunction('const x = 1;', {}, limits)).result).to.equal(null);
      expect((await sandbox.runFunction('return [undefined, 1];', {}, limits)).result).to.deep.equal([null, 1]);
    });

    it('captures console output as lines, objects as JSON', async () => {
      const code = 'console.log("hello", 1, { a: [1, 2] });\nconsole.warn("careful");\nconsole.error(null);\nreturn true;';
      const out = await sandbox.runFunction(code, {}, limits);
      expect(out.stdout).to.equal('hello 1 {"a":[1,2]}\ncareful\nnull');
    });

    it('logs an error as its name and message (as JSON it printed {})', async () => {
      const code = 'try { null.x; } catch (err) { console.log("failed:", err); }\nconsole.log(new RangeError("too far"));\nreturn 1;';
      const out = await sandbox.runFunction(code, {}, limits);
      expect(out.stdout).to.equal("failed: TypeError: Cannot read properties of null (reading 'x')\nRangeError: too far");
    });

    it('binds values as data, never as code (hostile strings stay strings)', async () => {
      const hostile = '"); globalThis.pwned = true; ("';
      const out = await sandbox.runFunction('return [text, typeof pwned];', { text: hostile }, limits);
      expect(out.result).to.deep.equal([hostile, 'undefined']);
    });

    it('makes bindings read-only globals', async () => {
      const out = await sandbox.runFunction('try { value = 2; } catch {}\nreturn value;', { value: 1 }, limits);
      expect(out.result).to.equal(1);
    });

    it('refuses a binding that would shadow a global', async () => {
      const err = await failure(sandbox.runFunction('return 1;', { JSON: 1 }, limits));
      expect(err.code).to.equal('FUNCTION_ERROR');
      expect(err.message).to.match(/JSON/);
    });

    it('gives no access to the host: process, require, import(), the host timer itself', async () => {
      const out = await sandbox.runFunction(
        'return [typeof process, typeof require, typeof __troupeSleep, typeof fetch, typeof module, typeof WebAssembly];',
        {},
        limits,
      );
      expect(out.result).to.deep.equal(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
      const err = await failure(sandbox.runFunction('const fs = await import("node:fs"); return fs.readFileSync("/etc/hostname", "utf8");', {}, limits));
      expect(err.code).to.equal('FUNCTION_ERROR');
    });

    it("keeps the runner's own variables out of the user code's reach", async () => {
      const out = await sandbox.runFunction(
        'return [typeof sleepRef, typeof lines, typeof finish, typeof describe, typeof hidden, typeof bindings, typeof stdoutChars];',
        {},
        limits,
      );
      expect(out.result).to.deep.equal(Array(7).fill('undefined'));
      // faking console output through the runner's list is gone with it
      const forged = await failure(sandbox.runFunction("lines.push('FAKE LOG'); return 1;", {}, limits));
      expect(forged.message).to.match(/lines is not defined/);
    });

    it('answers with what the code returned even when the code replaces Promise.prototype.then', async () => {
      const out = await sandbox.runFunction("Promise.prototype.then = function () { return 'x'; }; return 1;", {}, limits);
      expect(out.result).to.equal(1);
      // a limit error cannot be forged through it either
      const forged = "const rej = Promise.reject(new Error('memory limit exceeded')); rej.catch(() => {});\n"
        + 'Promise.prototype.then = function () { return rej; }; return 2;';
      expect((await sandbox.runFunction(forged, {}, limits)).result).to.equal(2);
    });

    it('does not leak globals from one call to the next', async () => {
      await sandbox.runFunction('globalThis.leak = 42; Array.prototype.evil = 1; return 1;', {}, limits);
      const out = await sandbox.runFunction('return [typeof leak, [].evil === undefined];', {}, limits);
      expect(out.result).to.deep.equal(['undefined', true]);
    });

    it('reports a thrown error as FUNCTION_ERROR with the message, line and stdout', async () => {
      const err = await failure(sandbox.runFunction('console.log("before");\nthrow new Error("city not found");', {}, limits));
      expect(err.code).to.equal('FUNCTION_ERROR');
      expect(err.message).to.contain('city not found');
      expect(err.details).to.deep.equal({ line: 2, stdout: 'before' });
    });

    it('reports runtime type errors and syntax errors as FUNCTION_ERROR', async () => {
      const typeError = await failure(sandbox.runFunction('const a = null;\n\nreturn a.b;', {}, limits));
      expect(typeError.code).to.equal('FUNCTION_ERROR');
      expect(typeError.message).to.match(/^TypeError: /);
      expect(typeError.details).to.deep.include({ line: 3 });
      const syntax = await failure(sandbox.runFunction('let x = ;', {}, limits));
      expect(syntax.code).to.equal('FUNCTION_ERROR');
      expect(syntax.message).to.match(/^SyntaxError/);
      // a closing brace too many is a syntax error, as on its own, not an early end of the function
      for (const code of ['return ;;; } ; {', 'if (true) { return 1 } } return 2']) {
        const extra = await failure(sandbox.runFunction(code, {}, limits));
        expect(extra.message, code).to.match(/^SyntaxError/);
      }
    });

    it('reports a thrown non-Error value', async () => {
      const err = await failure(sandbox.runFunction('throw "plain text";', {}, limits));
      expect(err.message).to.equal('plain text');
    });

    it('rejects results that are not JSON-serializable', async () => {
      const circular = await failure(sandbox.runFunction('const o = {}; o.self = o; return o;', {}, limits));
      expect(circular.code).to.equal('FUNCTION_ERROR');
      expect(circular.message).to.match(/not JSON-serializable/);
      const fn = await failure(sandbox.runFunction('return () => 1;', {}, limits));
      expect(fn.message).to.match(/function, which is not JSON-serializable/);
    });
  });

  describe('limits', () => {
    it('an ArrayBuffer past the memory limit is FUNCTION_MEMORY, as any allocation past it', async () => {
      const err = await failure(sandbox.runFunction('const b = new ArrayBuffer(70 * 1024 * 1024); return b.byteLength;', {}, limits));
      expect([err.code, err.message]).to.deep.equal(['FUNCTION_MEMORY', 'function exceeded its 16 MiB memory limit']);
      const caught = await sandbox.runFunction('try { new ArrayBuffer(70 * 1024 * 1024); } catch (e) { return e.name; }', {}, limits);
      expect(caught.result).to.equal('RangeError');
    });
    it('refuses a result over 10 MiB of JSON, keeps at most 1 MiB of console output, and 1000 pending timers', async () => {
      const big = await failure(sandbox.runFunction("return 'x'.repeat(11 * 1024 * 1024);", {}, { timeoutMs: 2000, memoryMb: 64 }));
      expect(big.code).to.equal('FUNCTION_ERROR');
      expect(big.message).to.match(/over the 10485760 a block output may hold/);
      const fits = await sandbox.runFunction("return 'x'.repeat(1024);", {}, limits);
      expect((fits.result as string).length).to.equal(1024);
      const noisy = await sandbox.runFunction("for (let i = 0; i < 3000; i++) console.log('y'.repeat(1000)); return 1;", {}, { timeoutMs: 2000, memoryMb: 64 });
      expect(noisy.stdout.length).to.be.below(1024 * 1024 + 2000);
      expect(noisy.stdout).to.match(/\[stdout cut at 1048576 characters\]$/);
      const timers = await failure(sandbox.runFunction('for (let i = 0; i < 1001; i++) setTimeout(() => {}, 60000); return 1;', {}, limits));
      expect(timers.message).to.match(/too many pending timers/);
      const some = await sandbox.runFunction('let n = 0; for (let i = 0; i < 500; i++) setTimeout(() => { n++; }, 1); await new Promise((r) => setTimeout(r, 20)); return n;', {}, limits);
      expect(some.result).to.equal(500);
    });

    it('stops an infinite loop with FUNCTION_TIMEOUT while the host event loop keeps ticking', async () => {
      const { ticks, settled } = await ticksDuring(sandbox.runFunction('while (true) {}', {}, { timeoutMs: 300, memoryMb: 16 }));
      expect(settled.status).to.equal('rejected');
      const err = (settled as PromiseRejectedResult).reason as TroupeError;
      expect(err.code).to.equal('FUNCTION_TIMEOUT');
      expect(err.message).to.equal('function exceeded its 300 ms time limit');
      // 300 ms at a 10 ms interval: a blocked host would see 0 or 1 tick
      expect(ticks).to.be.greaterThan(5);
      expect((await sandbox.runFunction('return "alive";', {}, limits)).result).to.equal('alive');
    });

    it('stops a loop that starts after an await', async () => {
      const err = await failure(sandbox.runFunction('await null;\nwhile (true) {}', {}, limits));
      expect(err.code).to.equal('FUNCTION_TIMEOUT');
    });

    it('stops a promise that never settles with FUNCTION_TIMEOUT', async () => {
      const err = await failure(sandbox.runFunction('await new Promise(() => {});', {}, limits));
      expect(err.code).to.equal('FUNCTION_TIMEOUT');
      expect(err.message).to.equal('function exceeded its 200 ms time limit');
      expect((await sandbox.runFunction('return 1;', {}, limits)).result).to.equal(1);
    });

    it('stops an allocation bomb with FUNCTION_MEMORY and runs the next call on a new isolate', async () => {
      const bomb = 'const hoard = [];\nwhile (true) hoard.push(new Array(10000).fill("x"));';
      const err = await failure(sandbox.runFunction(bomb, {}, { timeoutMs: 5000, memoryMb: 16 }));
      expect(err.code).to.equal('FUNCTION_MEMORY');
      expect(err.message).to.equal('function exceeded its 16 MiB memory limit');
      const out = await sandbox.runFunction('return n * 2;', { n: 21 }, { timeoutMs: 5000, memoryMb: 16 });
      expect(out.result).to.equal(42);
    });

    it('uses the 8 MB floor of isolated-vm for smaller limits', async () => {
      const out = await sandbox.runFunction('return 1;', {}, { timeoutMs: 200, memoryMb: 1 });
      expect(out.result).to.equal(1);
    });

    it('cancels a running call when the signal aborts', async () => {
      const controller = new AbortController();
      const running = sandbox.runFunction('while (true) {}', {}, { timeoutMs: 5000, memoryMb: 16, signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      const err = await failure(running);
      expect(err.code).to.equal('CANCELLED');
      expect((await sandbox.runFunction('return 3;', {}, limits)).result).to.equal(3);
    });

    it('refuses to start when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const err = await failure(sandbox.runFunction('return 1;', {}, { ...limits, signal: controller.signal }));
      expect(err.code).to.equal('CANCELLED');
    });

    it('keeps other calls working while one call runs away', async () => {
      const runaway = sandbox.runFunction('while (true) {}', {}, { timeoutMs: 400, memoryMb: 16 });
      const quick = await Promise.all([1, 2, 3].map((n) => sandbox.runFunction('return n;', { n }, limits)));
      expect(quick.map((q) => q.result)).to.deep.equal([1, 2, 3]);
      expect((await failure(runaway)).code).to.equal('FUNCTION_TIMEOUT');
    });

    it('runs calls that wait on timers side by side, past the pool size (SPEC §2: ready blocks run concurrently)', async () => {
      const started = Date.now();
      const waits = await Promise.all(
        Array.from({ length: 8 }, (_, i) => sandbox.runFunction('await new Promise((r) => setTimeout(r, 400)); return i;', { i }, { ...limits, timeoutMs: 5000 })),
      );
      expect(waits.map((w) => w.result)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7]);
      // queued two at a time (the pool's size) the eight waits would take four rounds, 1,600 ms
      expect(Date.now() - started).to.be.below(1200);
    });

    it('keeps computing calls to the pool size while others sleep, and a sleeper does not hold a queued call', async () => {
      const sleeper = sandbox.runFunction('await new Promise((r) => setTimeout(r, 600)); return "slept";', {}, { ...limits, timeoutMs: 5000 });
      const started = Date.now();
      const quick = await Promise.all([1, 2, 3, 4].map((n) => sandbox.runFunction('return n;', { n }, limits)));
      expect(quick.map((q) => q.result)).to.deep.equal([1, 2, 3, 4]);
      expect(Date.now() - started, 'the quick calls did not wait for the sleeper').to.be.below(500);
      expect((await sleeper).result).to.equal('slept');
    });

    it('runs many concurrent calls through a bounded pool', async () => {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => sandbox.runFunction('await null; return i * i;', { i }, limits)),
      );
      expect(results.map((r) => r.result)).to.deep.equal(Array.from({ length: 40 }, (_, i) => i * i));
    });
  });

  describe('evaluate', () => {
    it('evaluates an expression with bindings', async () => {
      expect(await sandbox.evaluate('__ref0 === 200 && items.length > 1', { __ref0: 200, items: [1, 2] }, limits)).to.equal(true);
      expect(await sandbox.evaluate('x > 3;', { x: 1 }, limits)).to.equal(false);
      expect(await sandbox.evaluate('({ a: x })', { x: 'y' }, limits)).to.deep.equal({ a: 'y' });
    });

    it('reports errors as EXPRESSION_ERROR', async () => {
      const err = await failure(sandbox.evaluate('missing.field', {}, limits));
      expect(err.code).to.equal('EXPRESSION_ERROR');
      expect(err.message).to.match(/ReferenceError: missing is not defined/);
      // never a line the expression does not have (V8 may point at the runner's call site)
      const line = (err.details as { line?: number } | undefined)?.line;
      if (line !== undefined) expect(line).to.equal(1);
      expect(err.message).to.equal('ReferenceError: missing is not defined');
      const second = await failure(sandbox.evaluate('1 +\n nope', {}, limits));
      expect(second.details).to.deep.include({ line: 2 });
      const syntax = await failure(sandbox.evaluate('1 +', {}, limits));
      expect(syntax.code).to.equal('EXPRESSION_ERROR');
    });

    it('applies the time limit to expressions', async () => {
      const err = await failure(sandbox.evaluate('(() => { while (true) {} })()', {}, limits));
      expect(err.code).to.equal('FUNCTION_TIMEOUT');
      expect(err.message).to.equal('expression exceeded its 200 ms time limit');
    });
  });

  it('stops running calls on dispose', async () => {
    const running = sandbox.runFunction('while (true) {}', {}, { timeoutMs: 5000, memoryMb: 16 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    await sandbox.dispose();
    const err = await failure(running);
    expect(err.code).to.equal('INTERNAL');
    expect(err.message).to.match(/disposed/);
  });

  it('refuses calls after dispose', async () => {
    await sandbox.dispose();
    const err = await failure(sandbox.runFunction('return 1;', {}, limits));
    expect(err.code).to.equal('INTERNAL');
  });
});
