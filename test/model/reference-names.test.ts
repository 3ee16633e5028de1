import { expect } from 'chai';
import fc from 'fast-check';
import { compileWorkflow } from '../../src/model/graph.js';
import { normalizeName } from '../../src/model/names.js';
import {
  bindCode,
  findReferences,
  interpretReference,
  parseReference,
  resolveValue,
  type ReferenceScope,
} from '../../src/model/references.js';
import { RESERVED_NAMES } from '../../src/model/types.js';
import { validateWorkflow } from '../../src/model/validate.js';
import { registry, workflow } from './fixtures.js';

/** Runs bound code the way the sandbox does: bindings as parameters, never as source. */
function run(source: string, s: ReferenceScope): unknown {
  const bound = bindCode(source, s);
  const names = Object.keys(bound.bindings);
  return new Function(...names, bound.source)(...names.map((n) => bound.bindings[n]));
}

function scopeFor(outputs: Record<string, unknown>, extra: string[] = []): ReferenceScope {
  return { outputs, blockNames: new Set(['start', ...Object.keys(outputs), ...extra]), variables: {} };
}

function issuesOf(doc: unknown): string[] {
  const result = validateWorkflow(doc, registry);
  return result.ok ? [] : result.issues.map((i) => `${i.path}: ${i.message}`);
}

/** Characters a name may hold (anything but `.`, `<`, `>`), weighted towards the awkward ones. */
const AWKWARD = [...'()#:\'"`{}/+$[]@&|=;,?!*%^~\\-_ 1234567890', '\t', '\n', '\u00a0', '\u3000', 'é', '名', 'İ', 'Σ', '\u200b', '{{', '}}', '${', '*/', '//'];
const nameArb = fc
  .array(fc.oneof(fc.constantFrom(...AWKWARD), fc.constantFrom(...'abcXYZ')), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(''))
  .filter((name) => name.trim().length > 0 && !(RESERVED_NAMES as readonly string[]).includes(normalizeName(name)));

/**
 * Ways of writing a name in a reference: as it is (a reference is on one line, so a name with a
 * line break is written with a space there), normalized, or with its whitespace respaced.
 */
function writtenForms(name: string): string[] {
  const respaced = name.trim().replace(/\s+/gu, ' ');
  return [/[\r\n\u2028\u2029]/u.test(name) ? respaced : name.trim(), normalizeName(name), respaced];
}

describe('model/references: every name validation accepts can be referenced (SPEC §1, §1.2)', () => {
  it('property: the name, as written or normalized, reads its block everywhere and is never pasted as source', () => {
    fc.assert(
      fc.property(nameArb, fc.constantFrom(...[0, 1, 2]), (name, form) => {
        const doc = workflow([{ id: 'f', name }, { id: 'g', config: { code: 'return 1' } }], ['start>f', 'f>g']);
        expect(issuesOf(doc)).to.deep.equal([]);
        const written = writtenForms(name)[form] ?? name;
        const norm = normalizeName(name);
        const s = scopeFor({ [norm]: { result: 42, deep: { 'k"': [7] } } });
        const ref = parseReference(`<${written}.result>`);
        expect(ref, written).to.not.equal(null);
        const read = interpretReference(ref!, s.blockNames);
        expect(read.kind).to.equal('block');
        expect(read.ref.root).to.equal(norm);
        expect(resolveValue(`<${written}.result>`, s)).to.equal(42);
        expect(resolveValue(`[<${written}>]`, s)).to.equal('[{"result":42,"deep":{"k\\"":[7]}}]');
        expect(run(`return <${written}.result> + 1`, s)).to.equal(43);
        expect(run(`return "v=<${written}.result>;"`, s)).to.equal('v=42;');
        expect(run(`return 'v=<${written}.result>'`, s)).to.equal('v=42');
        expect(run(`return \`v=<${written}.result> \${<${written}.result>}\``, s)).to.equal('v=42 42');
        expect(bindCode(`return <${written}.result>`, s).source).to.equal('return __ref0');
        // and in a workflow: it validates as a reference, and compiles as a dependency
        const using = workflow([{ id: 'f', name }, { id: 'g', config: { code: `return <${written}.result>`, x: `<${written}.deep>` } }], ['start>f', 'f>g']);
        expect(issuesOf(using)).to.deep.equal([]);
        expect(compileWorkflow(using, registry).blocks.get('g')?.references).to.deep.equal([norm]);
      }),
      { numRuns: 300 },
    );
  });

  it('the names of the probe resolve in config and code; an unknown one of that shape is a validation error', () => {
    const names = ['Fetch (v2)', 'Step #1', '1st call', 'a+b', '$v', 'API: weather', 'tab\there', 'nb\u00a0sp', 'Ünïcødé 名前'];
    const blocks = names.map((name, i) => ({ id: `b${i}`, name, config: { code: i === 0 ? 'return 1' : `return <${names[i - 1]}.result> + 1` } }));
    const conns = names.map((_, i) => (i === 0 ? 'start>b0' : `b${i - 1}>b${i}`));
    expect(issuesOf(workflow(blocks, conns))).to.deep.equal([]);
    const s = scopeFor(Object.fromEntries(names.map((n, i) => [normalizeName(n), { result: i + 1 }])));
    expect(resolveValue(names.map((n) => `<${n}.result>`), s)).to.deep.equal(names.map((_, i) => i + 1));
    expect(run(`return [${names.map((n) => `<${n}.result>`).join(', ')}]`, s)).to.deep.equal(names.map((_, i) => i + 1));
    const ghost = workflow([...blocks, { id: 'r', type: 'response', config: { data: { ghost: '<Fetch (v3).result>', digit: '<2nd call.x>', sign: '<$w.x>' } } }], [...conns, `b${names.length - 1}>r`]);
    expect(issuesOf(ghost)).to.deep.equal([
      `/blocks/${names.length + 1}/config/data/ghost: <Fetch (v3).result> names a block that does not exist ("Fetch (v3)")`,
      `/blocks/${names.length + 1}/config/data/digit: <2nd call.x> names a block that does not exist ("2nd call")`,
      `/blocks/${names.length + 1}/config/data/sign: <$w.x> names a block that does not exist ("$w")`,
    ]);
  });

  it('a name with quotes, braces, slashes or backticks is bound as a value in code, wherever it is written', () => {
    const names = ['say "hi"', "it's", 'back`tick', '{brace}', 'x/y', 'a*/b', '${x}', 'q\\'];
    const s = scopeFor(Object.fromEntries(names.map((n, i) => [normalizeName(n), { result: `v${i}` }])));
    for (const [i, n] of names.entries()) {
      expect(run(`return <${n}.result>`, s), n).to.equal(`v${i}`);
      expect(run(`return "(<${n}.result>)"`, s), n).to.equal(`(v${i})`);
      expect(run(`return '(<${n}.result>)'`, s), n).to.equal(`(v${i})`);
      expect(run(`return \`(<${n}.result>)\``, s), n).to.equal(`(v${i})`);
      expect(run(`return { "<${n}.result>": 1 }`, s), n).to.deep.equal({ [`v${i}`]: 1 });
    }
  });

  it('a first segment ending in [n] is a name when one has it, else a name and an index', () => {
    const s = scopeFor({ 'v[2]': { x: 'named' }, items: { x: 'whole' }, 'step[2]': { x: 'spaced' } }, []);
    s.outputs = { ...s.outputs, items: [{ x: 'first' }, { x: 'second' }] };
    expect(resolveValue(['<v[2].x>', '<items[1].x>', '<items.0.x>', '<Step [2].x>', '<v[2]>'], s)).to.deep.equal([
      'named',
      'second',
      'first',
      'spaced',
      { x: 'named' },
    ]);
    expect(issuesOf(workflow([{ id: 'a', name: 'v[2]' }, { id: 'b', config: { code: 'return <v[3].x>' } }], ['start>a', 'a>b']))).to.deep.equal([
      '/blocks/2/config/code: <v[3].x> names a block that does not exist ("v")',
    ]);
  });

  it('a {{NAME}} inside a block name stays part of the reference', () => {
    const s: ReferenceScope = { ...scopeFor({ 'a{{key}}': { x: 1 } }), secrets: { KEY: 'sekret' } };
    expect(resolveValue('<a{{KEY}}.x> {{KEY}}', s)).to.equal('1 sekret');
    expect(run('return [<a{{KEY}}.x>, {{KEY}}]', s)).to.deep.equal([1, 'sekret']);
  });
});

describe('model/references: text and code stay text', () => {
  const names = new Set(['start', 'a', 'b', 'arr', 'x']);
  const kinds = (text: string): string[] => findReferences(text).map((r) => interpretReference(r, names).kind);

  it('comparisons, markup, addresses and URLs are no references, nor validation errors', () => {
    for (const text of ['a < b', '< start.x >', '<start .x>', 'i<arr.length && j>0', 'a<b.c && d>e', 'a < b.c > d']) {
      expect(findReferences(text), text).to.deep.equal([]);
    }
    for (const text of [
      '<div>', '</div>', '<br/>', 'a<b && c.d>e', 'a<b || c.d>e', 'if (i<n) ok = arr.length>0', 'f(a<b, c.d>e)', 'x ? i<n : s.length>0',
      'for(;i<n;i++)if(a.length>0)', 'Ada <ada@example.com>', '<a href=x.html>', '<https://example.com>', 'ratio <0.5> done', '<div class="x.y">',
    ]) {
      expect(kinds(text), text).to.satisfy((ks: string[]) => ks.every((k) => k === 'text'));
    }
    const code = 'for (let i=0;i<arr.length;i++) { if (a<b && c.d>e) return x<y ? 1 : z.w>0 } return "<div>"';
    const doc = workflow([{ id: 'f', config: { code } }, { id: 'r', type: 'response', config: { data: 'Mail <ada@example.com>, see <https://example.com>' } }], ['start>f', 'f>r']);
    expect(issuesOf(doc)).to.deep.equal([]);
    expect(bindCode(code, scopeFor({ a: {}, b: {}, arr: {}, x: {} })).source).to.equal(code);
  });

  it('property: `<` of a comparison and `.word>` of another never make a reference or an error', () => {
    const word = fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/);
    const glue = fc.constantFrom(' && ', ' || ', ';', ' = ', ', ', ' ? ', ') + (', ' ) { ', '\n', '@', '://', ' == ', ' : ');
    fc.assert(
      fc.property(word, word, glue, word, word, (l, r, g, o, p) => {
        const text = `if (${l}<${r}${g}${o}.${p}>0) {}`;
        const known = new Set(['start', l, r, o, p]);
        for (const ref of findReferences(text)) expect(interpretReference(ref, known).kind, text).to.equal('text');
      }),
    );
  });
});
