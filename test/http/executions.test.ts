import { expect } from 'chai';
import { auth, deployed, echoWorkflow, failWorkflow, makeHarness, otherProcess, readSse, sleepWorkflow, waitFor, type Harness } from './support.js';

async function startAsync(h: Harness, id: string, key: string, input: unknown = {}): Promise<string> {
  const res = await h.http.post(`/api/workflows/${id}/execute`).set('X-API-Key', key).send({ input, async: true }).expect(202);
  return res.body.executionId as string;
}

describe('http: execution records', () => {
  let h: Harness;
  let keyA: string;
  let keyB: string;
  let execId: string;
  beforeEach(async () => {
    h = makeHarness();
    keyA = (await deployed(h, echoWorkflow('A'))).key;
    keyB = (await deployed(h, echoWorkflow('B'))).key;
    const res = await h.http.post('/api/workflows/A/execute').set('X-API-Key', keyA).send({ city: 'Nice' }).expect(201);
    execId = res.headers['x-execution-id'] as string;
  });
  afterEach(() => h.close());

  it('returns the record with its logs to the admin and to a key of the workflow', async () => {
    for (const creds of [auth, { 'X-API-Key': keyA }]) {
      const res = await h.http.get(`/api/executions/${execId}`).set(creds).expect(200);
      expect(res.headers['x-execution-id']).to.equal(execId);
      expect(res.body).to.include.keys('id', 'workflowId', 'version', 'status', 'trigger', 'input', 'output', 'error', 'startedAt', 'endedAt', 'durationMs', 'logs');
      expect(res.body).to.include({ id: execId, workflowId: 'A', version: 1, status: 'completed', error: null });
      expect(res.body.output).to.deep.equal({ status: 201, headers: { 'X-Custom': 'yes' }, data: { city: 'Nice', v: 1 } });
      expect(res.body.logs.map((l: { blockId: string; order: number }) => [l.blockId, l.order])).to.deep.equal([['start', 0], ['r', 1]]);
      expect(res.body.logs[0]).to.have.keys('blockId', 'blockName', 'blockType', 'status', 'order', 'startedAt', 'endedAt', 'durationMs',
        'input', 'output', 'error', 'errorHandled', 'attempts', 'iteration');
    }
  });

  it('401 without credentials or with a revoked key, 403 for a key of another workflow, 404 for an unknown id', async () => {
    const none = await h.http.get(`/api/executions/${execId}`);
    expect([none.status, none.body.error.code]).to.deep.equal([401, 'UNAUTHORIZED']);
    const wrongAdmin = await h.http.get(`/api/executions/${execId}`).set('Authorization', 'Bearer nope');
    expect(wrongAdmin.status).to.equal(401);
    const other = await h.http.get(`/api/executions/${execId}`).set('X-API-Key', keyB);
    expect([other.status, other.body.error.code]).to.deep.equal([403, 'FORBIDDEN']);
    const unknown = await h.http.get('/api/executions/nope').set('X-API-Key', keyA);
    expect([unknown.status, unknown.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    await h.http.get('/api/executions/nope').set(auth).expect(404);
    await h.http.get('/api/executions/nope').expect(401);
    const [rec] = await h.store.apiKeys.listByWorkflow('A');
    await h.http.delete(`/api/workflows/A/keys/${rec!.id}`).set(auth).expect(204);
    await h.http.get(`/api/executions/${execId}`).set('X-API-Key', keyA).expect(401);
  });

  it('stays readable after its workflow is deleted', async () => {
    await h.http.delete('/api/workflows/A').set(auth).expect(204);
    await h.http.get(`/api/executions/${execId}`).set(auth).expect(200);
  });

  it("a workflow created again under the same id is another workflow: its keys do not reach the old one's runs", async () => {
    await h.http.delete('/api/workflows/A').set(auth).expect(204);
    const again = (await deployed(h, echoWorkflow('A'))).key;
    for (const path of [`/api/executions/${execId}`, `/api/executions/${execId}/events`]) {
      const res = await h.http.get(path).set('X-API-Key', again);
      expect([res.status, res.body.error?.code]).to.deep.equal([403, 'FORBIDDEN']);
    }
    const cancel = await h.http.post(`/api/executions/${execId}/cancel`).set('X-API-Key', again);
    expect(cancel.status).to.equal(403);
    const fresh = await h.http.post('/api/workflows/A/execute').set('X-API-Key', again).send({ city: 'Nice' }).expect(201);
    await h.http.get(`/api/executions/${fresh.headers['x-execution-id'] as string}`).set('X-API-Key', again).expect(200);
  });

  it('X-Execution-Id is on every answer about an execution the caller may see, refusals included, never on 401/403', async () => {
    const tooBig = 'x'.repeat(2 * 1024 * 1024);
    const answers = [
      await h.http.get(`/api/executions/${execId}`).set(auth).send(tooBig), // 413
      await h.http.get(`/api/executions/${execId}`).set('X-API-Key', keyA).send(tooBig), // 413
      await h.http.get(`/api/executions/${execId}/events`).set(auth).set('Last-Event-ID', 'abc'), // 400
      await h.http.get(`/api/executions/${execId}/events?after=x`).set('X-API-Key', keyA), // 400
      await h.http.post(`/api/executions/${execId}/cancel`).set(auth), // 409
    ];
    expect(answers.map((r) => [r.status, r.headers['x-execution-id']])).to.deep.equal([
      [413, execId], [413, execId], [400, execId], [400, execId], [409, execId],
    ]);
    const refused = [
      await h.http.get(`/api/executions/${execId}`).set('X-API-Key', keyB),
      await h.http.get(`/api/executions/${execId}`).set('X-API-Key', 'trp_unknown'),
    ];
    expect(refused.map((r) => [r.status, r.headers['x-execution-id']])).to.deep.equal([[403, undefined], [401, undefined]]);
  });

  it('asks for the admin token (WWW-Authenticate: Bearer) when no credentials come', async () => {
    for (const res of [await h.http.get(`/api/executions/${execId}`), await h.http.post(`/api/executions/${execId}/cancel`)]) {
      expect(res.status).to.equal(401);
      expect(res.headers['www-authenticate']).to.equal('Bearer');
    }
  });
});

describe('http: execution events (SSE)', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  const names = (events: { event: string; data: unknown }[]): string[] =>
    events.map((e) => `${e.event}:${(e.data as { blockId?: string }).blockId ?? ''}`);

  it('replays a finished execution from the store, ending with done', async () => {
    const { key } = await deployed(h, sleepWorkflow('s', 0));
    const res = await h.http.post('/api/workflows/s/execute').set('X-API-Key', key).send({}).expect(200);
    const { status, headers, events } = await readSse(h.http.get(`/api/executions/${res.body.executionId as string}/events`).set('X-API-Key', key));
    expect(status).to.equal(200);
    expect(headers['x-execution-id']).to.equal(res.body.executionId);
    expect(names(events)).to.deep.equal(['block.started:start', 'block.completed:start', 'block.started:nap', 'block.completed:nap', 'done:']);
    expect(events[4]!.data).to.deep.equal(res.body);
    const resumed = await readSse(h.http.get(`/api/executions/${res.body.executionId as string}/events`).set(auth).set('Last-Event-ID', '3'));
    expect(resumed.events.map((e) => e.id)).to.deep.equal([4, 5]);
    const after = await readSse(h.http.get(`/api/executions/${res.body.executionId as string}/events?after=4`).set(auth));
    expect(after.events.map((e) => e.event)).to.deep.equal(['done']);
    // an EventSource that started with ?after= reconnects with the same URL and its Last-Event-ID: the later one wins
    const reconnect = await readSse(h.http.get(`/api/executions/${res.body.executionId as string}/events?after=1`).set(auth).set('Last-Event-ID', '3'));
    expect(reconnect.events.map((e) => e.id)).to.deep.equal([4, 5]);
    for (const bad of ['abc', '1e3', '0x1', '-1', '99999999999999999999']) {
      const refused = await h.http.get(`/api/executions/${res.body.executionId as string}/events`).set(auth).set('Last-Event-ID', bad);
      expect([bad, refused.status, refused.body.error?.code]).to.deep.equal([bad, 400, 'INVALID_REQUEST']);
    }
  });

  it('replays then follows a running execution live until done', async () => {
    const { key } = await deployed(h, sleepWorkflow('s', 250));
    const id = await startAsync(h, 's', key);
    const { events } = await readSse(h.http.get(`/api/executions/${id}/events`).set(auth));
    expect(names(events)).to.deep.equal(['block.started:start', 'block.completed:start', 'block.started:nap', 'block.completed:nap', 'done:']);
    expect(events.map((e) => e.id)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(events[4]!.data).to.deep.include({ success: true, executionId: id });
  });

  it('follows an execution running in another process by polling the store', async () => {
    const { key } = await deployed(h, sleepWorkflow('s', 250));
    const id = await startAsync(h, 's', key);
    const { events } = await readSse(otherProcess(h).get(`/api/executions/${id}/events`).set('X-API-Key', key));
    expect(names(events)).to.deep.equal(['block.started:start', 'block.completed:start', 'block.started:nap', 'block.completed:nap', 'done:']);
    expect(events.map((e) => e.id)).to.deep.equal([1, 2, 3, 4, 5]);
  });

  it('checks credentials like the record route', async () => {
    const { key } = await deployed(h, sleepWorkflow('s'));
    const other = (await deployed(h, sleepWorkflow('t'))).key;
    const res = await h.http.post('/api/workflows/s/execute').set('X-API-Key', key).send({}).expect(200);
    await h.http.get(`/api/executions/${res.body.executionId as string}/events`).expect(401);
    await h.http.get(`/api/executions/${res.body.executionId as string}/events`).set('X-API-Key', other).expect(403);
    await h.http.get('/api/executions/nope/events').set(auth).expect(404);
    await h.http.get(`/api/executions/${res.body.executionId as string}/events?after=-1`).set(auth).expect(400);
  });
});

describe('http: cancel', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('cancels a running execution (200 cancelled); a second cancel is 409 CONFLICT', async () => {
    const { key } = await deployed(h, sleepWorkflow('long', 10_000));
    const id = await startAsync(h, 'long', key);
    const res = await h.http.post(`/api/executions/${id}/cancel`).set('X-API-Key', key).expect(200);
    expect(res.body).to.deep.equal({ executionId: id, status: 'cancelled' });
    expect(res.headers['x-execution-id']).to.equal(id);
    const rec = await h.http.get(`/api/executions/${id}`).set(auth).expect(200);
    expect(rec.body.status).to.equal('cancelled');
    expect(rec.body.error).to.include({ code: 'CANCELLED' });
    const again = await h.http.post(`/api/executions/${id}/cancel`).set(auth);
    expect([again.status, again.body.error.code]).to.deep.equal([409, 'CONFLICT']);
  });

  it('a cancelled sync caller gets the failure shape', async () => {
    const { key } = await deployed(h, sleepWorkflow('long', 10_000));
    const pending = h.http.post('/api/workflows/long/execute').set('X-API-Key', key).send({}).then((r) => r);
    const running = await waitFor(async () => (await h.store.executions.list('long', { limit: 1 })).items, (items) => items.length === 1);
    await h.http.post(`/api/executions/${running[0]!.id}/cancel`).set(auth).expect(200);
    const res = await pending;
    expect(res.status).to.equal(500);
    expect(res.body).to.deep.include({ success: false, executionId: running[0]!.id });
    expect(res.body.error.code).to.equal('CANCELLED');
  });

  it('from another process: 202 cancelling, and the execution ends cancelled', async () => {
    const { key } = await deployed(h, sleepWorkflow('long', 10_000));
    const id = await startAsync(h, 'long', key);
    const res = await otherProcess(h).post(`/api/executions/${id}/cancel`).set(auth).expect(202);
    expect(res.body).to.deep.equal({ executionId: id, status: 'cancelling' });
    const rec = await waitFor(() => h.http.get(`/api/executions/${id}`).set(auth), (r) => r.body.status !== 'running');
    expect(rec.body.status).to.equal('cancelled');
  });

  it('401, 403 and 404 like the record route', async () => {
    const { key } = await deployed(h, sleepWorkflow('long', 10_000));
    const other = (await deployed(h, sleepWorkflow('t'))).key;
    const id = await startAsync(h, 'long', key);
    await h.http.post(`/api/executions/${id}/cancel`).expect(401);
    await h.http.post(`/api/executions/${id}/cancel`).set('X-API-Key', other).expect(403);
    await h.http.post('/api/executions/nope/cancel').set(auth).expect(404);
    await h.http.post(`/api/executions/${id}/cancel`).set(auth).expect(200);
  });
});

describe('http: execution history', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('lists newest first with limit and cursor', async () => {
    await h.http.post('/api/workflows').set(auth).send(failWorkflow('f')).expect(201);
    await h.http.put('/api/workflows/f').set(auth).send(sleepWorkflow('f')).expect(200);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await h.http.post('/api/workflows/f/run').set(auth).send({ i });
      ids.push(res.headers['x-execution-id'] as string);
    }
    const first = await h.http.get('/api/workflows/f/executions?limit=3').set(auth).expect(200);
    expect(first.body.items.map((e: { id: string }) => e.id)).to.deep.equal([ids[3], ids[2], ids[1]]);
    expect(first.body.items[0]).to.not.have.property('logs');
    expect(first.body.items[0]).to.include({ workflowId: 'f', status: 'completed', version: 2 });
    const second = await h.http.get(`/api/workflows/f/executions?limit=3&cursor=${first.body.nextCursor as string}`).set(auth).expect(200);
    expect(second.body.items.map((e: { id: string }) => e.id)).to.deep.equal([ids[0]]);
    expect(second.body.nextCursor).to.equal(null);
    // the SPEC's template filled with nothing: no filter, the default page
    const blank = await h.http.get('/api/workflows/f/executions?status=&limit=&cursor=').set(auth).expect(200);
    expect(blank.body.items).to.have.length(4);
    for (const limit of ['0x10', '1e1', ' 5', '2.0', '0']) {
      const refused = await h.http.get(`/api/workflows/f/executions?limit=${encodeURIComponent(limit)}`).set(auth);
      expect([limit, refused.status]).to.deep.equal([limit, 400]);
    }
  });

  it('filters by status; 404 for an unknown workflow; 400 for a bad status', async () => {
    const { key } = await deployed(h, failWorkflow('f'));
    await h.http.post('/api/workflows/f/execute').set('X-API-Key', key).send({}).expect(500);
    await h.http.post('/api/workflows/f/execute').set('X-API-Key', key).send({}).expect(500);
    const failed = await h.http.get('/api/workflows/f/executions?status=failed').set(auth).expect(200);
    expect(failed.body.items).to.have.length(2);
    const completed = await h.http.get('/api/workflows/f/executions?status=completed').set(auth).expect(200);
    expect(completed.body.items).to.have.length(0);
    await h.http.get('/api/workflows/nope/executions').set(auth).expect(404);
    const bad = await h.http.get('/api/workflows/f/executions?status=weird').set(auth);
    expect([bad.status, bad.body.error.code]).to.deep.equal([400, 'INVALID_REQUEST']);
    await h.http.get('/api/workflows/f/executions').expect(401);
  });
});
