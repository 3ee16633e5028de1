import { expect } from 'chai';
import { deployed, makeHarness, type Harness } from '../http/support.js';

/** start → function(code): the sync envelope carries the function's result or its error. */
function codeWorkflow(id: string, code: string): Record<string, unknown> {
  return {
    id,
    name: id,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'f', type: 'function', name: 'F', config: { code } },
    ],
    connections: [{ from: 'start', to: 'f' }],
  };
}

describe('sandbox through HTTP: code that closes the runner function early (issue 21 finding 1)', function () {
  this.timeout(20_000);
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('is refused as a syntax error: it never runs code outside its own function, where the host timer was', async () => {
    // `var seen` is hoisted out of the user function when the close succeeds, so the user
    // function's return reads what the code after the early close saw of the host's timer
    const attack = [
      'return typeof seen === "undefined" ? "contained" : seen });',
      'var seen = typeof globalThis.__troupeSleep + ":" + typeof globalThis.__troupeArgs;',
      '(async function () {',
    ].join('\n');
    const { key } = await deployed(h, codeWorkflow('early-close', attack));
    const res = await h.http.post('/api/workflows/early-close/execute').set('X-API-Key', key).send({});
    expect(JSON.stringify(res.body)).to.not.match(/object/);
    expect(res.body.success).to.equal(false);
    expect(res.body.error).to.include({ code: 'FUNCTION_ERROR' });
    expect(String(res.body.error.message)).to.match(/^SyntaxError/);
  });

  it('still finds no host object when the code tries every spelling of the early close', async () => {
    const spellings = [
      'return 1 }); globalThis.x = typeof __troupeSleep; (async function () {',
      'return 1 })}); (function () { (async function () {',
      'return 1 /* */ }) ; (function(){ (async function () {',
      'return 1\n}\n)\n;\n(async function () {',
    ];
    for (const [i, code] of spellings.entries()) {
      const { key } = await deployed(h, codeWorkflow(`spell-${i}`, code));
      const res = await h.http.post(`/api/workflows/spell-${i}/execute`).set('X-API-Key', key).send({});
      expect(res.body.success, code).to.equal(false);
      expect(res.body.error.code, code).to.equal('FUNCTION_ERROR');
    }
  });

  it("leaves nothing from one execution's function for the next execution, of its workflow or another", async () => {
    const hostile = [
      'const tried = [];',
      'for (const step of [() => { Array.prototype.evil = 1; }, () => { globalThis.kept = 1; }, () => { arguments.callee.kept = 1; },',
      '  () => { Error.prepareStackTrace = () => "hijacked"; }, () => { /(s3cret)/.exec("s3cret"); }]) {',
      '  try { step(); tried.push("ran"); } catch (e) { tried.push(e.name); }',
      '}',
      'return tried;',
    ].join('\n');
    const probe = 'return [[].evil, typeof kept, arguments.callee.kept, typeof Error.prepareStackTrace, typeof RegExp.$1];';
    const a = await deployed(h, codeWorkflow('leaky', `${hostile}\n// ${probe}`));
    const b = await deployed(h, codeWorkflow('reader', probe));
    const first = await h.http.post('/api/workflows/leaky/execute').set('X-API-Key', a.key).send({});
    expect(first.body.success, JSON.stringify(first.body.error)).to.equal(true);
    for (let i = 0; i < 3; i++) {
      const read = await h.http.post('/api/workflows/reader/execute').set('X-API-Key', b.key).send({});
      expect(read.body.output.result).to.deep.equal([null, 'undefined', null, 'undefined', 'undefined']);
    }
    // the same workflow: each execution reads what the one before tried to leave, then tries
    const both = `const seen = (() => { ${probe} })();\n${hostile.replace('return tried;', 'return seen;')}`;
    const c = await deployed(h, codeWorkflow('both', both));
    for (let i = 0; i < 3; i++) {
      const run = await h.http.post('/api/workflows/both/execute').set('X-API-Key', c.key).send({});
      expect(run.body.output.result, `execution ${i}`).to.deep.equal([null, 'undefined', null, 'undefined', 'undefined']);
    }
  });
});
