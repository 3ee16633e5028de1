import { expect } from 'chai';
import { auth, deployed, echoWorkflow, failWorkflow, makeHarness, type Harness } from './support.js';

interface Summary {
  id: string;
  workflowId: string;
  status: string;
  trigger: { type: string };
}

async function list(h: Harness, query: Record<string, string | number> = {}): Promise<Summary[]> {
  const res = await h.http.get('/api/executions').query(query).set(auth).expect(200);
  return res.body.items as Summary[];
}

describe('http: executions across workflows', () => {
  let h: Harness;
  let ids: string[];
  beforeEach(async () => {
    h = makeHarness();
    const { key } = await deployed(h, echoWorkflow('a'));
    await h.http.post('/api/workflows').set(auth).send(failWorkflow('b')).expect(201);
    ids = [];
    // a: api, b: manual (failed), a: manual, a: api
    ids.push((await h.http.post('/api/workflows/a/execute').set('X-API-Key', key).send({ city: 'Nice' }).expect(201)).headers['x-execution-id'] as string);
    ids.push((await h.http.post('/api/workflows/b/run').set(auth).send({}).expect(500)).headers['x-execution-id'] as string);
    ids.push((await h.http.post('/api/workflows/a/run').set(auth).send({ city: 'Oslo' }).expect(201)).headers['x-execution-id'] as string);
    ids.push((await h.http.post('/api/workflows/a/execute').set('X-API-Key', key).send({ city: 'Rome' }).expect(201)).headers['x-execution-id'] as string);
  });
  afterEach(() => h.close());

  it('lists the executions of every workflow newest first, without logs, paged', async () => {
    const all = await h.http.get('/api/executions').set(auth).expect(200);
    expect(all.body.nextCursor).to.equal(null);
    expect(all.body.items.map((e: Summary) => e.id)).to.deep.equal([...ids].reverse());
    expect(all.body.items[0]).to.have.keys('id', 'workflowId', 'version', 'status', 'trigger', 'input', 'output', 'error', 'startedAt', 'endedAt', 'durationMs');
    expect(all.body.items.map((e: Summary) => e.workflowId)).to.deep.equal(['a', 'a', 'b', 'a']);
    const first = await h.http.get('/api/executions?limit=3').set(auth).expect(200);
    const rest = await h.http.get('/api/executions').query({ limit: 3, cursor: first.body.nextCursor }).set(auth).expect(200);
    expect([...first.body.items, ...rest.body.items].map((e: Summary) => e.id)).to.deep.equal([...ids].reverse());
    expect(rest.body.nextCursor).to.equal(null);
  });

  it('filters by workflow, status, trigger type and time, together; empty parameters are no filter', async () => {
    expect((await list(h, { workflowId: 'b' })).map((e) => e.id)).to.deep.equal([ids[1]]);
    expect((await list(h, { status: 'failed' })).map((e) => e.id)).to.deep.equal([ids[1]]);
    expect((await list(h, { trigger: 'manual' })).map((e) => e.id)).to.deep.equal([ids[2], ids[1]]);
    expect((await list(h, { trigger: 'api', workflowId: 'a', status: 'completed' })).map((e) => e.id)).to.deep.equal([ids[3], ids[0]]);
    expect(await list(h, { trigger: 'schedule' })).to.deep.equal([]);
    expect(await list(h, { workflowId: 'nobody' })).to.deep.equal([]);
    expect((await list(h, { status: '', trigger: '', workflowId: '' })).length).to.equal(4);
    const third = (await h.http.get(`/api/executions/${ids[2]!}`).set(auth)).body as { startedAt: string };
    // a record is created as it starts: since its start time, it and the later one
    expect((await list(h, { since: third.startedAt })).map((e) => e.id)).to.deep.equal([ids[3], ids[2]]);
    expect((await list(h, { until: '2000-01-01T00:00:00Z' }))).to.deep.equal([]);
    expect((await list(h, { since: '2000-01-01T00:00:00+02:00', until: '2999-01-01T00:00:00.000Z' })).length).to.equal(4);
  });

  it('400 INVALID_REQUEST naming the bad filter; 401 without the admin token, or with an API key', async () => {
    const bad: [Record<string, string>, string][] = [
      [{ status: 'done' }, '/status'], [{ trigger: 'cron' }, '/trigger'], [{ since: 'yesterday' }, '/since'], [{ until: '2024-13-01T00:00:00Z' }, '/until'],
      [{ since: '2024-01-01' }, '/since'], [{ workflowId: 'a b' }, '/workflowId'], [{ limit: '0' }, '/limit'], [{ cursor: 'bogus' }, '/cursor'],
      [{ since: '2024-01-02T00:00:00Z', until: '2024-01-01T00:00:00Z' }, '/until'],
    ];
    for (const [query, path] of bad) {
      const res = await h.http.get('/api/executions').query(query).set(auth);
      expect([res.status, res.body.error.code], JSON.stringify(query)).to.deep.equal([400, 'INVALID_REQUEST']);
      expect(res.body.error.details.issues.map((i: { path: string }) => i.path), JSON.stringify(query)).to.include(path);
    }
    expect((await h.http.get('/api/executions')).status).to.equal(401);
    const { key } = await deployed(h, echoWorkflow('c'));
    expect((await h.http.get('/api/executions').set('X-API-Key', key)).status).to.equal(401);
  });
});

describe('http: cluster', () => {
  it('lists this process: TROUPE_INSTANCE_ID, host, package version, start, last seen, executions running here', async () => {
    const h = makeHarness({ config: { instanceId: 'node-a' } });
    try {
      const res = await h.http.get('/api/cluster').set(auth).expect(200);
      expect(res.body.nextCursor).to.equal(null);
      expect(res.body.items).to.have.length(1);
      const me = res.body.items[0] as Record<string, unknown>;
      expect(me).to.have.keys('id', 'host', 'version', 'startedAt', 'lastSeenAt', 'running');
      const { readFileSync } = await import('node:fs');
      const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
      const { hostname } = await import('node:os');
      expect(me).to.include({ id: 'node-a', host: hostname(), version: pkg.version, running: 0 });
      expect(Date.parse(me['startedAt'] as string) <= Date.parse(me['lastSeenAt'] as string)).to.equal(true);
      await h.http.post('/api/workflows').set(auth).send({
        id: 'nap', name: 'Nap', blocks: [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 's', type: 'sleep', name: 'S', config: { ms: 60_000 } }],
        connections: [{ from: 'start', to: 's' }],
      }).expect(201);
      const run = await h.http.post('/api/workflows/nap/run').set(auth).send({ input: {}, async: true }).expect(202);
      expect((await h.http.get('/api/cluster').set(auth)).body.items[0].running).to.equal(1);
      await h.http.post(`/api/executions/${run.body.executionId as string}/cancel`).set(auth).expect(200);
      expect((await h.http.get('/api/cluster').set(auth)).body.items[0].running).to.equal(0);
      expect((await h.http.get('/api/cluster')).status).to.equal(401);
    } finally {
      await h.close();
    }
  });

  it('without TROUPE_INSTANCE_ID, an id generated per start', async () => {
    const [one, two] = [makeHarness(), makeHarness()];
    try {
      const a = (await one.http.get('/api/cluster').set(auth).expect(200)).body.items[0].id as string;
      const b = (await two.http.get('/api/cluster').set(auth).expect(200)).body.items[0].id as string;
      expect(a).to.match(/^[0-9a-f-]{36}$/);
      expect(a).to.not.equal(b);
      expect((await one.http.get('/api/cluster').set(auth)).body.items[0].id).to.equal(a);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
