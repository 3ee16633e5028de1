import { expect } from 'chai';
import { TextCache } from '../../src/model/expression/cache.js';
import { compiledExpression, evaluateInProcess } from '../../src/model/expression/index.js';

/** The in-process answer, or 'sandbox' when the evaluator hands the expression over. */
function inProcess(source: string, bindings: Record<string, unknown> = {}): unknown {
  const out = evaluateInProcess(source, bindings);
  return out.done ? out.value : 'sandbox';
}

describe('model/expression: the in-process subset', () => {
  it('answers comparisons, coercions and arithmetic as V8 does, as JSON', () => {
    expect(inProcess('__ref0 === 200', { __ref0: 200 })).to.equal(true);
    expect(inProcess('__ref0 == "200" && __ref0 !== "200"', { __ref0: 200 })).to.equal(true);
    expect(inProcess('null == undefined && null !== undefined && NaN !== NaN')).to.equal(true);
    expect(inProcess('[] + {}')).to.equal('[object Object]');
    expect(inProcess('[1, [2, 3]] + 1')).to.equal('1,2,31');
    expect(inProcess('"3" * "4" + 1 + "1"')).to.equal('131');
    expect(inProcess('0.1 + 0.2')).to.equal(0.30000000000000004);
    expect(inProcess('2 ** 53 + 1')).to.equal(9007199254740992);
    expect(inProcess('-7 % 3 + (7 >>> 1) + (~5) + (1 << 31)')).to.equal(-1 + 3 - 6 - 2147483648);
    expect(inProcess('"b" > "a" && "10" < "9" && 10 > "9"')).to.equal(true);
    // the sandbox answers JSON: NaN and infinities are null, -0 is 0, undefined is null
    expect(inProcess('0 / 0')).to.equal(null);
    expect(inProcess('-1 / 0')).to.equal(null);
    expect(Object.is(inProcess('-0'), 0)).to.equal(true);
    expect(inProcess('void 0')).to.equal(null);
    expect(inProcess('1 / -0 < 0 && Object.is === undefined')).to.equal('sandbox');
    expect(inProcess('1 / -0 < 0')).to.equal(true);
  });

  it('reads literals from their source text', () => {
    expect(inProcess('0x1fffffffffffff1')).to.equal(144115188075855860);
    expect(inProcess('1_000 + 0b101 + 0o17 + .5 + 5. + 1e3')).to.equal(1000 + 5 + 15 + 0.5 + 5 + 1000);
    expect(inProcess("'\\u{1F600}'.length + '\\x41'")).to.equal('2A');
    // sloppy mode's legacy octal: the sandbox reads it
    expect(inProcess('010')).to.equal('sandbox');
  });

  it('answers typeof, logical operators, ternaries, sequences and templates', () => {
    expect(inProcess('typeof __ref0 + typeof __ref1 + typeof __ref2', { __ref0: null, __ref1: [1], __ref2: 'x' })).to.equal('objectobjectstring');
    expect(inProcess('__ref0 || "none"', { __ref0: '' })).to.equal('none');
    expect(inProcess('__ref0 ?? "none"', { __ref0: 0 })).to.equal(0);
    expect(inProcess('__ref0 && __ref0.a', { __ref0: null })).to.equal(null);
    expect(inProcess('__ref0 > 1 ? "many" : "few"', { __ref0: 2 })).to.equal('many');
    expect(inProcess('(1, 2, 3)')).to.equal(3);
    expect(inProcess('`${__ref0}: ${__ref1} ${[1, 2]}`', { __ref0: 'n', __ref1: { a: 1 } })).to.equal('n: [object Object] 1,2');
  });

  it('reads own properties of bound data, with optional chaining', () => {
    const data = { status: 200, body: { items: [{ id: 'a' }], toString: 'own' }, tags: ['x', 'y'] };
    expect(inProcess('__ref0.body.items[0].id', { __ref0: data })).to.equal('a');
    expect(inProcess('__ref0.body["items"].length', { __ref0: data })).to.equal(1);
    expect(inProcess('__ref0.missing', { __ref0: data })).to.equal(null);
    expect(inProcess('__ref0.body.toString', { __ref0: data })).to.equal('own');
    expect(inProcess('__ref0.tags[-1] === undefined && __ref0.tags["01"] === undefined', { __ref0: data })).to.equal(true);
    expect(inProcess('"abc"[1] + "abc".length')).to.equal('b3');
    expect(inProcess('"status" in __ref0 && !("x" in __ref0) && 0 in __ref0.tags && !(2 in __ref0.tags)', { __ref0: data })).to.equal(true);
    // inherited (the sandbox says true) or no object at all (V8 throws): the sandbox answers
    expect(inProcess('"toString" in __ref0', { __ref0: {} })).to.equal('sandbox');
    expect(inProcess('"a" in __ref0', { __ref0: 'abc' })).to.equal('sandbox');
    expect(inProcess('__ref0?.a.b.c', { __ref0: null })).to.equal(null);
    expect(inProcess('__ref0.a?.b.c', { __ref0: { a: undefined } })).to.equal('sandbox');
    expect(inProcess('__ref0.a?.b.c', { __ref0: {} })).to.equal(null);
    // a JSON key named __proto__ is an own property there, as in the sandbox
    expect(inProcess('__ref0.__proto__', { __ref0: JSON.parse('{"__proto__": 5}') })).to.equal(5);
  });

  it('calls the pure methods of the list', () => {
    expect(inProcess('__ref0.toLowerCase().includes("pay") && __ref0.startsWith("Re")', { __ref0: 'Refund PAYMENT' })).to.equal(true);
    expect(inProcess('__ref0.trim().split(",").length', { __ref0: ' a,b,c ' })).to.equal(3);
    expect(inProcess('__ref0.includes(2) && __ref0.indexOf(3) === 2 && __ref0.join("-")', { __ref0: [1, 2, 3] })).to.equal('1-2-3');
    expect(inProcess('__ref0.slice(1).at(-1)', { __ref0: [1, 2, 3] })).to.equal(3);
    expect(inProcess('(1.005).toFixed(2) + (255).toString(16)')).to.equal('1.00ff');
    expect(inProcess('Math.max(__ref0, 3) + Math.round(2.5) + Math.PI', { __ref0: 5 })).to.equal(5 + 3 + Math.PI);
    expect(inProcess('Number("0x10") + parseInt("12px") + String(null).length')).to.equal(16 + 12 + 4);
    expect(inProcess('Number.isInteger(5) && Array.isArray(__ref0) && Object.keys(__ref1)', { __ref0: [], __ref1: { b: 1, a: 2 } })).to.deep.equal(['b', 'a']);
    expect(inProcess('({ a: __ref0, ["k" + 1]: [1, 0 / 0], 2: true })', { __ref0: 'x' })).to.deep.equal({ 2: true, a: 'x', k1: [1, null] });
  });

  it('hands the sandbox everything outside the subset', () => {
    for (const source of [
      'x', 'globalThis', 'this', '[1].map((x) => x)', 'function () {}', '__ref0 instanceof Object', '/a/.test("a")',
      '1n', '__ref0 = 1', '__ref0++', 'delete __ref0.a', 'new Date()', 'Math.random()', '"a".repeat(3)', '"ab".replace("a", "b")',
      '`a${1}`.padStart(5)', 'await 1', 'Date.now()', 'JSON.parse("1")', 'eval("1")', 'Function("return 1")()', '[...__ref0]',
      '({ ...__ref0 })', '({ __proto__: null })', '({ get a() { return 1; } })', 'String.fromCharCode(65)', 'f?.()', 'tag`x`', '1 +', '1; 2',
    ]) {
      expect(inProcess(source, { __ref0: [1] }), source).to.equal('sandbox');
    }
  });

  it('never reaches a prototype, constructor or host function', () => {
    const bound = { __ref0: { a: 1 }, __ref1: 'text', __ref2: [1] };
    for (const source of [
      '__ref0.constructor', '__ref0.constructor.constructor("return process")()', '__ref1.constructor("x")', '__ref0.__proto__',
      '__ref2["constructor"]', '__ref0.hasOwnProperty("a")', '__ref0.toString()', '__ref2.map', '__ref1.anchor("x")', '__ref1["con" + "structor"]',
      '__ref0.valueOf', '(1).constructor', 'true.toString', '({}).constructor', '[].constructor', 'Math.constructor', 'Object.assign(__ref0, { a: 2 })',
    ]) {
      expect(inProcess(source, bound), source).to.equal('sandbox');
    }
    expect(bound.__ref0).to.deep.equal({ a: 1 });
  });

  it('hands the sandbox any evaluation V8 would fail, for its own error message', () => {
    expect(inProcess('__ref0.field', { __ref0: null })).to.equal('sandbox');
    expect(inProcess('__ref0.a.b', { __ref0: {} })).to.equal('sandbox');
    expect(inProcess('__ref0 + ""', { __ref0: { toString: 1, valueOf: 2 } })).to.equal('sandbox');
    expect(inProcess('__ref0.includes(1)', { __ref0: { includes: 1 } })).to.equal('sandbox');
    expect(inProcess('(1).toFixed(200)')).to.equal('sandbox');
    expect(inProcess('__ref3', { __ref0: 1 })).to.equal('sandbox');
  });

  it('hands the sandbox values that JSON would change, shared objects and oversized data', () => {
    const shared = { a: 1 };
    for (const bindings of [
      { __ref0: NaN }, { __ref0: -0 }, { __ref0: { a: undefined } }, { __ref0: [undefined] }, { __ref0: new Date(0) }, { __ref0: [1, , 3] },
      { __ref0: Object.create(null) as object }, { __ref0: { get a() { return 1; } } }, { __ref0: Object.assign([1], { extra: 2 }) },
      { __ref0: shared, __ref1: shared }, { __ref0: [shared, shared] }, { __ref0: () => 1 }, { __ref0: 1n }, { __ref0: Symbol('s') },
      { __ref0: 'x'.repeat(2_000_000) }, { __ref0: Array.from({ length: 20_000 }, () => 1) }, { __ref0: JSON.parse('['.repeat(70) + ']'.repeat(70)) as unknown },
    ] as Record<string, unknown>[]) {
      expect(inProcess('__ref0 === 1', bindings)).to.equal('sandbox');
    }
    // a top-level undefined is null for the sandbox too
    expect(inProcess('__ref0 === null', { __ref0: undefined })).to.equal(true);
  });

  it('never grows a string past the bound: the sandbox decides under its memory limit', () => {
    const big = 'x'.repeat(600_000);
    expect(inProcess('__ref0 + __ref0', { __ref0: big })).to.equal('sandbox');
    expect(inProcess('`${__ref0}${__ref0}`', { __ref0: big })).to.equal('sandbox');
    expect(inProcess('__ref0.join(__ref1)', { __ref0: Array.from({ length: 2000 }, () => 0), __ref1: 'y'.repeat(1000) })).to.equal('sandbox');
    expect(inProcess('__ref0.join(__ref1).length', { __ref0: [1, 2], __ref1: 'y'.repeat(1000) })).to.equal(1002);
    expect(inProcess('(__ref0 + __ref0).length', { __ref0: 'x'.repeat(100) })).to.equal(200);
  });

  it('parses each source text once', () => {
    const source = '__ref0 > 41 && "cached"';
    expect(compiledExpression(source)).to.be.a('function');
    expect(compiledExpression(source)).to.equal(compiledExpression(source));
    expect(compiledExpression('[].map(x => x)')).to.equal(null);
  });

  it('keeps its caches bounded in entries and in characters', () => {
    const cache = new TextCache<number>(3, 10);
    for (const text of ['a', 'b', 'c']) cache.set(text, text.length);
    expect(cache.has('a') && cache.has('c')).to.equal(true);
    cache.set('d', 1);
    expect([cache.has('a'), cache.has('d')]).to.deep.equal([false, true]);
    cache.set('x'.repeat(9), 9);
    expect([cache.has('d'), cache.has('x'.repeat(9))]).to.deep.equal([true, true]);
    cache.set('yy', 2);
    expect([cache.has('d'), cache.has('yy')]).to.deep.equal([false, true]);
    cache.set('z'.repeat(11), 11);
    expect([cache.has('z'.repeat(11)), cache.has('yy')]).to.deep.equal([false, true]);
  });
});
