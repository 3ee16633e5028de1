import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { auth, deployed, makeHarness, readSse, waitFor, type Harness } from './support.js';

const example = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../examples/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

/** start → a loop of two function calls (children: logs with an iteration) → a function that fails → an error path. */
const loopAndFailure = {
  id: 'loop-fail',
  name: 'loop then failure',
  blocks: [
    { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [] } },
    { id: 'lp', type: 'loop', name: 'Twice', config: { kind: 'for', iterations: 2 } },
    { id: 'dbl', type: 'function', name: 'Double', parent: 'lp', config: { code: 'return { twice: <loop.index> * 2, pad: "x".repeat(50) }' } },
    { id: 'boom', type: 'function', name: 'Boom', config: { code: 'throw new Error("no luck")' } },
    { id: 'rescue', type: 'function', name: 'Rescue', config: { code: 'return { rescued: true }' } },
  ],
  connections: [
    { from: 'start', to: 'lp' },
    { from: 'lp', to: 'boom' },
    { from: 'boom', to: 'rescue', type: 'error' },
  ],
};

const CASES: [string, Record<string, unknown>, unknown][] = [
  ['hello (starter → function → response)', example('hello'), { name: 'ada' }],
  ['branching (a condition)', example('branching'), { customer: 'ada', amount: 250 }],
  ['parallel-join (fan-out and join)', example('parallel-join'), { numbers: [4, 8, 15, 16, 23, 42] }],
  ['error-path (a failure taken by its error connection)', example('error-path'), { payload: 'not json' }],
  ['a loop and a handled failure', loopAndFailure, {}],
];

describe('http: SSE replay from a lean record equals the live stream', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  for (const [name, doc, input] of CASES) {
    it(name, async () => {
      const { key } = await deployed(h, doc);
      const started = await h.http.post(`/api/workflows/${String(doc['id'])}/execute`).set('X-API-Key', key).send({ input, async: true }).expect(202);
      const id = started.body.executionId as string;
      // while it runs here, the stream comes from the live feed
      const live = await readSse(h.http.get(`/api/executions/${id}/events`).set(auth));
      expect(live.events.at(-1)?.event).to.equal('done');
      await waitFor(async () => (await h.store.executions.get(id))?.status ?? '', (status) => ['completed', 'failed'].includes(status));
      // once it has ended, from the store: the same events, ids and data
      const replayed = await readSse(h.http.get(`/api/executions/${id}/events`).set(auth));
      expect(replayed.events).to.deep.equal(live.events);
      const resumed = await readSse(h.http.get(`/api/executions/${id}/events`).set(auth).set('Last-Event-ID', '2'));
      expect(resumed.events).to.deep.equal(live.events.slice(2));
    });
  }

  it('stores no second copy of a top-level block\'s output in the event stream', async () => {
    const { key } = await deployed(h, example('hello'));
    const res = await h.http.post('/api/workflows/hello/execute').set('X-API-Key', key).send({ input: { name: 'unmistakable-name' } }).expect(200);
    const id = res.headers['x-execution-id'] as string;
    const stored = JSON.stringify(await h.store.executions.listEvents(id));
    expect(stored).not.to.contain('unmistakable-name');
    expect(JSON.stringify(await h.store.executions.get(id))).to.contain('unmistakable-name');
  });

  it('replays events stored in full (by an earlier version) as they are', async () => {
    const at = '2025-01-01T00:00:00.000Z';
    const log = {
      blockId: 'start', blockName: 'Start', blockType: 'starter', status: 'completed', order: 0, startedAt: at, endedAt: at,
      durationMs: 0, input: { a: 1 }, output: { a: 1 }, error: null, errorHandled: false, attempts: 1, iteration: null,
    };
    const done = { id: 'legacy', workflowId: 'w', version: 1, status: 'completed', output: { a: 1 }, error: null, response: null, startedAt: at, endedAt: at, durationMs: 0 };
    await h.store.executions.saveBoundary('legacy', {
      create: { id: 'legacy', workflowId: 'w', version: 1, status: 'completed', trigger: { type: 'api' }, input: { a: 1 }, output: { a: 1 }, error: null, startedAt: at, endedAt: at, durationMs: 0 },
      logs: [log],
      events: [
        { executionId: 'legacy', seq: 1, event: 'block.completed', data: { ...log, output: { a: 'as stored' } }, at },
        { executionId: 'legacy', seq: 2, event: 'done', data: done, at },
      ],
    });
    const { events } = await readSse(h.http.get('/api/executions/legacy/events').set(auth));
    expect(events.map((e) => [e.id, e.event])).to.deep.equal([[1, 'block.completed'], [2, 'done']]);
    expect((events[0]?.data as { output: unknown }).output).to.deep.equal({ a: 'as stored' });
  });
});
