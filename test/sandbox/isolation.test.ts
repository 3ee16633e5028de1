import { expect } from 'chai';
import { TroupeError } from '../../src/errors.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import type { SandboxLimits } from '../../src/sandbox/types.js';

/**
 * Calls of one workflow share a realm (one pool isolate here, so every call lands in the same
 * one): each test has a first call try to leave state behind, in a way that would work in a
 * plain context, and a second call look for it.
 */
const A: SandboxLimits = { timeoutMs: 1000, memoryMb: 16, caller: { workflowId: 'wf-a', version: 1 } };
const B: SandboxLimits = { timeoutMs: 1000, memoryMb: 16, caller: { workflowId: 'wf-b', version: 1 } };

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sandbox isolation: nothing one call does is visible to the next (issue 22)', function () {
  this.timeout(20_000);
  let sandbox: IsolatedVmSandbox;
  beforeEach(() => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1 });
  });
  afterEach(() => sandbox.dispose());

  const run = async (code: string, limits: SandboxLimits = A, bindings: Record<string, unknown> = {}) =>
    (await sandbox.runFunction(code, bindings, limits)).result;

  /** the first call's attempts, each in its own try; answers which attempts threw */
  async function attempt(steps: string[], limits: SandboxLimits = A): Promise<unknown> {
    const code = `const out = [];\n${steps.map((s) => `try { ${s}; out.push('ran'); } catch (e) { out.push(e.name); }`).join('\n')}\nreturn out;`;
    return run(code, limits);
  }

  it('prototypes: patching, defining and re-parenting built-ins leaves nothing', async () => {
    await attempt([
      'Array.prototype.evil = 1',
      'Object.prototype.polluted = "yes"',
      'Object.defineProperty(Object.prototype, "defined", { value: 1 })',
      'Object.setPrototypeOf(Array.prototype, { inherited: 1 })',
      'String.prototype.trim = function () { return "hijacked"; }',
      'JSON.stringify = () => "forged"',
      'Object.prototype.__proto__ = { deep: 1 }',
      'Date.prototype.getTime = () => 0',
      '"use strict"; Object.assign(Math, { random: () => 4 })',
    ]);
    const out = await run('return [[].evil, ({}).polluted, ({}).defined, [].inherited, " a ".trim(), JSON.stringify(1), ({}).deep, new Date(5).getTime(), Math.random() < 1];');
    expect(out).to.deep.equal([null, null, null, null, 'a', '1', null, 5, true]);
  });

  it('globals: assignments, var through indirect eval, the Function constructor and implicit globals leave nothing', async () => {
    const tried = await attempt([
      'globalThis.leak = 1',
      '(0, eval)("var evalVar = 1")',
      'Function("implicitGlobal = 1")()',
      'new Function("return this")().viaThis = 1',
      'Object.defineProperty(globalThis, "defined", { value: 1 })',
      'delete globalThis.JSON',
      'sloppy = 1',
    ]);
    // each attempt either threw or silently did nothing: none took effect even within its call
    expect(tried).to.be.an('array').with.length(7);
    const out = await run('return [typeof leak, typeof evalVar, typeof implicitGlobal, typeof viaThis, typeof defined, typeof JSON, typeof sloppy, Object.isFrozen(globalThis)];');
    expect(out).to.deep.equal(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'object', 'undefined', true]);
  });

  it('closures: the function objects a call can reach (its own, its caller, their prototypes) keep nothing', async () => {
    const tried = await attempt([
      'arguments.callee.kept = 1',
      'arguments.callee.caller.kept = 1',
      'arguments.callee.caller.prototype.kept = 1',
      'Object.getPrototypeOf(async function () {}).kept = 1',
      'Object.getPrototypeOf(function* () {}).prototype.kept = 1',
      'Object.getPrototypeOf([][Symbol.iterator]()).kept = 1',
      'console.kept = 1',
      'console.log = () => undefined',
    ]);
    expect(tried).to.be.an('array').with.length(8);
    const out = await run(
      // an async function has no `caller` of its own: the inherited accessor throws
      'let c; try { c = arguments.callee.caller; } catch { c = undefined; } console.log("still mine");\n'
      + 'return [arguments.callee.kept, c && c.kept, c && c.prototype && c.prototype.kept, Object.getPrototypeOf(async function () {}).kept,'
      + ' Object.getPrototypeOf(function* () {}).prototype.kept, Object.getPrototypeOf([][Symbol.iterator]()).kept, console.kept];',
    );
    expect(out).to.deep.equal([null, null, null, null, null, null, null]);
    const logged = await sandbox.runFunction('console.log("line"); return 1;', {}, A);
    expect(logged.stdout).to.equal('line');
  });

  it('timers: a timer or interval left pending never runs after its call, nor during the next', async () => {
    // were the timer to fire later, its loop would take the next call's isolate until the limit
    await run('setTimeout(() => { while (true) {} }, 20); setInterval(() => { while (true) {} }, 10); return 1;');
    await pause(100);
    expect(await run('await new Promise((r) => setTimeout(r, 60)); return "unharmed";')).to.equal('unharmed');
  });

  it('pending promises: work a call leaves behind never touches the next call', async () => {
    await run('(async () => { await new Promise((r) => setTimeout(r, 20)); while (true) {} })();\n'
      + 'new Promise(() => {}); Promise.resolve().then(() => { Array.prototype.late = 1; }); return 1;');
    await pause(100);
    expect(await run('await new Promise((r) => setTimeout(r, 40)); return [[].late, "unharmed"];')).to.deep.equal([null, 'unharmed']);
  });

  it('the Function constructor: functions it makes reach the same frozen realm', async () => {
    await attempt([
      'Function.prototype.kept = 1',
      '(function () {}).constructor("Object.prototype.kept = 1")()',
      'Object.getPrototypeOf(async function () {}).constructor("Array.prototype.kept = 1")()',
      'Function.prototype.constructor = function () { return () => "forged"; }',
    ]);
    expect(await run('return [(function () {}).kept, ({}).kept, [].kept, Function("return 2")()];')).to.deep.equal([null, null, null, 2]);
  });

  it('Error.prepareStackTrace, stackTraceLimit and captureStackTrace: stacks stay as V8 makes them', async () => {
    await attempt([
      'Error.prepareStackTrace = () => "hijacked"',
      'Error.stackTraceLimit = 0',
      'Object.defineProperty(Error, "prepareStackTrace", { get: () => () => "hijacked" })',
      'Error.captureStackTrace(Error.prototype)',
    ]);
    const out = await run('const e = new Error("x"); return [typeof Error.prepareStackTrace, Error.stackTraceLimit > 0, e.stack.startsWith("Error: x\\n"), Object.prototype.hasOwnProperty.call(Error.prototype, "stack")];');
    expect(out).to.deep.equal(['undefined', true, true, false]);
  });

  it('weak maps, symbols and RegExp statics: nothing keyed on the realm survives', async () => {
    await attempt([
      'const wm = new WeakMap(); wm.set(Object.prototype, "secret"); Object.prototype[Symbol.for("troupe")] = wm',
      'WeakMap.prototype.get = () => "forged"',
      'Symbol.prototype.description = "forged"',
      '/(s3cret-\\d+)/.exec("token s3cret-42")',
    ]);
    // a finalizer would run whenever the collector decides, during a later call
    expect(await run('return typeof FinalizationRegistry;')).to.equal('undefined');
    const out = await run('return [typeof Object.prototype[Symbol.for("troupe")], new WeakMap().get({}), Symbol("k").description, typeof RegExp.$1, typeof RegExp.lastMatch, typeof RegExp.input];');
    expect(out).to.deep.equal(['undefined', null, 'k', 'undefined', 'undefined', 'undefined']);
  });

  it('bindings: a call that changes its bound values leaves the next call its own', async () => {
    await run('items.push(99); items.length = 0; return 1;', A, { items: [1, 2] });
    expect(await run('return items;', A, { items: [1, 2] })).to.deep.equal([1, 2]);
  });

  it('keeps ordinary code working: own toString, error subclasses that set name, classes, own properties', async () => {
    const code = [
      'class MyError extends Error { constructor(m) { super(m); this.name = "MyError"; } }',
      'const o = { a: 1 }; o.toString = () => "mine"; o.constructor = "c";',
      'const e = new Error("m"); e.message = "changed"; e.name = "Custom";',
      'return [new MyError("x").name, String(o), o.constructor, e.toString(), ({}).toString(), Object.keys(o)];',
    ].join('\n');
    expect(await run(code)).to.deep.equal(['MyError', 'mine', 'c', 'Custom: changed', '[object Object]', ['a', 'toString', 'constructor']]);
  });

  it('between workflows: what one workflow tries is not seen by another, on the same isolate', async () => {
    await attempt(['Array.prototype.evil = 1', 'globalThis.leak = 1', 'arguments.callee.caller.kept = 1', '/(a-secret)/.exec("a-secret")'], A);
    expect(await run('return [[].evil, typeof leak, typeof RegExp.$1];', B)).to.deep.equal([null, 'undefined', 'undefined']);
  });

  it('a realm whose call hit its time limit is thrown away; the next call runs', async () => {
    const err = await sandbox.runFunction('while (true) {}', {}, { ...A, timeoutMs: 150 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TroupeError).with.property('code', 'FUNCTION_TIMEOUT');
    expect(await run('return "fresh";')).to.equal('fresh');
  });
});
