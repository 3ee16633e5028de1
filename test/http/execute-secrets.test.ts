import { expect } from 'chai';
import { auth, deployed, makeHarness, waitFor, type Harness } from './support.js';

/**
 * A black-box probe: stored secrets whose values are ordinary words (every stored value of 4+
 * characters is redacted in every run) turned a completed run into `500 {"success":false}`, its
 * record's status into `***`, `startedAt` into `***edAt`, and its metrics into `status="***"`.
 */
describe('http: stored secrets that are ordinary words', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  const doc = {
    id: 'six',
    name: 'Six',
    blocks: [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'fn', type: 'function', name: 'Fn', config: { code: 'return 6' } },
    ],
    connections: [{ from: 'start', to: 'fn' }],
  };

  it('execute answers the run as it completed: status, metadata, output, record, events and metrics intact', async () => {
    for (const [name, value] of [['WORD', 'completed'], ['START', 'start'], ['RESULT', 'result'], ['BLANK', '    ']]) {
      await h.http.put(`/api/secrets/${name}`).set(auth).send({ value }).expect(201);
    }
    const { key } = await deployed(h, doc);
    const res = await h.http.post('/api/workflows/six/execute').set('X-API-Key', key).send({ note: 'spaces    kept', said: 'completed' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.include({ success: true, output: { result: 6, stdout: '' }, error: null });
    expect(res.body.metadata).to.have.keys('startedAt', 'endedAt', 'durationMs');
    const id = res.body.executionId as string;
    const rec = await h.http.get(`/api/executions/${id}`).set(auth).expect(200);
    expect(rec.body).to.deep.include({ status: 'completed', output: { result: 6, stdout: '' } });
    expect(rec.body.input).to.deep.equal({ note: 'spaces    kept', said: '***' });
    expect(rec.body).to.have.property('startedAt');
    const events = await h.http.get(`/api/executions/${id}/events`).set(auth).buffer(true).expect(200);
    expect(events.text).to.contain('"startedAt"').and.not.contain('***edAt');
    const metrics = await waitFor(async () => (await h.http.get('/metrics')).text, (t) => t.includes('troupe_executions_total{'));
    expect(metrics).to.contain('troupe_executions_total{status="completed",trigger="api"} 1');
    expect(metrics).to.not.contain('status="***"');
  });
});
