import { expect } from 'chai';
import { signHeaders, type WebhookProvider } from '../../src/model/webhook-signature.js';
import { auth, makeHarness, type Harness } from './support.js';

const SECRET = 'whsec-test-0123456789';

function hookWorkflow(id: string, trigger: Record<string, unknown>, blocks?: unknown[], to = 'r'): Record<string, unknown> {
  return {
    id,
    name: `Hook ${id}`,
    triggers: [{ type: 'webhook', id: 'hook', secret: '{{HOOK_SECRET}}', ...trigger }],
    blocks: blocks ?? [
      { id: 'start', type: 'starter', name: 'Start', config: {} },
      { id: 'r', type: 'response', name: 'Reply', config: { status: 201, headers: { 'X-Hook': 'yes' }, data: { got: '<start.body>', method: '<start.method>' } } },
    ],
    connections: [{ from: 'start', to }],
  };
}

async function deploy(h: Harness, doc: Record<string, unknown>): Promise<void> {
  await h.http.post('/api/workflows').set(auth).send(doc).expect(201);
  await h.http.post(`/api/workflows/${String(doc['id'])}/deploy`).set(auth).expect(201);
}

function post(h: Harness, path: string, body: string, headers: Record<string, string> = {}) {
  return h.http.post(`/webhooks/${path}`).set({ 'Content-Type': 'application/json', ...headers }).send(body);
}

function signed(provider: WebhookProvider, body: string, nowMs = Date.now(), secret = SECRET): Record<string, string> {
  return signHeaders(provider, secret, Buffer.from(body), nowMs);
}

async function ended(h: Harness, executionId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const res = await h.http.get(`/api/executions/${executionId}`).set(auth);
    if (res.status === 200 && ['completed', 'failed', 'cancelled'].includes(res.body.status as string)) return res.body as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`execution ${executionId} did not end`);
}

async function history(h: Harness, workflowId: string): Promise<unknown[]> {
  const res = await h.http.get(`/api/workflows/${workflowId}/executions`).set(auth).expect(200);
  return res.body.items as unknown[];
}

describe('http: webhooks', () => {
  let h: Harness;
  beforeEach(async () => {
    h = makeHarness();
    await h.http.put('/api/secrets/HOOK_SECRET').set(auth).send({ value: SECRET });
  });
  afterEach(() => h.close());

  it('generic: 202 { eventId, duplicate: false }, then runs with { body, headers, query, method }', async () => {
    await deploy(h, hookWorkflow('g', { path: 'orders/new', provider: 'generic' }));
    const body = JSON.stringify({ order: 42 });
    const res = await post(h, 'orders/new?source=shop', body, {
      ...signed('generic', body), Authorization: 'Bearer x', 'Proxy-Authorization': 'Basic eA==', Cookie: 'a=b', 'X-API-Key': 'k', 'X-Custom': 'kept',
    }).expect(202);
    expect(res.body).to.have.keys('eventId', 'duplicate');
    expect(res.body.duplicate).to.equal(false);
    const executionId = res.headers['x-execution-id'] as string;
    const rec = await ended(h, executionId);
    expect(rec.status).to.equal('completed');
    expect(rec.trigger).to.deep.include({ type: 'webhook', triggerId: 'hook', eventId: res.body.eventId });
    const input = rec.input as { body: unknown; headers: Record<string, string>; query: unknown; method: string };
    expect(input.body).to.deep.equal({ order: 42 });
    expect(input.query).to.deep.equal({ source: 'shop' });
    expect(input.method).to.equal('POST');
    expect(input.headers['x-custom']).to.equal('kept');
    for (const gone of ['authorization', 'proxy-authorization', 'cookie', 'x-api-key', 'x-signature']) expect(input.headers, gone).to.not.have.property(gone);
    expect((rec.output as { data: unknown }).data).to.deep.equal({ got: { order: 42 }, method: 'POST' });
  });

  it('the signing secret is redacted in what is recorded and announced on the bus, like any secret', async () => {
    await deploy(h, hookWorkflow('red', { path: 'red' }));
    const announced: unknown[] = [];
    h.bus.subscribe('troupe.webhooks.red.hook', (m) => announced.push(m.data));
    const body = JSON.stringify({ echo: SECRET });
    const res = await post(h, 'red', body, { ...signed('generic', body), 'X-Echo': SECRET }).expect(202);
    const rec = await ended(h, res.headers['x-execution-id'] as string);
    expect(JSON.stringify(rec)).to.not.include(SECRET);
    expect((rec.input as { body: unknown }).body).to.deep.equal({ echo: '***' });
    expect(announced).to.have.length(1);
    expect(JSON.stringify(announced)).to.not.include(SECRET);
    expect(announced[0]).to.deep.include({ eventId: res.body.eventId });
    expect((announced[0] as { input: { body: unknown; headers: Record<string, string> } }).input.body).to.deep.equal({ echo: '***' });
    expect((announced[0] as { input: { headers: Record<string, string> } }).input.headers['x-echo']).to.equal('***');
  });

  it("the process's own model keys are redacted in the bus announcement and the record, as in any run", async () => {
    const modelKey = 'sk-process-model-key-42';
    await h.close();
    h = makeHarness({ redact: [modelKey] });
    await h.http.put('/api/secrets/HOOK_SECRET').set(auth).send({ value: SECRET });
    await deploy(h, hookWorkflow('mk', { path: 'mk' }));
    const announced: unknown[] = [];
    h.bus.subscribe('troupe.webhooks.mk.hook', (m) => announced.push(m.data));
    const body = JSON.stringify({ leaked: `key=${modelKey}` });
    const res = await post(h, 'mk', body, signed('generic', body)).expect(202);
    const rec = await ended(h, res.headers['x-execution-id'] as string);
    expect(JSON.stringify(rec)).to.not.include(modelKey);
    expect(announced).to.have.length(1);
    expect((announced[0] as { input: { body: unknown } }).input.body).to.deep.equal({ leaked: 'key=***' });
  });

  it('a signed body nested past 100 levels gets 400 INVALID_JSON (the sender would retry a 5xx forever)', async () => {
    await deploy(h, hookWorkflow('g', { path: 'p' }));
    const body = `{"deep":${'['.repeat(5000)}1${']'.repeat(5000)}}`;
    const res = await post(h, 'p', body, signed('generic', body)).expect(400);
    expect(res.body.error.code).to.equal('INVALID_JSON');
    expect(await h.store.webhooks.listPending(new Date(Date.now() + 1000).toISOString(), 10)).to.have.length(0);
  });

  it('a bad or missing signature gets 401 and starts nothing', async () => {
    await deploy(h, hookWorkflow('g', { path: 'p' }));
    const body = '{"a":1}';
    const bad = await post(h, 'p', body, signed('generic', body, Date.now(), 'wrong-secret')).expect(401);
    expect(bad.body.error.code).to.equal('UNAUTHORIZED');
    await post(h, 'p', body).expect(401);
    await post(h, 'p', '{"a":2}', signed('generic', body)).expect(401);
    await new Promise((r) => setTimeout(r, 30));
    expect(await history(h, 'g')).to.have.length(0);
    expect(await h.store.webhooks.listPending(new Date(Date.now() + 1000).toISOString(), 10)).to.have.length(0);
  });

  it('the same delivery id within 24 h: 202 duplicate true with the first eventId, one execution', async () => {
    await deploy(h, hookWorkflow('g', { path: 'p' }));
    const body = '{"a":1}';
    const first = await post(h, 'p', body, { ...signed('generic', body), 'X-Delivery-Id': 'd-1' }).expect(202);
    const again = await post(h, 'p', body, { ...signed('generic', body), 'X-Delivery-Id': 'd-1' }).expect(202);
    expect(again.body).to.deep.equal({ eventId: first.body.eventId, duplicate: true });
    const keyed = await post(h, 'p', body, { ...signed('generic', body), 'Idempotency-Key': 'k-1' }).expect(202);
    const keyedAgain = await post(h, 'p', body, { ...signed('generic', body), 'Idempotency-Key': 'k-1' }).expect(202);
    expect(keyedAgain.body).to.deep.equal({ eventId: keyed.body.eventId, duplicate: true });
    await ended(h, first.headers['x-execution-id'] as string);
    await ended(h, keyed.headers['x-execution-id'] as string);
    expect(await history(h, 'g')).to.have.length(2);
  });

  it('github: X-Hub-Signature-256, de-duplicated by X-GitHub-Delivery', async () => {
    await deploy(h, hookWorkflow('gh', { path: 'github', provider: 'github' }));
    const body = JSON.stringify({ action: 'opened' });
    const headers = { ...signed('github', body), 'X-GitHub-Delivery': 'guid-1', 'X-GitHub-Event': 'issues' };
    const first = await post(h, 'github', body, headers).expect(202);
    const again = await post(h, 'github', body, headers).expect(202);
    expect(again.body).to.deep.equal({ eventId: first.body.eventId, duplicate: true });
    await post(h, 'github', body, signed('generic', body)).expect(401);
    const rec = await ended(h, first.headers['x-execution-id'] as string);
    const input = rec.input as { headers: Record<string, string> };
    expect(input.headers['x-github-event']).to.equal('issues');
    expect(input.headers).to.not.have.property('x-hub-signature-256');
  });

  it('stripe: Stripe-Signature within 5 minutes, de-duplicated by the event id', async () => {
    await deploy(h, hookWorkflow('st', { path: 'stripe', provider: 'stripe' }));
    const body = JSON.stringify({ id: 'evt_1', type: 'charge.succeeded' });
    const first = await post(h, 'stripe', body, signed('stripe', body)).expect(202);
    const again = await post(h, 'stripe', body, signed('stripe', body)).expect(202);
    expect(again.body).to.deep.equal({ eventId: first.body.eventId, duplicate: true });
    const stale = await post(h, 'stripe', body, signed('stripe', body, Date.now() - 6 * 60_000)).expect(401);
    expect(stale.body.error.message).to.match(/tolerance/);
  });

  it('slack: v0 signature with its timestamp; form bodies reach the starter as fields', async () => {
    await deploy(h, hookWorkflow('sl', { path: 'slack/cmd', provider: 'slack' }));
    const body = 'command=%2Fdeploy&text=prod';
    const headers = { ...signed('slack', body), 'Content-Type': 'application/x-www-form-urlencoded' };
    const res = await post(h, 'slack/cmd', body, headers).expect(202);
    const rec = await ended(h, res.headers['x-execution-id'] as string);
    expect((rec.input as { body: unknown }).body).to.deep.equal({ command: '/deploy', text: 'prod' });
    await post(h, 'slack/cmd', body, { ...signed('slack', body, Date.now() - 6 * 60_000), 'Content-Type': 'application/x-www-form-urlencoded' }).expect(401);
  });

  it("slack: a signed url_verification is answered with its challenge and starts nothing", async () => {
    await deploy(h, hookWorkflow('sv', { path: 'slack/events', provider: 'slack' }));
    const body = JSON.stringify({ type: 'url_verification', challenge: 'c-123', token: 't' });
    const res = await post(h, 'slack/events', body, signed('slack', body)).expect(200);
    expect(res.body).to.deep.equal({ challenge: 'c-123' });
    await post(h, 'slack/events', body, signed('slack', body, Date.now(), 'wrong')).expect(401);
    expect(await history(h, 'sv')).to.have.length(0);
  });

  it('responseMode sync answers like execute: the response block, or the envelope', async () => {
    await deploy(h, hookWorkflow('s', { path: 'sync', responseMode: 'sync' }));
    const body = '{"n":7}';
    const res = await post(h, 'sync', body, signed('generic', body)).expect(201);
    expect(res.headers['x-hook']).to.equal('yes');
    expect(res.headers['x-execution-id']).to.be.a('string');
    expect(res.body).to.deep.equal({ got: { n: 7 }, method: 'POST' });
    await deploy(h, hookWorkflow('s2', { path: 'sync2', responseMode: 'sync' }, [{ id: 'start', type: 'starter', name: 'Start', config: {} }, { id: 'nap', type: 'sleep', name: 'Nap', config: { ms: 0, value: 'slept' } }], 'nap'));
    const env = await post(h, 'sync2', body, signed('generic', body)).expect(200);
    expect(env.body).to.deep.include({ success: true, output: { value: 'slept' }, error: null });
  });

  it('404 for an unknown path, an undeployed or deleted workflow', async () => {
    await post(h, 'nothing', '{}').expect(404);
    await deploy(h, hookWorkflow('u', { path: 'u' }));
    const body = '{}';
    await post(h, 'u', body, signed('generic', body)).expect(202);
    await h.http.delete('/api/workflows/u/deploy').set(auth).expect(204);
    const gone = await post(h, 'u', body, signed('generic', body)).expect(404);
    expect(gone.body.error.code).to.equal('NOT_FOUND');
    await h.http.post('/api/workflows/u/deploy').set(auth).expect(201);
    await post(h, 'u', body, signed('generic', body)).expect(202);
    await h.http.delete('/api/workflows/u').set(auth).expect(204);
    await post(h, 'u', body, signed('generic', body)).expect(404);
  });

  it('the deployment pins the version: an edit changes the path only once deployed again', async () => {
    await deploy(h, hookWorkflow('v', { path: 'old' }));
    await h.http.put('/api/workflows/v').set(auth).send(hookWorkflow('v', { path: 'new' })).expect(200);
    const body = '{}';
    await post(h, 'old', body, signed('generic', body)).expect(202);
    await post(h, 'new', body, signed('generic', body)).expect(404);
    await h.http.post('/api/workflows/v/deploy').set(auth).expect(201);
    await post(h, 'new', body, signed('generic', body)).expect(202);
    await post(h, 'old', body, signed('generic', body)).expect(404);
  });

  it('deploying a path another deployed workflow serves is 409 CONFLICT', async () => {
    await deploy(h, hookWorkflow('a', { path: 'shared' }));
    await h.http.post('/api/workflows').set(auth).send(hookWorkflow('b', { path: 'shared' })).expect(201);
    const res = await h.http.post('/api/workflows/b/deploy').set(auth).expect(409);
    expect(res.body.error.details).to.include({ path: 'shared', workflowId: 'a' });
    await h.http.get('/api/workflows/b/keys').set(auth).expect(200).expect((r) => expect(r.body.items).to.have.length(0));
  });

  it('announces each accepted event on troupe.webhooks.{workflowId}.{triggerId}', async () => {
    await deploy(h, hookWorkflow('bus', { path: 'bus' }));
    const seen: unknown[] = [];
    h.bus.subscribe('troupe.webhooks.bus.hook', (m) => seen.push(m.data));
    const body = '{"x":1}';
    const res = await post(h, 'bus', body, signed('generic', body)).expect(202);
    expect(seen).to.have.length(1);
    expect(seen[0]).to.deep.include({ eventId: res.body.eventId, workflowId: 'bus', triggerId: 'hook', executionId: res.headers['x-execution-id'] });
  });

  it('an event the bus could not take is still accepted and run, and announced by a later sweep', async () => {
    await deploy(h, hookWorkflow('late', { path: 'late' }));
    const seen: unknown[] = [];
    h.bus.subscribe('troupe.webhooks.late.hook', (m) => seen.push(m.data));
    const publish = h.bus.publish.bind(h.bus);
    let down = true;
    h.bus.publish = (subject, data, opts) => {
      if (down && subject.startsWith('troupe.webhooks.')) throw new Error('bus down');
      publish(subject, data, opts);
    };
    const body = '{"x":1}';
    const res = await post(h, 'late', body, signed('generic', body)).expect(202);
    expect((await ended(h, res.headers['x-execution-id'] as string)).status).to.equal('completed');
    expect(seen).to.have.length(0);
    expect((await h.store.webhooks.get(res.body.eventId as string))?.announced).to.equal(false);
    down = false;
    await h.services.webhooks.sweep(0);
    expect(seen).to.have.length(1);
    expect(seen[0]).to.deep.include({ eventId: res.body.eventId });
    await h.services.webhooks.sweep(0);
    expect(seen, 'announced once it went through').to.have.length(1);
  });

  it('an event accepted while the bus is reconnecting starts once it is back (not a run left hanging)', async () => {
    await deploy(h, hookWorkflow('outage', { path: 'outage' }));
    Object.defineProperty(h.bus, 'connected', { configurable: true, get: () => false });
    const body = '{"x":2}';
    const res = await post(h, 'outage', body, signed('generic', body)).expect(202);
    const executionId = res.headers['x-execution-id'] as string;
    expect((await h.http.get(`/api/executions/${executionId}`).set(auth)).status, 'not started yet').to.equal(404);
    expect((await h.store.webhooks.get(res.body.eventId as string))?.status).to.equal('pending');
    expect(await h.services.webhooks.sweep(0), 'still away: nothing starts').to.equal(0);
    Reflect.deleteProperty(h.bus, 'connected');
    for (let i = 0; i < 100 && (await h.services.webhooks.sweep(0)) === 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect((await ended(h, executionId)).status).to.equal('completed');
  });

  it('bad input: 422 against inputFormat, 400 for JSON that does not parse, 500 MISSING_SECRET', async () => {
    const strict = hookWorkflow('i', { path: 'strict' });
    (strict['blocks'] as { config: Record<string, unknown> }[])[0]!.config = { inputFormat: [{ name: 'body', type: 'object', required: true }] };
    await deploy(h, strict);
    await post(h, 'strict', '', signed('generic', '')).expect(422);
    await post(h, 'strict', '{nope', signed('generic', '{nope')).expect(400).expect((r) => expect(r.body.error.code).to.equal('INVALID_JSON'));
    await deploy(h, hookWorkflow('m', { path: 'm', secret: '{{NOT_SET_ANYWHERE}}' }));
    const res = await post(h, 'm', '{}', signed('generic', '{}')).expect(500);
    expect(res.body.error.code).to.equal('MISSING_SECRET');
    expect(JSON.stringify(res.body)).to.not.include(SECRET);
  });

  it('an accepted event left pending (a crash before it started) is started once by the sweep', async () => {
    await deploy(h, hookWorkflow('r', { path: 'r' }));
    const version = 1;
    const ev = {
      id: 'ev-crashed', workflowId: 'r', triggerId: 'hook', version, deliveryId: null, status: 'pending' as const,
      payload: { body: { late: true }, headers: {}, query: {}, method: 'POST' }, receivedAt: new Date(Date.now() - 60_000).toISOString(),
      executionId: '019a0000-0000-7000-8000-000000000001', announced: true,
    };
    await h.store.webhooks.accept(ev, new Date(0).toISOString());
    expect(await h.services.webhooks.sweep()).to.equal(1);
    expect(await h.services.webhooks.sweep(), 'started once').to.equal(0);
    const rec = await ended(h, ev.executionId);
    expect((rec.output as { data: unknown }).data).to.deep.include({ got: { late: true } });
    expect((await h.store.webhooks.get('ev-crashed'))?.status).to.equal('started');
  });

  it('one pending event that cannot start does not hold up the others', async () => {
    await deploy(h, hookWorkflow('r', { path: 'r' }));
    const pending = (id: string, executionId: string, late: boolean) => ({
      id, workflowId: 'r', triggerId: 'hook', version: 1, deliveryId: null, status: 'pending' as const, executionId, announced: true,
      payload: { body: { late }, headers: {}, query: {}, method: 'POST' }, receivedAt: new Date(Date.now() - 60_000).toISOString(),
    });
    await h.store.webhooks.accept(pending('ev-a-broken', '019a0000-0000-7000-8000-00000000000a', false), new Date(0).toISOString());
    await h.store.webhooks.accept(pending('ev-b-fine', '019a0000-0000-7000-8000-00000000000b', true), new Date(0).toISOString());
    const executions = h.services.executions;
    const real = executions.start.bind(executions);
    executions.start = async (loaded, input, trigger, opts) => {
      if (trigger['eventId'] === 'ev-a-broken') throw new Error('cannot start this one');
      return real(loaded, input, trigger, opts);
    };
    expect(await h.services.webhooks.sweep()).to.equal(1);
    expect((await h.store.webhooks.get('ev-b-fine'))?.status).to.equal('started');
    expect((await h.store.webhooks.get('ev-a-broken'))?.status, 'kept, retried later').to.equal('pending');
    expect(await h.services.webhooks.sweep(), 'backing off').to.equal(0);
  });

  it('refuses a secret that is not exactly {{NAME}} and "." or ".." path segments (422)', async () => {
    const bad = await h.http.post('/api/workflows').set(auth).send(hookWorkflow('bad', { path: 'p', secret: '{{MY-SECRET}}' })).expect(422);
    expect(JSON.stringify(bad.body.error.details)).to.include('/triggers/0/secret');
    const dots = await h.http.post('/api/workflows').set(auth).send(hookWorkflow('dots', { path: 'a/../b' })).expect(422);
    expect(JSON.stringify(dots.body.error.details)).to.include('/triggers/0/path');
  });

  describe('replays (issue 21, finding 5; SPEC §4.3)', () => {
    it('generic: X-Signature-Timestamp is signed with the body and refused outside 5 minutes', async () => {
      await deploy(h, hookWorkflow('ts', { path: 'ts', provider: 'generic' }));
      const body = JSON.stringify({ n: 1 });
      const fresh = signHeaders('generic', SECRET, Buffer.from(body), Date.now(), true);
      expect(fresh).to.have.keys('x-signature', 'x-signature-timestamp');
      await post(h, 'ts', body, fresh).expect(202);
      // a captured delivery replayed 6 minutes later: the timestamp is refused, signed as it is
      const stale = signHeaders('generic', SECRET, Buffer.from(body), Date.now() - 6 * 60_000, true);
      const refused = await post(h, 'ts', body, { ...stale, 'X-Delivery-Id': 'a-new-id' }).expect(401);
      expect(refused.body.error.message).to.include('timestamp outside the 5-minute tolerance');
      // the timestamp cannot be moved: the signature covers it
      await post(h, 'ts', body, { ...stale, 'x-signature-timestamp': fresh['x-signature-timestamp']! }).expect(401);
      // a body-only signature does not pass for a timestamped one, nor the reverse
      await post(h, 'ts', body, { ...signed('generic', body), 'x-signature-timestamp': fresh['x-signature-timestamp']! }).expect(401);
      const malformed = await post(h, 'ts', body, { ...fresh, 'x-signature-timestamp': '1e9' }).expect(401);
      expect(malformed.body.error.message).to.include('X-Signature-Timestamp');
      expect(await history(h, 'ts')).to.have.length(1);
    });

    it('generic with "requireTimestamp": true refuses a delivery without X-Signature-Timestamp, however signed', async () => {
      await deploy(h, hookWorkflow('rt', { path: 'rt', provider: 'generic', requireTimestamp: true }));
      const body = JSON.stringify({ n: 2 });
      const res = await post(h, 'rt', body, signed('generic', body)).expect(401);
      expect(res.body.error).to.deep.include({ code: 'UNAUTHORIZED' });
      expect(res.body.error.message).to.include('missing X-Signature-Timestamp header');
      await post(h, 'rt', body, signHeaders('generic', SECRET, Buffer.from(body), Date.now(), true)).expect(202);
      expect(await history(h, 'rt')).to.have.length(1);
      const stored = await h.http.get('/api/workflows/rt').set(auth).expect(200);
      expect(JSON.stringify(stored.body), 'the setting is kept').to.include('"requireTimestamp":true');
    });

    it('validation takes requireTimestamp as a boolean on a generic trigger only', async () => {
      const wrongType = await h.http.post('/api/workflows').set(auth).send(hookWorkflow('v1', { path: 'v1', requireTimestamp: 'yes' })).expect(422);
      expect(JSON.stringify(wrongType.body.error.details)).to.include('/triggers/0/requireTimestamp');
      const github = await h.http.post('/api/workflows').set(auth).send(hookWorkflow('v2', { path: 'v2', provider: 'github', requireTimestamp: true })).expect(422);
      expect(JSON.stringify(github.body.error.details)).to.include('requireTimestamp is for the generic provider');
      await h.http.post('/api/workflows').set(auth).send(hookWorkflow('v3', { path: 'v3', requireTimestamp: false })).expect(201);
    });

    it('providers that sign no time replay with a new delivery id (documented); Stripe\'s signed event id stays a duplicate', async () => {
      await deploy(h, hookWorkflow('gh', { path: 'gh', provider: 'github' }));
      const body = JSON.stringify({ zen: 'same' });
      const headers = signed('github', body, Date.now() - 24 * 60 * 60_000);
      await post(h, 'gh', body, { ...headers, 'X-GitHub-Delivery': 'g-1' }).expect(202);
      const replay = await post(h, 'gh', body, { ...headers, 'X-GitHub-Delivery': 'g-2' }).expect(202);
      expect(replay.body.duplicate, 'GitHub signs neither a time nor its delivery id').to.equal(false);
      await deploy(h, hookWorkflow('st', { path: 'st', provider: 'stripe' }));
      const event = JSON.stringify({ id: 'evt_1', type: 'x' });
      const first = await post(h, 'st', event, signed('stripe', event)).expect(202);
      const again = await post(h, 'st', event, { ...signed('stripe', event), 'Idempotency-Key': 'other' }).expect(202);
      expect(again.body).to.deep.equal({ eventId: first.body.eventId, duplicate: true });
    });
  });
});
