import { expect } from 'chai';
import { normalizeName } from '../../src/model/names.js';
import {
  bindCode,
  classifyReference,
  collectReferences,
  findReferences,
  findSecretNames,
  maskSecretPlaceholders,
  parseReference,
  redactSecrets,
  resolveConfig,
  resolveValue,
  substituteSecrets,
  type ReferenceScope,
} from '../../src/model/references.js';

const scope: ReferenceScope = {
  outputs: {
    start: { city: 'Paris', count: 3, input: { city: 'Paris' } },
    weather: { status: 200, data: { temp: 21.5, items: [{ id: 'a1' }, { id: 'a2' }] }, ok: true, nothing: null },
    myapi: { data: 'x' },
  },
  blockNames: new Set(['start', 'weather', 'myapi', 'skipped']),
  variables: { unit: 'metric', 'My Var': 7 },
  loop: { index: 2, item: { name: 'it' }, items: ['a', 'b', { name: 'it' }] },
};

describe('model/names', () => {
  it('lowercases and removes all whitespace', () => {
    expect(normalizeName('My API')).to.equal('myapi');
    expect(normalizeName(' Get\tWeather \n Now ')).to.equal('getweathernow');
  });
});

describe('model/references parsing', () => {
  it('finds tokens with offsets, normalized roots and both index syntaxes', () => {
    const text = 'x <My API.data.items[0].id> y <weather.items.1.id>';
    const [a, b] = findReferences(text);
    expect(a).to.deep.include({ rawRoot: 'My API', root: 'myapi', path: ['data', 'items', 0, 'id'], hasPath: true });
    expect(text.slice(a!.start, a!.end)).to.equal('<My API.data.items[0].id>');
    expect(b?.path).to.deep.equal(['items', 1, 'id']);
  });

  it('parses a single token and nothing else', () => {
    expect(parseReference('<start>')).to.deep.include({ root: 'start', path: [], hasPath: false });
    expect(parseReference(' <start>')).to.equal(null);
    expect(parseReference('<a.b> <c>')).to.equal(null);
  });

  it('does not see spaced comparisons as candidates, and reads closing tags and addresses as text', () => {
    expect(findReferences('a < b && c > d')).to.deep.equal([]);
    // any character but `.`, `<`, `>` may be in a block name: these are candidates, but name no block
    const refs = findReferences('</div> <a@b.c> <div class="x">');
    expect(refs.map((r) => r.raw)).to.deep.equal(['</div>', '<a@b.c>', '<div class="x">']);
    expect(refs.map((r) => classifyReference(r, scope.blockNames))).to.deep.equal(['text', 'text', 'text']);
    expect(findReferences('<div>').map((r) => r.root)).to.deep.equal(['div']);
  });

  it('collects references from every string of a value with their location', () => {
    const refs = collectReferences({ a: ['<x.y>', 1, { b: 'q <z>' }], 'k<ey.x>': 'no' });
    expect(refs.map((r) => [r.root, r.at])).to.deep.equal([
      ['x', ['a', 0]],
      ['z', ['a', 2, 'b']],
    ]);
  });
});

describe('model/references resolveValue', () => {
  it('keeps the type of a whole reference', () => {
    expect(resolveValue('<start.count>', scope)).to.equal(3);
    expect(resolveValue('<weather.ok>', scope)).to.equal(true);
    expect(resolveValue('<weather.data>', scope)).to.deep.equal(scope.outputs['weather'] && { temp: 21.5, items: [{ id: 'a1' }, { id: 'a2' }] });
    expect(resolveValue('<My API>', scope)).to.deep.equal({ data: 'x' });
    expect(resolveValue({ status: '<weather.status>' }, scope)).to.deep.equal({ status: 200 });
  });

  it('inserts values into longer strings as text, objects as JSON, null as "null"', () => {
    expect(resolveValue('temp=<weather.data.temp>C in <start.city>', scope)).to.equal('temp=21.5C in Paris');
    expect(resolveValue('items: <weather.data.items[1]>', scope)).to.equal('items: {"id":"a2"}');
    expect(resolveValue('n=<weather.nothing>, m=<weather.missing>', scope)).to.equal('n=null, m=null');
  });

  it('reads indexes with both syntaxes', () => {
    expect(resolveValue('<weather.data.items[1].id>', scope)).to.equal('a2');
    expect(resolveValue('<weather.data.items.0.id>', scope)).to.equal('a1');
    expect(resolveValue('<weather.data.items[9].id>', scope)).to.equal(null);
  });

  it('resolves missing fields, inactive blocks and paths through scalars to null', () => {
    expect(resolveValue('<weather.nope.deeper>', scope)).to.equal(null);
    expect(resolveValue('<skipped.result>', scope)).to.equal(null);
    expect(resolveValue('<skipped>', scope)).to.equal(null);
    expect(resolveValue('<start.city.length>', scope)).to.equal(null);
    expect(resolveValue('<weather.constructor>', scope)).to.equal(null);
  });

  it('reads variables and the innermost iteration', () => {
    expect(resolveValue('<variable.unit>', scope)).to.equal('metric');
    expect(resolveValue('<variable.myvar>', scope)).to.equal(7);
    expect(resolveValue('<variable.none>', scope)).to.equal(null);
    expect(resolveValue(['<loop.index>', '<loop.item.name>', '<loop.items[0]>'], scope)).to.deep.equal([2, 'it', 'a']);
    expect(resolveValue('<parallel.index>', scope)).to.equal(null);
  });

  it('leaves non-references alone', () => {
    for (const text of ['a < b', '<div>hi</div>', '<unknown.path>', '<variable>', 'x <loop> y']) {
      expect(resolveValue(text, scope)).to.equal(text);
    }
  });

  it('never mutates its input and keeps keys as they are', () => {
    const input = { '<start.city>': ['<start.count>'], n: 1, b: false, z: null };
    const frozen = JSON.stringify(input);
    const out = resolveValue(input, scope);
    expect(JSON.stringify(input)).to.equal(frozen);
    expect(out).to.deep.equal({ '<start.city>': [3], n: 1, b: false, z: null });
  });

  it('substitutes secrets in the same pass without rescanning referenced text', () => {
    const s: ReferenceScope = { ...scope, outputs: { ...scope.outputs, start: { q: '{{TOKEN}} <weather.status>' } }, secrets: { TOKEN: 's3cr3t' } };
    expect(resolveValue('Bearer {{TOKEN}} for <start.q>', s)).to.equal('Bearer s3cr3t for {{TOKEN}} <weather.status>');
    expect(resolveValue('{{TOKEN}}', s)).to.equal('s3cr3t');
    expect(resolveValue('{{OTHER}}', s)).to.equal('{{OTHER}}');
    expect(resolveValue('{{TOKEN}}', { ...s, secrets: new Map([['TOKEN', 'm']]) })).to.equal('m');
  });

  it('resolveConfig leaves code fields raw', () => {
    expect(resolveConfig({ code: 'return <start.count>', url: '<start.city>' }, scope, ['code'])).to.deep.equal({
      code: 'return <start.count>',
      url: 'Paris',
    });
  });
});

function run(source: string, s: ReferenceScope): unknown {
  const bound = bindCode(source, s);
  const names = Object.keys(bound.bindings);
  return new Function(...names, bound.source)(...names.map((n) => bound.bindings[n]));
}

describe('model/references bindCode', () => {
  it('binds references as values of any type', () => {
    const bound = bindCode('return <weather.status> === 200 && <weather.status> > 100', scope);
    expect(bound.source).to.equal('return __ref0 === 200 && __ref0 > 100');
    expect(bound.bindings).to.deep.equal({ __ref0: 200 });
    expect(run('return <weather.data.items>.length + <start.count>', scope)).to.equal(5);
    expect(run('return <weather.status> / 2', scope)).to.equal(100);
  });

  it('never pastes a malicious value as source', () => {
    const evil = '"); process.exit(1); ("';
    const s: ReferenceScope = { ...scope, outputs: { ...scope.outputs, start: { name: evil } } };
    expect(run('return <start.name>', s)).to.equal(evil);
    expect(run('return "Hi <start.name>!"', s)).to.equal(`Hi ${evil}!`);
    expect(run("return 'Hi <start.name>'.length", s)).to.equal(3 + evil.length);
    expect(run('return `Hi <start.name> ${1 + 1}`', s)).to.equal(`Hi ${evil} 2`);
    expect(bindCode('return <start.name>', s).source).to.not.include('process');
  });

  it('inserts text inside string literals and template text, values elsewhere', () => {
    expect(run('return "n=<weather.data.items[0]>"', scope)).to.equal('n={"id":"a1"}');
    expect(run('return `${<start.count> * 2}:<start.count>`', scope)).to.equal('6:3');
    expect(run("const o = { a: <weather.data> }; return o.a.temp", scope)).to.equal(21.5);
  });

  it('leaves comments, regexes and non-references alone', () => {
    const src = '// see <start.city>\nconst r = /<start.city>/; return 1 < 2 && "<div>" === "<div>"';
    const bound = bindCode(src, scope);
    expect(bound.source).to.equal(src);
    expect(bound.bindings).to.deep.equal({});
    expect(run(src, scope)).to.equal(true);
  });

  it('binds null for inactive blocks and binds secrets it knows', () => {
    expect(run('return <skipped.result>', scope)).to.equal(null);
    expect(run('return "k={{KEY}}" + {{KEY}}.length', { ...scope, secrets: { KEY: 'abc' } })).to.equal('k=abc3');
  });

  it('keeps a reference written against a word a separate token', () => {
    expect(bindCode('return<start.count>', scope).source).to.equal('return __ref0');
    expect(run('return<start.count>', scope)).to.equal(3);
    expect(run('return typeof<start.count>', scope)).to.equal('number');
    expect(run('return <start.count>in{3:1}', scope)).to.equal(true);
    // once silently undefined (`s.n__ref00`): now two values side by side, which does not parse
    expect(() => run('const s={n:1};return s.n<start.count>0', scope)).to.throw(SyntaxError);
  });

  it('turns a quoted object key holding a reference into a computed key', () => {
    expect(run("return {'<start.city>': 1}", scope)).to.deep.equal({ Paris: 1 });
    expect(run('const o = { a: 1, "x-<start.count>" : 2 }; return o["x-3"]', scope)).to.equal(2);
    expect(run("return 1 ? '<start.city>' : 'no'", scope)).to.equal('Paris');
    expect(run("switch ('Paris') { case '<start.city>': return 'yes' } return 'no'", scope)).to.equal('yes');
  });

  it('tells division from a regular expression as JavaScript does, so a reference after a division is bound', () => {
    // a `/` after `i++` or after an object literal divides; read as the start of a regex, the
    // quoted reference after it stayed as written
    expect(run("let i = 4; return i++ / 2 + ' <start.city> ' + 1 / 1", scope)).to.equal('2 Paris 1');
    expect(run("return [{ a: 4 }][0].a / 2 + ' <start.city> /'", scope)).to.equal('2 Paris /');
    expect(run("let n = 8; n /= 2; return n + ' <start.city> /'", scope)).to.equal('4 Paris /');
  });

  it('binds a reference in code that does not tokenize, and leaves the code a syntax error', () => {
    const evil = '"); process.exit(1); ("';
    const s: ReferenceScope = { ...scope, outputs: { ...scope.outputs, start: { name: evil } } };
    for (const src of ['return "Hi <start.name>', 'return `Hi <start.name>', "return 'a' + <start.name> + 'b"]) {
      expect(bindCode(src, s).source, src).to.not.include('process');
      expect(() => run(src, s), src).to.throw(SyntaxError);
    }
  });

  it('avoids identifiers already used by the code', () => {
    const bound = bindCode('const __ref0 = 1; return <start.count> + __ref0', scope);
    expect(bound.source).to.equal('const __ref0 = 1; return ___ref0 + __ref0');
    expect(run('const __ref0 = 1; return <start.count> + __ref0', scope)).to.equal(4);
  });
});

describe('model/references secrets', () => {
  it('finds distinct secret names in order', () => {
    expect(findSecretNames({ a: '{{A}} {{B_2}}', b: ['{{A}}', '{{ bad }}', '{{1X}}'] })).to.deep.equal(['A', 'B_2']);
  });

  it('substitutes known secrets deep in string values only', () => {
    const input = { h: 'Bearer {{T}}', list: ['{{T}}{{T}}', '{{U}}'], n: 1, '{{T}}': 'key' };
    expect(substituteSecrets(input, { T: 'tok' })).to.deep.equal({ h: 'Bearer tok', list: ['toktok', '{{U}}'], n: 1, '{{T}}': 'key' });
    expect(input.h).to.equal('Bearer {{T}}');
  });

  it('redacts every occurrence, inside longer strings and in keys, longest first', () => {
    const value = { msg: 'token=abcdef; short=abc', nested: [{ abcdef: 'x' }], n: 5, e: '' };
    expect(redactSecrets(value, ['abc', 'abcdef', ''])).to.deep.equal({ msg: 'token=***; short=***', nested: [{ '***': 'x' }], n: 5, e: '' });
    expect(redactSecrets('a.b*c', ['.b*'])).to.equal('a***c');
    expect(redactSecrets({ a: 1 }, [])).to.deep.equal({ a: 1 });
  });

  it('masks placeholders for recording configs', () => {
    expect(maskSecretPlaceholders({ h: 'Bearer {{TOKEN}}', n: 2 })).to.deep.equal({ h: 'Bearer ***', n: 2 });
  });
});
