import { expect } from 'chai';
import { sharedSandbox } from '../helpers/runtime.js';
import { deployed, makeHarness, type Harness } from '../http/support.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** start → parallel(count) → function `code` in each branch */
function parallelOf(id: string, count: number, code: string): Record<string, unknown> {
  return {
    id,
    name: id,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'par', type: 'parallel', name: 'Par', config: { kind: 'count', count, concurrency: count } },
      { id: 'cell', type: 'function', name: 'Cell', parent: 'par', config: { code } },
    ],
    connections: [{ from: 'start', to: 'par' }],
  };
}

function trivial(id: string): Record<string, unknown> {
  return {
    id,
    name: id,
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'f', type: 'function', name: 'F', config: { code: 'return "neighbour";' } },
    ],
    connections: [{ from: 'start', to: 'f' }],
  };
}

describe('sandbox through HTTP: hostile workflows beside a quiet one (issue 21 finding 3)', function () {
  this.timeout(60_000);
  let h: Harness;
  beforeEach(() => {
    h = makeHarness({ executionTimeoutMs: 40_000 });
  });
  afterEach(() => h.close());

  it('/healthz answers promptly, a neighbour is served, and the extra isolates go once the load ends', async () => {
    const burner = await deployed(h, parallelOf('burner', 6, 'setTimeout(() => {}, 60000);\nwhile (true) {}'));
    const sleeper = await deployed(h, parallelOf('sleeper', 24, 'await new Promise((r) => setTimeout(r, 1500)); return 1;'));
    const quiet = await deployed(h, trivial('quiet'));
    const sandbox = sharedSandbox();
    const before = sandbox.isolates;
    let hostileEnded = false;
    const hostile = Promise.all([
      h.http.post('/api/workflows/burner/execute').set('X-API-Key', burner.key).send({}),
      h.http.post('/api/workflows/sleeper/execute').set('X-API-Key', sleeper.key).send({}),
    ]).then((answers) => {
      hostileEnded = true;
      return answers;
    });
    await pause(300);
    const worst = { ms: 0 };
    const probes = (async () => {
      while (!hostileEnded) {
        const t0 = Date.now();
        await h.http.get('/healthz').expect(200);
        worst.ms = Math.max(worst.ms, Date.now() - t0);
        await pause(50);
      }
    })();
    const neighbour = await h.http.post('/api/workflows/quiet/execute').set('X-API-Key', quiet.key).send({});
    expect(neighbour.body).to.deep.include({ success: true });
    expect(hostileEnded, 'the neighbour waited for the hostile workflows').to.equal(false);
    const [burnt, slept] = await hostile;
    await probes;
    // a generous bound: the event loop is never the isolates' thread
    expect(worst.ms).to.be.below(1500);
    expect(burnt.body.success).to.equal(false);
    expect(burnt.body.error.code).to.equal('FUNCTION_TIMEOUT');
    expect(slept.body.success, JSON.stringify(slept.body.error)).to.equal(true);
    for (let i = 0; i < 200 && sandbox.isolates > Math.max(before, 2); i++) await pause(50);
    expect(sandbox.isolates).to.be.at.most(Math.max(before, 2));
  });
});
