import { expect } from 'chai';
import { resetProbe, type Probe } from '../helpers/runtime.js';
import { auth, failWorkflow, makeHarness, readSse, type Harness } from './support.js';

/**
 * start → a (function: a random number) → ok (condition on the city) → yes: b (sleep echoing a's
 * number) → r (response); ok's else → other (sleep); start → side (sleep) → r.
 * The sleep blocks count their runs in the probe (test/helpers/runtime.ts).
 */
function graphWorkflow(id = 'g', replyExtra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id, name: 'Graph',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: { inputFormat: [{ name: 'city', type: 'string', required: true }] } },
      { id: 'a', type: 'function', name: 'A', config: { code: 'return { city: <start.city>, rnd: Math.random() };' } },
      { id: 'side', type: 'sleep', name: 'Side', config: { ms: 0, value: 'side' } },
      { id: 'ok', type: 'condition', name: 'Ok', config: { branches: [{ id: 'yes', expression: "<a.result.city> === 'Nice'" }], else: true } },
      { id: 'b', type: 'sleep', name: 'B', config: { ms: 0, value: '<a.result.rnd>' } },
      { id: 'other', type: 'sleep', name: 'Other', config: { ms: 0, value: 'other' } },
      { id: 'r', type: 'response', name: 'R', config: { status: 200, data: { a: '<a.result.rnd>', b: '<b.value>', side: '<side.value>', ...replyExtra } } },
    ],
    connections: [
      { from: 'start', to: 'a' }, { from: 'start', to: 'side' }, { from: 'a', to: 'ok' },
      { from: 'ok', handle: 'yes', to: 'b' }, { from: 'ok', handle: 'else', to: 'other' }, { from: 'b', to: 'r' }, { from: 'side', to: 'r' },
    ],
  };
}

interface Log {
  blockId: string;
  status: string;
  order: number;
  output: unknown;
  startedAt: string | null;
  carriedFrom?: string;
  iteration: unknown;
}

interface Rec {
  id: string;
  status: string;
  version: number;
  trigger: Record<string, unknown>;
  input: unknown;
  output: unknown;
  logs: Log[];
}

async function record(h: Harness, id: string): Promise<Rec> {
  return (await h.http.get(`/api/executions/${id}`).set(auth).expect(200)).body as Rec;
}

async function firstRun(h: Harness, doc = graphWorkflow()): Promise<{ id: string; rnd: number }> {
  await h.http.post('/api/workflows').set(auth).send(doc).expect(201);
  const res = await h.http.post(`/api/workflows/${String(doc['id'])}/run`).set(auth).send({ city: 'Nice' }).expect(200);
  return { id: res.headers['x-execution-id'] as string, rnd: res.body.a as number };
}

function rerun(h: Harness, id: string, body?: unknown) {
  const req = h.http.post(`/api/executions/${id}/rerun`).set(auth);
  return body === undefined ? req : req.send(body as object);
}

describe('http: rerun', () => {
  let h: Harness;
  let probe: Probe;
  beforeEach(() => {
    h = makeHarness();
    probe = resetProbe();
  });
  afterEach(() => h.close());

  it('without fromBlock runs everything again on the recorded input: a new execution with trigger rerun', async () => {
    const first = await firstRun(h);
    probe = resetProbe();
    const res = await rerun(h, first.id).expect(200);
    const id = res.headers['x-execution-id'] as string;
    expect(id).to.be.a('string').and.not.equal(first.id);
    expect(res.body.a).to.be.a('number').and.not.equal(first.rnd);
    expect(res.body.b).to.equal(res.body.a);
    expect(probe.runs).to.deep.equal({ Side: 1, B: 1 });
    const rec = await record(h, id);
    expect(rec).to.deep.include({ status: 'completed', version: 1, input: { city: 'Nice' }, trigger: { type: 'rerun', of: first.id, fromBlock: null } });
    expect(rec.logs.every((l) => l.carriedFrom === undefined)).to.equal(true);
    // the starter hands the trigger on (SPEC §1.1)
    expect((rec.logs[0]?.output as { trigger: unknown }).trigger).to.deep.equal({ type: 'rerun', of: first.id, fromBlock: null });
    const listed = await h.http.get('/api/executions?trigger=rerun').set(auth).expect(200);
    expect(listed.body.items.map((e: { id: string }) => e.id)).to.deep.equal([id]);
  });

  it('without fromBlock, on the input given; which the starter checks (422 INVALID_INPUT)', async () => {
    const first = await firstRun(h);
    const res = await rerun(h, first.id, { input: { city: 'Oslo' } }).expect(200);
    // Oslo takes the else path: b does not run
    expect(res.body.b).to.equal(null);
    expect((await record(h, res.headers['x-execution-id'] as string)).input).to.deep.equal({ city: 'Oslo' });
    const bad = await rerun(h, first.id, { input: { town: 'Oslo' } });
    expect([bad.status, bad.body.error.code]).to.deep.equal([422, 'INVALID_INPUT']);
  });

  it('from a block: the blocks before it and beside it are not run again and keep their recorded outputs; it and downstream run', async () => {
    const first = await firstRun(h);
    const original = await record(h, first.id);
    probe = resetProbe();
    const res = await rerun(h, first.id, { fromBlock: 'b' }).expect(200);
    // a's random number is the recorded one: a did not run again
    expect(res.body).to.deep.equal({ a: first.rnd, b: first.rnd, side: 'side' });
    expect(probe.runs, 'only b ran of the counted blocks (side did not)').to.deep.equal({ B: 1 });
    const rec = await record(h, res.headers['x-execution-id'] as string);
    expect(rec).to.deep.include({ status: 'completed', trigger: { type: 'rerun', of: first.id, fromBlock: 'b' }, input: { city: 'Nice' } });
    const carried = rec.logs.filter((l) => l.carriedFrom !== undefined);
    expect(carried.map((l) => l.blockId).sort()).to.deep.equal(['a', 'ok', 'other', 'side', 'start']);
    expect(carried.every((l) => l.carriedFrom === first.id)).to.equal(true);
    for (const l of carried) {
      const before = original.logs.find((o) => o.blockId === l.blockId)!;
      expect({ ...l, carriedFrom: undefined }, l.blockId).to.deep.equal({ ...before, carriedFrom: undefined });
    }
    const ran = rec.logs.filter((l) => l.carriedFrom === undefined).map((l) => [l.blockId, l.status]);
    expect(ran).to.deep.equal([['b', 'completed'], ['r', 'completed']]);
    expect(rec.logs.map((l) => l.order)).to.deep.equal([...rec.logs.map((l) => l.order)].sort((x, y) => x - y));
    expect(new Set(rec.logs.map((l) => l.order)).size).to.equal(rec.logs.length);
  });

  it('from a block that failed: the rerun runs it again and can be rerun in turn', async () => {
    await h.http.post('/api/workflows').set(auth).send(failWorkflow('f')).expect(201);
    const failed = await h.http.post('/api/workflows/f/run').set(auth).send({}).expect(500);
    const id = failed.headers['x-execution-id'] as string;
    probe = resetProbe();
    const again = await rerun(h, id, { fromBlock: 'boom' }).expect(500);
    expect(again.body).to.deep.include({ success: false });
    expect(again.body.error).to.deep.include({ code: 'FUNCTION_ERROR', blockId: 'boom' });
    expect(probe.runs).to.deep.equal({ Boom: 1 });
    const rec = await record(h, again.headers['x-execution-id'] as string);
    expect(rec.logs.map((l) => [l.blockId, l.carriedFrom ?? null])).to.deep.equal([['start', id], ['boom', null]]);
    const third = await rerun(h, rec.id, { fromBlock: 'boom' }).expect(500);
    expect((await record(h, third.headers['x-execution-id'] as string)).logs[0]?.carriedFrom).to.equal(rec.id);
  });

  it('answers async (202) and stream like execute, with the blocks that run', async () => {
    const first = await firstRun(h);
    const accepted = await rerun(h, first.id, { fromBlock: 'b', async: true }).expect(202);
    expect(accepted.body.statusUrl).to.equal(`/api/executions/${accepted.body.executionId as string}`);
    expect(accepted.headers['x-execution-id']).to.equal(accepted.body.executionId);
    const viaHeader = await rerun(h, first.id, { fromBlock: 'b' }).set('X-Execution-Mode', 'async').expect(202);
    expect(viaHeader.body.executionId).to.be.a('string');
    const streamed = await readSse(rerun(h, first.id, { fromBlock: 'b', stream: true }));
    expect(streamed.status).to.equal(200);
    expect(streamed.headers['content-type']).to.match(/^text\/event-stream/);
    const started = streamed.events.filter((e) => e.event === 'block.started').map((e) => (e.data as { blockId: string }).blockId);
    expect(started).to.deep.equal(['b', 'r']);
    const done = streamed.events.at(-1)!;
    expect(done.event).to.equal('done');
    expect(done.data).to.deep.include({ success: true, executionId: streamed.headers['x-execution-id'] });
    const sseDone = await readSse(h.http.get(`/api/executions/${streamed.headers['x-execution-id']!}/events`).set(auth));
    expect(sseDone.events.at(-1)?.event).to.equal('done');
  });

  it('version "current" runs the current version, from a block too; "same" (default) the recorded one', async () => {
    const first = await firstRun(h);
    await h.http.put('/api/workflows/g').set(auth).send(graphWorkflow('g', { v: 2 })).expect(200);
    const same = await rerun(h, first.id, { fromBlock: 'b' }).expect(200);
    expect(same.body).to.not.have.property('v');
    const current = await rerun(h, first.id, { fromBlock: 'b', version: 'current' }).expect(200);
    expect(current.body).to.deep.equal({ a: first.rnd, b: first.rnd, side: 'side', v: 2 });
    expect((await record(h, current.headers['x-execution-id'] as string)).version).to.equal(2);
    const whole = await rerun(h, first.id, { version: 'current' }).expect(200);
    expect(whole.body.v).to.equal(2);
    // a current version whose connections moved still reads the recorded decisions right
    const reordered = graphWorkflow('g', { v: 3 });
    const conns = reordered['connections'] as unknown[];
    conns.push(conns.shift());
    await h.http.put('/api/workflows/g').set(auth).send(reordered).expect(200);
    probe = resetProbe();
    const moved = await rerun(h, first.id, { fromBlock: 'b', version: 'current' }).expect(200);
    expect(moved.body).to.deep.equal({ a: first.rnd, b: first.rnd, side: 'side', v: 3 });
    expect(probe.runs).to.deep.equal({ B: 1 });
    // the block must still exist in the current version
    const without = graphWorkflow('g');
    without['blocks'] = (without['blocks'] as { id: string }[]).filter((b) => b.id !== 'other');
    without['connections'] = (without['connections'] as { to: string }[]).filter((c) => c.to !== 'other');
    (without['blocks'] as { id: string; config: Record<string, unknown> }[]).find((b) => b.id === 'ok')!.config = { branches: [{ id: 'yes', expression: 'true' }] };
    await h.http.put('/api/workflows/g').set(auth).send(without).expect(200);
    const gone = await rerun(h, first.id, { fromBlock: 'other', version: 'current' });
    expect([gone.status, gone.body.error.code]).to.deep.equal([422, 'INVALID_REQUEST']);
    expect(gone.body.error.message).to.contain('not in the workflow version');
  });

  it('422 INVALID_REQUEST for input with fromBlock, an unknown block, a block that did not run, a block inside a container', async () => {
    const first = await firstRun(h);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ fromBlock: 'b', input: { city: 'Oslo' } }, /takes no input/],
      [{ fromBlock: 'nope' }, /block nope is not in the workflow/],
      [{ fromBlock: 'other' }, /block other did not run in this execution \(it was skipped\)/],
    ];
    for (const [body, message] of cases) {
      const res = await rerun(h, first.id, body);
      expect([res.status, res.body.error.code], JSON.stringify(body)).to.deep.equal([422, 'INVALID_REQUEST']);
      expect(res.body.error.message).to.match(message);
      expect(res.body.error.details.issues).to.have.length(1);
    }
    await h.http.post('/api/workflows').set(auth).send({
      id: 'lp', name: 'Loop',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'loop1', type: 'loop', name: 'Loop1', config: { kind: 'for', iterations: 2 } },
        { id: 'inner', type: 'sleep', name: 'Inner', parent: 'loop1', config: { ms: 0 } },
        { id: 'after', type: 'sleep', name: 'After', config: { ms: 0 } },
      ],
      connections: [{ from: 'start', to: 'loop1' }, { from: 'loop1', to: 'after' }],
    }).expect(201);
    const looped = (await h.http.post('/api/workflows/lp/run').set(auth).send({}).expect(200)).headers['x-execution-id'] as string;
    const inner = await rerun(h, looped, { fromBlock: 'inner' });
    expect([inner.status, inner.body.error.code]).to.deep.equal([422, 'INVALID_REQUEST']);
    expect(inner.body.error.message).to.contain('inside loop1');
    probe = resetProbe();
    const fromLoop = await rerun(h, looped, { fromBlock: 'loop1' }).expect(200);
    expect(probe.runs).to.deep.equal({ Inner: 2, After: 1 });
    const rec = await record(h, fromLoop.headers['x-execution-id'] as string);
    expect(rec.logs.filter((l) => l.carriedFrom !== undefined).map((l) => l.blockId)).to.deep.equal(['start']);
    expect(rec.logs.filter((l) => l.blockId === 'inner')).to.have.length(2);
    probe = resetProbe();
    const fromAfter = await rerun(h, looped, { fromBlock: 'after' }).expect(200);
    expect(probe.runs, 'the loop and its children are carried over').to.deep.equal({ After: 1 });
    const afterRec = await record(h, fromAfter.headers['x-execution-id'] as string);
    expect(afterRec.logs.filter((l) => l.carriedFrom !== undefined).map((l) => l.blockId).sort()).to.deep.equal(['inner', 'inner', 'loop1', 'start']);
  });

  it('400 for a malformed body, 401 without the admin token (an API key is not enough), 404 for an unknown execution', async () => {
    const first = await firstRun(h);
    for (const body of [{ version: 'old' }, { fromBlock: 3 }, { fromBlock: '' }, { extra: 1 }, { async: 'yes' }, [1], 'text']) {
      const res = await rerun(h, first.id).set('Content-Type', 'application/json').send(JSON.stringify(body));
      expect([res.status, res.body.error.code], JSON.stringify(body)).to.deep.equal([400, 'INVALID_REQUEST']);
    }
    const both = await rerun(h, first.id, { async: true, stream: true });
    expect([both.status, both.body.error.code]).to.deep.equal([400, 'INVALID_REQUEST']);
    const badJson = await h.http.post(`/api/executions/${first.id}/rerun`).set(auth).set('Content-Type', 'application/json').send('{"fromBlock":');
    expect([badJson.status, badJson.body.error.code]).to.deep.equal([400, 'INVALID_JSON']);
    expect((await h.http.post(`/api/executions/${first.id}/rerun`).send({})).status).to.equal(401);
    await h.http.post('/api/workflows/g/deploy').set(auth).expect(201);
    const key = (await h.http.post('/api/workflows/g/keys').set(auth).expect(201)).body.key as string;
    expect((await h.http.post(`/api/executions/${first.id}/rerun`).set('X-API-Key', key).send({})).status).to.equal(401);
    const ghost = await rerun(h, 'no-such-execution', {});
    expect([ghost.status, ghost.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
  });

  it('503 when the run cannot start (the bus is away): the record written for it says failed, not running', async () => {
    const first = await firstRun(h);
    await h.bus.close();
    const res = await rerun(h, first.id, { fromBlock: 'b' });
    expect([res.status, res.body.error.code]).to.deep.equal([503, 'BUS_UNAVAILABLE']);
    const reruns = (await h.http.get('/api/executions?trigger=rerun').set(auth).expect(200)).body.items as { status: string; error: { code: string } }[];
    expect(reruns.map((e) => [e.status, e.error.code])).to.deep.equal([['failed', 'BUS_UNAVAILABLE']]);
  });

  it('504 when the rerun exceeds the time limit, from a block too (the limit counts from the rerun\'s start)', async () => {
    const slow = makeHarness({ config: { executionTimeoutMs: 300 }, executionTimeoutMs: 300 });
    try {
      await slow.http.post('/api/workflows').set(auth).send({
        id: 'slow', name: 'Slow',
        blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 'nap', type: 'sleep', name: 'Nap', config: { ms: 60_000 } }],
        connections: [{ from: 'start', to: 'nap' }],
      }).expect(201);
      const first = await slow.http.post('/api/workflows/slow/run').set(auth).send({}).expect(504);
      const id = first.headers['x-execution-id'] as string;
      for (const body of [{}, { fromBlock: 'nap' }]) {
        const res = await slow.http.post(`/api/executions/${id}/rerun`).set(auth).send(body);
        expect([res.status, res.body.success, res.body.error?.code], JSON.stringify(body)).to.deep.equal([504, false, 'EXECUTION_TIMEOUT']);
      }
    } finally {
      await slow.close();
    }
  });

  it('422 for an execution troupe run recorded from a file, even when a stored workflow has its id', async () => {
    await h.http.post('/api/workflows').set(auth).send(graphWorkflow()).expect(201);
    await h.store.executions.create({
      id: 'from-cli', workflowId: 'g', version: 1, status: 'completed', trigger: { type: 'manual', source: 'cli' }, input: { city: 'Nice' },
      output: null, error: null, startedAt: null, endedAt: null, durationMs: null,
    });
    const res = await rerun(h, 'from-cli', {});
    expect([res.status, res.body.error.code]).to.deep.equal([422, 'INVALID_REQUEST']);
    expect(res.body.error.message).to.contain('troupe run');
  });

  it('404 when the workflow the execution ran was deleted, even when one was created again under its id', async () => {
    const first = await firstRun(h);
    await h.http.delete('/api/workflows/g').set(auth).expect(204);
    const deleted = await rerun(h, first.id, {});
    expect([deleted.status, deleted.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    await h.http.post('/api/workflows').set(auth).send(graphWorkflow('g', { other: true })).expect(201);
    const recreated = await rerun(h, first.id, { fromBlock: 'b' });
    expect([recreated.status, recreated.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    expect(recreated.body.error.message).to.contain('was deleted');
  });
});
