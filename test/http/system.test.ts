import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { readRawBody } from '../../src/http/middleware/body.js';
import { toRouterPath } from '../../src/http/route-spec.js';
import { auth, deployed, echoWorkflow, failWorkflow, makeHarness, type Harness } from './support.js';

/** Every route of SPEC §4.1–§4.5 this app serves. */
const SPEC_ROUTES = [
  'post /api/workflows', 'get /api/workflows', 'get /api/workflows/{id}', 'put /api/workflows/{id}', 'delete /api/workflows/{id}',
  'post /api/workflows/{id}/run', 'post /api/workflows/{id}/deploy', 'delete /api/workflows/{id}/deploy',
  'post /api/workflows/{id}/keys', 'get /api/workflows/{id}/keys', 'delete /api/workflows/{id}/keys/{keyId}',
  'get /api/workflows/{id}/executions', 'put /api/secrets/{name}', 'get /api/secrets', 'delete /api/secrets/{name}',
  'post /api/workflows/{workflowId}/execute', 'get /api/executions/{id}', 'get /api/executions/{id}/events',
  'post /api/executions/{id}/approvals/{blockId}', 'get /approve/{token}', 'post /approve/{token}',
  'post /api/executions/{id}/cancel', 'get /openapi.json', 'get /healthz', 'get /readyz', 'get /metrics',
  'post /webhooks/{path}', 'get /api/workflows/{id}/schedules',
  'put /api/workflows/{id}/chat', 'get /api/workflows/{id}/chat', 'delete /api/workflows/{id}/chat',
  'get /chat/{sub}/', 'get /api/chat/{sub}', 'post /api/chat/{sub}/auth', 'delete /api/chat/{sub}/auth', 'post /api/chat/{sub}/messages',
  'get /api/workflows/{id}/versions', 'get /api/workflows/{id}/versions/{n}', 'get /api/executions', 'post /api/executions/{id}/rerun', 'get /api/cluster',
  'post /api/console/session', 'get /api/console/session', 'delete /api/console/session',
];

describe('http: service routes', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(() => h.close());

  it('GET /healthz answers 200 without credentials', async () => {
    const res = await h.http.get('/healthz').expect(200);
    expect(res.body).to.deep.equal({ status: 'ok' });
  });

  it('GET /readyz answers 200 when the store and the bus answer, 503 NOT_READY naming the one that does not', async () => {
    const ok = await h.http.get('/readyz').expect(200);
    expect(ok.body).to.deep.equal({ status: 'ready', checks: { store: 'ok', bus: 'ok' } });
    await h.bus.close();
    const busDown = await h.http.get('/readyz');
    expect(busDown.status).to.equal(503);
    expect(busDown.body.error).to.deep.include({ code: 'NOT_READY' });
    expect(busDown.body.error.details.checks).to.deep.equal({ store: 'ok', bus: 'error' });
    expect(busDown.headers['retry-after']).to.equal('1');
    await h.store.close();
    const bothDown = await h.http.get('/readyz').expect(503);
    expect(bothDown.body.error.details.checks).to.deep.equal({ store: 'error', bus: 'error' });
  });

  it('GET /metrics exposes executions by status, block durations and HTTP latency, per app', async () => {
    const { key } = await deployed(h, echoWorkflow('m'));
    await h.http.post('/api/workflows/m/execute').set('X-API-Key', key).send({ city: 'x' }).expect(201);
    await h.http.post('/api/workflows').set(auth).send(failWorkflow('f')).expect(201);
    await h.http.post('/api/workflows/f/run').set(auth).send({}).expect(500);
    const res = await h.http.get('/metrics').expect(200);
    expect(res.headers['content-type']).to.match(/^text\/plain/);
    expect(res.text).to.include('troupe_executions_total{status="completed",trigger="api"} 1');
    expect(res.text).to.include('troupe_executions_total{status="failed",trigger="manual"} 1');
    expect(res.text).to.match(/troupe_block_duration_seconds_count\{type="starter",status="completed"\} 2/);
    expect(res.text).to.match(/troupe_block_duration_seconds_count\{type="fail",status="failed"\} 1/);
    expect(res.text).to.match(/troupe_http_request_duration_seconds_count\{method="POST",route="\/api\/workflows\/\{workflowId\}\/execute",status="201"\} 1/);
    expect(res.text).to.include('troupe_executions_inflight 0');
    const other = makeHarness();
    try {
      const fresh = await other.http.get('/metrics').expect(200);
      expect(fresh.text).to.not.include('troupe_executions_total{');
    } finally {
      await other.close();
    }
  });

  it('GET /metrics counts skipped blocks in troupe_block_duration_seconds, as its help says', async () => {
    await h.http.post('/api/workflows').set(auth).send({
      id: 'sk', name: 'Skips',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'c', type: 'condition', name: 'C', config: { branches: [{ id: 'no', expression: '1 === 2' }] } },
        { id: 'nap', type: 'sleep', name: 'Nap', config: { ms: 0 } },
      ],
      connections: [{ from: 'start', to: 'c' }, { from: 'c', handle: 'no', to: 'nap' }],
    }).expect(201);
    await h.http.post('/api/workflows/sk/run').set(auth).send({}).expect(200);
    const res = await h.http.get('/metrics').expect(200);
    expect(res.text).to.match(/troupe_block_duration_seconds_count\{type="sleep",status="skipped"\} 1/);
    expect(res.text).to.match(/troupe_block_duration_seconds_bucket\{le="0.0005",type="sleep",status="skipped"\} 1/);
  });

  it('GET /openapi.json (OpenAPI 3.1) describes every route the app serves, from the same schemas', async () => {
    const res = await h.http.get('/openapi.json').expect(200);
    const doc = res.body as { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> };
    expect(doc.openapi).to.equal('3.1.0');
    const described = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`));
    expect(described.sort()).to.deep.equal([...SPEC_ROUTES].sort());
    expect(h.routes.map((r) => `${r.method} ${r.path}`).sort()).to.deep.equal([...SPEC_ROUTES].sort());
    const create = doc.paths['/api/workflows']!['post'] as { requestBody: { content: Record<string, { schema: { properties: object } }> }; responses: Record<string, unknown> };
    expect(create.requestBody.content['application/json']!.schema.properties).to.include.keys('name', 'blocks', 'connections');
    expect(create.responses).to.include.keys('201', '401', '409', '413', '422');
    const history = doc.paths['/api/workflows/{id}/executions']!['get'] as { parameters: { name: string; in: string }[] };
    expect(history.parameters.map((p) => `${p.in}:${p.name}`)).to.include.members(['path:id', 'query:status', 'query:limit', 'query:cursor']);
    const execute = doc.paths['/api/workflows/{workflowId}/execute']!['post'] as {
      responses: Record<string, { content?: Record<string, unknown> }>; security: unknown; parameters: { name: string; in: string }[];
    };
    expect(execute.responses).to.include.keys('200', '202', '400', '401', '403', '404', '413', '422', '429', '500', '503', '504');
    expect(execute.security).to.deep.equal([{ apiKey: [] }]);
    // the three modes: JSON or an event stream, chosen by the body or by these headers
    expect(execute.responses['200']?.content).to.have.keys('application/json', 'text/event-stream', 'text/plain');
    // a response block sets any status: a listed one also carries its data (any JSON, or text)
    const notFound = execute.responses['404']?.content as Record<string, { schema: { anyOf?: unknown[] } }>;
    expect(notFound['application/json']!.schema.anyOf).to.deep.include({ description: 'the data a response block set' });
    expect(notFound).to.have.property('text/plain');
    // any route may answer 413 (a body over the limit, even where none is taken), 500 and 503
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect((op as { responses: object }).responses, `${method} ${path}`).to.include.keys('413', '500', '503');
      }
    }
    expect(execute.parameters.map((p) => `${p.in}:${p.name}`)).to.include.members(['header:X-Execution-Mode', 'header:X-API-Key']);
  });

  it('every spec path maps to a router path with the same parameters', () => {
    for (const r of h.routes) expect(toRouterPath(r.path)).to.not.include('{');
  });

  it('keeps a valid X-Request-Id and generates one otherwise', async () => {
    const kept = await h.http.get('/healthz').set('X-Request-Id', 'req-123');
    expect(kept.headers['x-request-id']).to.equal('req-123');
    const made = await h.http.get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(made.headers['x-request-id']).to.match(/^[0-9a-f-]{36}$/);
  });

  it('answers unknown routes with 404 NOT_FOUND and wrong methods with 405 in the error envelope', async () => {
    const missing = await h.http.get('/api/nothing').set(auth);
    expect([missing.status, missing.body.error.code]).to.deep.equal([404, 'NOT_FOUND']);
    const method = await h.http.patch('/api/workflows').set(auth);
    expect([method.status, method.body.error.code]).to.deep.equal([405, 'METHOD_NOT_ALLOWED']);
    expect(method.headers['allow']?.split(', ').sort()).to.deep.equal(['GET', 'HEAD', 'POST']);
    const onOne = await h.http.patch('/api/workflows/some-id').set(auth);
    expect([onOne.status, onOne.headers['allow']?.split(', ').sort()]).to.deep.equal([405, ['DELETE', 'GET', 'HEAD', 'PUT']]);
    // a method the router does not know at all gets the same, not a bare 501
    const unknown = await h.http.trace('/api/workflows').set(auth);
    expect([unknown.status, unknown.body.error?.code]).to.deep.equal([405, 'METHOD_NOT_ALLOWED']);
  });

  it('answers a method the router does not know on a path no route has with 404, not 405 with an empty Allow', async () => {
    for (const path of ['/api/nothing', '/', '/chat/x']) {
      const res = await h.http.trace(path).set(auth);
      expect([res.status, res.body.error?.code, res.headers['allow']], path).to.deep.equal([404, 'NOT_FOUND', undefined]);
    }
    const known = await h.http.trace('/healthz');
    expect([known.status, known.headers['allow']?.split(', ').sort()]).to.deep.equal([405, ['GET', 'HEAD']]);
  });

  it('refuses JSON nested past 100 levels (400 INVALID_JSON) where it enters, and too many blocks (422)', async () => {
    // JSON text built by hand: JSON.stringify itself runs out of stack on such values
    const deep = (n: number): string => `${'['.repeat(n)}"leaf"${']'.repeat(n)}`;
    const { key } = await deployed(h, echoWorkflow('e'));
    const send = (path: string, text: string, headers: Record<string, string>) => h.http.post(path).set(headers).set('Content-Type', 'application/json').send(text);
    const exec = await send('/api/workflows/e/execute', `{"input":{"city":"x","deep":${deep(5000)}}}`, { 'X-API-Key': key });
    expect([exec.status, exec.body.error?.code]).to.deep.equal([400, 'INVALID_JSON']);
    const fine = await send('/api/workflows/e/execute', `{"input":{"city":"x","deep":${deep(50)}}}`, { 'X-API-Key': key });
    expect(fine.status).to.equal(201);
    const doc = await send('/api/workflows', `{"name":"deep","variables":{"v":${deep(200)}},"blocks":[{"id":"start","type":"starter","name":"Start","config":{}}]}`, auth);
    expect([doc.status, doc.body.error?.code]).to.deep.equal([400, 'INVALID_JSON']);
    const blocks = [{ id: 'start', type: 'starter', name: 'Start', config: {} }, ...Array.from({ length: 1000 }, (_, i) => ({ id: `b${i}`, type: 'function', name: `B${i}`, config: { code: 'return 1' } }))];
    const big = await h.http.post('/api/workflows').set(auth).send({ name: 'big', blocks, connections: [] });
    expect(big.status).to.equal(422);
    expect(JSON.stringify(big.body.error.details)).to.contain('at most 1000 blocks');
  });

  it('fails a function whose result nests past 100 levels with FUNCTION_ERROR, not an internal error', async () => {
    const doc = {
      id: 'nest',
      name: 'nest',
      blocks: [
        { id: 'start', type: 'starter', name: 'Start', config: {} },
        { id: 'f', type: 'function', name: 'F', config: { code: 'let v = 1; for (let i = 0; i < 5000; i++) v = [v]; return v;' } },
      ],
      connections: [{ from: 'start', to: 'f' }],
    };
    const { key } = await deployed(h, doc);
    const res = await h.http.post('/api/workflows/nest/execute').set('X-API-Key', key).send({});
    expect(res.status).to.equal(500);
    expect(res.body.error).to.deep.include({ code: 'FUNCTION_ERROR', blockId: 'f' });
    expect(res.body.error.message).to.contain('deeper than 100');
  });

  it('never leaks internal error messages: 500 INTERNAL, store failures 503 STORE_ERROR', async () => {
    h.services.workflows.list = async () => {
      throw new TypeError('password=hunter2 in a stack');
    };
    const internal = await h.http.get('/api/workflows').set(auth);
    expect(internal.status).to.equal(500);
    expect(internal.body).to.deep.equal({ error: { code: 'INTERNAL', message: 'internal error', details: null } });
    await h.store.close();
    const store = await h.http.get('/api/workflows/x').set(auth);
    expect(store.status).to.equal(503);
    expect(store.body.error.code).to.equal('STORE_ERROR');
    expect(JSON.stringify(store.body)).to.not.match(/sqlite|closed|database/i);
  });
});

describe('http: raw body reader', () => {
  function fakeRequest(chunks: string[], headers: Record<string, string> = {}): IncomingMessage {
    return Object.assign(Readable.from(chunks.map((c) => Buffer.from(c))), { headers }) as unknown as IncomingMessage;
  }

  it('reads a body within the limit, byte for byte', async () => {
    const raw = await readRawBody(fakeRequest(['{"a":', '1}']), 100);
    expect(raw.toString()).to.equal('{"a":1}');
  });

  it('stops a chunked body at the limit with PAYLOAD_TOO_LARGE', async () => {
    const err = await readRawBody(fakeRequest(['x'.repeat(60), 'y'.repeat(60)]), 100).then(() => null, (e: unknown) => e);
    expect(err).to.have.property('code', 'PAYLOAD_TOO_LARGE');
  });

  it('refuses a declared Content-Length over the limit without reading', async () => {
    const err = await readRawBody(fakeRequest(['x'], { 'content-length': '101' }), 100).then(() => null, (e: unknown) => e);
    expect(err).to.have.property('code', 'PAYLOAD_TOO_LARGE');
  });
});
