import { expect } from 'chai';
import { auth, deployed, echoWorkflow, makeHarness, type Harness } from './support.js';

/** The echo workflow whose reply says `v` (and, when given, with one schedule trigger). */
function echoV(id: string, v: number, schedule?: string): Record<string, unknown> {
  const doc = echoWorkflow(id, schedule === undefined ? {} : { triggers: [{ id: schedule, type: 'schedule', cron: '0 3 * * *' }] });
  (doc['blocks'] as { config: { data: { v: number } } }[])[1]!.config.data.v = v;
  return doc;
}

async function execute(h: Harness, id: string, key: string): Promise<unknown> {
  return (await h.http.post(`/api/workflows/${id}/execute`).set('X-API-Key', key).send({ city: 'Oslo' }).expect(201)).body;
}

describe('http: workflow versions', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('lists every version newest first with the deployed one marked, paged', async () => {
    await deployed(h, echoV('w', 1));
    for (const v of [2, 3]) await h.http.put('/api/workflows/w').set(auth).send(echoV('w', v)).expect(200);
    const all = await h.http.get('/api/workflows/w/versions').set(auth).expect(200);
    expect(all.body.nextCursor).to.equal(null);
    expect(all.body.items.map((v: { version: number; deployed: boolean }) => [v.version, v.deployed])).to.deep.equal([[3, false], [2, false], [1, true]]);
    expect(all.body.items[0]).to.have.keys('version', 'createdAt', 'deployed');
    const v3 = await h.http.get('/api/workflows/w').set(auth);
    expect(all.body.items[0].createdAt).to.equal(v3.body.updatedAt);
    const first = await h.http.get('/api/workflows/w/versions?limit=2').set(auth).expect(200);
    expect(first.body.items.map((v: { version: number }) => v.version)).to.deep.equal([3, 2]);
    const rest = await h.http.get('/api/workflows/w/versions').query({ limit: 2, cursor: first.body.nextCursor }).set(auth).expect(200);
    expect(rest.body).to.deep.include({ nextCursor: null });
    expect(rest.body.items.map((v: { version: number }) => v.version)).to.deep.equal([1]);
  });

  it('reads one version as GET /api/workflows/{id} answers it', async () => {
    await h.http.post('/api/workflows').set(auth).send(echoV('w', 1)).expect(201);
    await h.http.put('/api/workflows/w').set(auth).send(echoV('w', 2)).expect(200);
    const current = await h.http.get('/api/workflows/w').set(auth).expect(200);
    expect((await h.http.get('/api/workflows/w/versions/2').set(auth).expect(200)).body).to.deep.equal(current.body);
    const v1 = await h.http.get('/api/workflows/w/versions/1').set(auth).expect(200);
    expect(v1.body).to.include({ id: 'w', version: 1, createdAt: current.body.createdAt });
    expect(v1.body.blocks[1].config.data.v).to.equal(1);
    expect(v1.body.updatedAt < current.body.updatedAt).to.equal(true);
  });

  it('404 NOT_FOUND for an unknown workflow or version, 400 INVALID_REQUEST for a malformed n or query, 401 without the token', async () => {
    await h.http.post('/api/workflows').set(auth).send(echoV('w', 1)).expect(201);
    for (const path of ['/api/workflows/ghost/versions', '/api/workflows/ghost/versions/1', '/api/workflows/w/versions/2']) {
      const res = await h.http.get(path).set(auth);
      expect([res.status, res.body.error.code], path).to.deep.equal([404, 'NOT_FOUND']);
    }
    expect((await h.http.get('/api/workflows/w/versions/2').set(auth)).body.error.details).to.deep.equal({ workflowId: 'w', version: 2 });
    for (const n of ['0', '-1', '1.5', 'abc', '01', '1e2', '99999999999999999999']) {
      const res = await h.http.get(`/api/workflows/w/versions/${n}`).set(auth);
      expect([res.status, res.body.error.code], n).to.deep.equal([400, 'INVALID_REQUEST']);
    }
    for (const query of [{ limit: 0 }, { cursor: 'bogus' }]) {
      const res = await h.http.get('/api/workflows/w/versions').query(query).set(auth);
      expect([res.status, res.body.error.code], JSON.stringify(query)).to.deep.equal([400, 'INVALID_REQUEST']);
    }
    for (const path of ['/api/workflows/w/versions', '/api/workflows/w/versions/1']) {
      const res = await h.http.get(path);
      expect([res.status, res.body.error.code], path).to.deep.equal([401, 'UNAUTHORIZED']);
    }
  });
});

describe('http: deploy a stored version (rollback)', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('pins the named version: execute runs it, the versions list marks it; without a body the current version', async () => {
    const { key } = await deployed(h, echoV('w', 1));
    await h.http.put('/api/workflows/w').set(auth).send(echoV('w', 2)).expect(200);
    const latest = await h.http.post('/api/workflows/w/deploy').set(auth).expect(201);
    expect(latest.body.deployment.version).to.equal(2);
    expect(await execute(h, 'w', key)).to.deep.equal({ city: 'Oslo', v: 2 });
    const back = await h.http.post('/api/workflows/w/deploy').set(auth).send({ version: 1 }).expect(201);
    expect(back.body.deployment).to.include({ version: 1, endpoint: '/api/workflows/w/execute' });
    expect(back.body.apiKey.key).to.match(/^trp_/);
    expect(await execute(h, 'w', key)).to.deep.equal({ city: 'Oslo', v: 1 });
    const versions = await h.http.get('/api/workflows/w/versions').set(auth);
    expect(versions.body.items.map((v: { version: number; deployed: boolean }) => [v.version, v.deployed])).to.deep.equal([[2, false], [1, true]]);
    // the workflow itself stays at its current version
    expect((await h.http.get('/api/workflows/w').set(auth)).body.version).to.equal(2);
    await h.http.post('/api/workflows/w/deploy').set(auth).send({}).expect(201);
    expect(await execute(h, 'w', key)).to.deep.equal({ city: 'Oslo', v: 2 });
  });

  it("the schedules follow the pinned version's triggers", async () => {
    await deployed(h, echoV('w', 1, 'first'));
    await h.http.put('/api/workflows/w').set(auth).send(echoV('w', 2, 'second')).expect(200);
    const ids = async (): Promise<string[]> =>
      ((await h.http.get('/api/workflows/w/schedules').set(auth).expect(200)).body.items as { id: string; active: boolean }[])
        .filter((s) => s.active).map((s) => s.id);
    expect(await ids()).to.deep.equal(['first']);
    await h.http.post('/api/workflows/w/deploy').set(auth).expect(201);
    expect(await ids()).to.deep.equal(['second']);
    await h.http.post('/api/workflows/w/deploy').set(auth).send({ version: 1 }).expect(201);
    expect(await ids()).to.deep.equal(['first']);
  });

  it('404 NOT_FOUND for a version the workflow does not have (nothing changes), 400 for a malformed body', async () => {
    const { key } = await deployed(h, echoV('w', 1));
    const missing = await h.http.post('/api/workflows/w/deploy').set(auth).send({ version: 7 });
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    expect(missing.body.error.message).to.contain('version 7');
    expect(await execute(h, 'w', key)).to.deep.equal({ city: 'Oslo', v: 1 });
    for (const body of [{ version: 0 }, { version: 1.5 }, { version: '1' }, { version: 1, extra: true }, [1]]) {
      const res = await h.http.post('/api/workflows/w/deploy').set(auth).send(body);
      expect([res.status, res.body.error.code], JSON.stringify(body)).to.deep.equal([400, 'INVALID_REQUEST']);
    }
    const badJson = await h.http.post('/api/workflows/w/deploy').set(auth).set('Content-Type', 'application/json').send('{"version":');
    expect([badJson.status, badJson.body.error.code]).to.deep.equal([400, 'INVALID_JSON']);
    const ghost = await h.http.post('/api/workflows/ghost/deploy').set(auth).send({ version: 1 });
    expect([ghost.status, ghost.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    expect((await h.http.post('/api/workflows/w/deploy').send({ version: 1 })).status).to.equal(401);
  });
});
