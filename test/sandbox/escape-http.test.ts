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
});
