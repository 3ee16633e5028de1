import { expect } from 'chai';
import { ADMIN, auth, deployed, echoWorkflow, makeHarness, sleepWorkflow, type Harness } from './support.js';

describe('http: workflows (admin)', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness({ config: { maxBodyBytes: 4096 } });
  });
  afterEach(() => h.close());

  describe('admin auth', () => {
    for (const [label, header] of [
      ['no Authorization header', undefined],
      ['a wrong token', `Bearer ${ADMIN}x`],
      ['another scheme', `Basic ${ADMIN}`],
      ['a token prefix', `Bearer ${ADMIN.slice(0, 10)}`],
    ] as const) {
      it(`answers 401 UNAUTHORIZED with ${label}`, async () => {
        const req = h.http.get('/api/workflows');
        const res = await (header === undefined ? req : req.set('Authorization', header));
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('UNAUTHORIZED');
        expect(res.headers['www-authenticate']).to.equal('Bearer');
      });
    }

    it('checks the token before reading the body', async () => {
      const res = await h.http.post('/api/workflows').set('Content-Type', 'application/json').send('{not json');
      expect(res.status).to.equal(401);
    });
  });

  it('creates a workflow: 201 with the stored document and version 1; reads it back', async () => {
    const res = await h.http.post('/api/workflows').set(auth).send(echoWorkflow('w1'));
    expect(res.status).to.equal(201);
    expect(res.headers['location']).to.equal('/api/workflows/w1');
    expect(res.body).to.include({ id: 'w1', name: 'Echo', version: 1 });
    expect(res.body.createdAt).to.be.a('string');
    expect(res.body.blocks).to.have.length(2);
    const read = await h.http.get('/api/workflows/w1').set(auth).expect(200);
    expect(read.body).to.deep.equal(res.body);
  });

  it('accepts the SPEC §1 example workflow as it stands', async () => {
    const example = {
      "id": "weather",
      "name": "Weather lookup",
      "variables": { "unit": "metric" },
      "blocks": [
        { "id": "start", "type": "starter", "name": "Start",
          "config": { "inputFormat": [ { "name": "city", "type": "string", "required": true } ] } },
        { "id": "w", "type": "api", "name": "Weather",
          "config": { "url": "https://api.example.com/v1/weather/{city}", "method": "GET",
                      "pathParams": [ { "key": "city", "value": "<start.city>" } ],
                      "params":  [ { "key": "units", "value": "<variable.unit>" } ],
                      "headers": [ { "key": "Authorization", "value": "Bearer {{WEATHER_TOKEN}}" } ] } },
        { "id": "ok", "type": "condition", "name": "Ok",
          "config": { "branches": [ { "id": "yes", "expression": "<weather.status> === 200" } ], "else": true } },
        { "id": "r", "type": "response", "name": "Reply",
          "config": { "status": 200, "data": { "temp": "<weather.data.temp>" } } },
        { "id": "fallback", "type": "response", "name": "Sorry",
          "config": { "status": 502, "data": { "error": "weather unavailable" } } }
      ],
      "connections": [
        { "from": "start", "to": "w" },
        { "from": "w", "to": "ok" },
        { "from": "w", "handle": "error", "to": "fallback" },
        { "from": "ok", "handle": "yes", "to": "r" },
        { "from": "ok", "handle": "else", "to": "fallback" }
      ],
      "triggers": [ { "id": "nightly", "type": "schedule", "cron": "0 3 * * *", "timezone": "Europe/Paris" } ]
    };
    const res = await h.http.post('/api/workflows').set(auth).send(example);
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    expect(res.body).to.include({ id: 'weather', version: 1 });
  });

  it('names a workflow sent without a name after its id', async () => {
    const doc = echoWorkflow('nameless');
    delete doc['name'];
    const res = await h.http.post('/api/workflows').set(auth).send(doc).expect(201);
    expect(res.body).to.include({ id: 'nameless', name: 'nameless' });
  });

  it('generates an id when the document has none', async () => {
    const doc = echoWorkflow();
    delete doc['id'];
    const res = await h.http.post('/api/workflows').set(auth).send(doc).expect(201);
    expect(res.body.id).to.match(/^[A-Za-z0-9_-]{1,64}$/);
    await h.http.get(`/api/workflows/${res.body.id as string}`).set(auth).expect(200);
  });

  it('answers 409 CONFLICT for a duplicate id', async () => {
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('dup')).expect(201);
    const res = await h.http.post('/api/workflows').set(auth).send(echoWorkflow('dup'));
    expect(res.status).to.equal(409);
    expect(res.body.error.code).to.equal('CONFLICT');
  });

  it('answers 422 INVALID_WORKFLOW with JSON Pointer issues into the submitted document', async () => {
    const doc = echoWorkflow('bad');
    (doc['connections'] as unknown[]).push({ from: 'start', to: 'ghost' });
    const res = await h.http.post('/api/workflows').set(auth).send(doc);
    expect(res.status).to.equal(422);
    expect(res.body.error.code).to.equal('INVALID_WORKFLOW');
    const paths = (res.body.error.details.issues as { path: string }[]).map((i) => i.path);
    expect(paths).to.include('/connections/1/to');
    await h.http.get('/api/workflows/bad').set(auth).expect(404);
  });

  it('reports every issue of a block config in the 422, not only its first wrong type', async () => {
    const doc = echoWorkflow('every');
    (doc['blocks'] as unknown[]).push(
      { id: 'c', type: 'condition', name: 'C', config: { branches: [{ id: 'a', expression: '1' }, { id: 'a', expression: '2' }], else: 'yes' } },
      { id: 'rr', type: 'response', name: 'R2', config: { headers: { 'Bad Name': 'x', 'X-A': 'a\nb' } } },
    );
    (doc['connections'] as unknown[]).push({ from: 'start', to: 'c' }, { from: 'c', handle: 'a', to: 'rr' });
    const res = await h.http.post('/api/workflows').set(auth).send(doc);
    expect(res.status).to.equal(422);
    expect(res.body.error.code).to.equal('INVALID_WORKFLOW');
    const paths = (res.body.error.details.issues as { path: string }[]).map((i) => i.path);
    expect(paths).to.have.members(['/blocks/2/config/else', '/blocks/2/config/branches/1/id', '/blocks/3/config/headers/Bad Name', '/blocks/3/config/headers/X-A']);
  });

  it('answers 422 for a body that is not a workflow object, 400 INVALID_JSON for broken JSON', async () => {
    const notObject = await h.http.post('/api/workflows').set(auth).send([1, 2]);
    expect(notObject.status).to.equal(422);
    const broken = await h.http.post('/api/workflows').set(auth).set('Content-Type', 'application/json').send('{"name": ');
    expect(broken.status).to.equal(400);
    expect(broken.body.error.code).to.equal('INVALID_JSON');
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
    const doc = { ...echoWorkflow('big'), description: 'x'.repeat(5000) };
    const res = await h.http.post('/api/workflows').set(auth).send(doc);
    expect(res.status).to.equal(413);
    expect(res.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
  });

  it('answers 413 on routes that take no body too, after their authentication, and nothing is done', async () => {
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('w')).expect(201);
    const big = JSON.stringify({ pad: 'x'.repeat(5000) });
    const send = (req: ReturnType<typeof h.http.post>) => req.set('Content-Type', 'application/json').send(big);
    for (const req of [h.http.post('/api/workflows/w/deploy').set(auth), h.http.post('/api/workflows/w/keys').set(auth),
      h.http.get('/api/workflows').set(auth), h.http.delete('/api/workflows/w/deploy').set(auth),
      h.http.get('/api/workflows/w/executions').set(auth)]) {
      const res = await send(req);
      expect([res.status, res.body.error?.code]).to.deep.equal([413, 'PAYLOAD_TOO_LARGE']);
    }
    expect((await send(h.http.post('/api/workflows/w/deploy'))).status).to.equal(401);
    expect(await h.store.deployments.get('w')).to.equal(null);
    expect(await h.store.apiKeys.listByWorkflow('w')).to.have.length(0);
  });

  it('replaces a workflow: version increments, the id in the body must match the path', async () => {
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('w')).expect(201);
    const v2 = await h.http.put('/api/workflows/w').set(auth).send({ ...echoWorkflow('w'), name: 'Echo 2' }).expect(200);
    expect(v2.body).to.include({ id: 'w', version: 2, name: 'Echo 2' });
    const noId = echoWorkflow('w');
    delete noId['id'];
    const v3 = await h.http.put('/api/workflows/w').set(auth).send(noId).expect(200);
    expect(v3.body.version).to.equal(3);
    const renamed = await h.http.put('/api/workflows/w').set(auth).send(echoWorkflow('other'));
    expect(renamed.status).to.equal(422);
    expect(renamed.body.error.details.issues[0].path).to.equal('/id');
    const invalid = await h.http.put('/api/workflows/w').set(auth).send({ ...echoWorkflow('w'), blocks: [] });
    expect(invalid.status).to.equal(422);
    expect((await h.http.get('/api/workflows/w').set(auth)).body.version).to.equal(3);
    await h.http.put('/api/workflows/nope').set(auth).send(echoWorkflow('nope')).expect(404);
    // PUT never creates: an unknown id is 404 even with another id in the body, or an invalid document
    await h.http.put('/api/workflows/nope').set(auth).send(echoWorkflow('w')).expect(404);
    await h.http.put('/api/workflows/nope').set(auth).send({ blocks: [] }).expect(404);
  });

  it('a GET body can be PUT back as is', async () => {
    const created = await h.http.post('/api/workflows').set(auth).send(echoWorkflow('rt')).expect(201);
    const res = await h.http.put('/api/workflows/rt').set(auth).send(created.body).expect(200);
    expect(res.body.version).to.equal(2);
  });

  it('deletes a workflow with its deployment and keys; unknown ids are 404', async () => {
    const { key } = await deployed(h, echoWorkflow('gone'));
    await h.http.delete('/api/workflows/gone').set(auth).expect(204);
    await h.http.get('/api/workflows/gone').set(auth).expect(404);
    expect(await h.store.deployments.get('gone')).to.equal(null);
    expect(await h.store.apiKeys.listByWorkflow('gone')).to.deep.equal([]);
    const exec = await h.http.post('/api/workflows/gone/execute').set('X-API-Key', key).send({ city: 'x' });
    expect(exec.status).to.equal(404);
    // created again under the same id: the old key is not one of its keys
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('gone')).expect(201);
    await h.http.post('/api/workflows/gone/deploy').set(auth).expect(201);
    const old = await h.http.post('/api/workflows/gone/execute').set('X-API-Key', key).send({ city: 'x' });
    expect(old.status).to.equal(401);
    await h.http.delete('/api/workflows/gone').set(auth).expect(204);
    await h.http.delete('/api/workflows/gone').set(auth).expect(404);
  });

  it('a workflow created again under a deleted one\'s id starts with an empty history; the old records stay readable by id', async () => {
    const { key } = await deployed(h, echoWorkflow('again'));
    const ran = await h.http.post('/api/workflows/again/execute').set('X-API-Key', key).send({ city: 'x' }).expect(201);
    const oldId = ran.headers['x-execution-id'] as string;
    expect((await h.http.get('/api/workflows/again/executions').set(auth).expect(200)).body.items).to.have.length(1);
    await h.http.delete('/api/workflows/again').set(auth).expect(204);
    // a later millisecond than the old record, as any real re-creation is
    await new Promise((resolve) => setTimeout(resolve, 5));
    await h.http.post('/api/workflows').set(auth).send(echoWorkflow('again')).expect(201);
    expect((await h.http.get('/api/workflows/again/executions').set(auth).expect(200)).body.items).to.deep.equal([]);
    await h.http.post('/api/workflows/again/run').set(auth).send({ input: { city: 'y' } }).expect(201);
    const history = (await h.http.get('/api/workflows/again/executions').set(auth).expect(200)).body.items as { id: string }[];
    expect(history).to.have.length(1);
    expect(history[0]?.id).to.not.equal(oldId);
    await h.http.get(`/api/executions/${oldId}`).set(auth).expect(200);
  });

  it('lists workflows by id with limit and cursor', async () => {
    for (const id of ['c', 'a', 'e', 'b', 'd']) await h.http.post('/api/workflows').set(auth).send(sleepWorkflow(id)).expect(201);
    const first = await h.http.get('/api/workflows?limit=2').set(auth).expect(200);
    expect(first.body.items.map((w: { id: string }) => w.id)).to.deep.equal(['a', 'b']);
    expect(first.body.nextCursor).to.be.a('string');
    const second = await h.http.get(`/api/workflows?limit=2&cursor=${first.body.nextCursor as string}`).set(auth).expect(200);
    expect(second.body.items.map((w: { id: string }) => w.id)).to.deep.equal(['c', 'd']);
    const third = await h.http.get(`/api/workflows?limit=2&cursor=${second.body.nextCursor as string}`).set(auth).expect(200);
    expect(third.body.items.map((w: { id: string }) => w.id)).to.deep.equal(['e']);
    expect(third.body.nextCursor).to.equal(null);
    const all = await h.http.get('/api/workflows').set(auth).expect(200);
    expect(all.body.items).to.have.length(5);
    expect(all.body.items[0]).to.include({ id: 'a', version: 1 });
  });

  it('answers 400 INVALID_REQUEST for a bad limit or cursor', async () => {
    for (const q of ['limit=0', 'limit=abc', 'limit=5000', 'cursor=nonsense']) {
      const res = await h.http.get(`/api/workflows?${q}`).set(auth);
      expect(res.status, q).to.equal(400);
      expect(res.body.error.code, q).to.equal('INVALID_REQUEST');
    }
  });
});
