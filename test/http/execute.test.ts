import { expect } from 'chai';
import { auth, deployed, echoWorkflow, failWorkflow, makeHarness, readSse, sleepWorkflow, waitFor, type Harness } from './support.js';

const exec = (h: Harness, id: string) => h.http.post(`/api/workflows/${id}/execute`);

describe('http: execute', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness({ config: { maxBodyBytes: 2048 } });
  });
  afterEach(() => h.close());

  describe('sync', () => {
    it('answers 200 with the envelope when no response block ran', async () => {
      const { key } = await deployed(h, sleepWorkflow('s', 0, { n: 1 }));
      const res = await exec(h, 's').set('X-API-Key', key).send({ input: { a: 1 } });
      expect(res.status).to.equal(200);
      expect(res.body).to.have.keys('success', 'executionId', 'output', 'error', 'metadata');
      expect(res.body).to.deep.include({ success: true, output: { value: { n: 1 } }, error: null });
      expect(res.headers['x-execution-id']).to.equal(res.body.executionId);
      const { startedAt, endedAt, durationMs } = res.body.metadata as { startedAt: string; endedAt: string; durationMs: number };
      expect(Date.parse(endedAt) - Date.parse(startedAt)).to.be.at.least(0);
      expect(durationMs).to.be.a('number').and.at.least(0);
      const rec = await h.http.get(`/api/executions/${res.body.executionId as string}`).set(auth).expect(200);
      expect(rec.body).to.include({ status: 'completed', workflowId: 's', version: 1 });
      expect(rec.body.input).to.deep.equal({ a: 1 });
      expect(rec.body.trigger).to.include({ type: 'api' });
    });

    it("answers with the response block's status, headers and data", async () => {
      const { key } = await deployed(h, echoWorkflow('e'));
      const res = await exec(h, 'e').set('X-API-Key', key).send({ city: 'Lyon' });
      expect(res.status).to.equal(201);
      expect(res.headers['x-custom']).to.equal('yes');
      expect(res.headers['content-type']).to.match(/^application\/json/);
      expect(res.body).to.deep.equal({ city: 'Lyon', v: 1 });
      expect(res.headers['x-execution-id']).to.be.a('string');
    });

    it('answers 200 when the status is a reference that reads null (it failed the run with INVALID_CONFIG)', async () => {
      const wf = echoWorkflow('nullstatus');
      (wf['blocks'] as { config: Record<string, unknown> }[])[1]!.config['status'] = '<start.status>';
      const { key } = await deployed(h, wf);
      const res = await exec(h, 'nullstatus').set('X-API-Key', key).send({ city: 'Lyon' });
      expect([res.status, res.body]).to.deep.equal([200, { city: 'Lyon', v: 1 }]);
      const given = await exec(h, 'nullstatus').set('X-API-Key', key).send({ city: 'Oslo', status: 202 });
      expect(given.status).to.equal(202);
    });

    it('a response block cannot set the ids that tie the answer to the records', async () => {
      const wf = echoWorkflow('spoof');
      (wf['blocks'] as { config: Record<string, unknown> }[])[1]!.config['headers'] = { 'X-Request-Id': 'forged', 'X-Execution-Id': 'forged', 'X-Ok': 'kept' };
      const { key } = await deployed(h, wf);
      const res = await exec(h, 'spoof').set('X-API-Key', key).set('X-Request-Id', 'mine-1').send({ city: 'Lyon' });
      expect([res.status, res.headers['x-ok'], res.headers['x-request-id']]).to.deep.equal([201, 'kept', 'mine-1']);
      expect(res.headers['x-execution-id']).to.not.equal('forged');
    });

    it('answers 500 with success false and the failing block', async () => {
      const { key } = await deployed(h, failWorkflow('f'));
      const res = await exec(h, 'f').set('X-API-Key', key).send({});
      expect(res.status).to.equal(500);
      expect(res.body).to.deep.include({ success: false, output: null });
      expect(res.body.error).to.deep.equal({ code: 'FUNCTION_ERROR', message: 'it broke', blockId: 'boom' });
      expect(res.headers['x-execution-id']).to.equal(res.body.executionId);
    });

    it('a body without an `input` key is the input itself; an empty body is {}', async () => {
      const { key } = await deployed(h, echoWorkflow('e'));
      const res = await exec(h, 'e').set('X-API-Key', key).send({ city: 'Bergen', extra: true });
      expect(res.body).to.deep.equal({ city: 'Bergen', v: 1 });
      const rec = await h.http.get(`/api/executions/${res.headers['x-execution-id'] as string}`).set(auth);
      expect(rec.body.input).to.deep.equal({ city: 'Bergen', extra: true });
      const { key: k2 } = await deployed(h, sleepWorkflow('s'));
      const empty = await exec(h, 's').set('X-API-Key', k2);
      expect(empty.status).to.equal(200);
      const rec2 = await h.http.get(`/api/executions/${empty.body.executionId as string}`).set(auth);
      expect(rec2.body.input).to.deep.equal({});
      // a body that is JSON null is the input null, like {"input": null}
      const nul = await exec(h, 's').set('X-API-Key', k2).set('Content-Type', 'application/json').send('null');
      const rec3 = await h.http.get(`/api/executions/${nul.body.executionId as string}`).set(auth);
      expect([nul.status, rec3.body.input]).to.deep.equal([200, null]);
    });

    it('streams when Accept prefers text/event-stream to JSON, answers JSON when it prefers JSON', async () => {
      const { key } = await deployed(h, sleepWorkflow('acc'));
      for (const [accept, type] of [
        ['text/event-stream', /^text\/event-stream/],
        ['text/event-stream, application/json', /^text\/event-stream/],
        ['application/json;q=0.5, text/event-stream', /^text\/event-stream/],
        ['application/json, text/event-stream', /^application\/json/],
        ['text/event-stream;q=0.1, */*', /^application\/json/],
      ] as const) {
        const res = await exec(h, 'acc').set('X-API-Key', key).set('Accept', accept).buffer(true).parse((r, done) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString()));
          r.on('end', () => done(null, text));
        }).send({});
        expect(res.headers['content-type'], accept).to.match(type);
      }
    });
  });

  it('answers 503 BUS_UNAVAILABLE with Retry-After while the bus is reconnecting, and runs again after', async () => {
    const { key } = await deployed(h, sleepWorkflow('busy-bus'));
    Object.defineProperty(h.bus, 'connected', { configurable: true, get: () => false });
    const res = await exec(h, 'busy-bus').set('X-API-Key', key).send({});
    expect([res.status, res.body.error.code, res.headers['retry-after']]).to.deep.equal([503, 'BUS_UNAVAILABLE', '1']);
    Reflect.deleteProperty(h.bus, 'connected');
    expect((await exec(h, 'busy-bus').set('X-API-Key', key).send({})).status).to.equal(200);
  });

  it('answers 504 with the failure shape when the time limit is exceeded', async () => {
    const slow = makeHarness({ executionTimeoutMs: 150 });
    try {
      const { key } = await deployed(slow, sleepWorkflow('slow', 5000));
      const res = await exec(slow, 'slow').set('X-API-Key', key).send({});
      expect(res.status).to.equal(504);
      expect(res.body.success).to.equal(false);
      expect(res.body.error.code).to.equal('EXECUTION_TIMEOUT');
      expect(res.headers['x-execution-id']).to.equal(res.body.executionId);
    } finally {
      await slow.close();
    }
  });

  describe('async', () => {
    for (const [label, send] of [
      ['"async": true', (r: ReturnType<typeof exec>) => r.send({ input: {}, async: true })],
      ['X-Execution-Mode: async', (r: ReturnType<typeof exec>) => r.set('X-Execution-Mode', 'async').send({})],
    ] as const) {
      it(`answers 202 with executionId and statusUrl (${label}); the record exists already`, async () => {
        const { key } = await deployed(h, sleepWorkflow('a', 200));
        const res = await send(exec(h, 'a').set('X-API-Key', key));
        expect(res.status).to.equal(202);
        expect(res.body).to.have.keys('executionId', 'statusUrl');
        expect(res.body.statusUrl).to.equal(`/api/executions/${res.body.executionId as string}`);
        expect(res.headers['x-execution-id']).to.equal(res.body.executionId);
        // the record exists when 202 is answered (running, unless the machine was very slow)
        const now = await h.http.get(res.body.statusUrl as string).set('X-API-Key', key).expect(200);
        expect(now.body.status).to.be.oneOf(['running', 'completed']);
        const later = await waitFor(
          () => h.http.get(res.body.statusUrl as string).set('X-API-Key', key),
          (r) => r.body.status !== 'running',
        );
        expect(later.body.status).to.equal('completed');
        expect(later.body.output).to.deep.equal({ value: 'slept' });
        // one start time for the record and the run: its duration spans its own timestamps
        const { startedAt, endedAt, durationMs } = later.body as { startedAt: string; endedAt: string; durationMs: number };
        expect(durationMs).to.equal(Date.parse(endedAt) - Date.parse(startedAt));
      });
    }
  });

  describe('stream', () => {
    const chain = {
      id: 'chain',
      name: 'Chain',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'a', type: 'sleep', name: 'A', config: { ms: 5 } },
        { id: 'b', type: 'fail', name: 'B', config: { message: 'handled' } },
        { id: 'c', type: 'sleep', name: 'C', config: { ms: 5 } },
        { id: 'd', type: 'sleep', name: 'D', config: { ms: 5, value: 'end' } },
      ],
      connections: [
        { from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'b', to: 'd', handle: 'error' },
      ],
    };

    for (const [label, build] of [
      ['"stream": true', (r: ReturnType<typeof exec>) => r.send({ input: {}, stream: true })],
      ['Accept: text/event-stream', (r: ReturnType<typeof exec>) => r.set('Accept', 'text/event-stream').send({})],
    ] as const) {
      it(`sends block events in order, then done with the sync body (${label})`, async () => {
        const { key } = await deployed(h, chain);
        const { status, headers, events } = await readSse(build(exec(h, 'chain').set('X-API-Key', key)));
        expect(status).to.equal(200);
        expect(headers['content-type']).to.match(/^text\/event-stream/);
        const id = headers['x-execution-id'];
        expect(id).to.be.a('string');
        const seen = events.map((e) => `${e.event}:${(e.data as { blockId?: string }).blockId ?? ''}`);
        expect(seen).to.deep.equal([
          'block.started:start', 'block.completed:start', 'block.started:a', 'block.completed:a', 'block.started:b',
          'block.failed:b', 'block.skipped:c', 'block.started:d', 'block.completed:d', 'done:',
        ]);
        expect(events.map((e) => e.id)).to.deep.equal(events.map((_, i) => i + 1));
        const done = events[events.length - 1]!.data as Record<string, unknown>;
        expect(done).to.deep.include({ success: true, executionId: id, output: { value: 'end' }, error: null });
        expect(done['metadata']).to.have.keys('startedAt', 'endedAt', 'durationMs');
        expect(events.some((e) => e.event === 'error')).to.equal(false);
      });
    }

    it('a failed execution ends with done and success false', async () => {
      const { key } = await deployed(h, failWorkflow('f'));
      const { events } = await readSse(exec(h, 'f').set('X-API-Key', key).send({ input: null, stream: true }));
      const done = events[events.length - 1]!;
      expect(done.event).to.equal('done');
      expect(done.data).to.deep.include({ success: false, error: { code: 'FUNCTION_ERROR', message: 'it broke', blockId: 'boom' } });
    });

    it('refuses a request that is both async and streamed (400)', async () => {
      const { key } = await deployed(h, sleepWorkflow('s'));
      const res = await exec(h, 's').set('X-API-Key', key).send({ input: {}, async: true, stream: true });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('INVALID_REQUEST');
      const wrongType = await exec(h, 's').set('X-API-Key', key).send({ input: {}, async: 'yes' });
      expect(wrongType.status).to.equal(400);
    });

    it('takes the mode the body asks for over headers asking for the other one', async () => {
      const { key } = await deployed(h, echoWorkflow('m'));
      const asyncOverAccept = await exec(h, 'm').set('X-API-Key', key).set('Accept', 'text/event-stream').send({ input: { city: 'Oslo' }, async: true });
      expect(asyncOverAccept.status).to.equal(202);
      const asyncOverHeader = await exec(h, 'm').set('X-API-Key', key).set('X-Execution-Mode', 'stream').send({ input: { city: 'Oslo' }, async: true });
      expect(asyncOverHeader.status).to.equal(202);
      const streamOverHeader = await exec(h, 'm').set('X-API-Key', key).set('X-Execution-Mode', 'async').send({ input: { city: 'Oslo' }, stream: true });
      expect(streamOverHeader.status).to.equal(200);
      expect(streamOverHeader.headers['content-type']).to.match(/^text\/event-stream/);
      const offOverHeader = await exec(h, 'm').set('X-API-Key', key).set('X-Execution-Mode', 'async').send({ input: { city: 'Oslo' }, async: false });
      expect(offOverHeader.status).to.equal(201);
      expect(offOverHeader.body).to.deep.equal({ city: 'Oslo', v: 1 });
    });
  });

  describe('X-Execution-Mode', () => {
    it('takes sync, async and stream (any case), and decides over Accept', async () => {
      const { key } = await deployed(h, echoWorkflow('xm'));
      const send = (mode: string, accept?: string): Promise<{ status: number; headers: Record<string, string> }> => {
        const req = exec(h, 'xm').set('X-API-Key', key).set('X-Execution-Mode', mode);
        return (accept === undefined ? req : req.set('Accept', accept)).buffer(true).parse((r, done) => {
          r.on('data', () => undefined);
          r.on('end', () => done(null, null));
        }).send({ city: 'Oslo' });
      };
      const seen = async (mode: string, accept?: string): Promise<[number, string]> => {
        const res = await send(mode, accept);
        return [res.status, (res.headers['content-type'] ?? '').split(';')[0]!];
      };
      expect(await seen('sync')).to.deep.equal([201, 'application/json']);
      expect(await seen(' Async ')).to.deep.equal([202, 'application/json']);
      expect(await seen('STREAM')).to.deep.equal([200, 'text/event-stream']);
      expect(await seen('sync', 'text/event-stream')).to.deep.equal([201, 'application/json']);
      expect(await seen('async', 'text/event-stream')).to.deep.equal([202, 'application/json']);
    });

    it('refuses any other value with 400 INVALID_REQUEST and starts nothing', async () => {
      const { key } = await deployed(h, echoWorkflow('xm'));
      for (const mode of ['asynch', 'streaming', 'true', 'async, stream']) {
        const res = await exec(h, 'xm').set('X-API-Key', key).set('X-Execution-Mode', mode).send({ input: { city: 'Oslo' } });
        expect([mode, res.status, res.body.error?.code]).to.deep.equal([mode, 400, 'INVALID_REQUEST']);
        expect(res.body.error.details.issues[0].path).to.equal('/X-Execution-Mode');
      }
      const history = await h.http.get('/api/workflows/xm/executions').set(auth).expect(200);
      expect(history.body.items).to.deep.equal([]);
    });
  });

  describe('errors, in the SPEC order', () => {
    let keyA: string;
    let keyB: string;
    beforeEach(async () => {
      keyA = (await deployed(h, echoWorkflow('A'))).key;
      keyB = (await deployed(h, echoWorkflow('B'))).key;
    });

    const expectError = (res: { status: number; body: { error: { code: string } } }, status: number, code: string): void => {
      expect(res.status, JSON.stringify(res.body)).to.equal(status);
      expect(res.body.error.code).to.equal(code);
      // SPEC §4's envelope, details included (null when there is nothing more to say)
      expect(res.body.error).to.have.keys('code', 'message', 'details');
    };

    it('401 without X-API-Key, even for an unknown workflow', async () => {
      expectError(await exec(h, 'A').send({ city: 'x' }), 401, 'UNAUTHORIZED');
      expectError(await exec(h, 'nope').send({ city: 'x' }), 401, 'UNAUTHORIZED');
    });

    it('404 for an unknown workflow with any key, before the key is checked', async () => {
      expectError(await exec(h, 'nope').set('X-API-Key', keyA).send({}), 404, 'NOT_FOUND');
      expectError(await exec(h, 'nope').set('X-API-Key', 'trp_unknown').send({}), 404, 'NOT_FOUND');
    });

    it('401 for an unknown or malformed key', async () => {
      expectError(await exec(h, 'A').set('X-API-Key', 'trp_unknown').send({}), 401, 'UNAUTHORIZED');
      expectError(await exec(h, 'A').set('X-API-Key', keyA.slice(0, -1)).send({}), 401, 'UNAUTHORIZED');
      expectError(await exec(h, 'A').set('X-API-Key', 'not-a-key').send({}), 401, 'UNAUTHORIZED');
    });

    it('403 FORBIDDEN for a key of another workflow', async () => {
      expectError(await exec(h, 'A').set('X-API-Key', keyB).send({ city: 'x' }), 403, 'FORBIDDEN');
    });

    it('403 NOT_DEPLOYED before the body is parsed', async () => {
      await h.http.delete('/api/workflows/A/deploy').set(auth).expect(204);
      expectError(await exec(h, 'A').set('X-API-Key', keyA).set('Content-Type', 'application/json').send('{broken'), 403, 'NOT_DEPLOYED');
    });

    it('400 INVALID_JSON, and authentication before it', async () => {
      expectError(await exec(h, 'A').set('X-API-Key', keyA).set('Content-Type', 'application/json').send('{broken'), 400, 'INVALID_JSON');
      expectError(await exec(h, 'A').set('X-API-Key', keyB).set('Content-Type', 'application/json').send('{broken'), 403, 'FORBIDDEN');
      expectError(await exec(h, 'A').set('Content-Type', 'application/json').send('{broken'), 401, 'UNAUTHORIZED');
    });

    it('413 PAYLOAD_TOO_LARGE over the body limit', async () => {
      expectError(await exec(h, 'A').set('X-API-Key', keyA).send({ city: 'x'.repeat(3000) }), 413, 'PAYLOAD_TOO_LARGE');
    });

    it("422 INVALID_INPUT against the starter's inputFormat, before anything starts", async () => {
      const missing = await exec(h, 'A').set('X-API-Key', keyA).send({ input: { other: 1 } });
      expectError(missing, 422, 'INVALID_INPUT');
      expect(missing.body.error.details.issues).to.deep.equal([{ path: '/city', message: 'city is required' }]);
      expectError(await exec(h, 'A').set('X-API-Key', keyA).send({ city: 3 }), 422, 'INVALID_INPUT');
      expect((await h.store.executions.list('A', { limit: 10 })).items).to.have.length(0);
    });
  });
});

describe('http: execute limits', () => {
  it('429 RATE_LIMITED per key with Retry-After, refilled as the injected clock advances', async () => {
    let t = 1_000_000;
    const h = makeHarness({ config: { keyRateLimit: 2 }, now: () => t });
    try {
      const { key } = await deployed(h, echoWorkflow('r'));
      const other = (await h.http.post('/api/workflows/r/keys').set(auth).expect(201)).body.key as string;
      await exec(h, 'r').set('X-API-Key', key).send({ city: 'x' }).expect(201);
      await exec(h, 'r').set('X-API-Key', key).send({ city: 'x' }).expect(201);
      const limited = await exec(h, 'r').set('X-API-Key', key).send({ city: 'x' });
      expect(limited.status).to.equal(429);
      expect(limited.body.error.code).to.equal('RATE_LIMITED');
      expect(limited.headers['retry-after']).to.equal('30');
      // invalid JSON is reported before the rate limit
      const broken = await exec(h, 'r').set('X-API-Key', key).set('Content-Type', 'application/json').send('{');
      expect(broken.status).to.equal(400);
      await exec(h, 'r').set('X-API-Key', other).send({ city: 'x' }).expect(201);
      t += 29_000;
      await exec(h, 'r').set('X-API-Key', key).send({ city: 'x' }).expect(429);
      t += 1_000;
      await exec(h, 'r').set('X-API-Key', key).send({ city: 'x' }).expect(201);
    } finally {
      await h.close();
    }
  });

  it('503 OVERLOADED with Retry-After when executions in flight reach the limit; 429 comes first', async () => {
    const h = makeHarness({ config: { maxInflight: 1, keyRateLimit: 3 }, now: () => 0 });
    try {
      const { key } = await deployed(h, sleepWorkflow('busy', 400));
      const first = await exec(h, 'busy').set('X-API-Key', key).send({ input: {}, async: true }).expect(202);
      const full = await exec(h, 'busy').set('X-API-Key', key).send({});
      expect(full.status).to.equal(503);
      expect(full.body.error.code).to.equal('OVERLOADED');
      expect(full.headers['retry-after']).to.equal('1');
      const run = await h.http.post('/api/workflows/busy/run').set(auth).send({});
      expect(run.status).to.equal(503);
      await exec(h, 'busy').set('X-API-Key', key).send({}).expect(503);
      await exec(h, 'busy').set('X-API-Key', key).send({}).expect(429);
      await waitFor(() => h.http.get(first.body.statusUrl as string).set(auth), (r) => r.body.status === 'completed');
      await waitFor(async () => h.services.executions.inflight, (n) => n === 0);
      await h.http.post('/api/workflows/busy/run').set(auth).send({}).expect(200);
    } finally {
      await h.close();
    }
  });
});

describe('http: run (manual trigger)', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('runs the current version without a deployment, in the three modes, as a manual trigger', async () => {
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('m')).expect(201);
    const sync = await h.http.post('/api/workflows/m/run').set(auth).send({ city: 'Rome' });
    expect(sync.status).to.equal(201);
    expect(sync.body).to.deep.equal({ city: 'Rome', v: 1 });
    const rec = await h.http.get(`/api/executions/${sync.headers['x-execution-id'] as string}`).set(auth).expect(200);
    expect(rec.body.trigger).to.deep.equal({ type: 'manual' });
    const accepted = await h.http.post('/api/workflows/m/run').set(auth).send({ input: { city: 'Rome' }, async: true });
    expect(accepted.status).to.equal(202);
    const { events } = await readSse(h.http.post('/api/workflows/m/run').set(auth).set('Accept', 'text/event-stream').send({ city: 'Rome' }));
    expect(events[events.length - 1]!.event).to.equal('done');
    expect((events[events.length - 1]!.data as { output: unknown }).output).to.deep.equal({ status: 201, headers: { 'X-Custom': 'yes' }, data: { city: 'Rome', v: 1 } });
  });

  it('needs the admin token (an API key is not enough); 404 and 422 as execute', async () => {
    const { key } = await deployed(h, echoWorkflow('m'));
    await h.http.post('/api/workflows/m/run').set('X-API-Key', key).send({ city: 'x' }).expect(401);
    await h.http.post('/api/workflows/nope/run').set(auth).send({}).expect(404);
    const bad = await h.http.post('/api/workflows/m/run').set(auth).send({ nope: 1 });
    expect(bad.status).to.equal(422);
    expect(bad.body.error.code).to.equal('INVALID_INPUT');
  });
});
