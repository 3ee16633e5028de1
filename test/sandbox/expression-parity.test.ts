import { expect } from 'chai';
import fc from 'fast-check';
import { TroupeError } from '../../src/errors.js';
import { evaluateInProcess } from '../../src/model/expression/index.js';
import { IsolatedVmSandbox } from '../../src/sandbox/isolated.js';
import type { SandboxLimits } from '../../src/sandbox/types.js';

const limits: SandboxLimits = { timeoutMs: 1000, memoryMb: 32 };
const NAMES = ['__ref0', '__ref1', '__ref2'];

const keys = fc.oneof(
  { arbitrary: fc.constantFrom('a', 'b', 'status', '0', '1', 'length'), weight: 5 },
  { arbitrary: fc.constantFrom('toString', 'constructor', '__proto__', 'includes'), weight: 1 },
);
const leaf = fc.oneof(
  fc.constantFrom(0, 1, -1, 2, 200, 404, 0.5, 1e21, -1.5e-7, '', '0', '1', '200', ' 12 ', 'abc', 'A,b', 'true', 'null', true, false, null),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  fc.string({ maxLength: 6 }),
);
/** Bound values: mostly plain JSON data, now and then a value the subset must leave to the sandbox. */
const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: leaf, weight: 20 },
    { arbitrary: fc.array(tie('v'), { maxLength: 3 }), weight: 6 },
    { arbitrary: fc.dictionary(keys, tie('v'), { maxKeys: 3 }), weight: 6 },
    { arbitrary: fc.constantFrom(undefined, NaN, -0, Infinity), weight: 1 },
  ),
})).v;

const literal = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      '0', '1', '-1', '2', '200', '0.1', '1e21', '0x10', '1_000', '.5', "''", "'0'", "'abc'", "'A'", '"200"', 'true', 'false', 'null',
      'undefined', 'NaN', 'Infinity', '[]', '{}', '[1, 2]', '({ a: 1 })', 'Math.PI', 'Number.MAX_SAFE_INTEGER',
    ),
    weight: 10,
  },
  // outside the subset
  { arbitrary: fc.constantFrom('x', '010', '1n', '/a/', 'this'), weight: 1 },
);
const binary = fc.constantFrom('==', '!=', '===', '!==', '<', '<=', '>', '>=', '+', '-', '*', '/', '%', '**', '&', '|', '^', '<<', '>>', '>>>', '&&', '||', '??');
const unary = fc.constantFrom('-', '+', '!', '~', 'typeof ', 'void ');
const method = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      'includes', 'startsWith', 'endsWith', 'indexOf', 'slice', 'at', 'toLowerCase', 'toUpperCase', 'trim', 'split', 'join', 'concat',
      'toFixed', 'toString', 'charAt',
    ),
    weight: 6,
  },
  { arbitrary: fc.constantFrom('map', 'repeat', 'hasOwnProperty', 'constructor'), weight: 1 },
);
const call = fc.constantFrom('Number', 'String', 'Boolean', 'parseInt', 'parseFloat', 'isNaN', 'Math.max', 'Math.floor', 'Math.abs', 'Array.isArray', 'Object.keys');

/** Source text of generated expressions, parenthesized so that every one parses as written. */
const expression: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { arbitrary: fc.constantFrom(...NAMES), weight: 4 },
    { arbitrary: literal, weight: 4 },
    fc.tuple(tie('e'), binary, tie('e')).map(([l, op, r]) => `(${l} ${op} ${r})`),
    fc.tuple(unary, tie('e')).map(([op, a]) => `(${op}${a})`),
    fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(${a} in ${b})`),
    // outside the subset
    { arbitrary: fc.tuple(tie('e'), tie('e')).map(([a, b]) => `(${a} instanceof ${b})`), weight: 1 },
    fc.tuple(tie('e'), tie('e'), tie('e')).map(([t, y, n]) => `(${t} ? ${y} : ${n})`),
    fc.tuple(tie('e'), keys, fc.boolean()).map(([o, k, opt]) => (/^\d/.test(k) ? `${o}${opt ? '?.' : ''}[${k}]` : `${o}${opt ? '?.' : '.'}${k}`)),
    fc.tuple(tie('e'), tie('e')).map(([o, k]) => `${o}[${k}]`),
    fc.tuple(tie('e'), method, fc.array(tie('e'), { maxLength: 2 })).map(([o, m, args]) => `${o}.${m}(${args.join(', ')})`),
    fc.tuple(call, fc.array(tie('e'), { maxLength: 2 })).map(([f, args]) => `${f}(${args.join(', ')})`),
    fc.tuple(tie('e'), tie('e')).map(([a, b]) => `\`<${a}>\${${a}}:\${${b}}\``),
    fc.array(tie('e'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
    fc.tuple(tie('e'), tie('e')).map(([a, b]) => `({ a: ${a}, [${b}]: 1 })`),
  ),
})).e;

async function sandboxAnswer(sandbox: IsolatedVmSandbox, source: string, bindings: Record<string, unknown>): Promise<{ value: unknown } | { error: string }> {
  try {
    return { value: await sandbox.evaluate(source, bindings, limits) };
  } catch (err) {
    return { error: err instanceof TroupeError ? err.code : String(err) };
  }
}

describe('model/expression: in-process answers equal the sandbox (property)', function () {
  this.timeout(120_000);
  let sandbox: IsolatedVmSandbox;
  before(() => {
    sandbox = new IsolatedVmSandbox({ poolSize: 1 });
  });
  after(async () => {
    await sandbox.dispose();
  });

  it('gives the sandbox value whenever it answers, and answers most generated expressions', async () => {
    const counts = { inProcess: 0, sandbox: 0 };
    await fc.assert(
      fc.asyncProperty(expression, fc.tuple(value, value, value), async (source, values) => {
        const bindings = Object.fromEntries(NAMES.map((name, i) => [name, values[i]]));
        const mine = evaluateInProcess(source, bindings);
        if (!mine.done) {
          counts.sandbox += 1;
          return;
        }
        counts.inProcess += 1;
        const theirs = await sandboxAnswer(sandbox, source, bindings);
        expect(theirs, `${source} with ${JSON.stringify(values)}`).to.deep.equal({ value: mine.value });
      }),
      { numRuns: 600 },
    );
    // the generator is built so that a good share falls in the subset: a test of nothing would pass too
    expect(counts.inProcess, JSON.stringify(counts)).to.be.above(150);
  });

  it('leaves to the sandbox what fails there, so errors keep their code and message', async () => {
    let failures = 0;
    await fc.assert(
      fc.asyncProperty(expression, fc.tuple(value, value, value), async (source, values) => {
        const bindings = Object.fromEntries(NAMES.map((name, i) => [name, values[i]]));
        const theirs = await sandboxAnswer(sandbox, source, bindings);
        if (!('error' in theirs)) return;
        failures += 1;
        expect(evaluateInProcess(source, bindings).done, `${source} with ${JSON.stringify(values)} fails in the sandbox (${theirs.error})`).to.equal(false);
      }),
      { numRuns: 400 },
    );
    expect(failures).to.be.above(20);
  });
});
