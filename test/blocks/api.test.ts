import { expect } from 'chai';
import { apiBlock, apiConfigSchema, buildUrl, type ApiBlockResult, type ApiConfig } from '../../src/blocks/api.js';
import type { BlockRunContext, BlockServices } from '../../src/blocks/types.js';
import { TroupeError } from '../../src/errors.js';
import type { CompiledBlock } from '../../src/model/compiled.js';
import { createOutboundClient } from '../../src/outbound/client.js';
import type { OutboundClient } from '../../src/outbound/types.js';
import { runBlock } from '../../src/runtime/run-block.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { closedPort, startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { InstantClock, rejection } from '../outbound/support.js';

function services(client: OutboundClient | undefined): BlockServices {
  const s: BlockServices = { sandbox: {} as Sandbox, clock: new InstantClock(), functionTimeoutMs: 5000, functionMemoryMb: 64 };
  if (client) s.http = client;
  return s;
}

function context(raw: Record<string, unknown>, client: OutboundClient | undefined, hasErrorConnection = false): BlockRunContext<ApiConfig> {
  return {
    executionId: 'e1',
    workflowId: 'w1',
    block: { id: 'api', name: 'Api', type: 'api' },
    config: apiConfigSchema.parse({ retryBaseMs: 2, ...raw }),
    input: {},
    trigger: { type: 'manual' },
    bindCode: () => {
      throw new Error('not used');
    },
    resolve: (v) => v,
    hasErrorConnection,
    signal: new AbortController().signal,
    services: services(client),
    emitChunk: () => undefined,
  };
}

const run = (ctx: BlockRunContext<ApiConfig>): Promise<ApiBlockResult> => apiBlock.run(ctx) as Promise<ApiBlockResult>;

describe('api block: config', () => {
  it('applies the SPEC defaults', () => {
    const c = apiConfigSchema.parse({ url: 'https://x.test/' });
    expect(c).to.deep.include({ method: 'GET', timeoutMs: 30_000, retries: 3, retryBaseMs: 500, retryMaxMs: 30_000, maxResponseBytes: 10 * 1024 * 1024 });
    expect(c.params).to.deep.equal([]);
    expect(apiBlock.handles(c)).to.deep.equal(['success', 'error']);
  });

  it('accepts rows or an object map, a lower-case method and numeric strings', () => {
    const c = apiConfigSchema.parse({ url: 'https://x.test/', method: 'post', headers: { 'X-A': '1' }, params: [{ key: 'q', value: 2 }], timeoutMs: '1500' });
    expect(c.method).to.equal('POST');
    expect(c.headers).to.deep.equal([{ key: 'X-A', value: '1' }]);
    expect(c.params).to.deep.equal([{ key: 'q', value: 2 }]);
    expect(c.timeoutMs).to.equal(1500);
  });

  it('leaves a setting that reads null unset, so its default holds (null was coerced to 0 or refused)', () => {
    const nulls = { timeoutMs: null, retries: null, retryBaseMs: null, retryMaxMs: null, maxResponseBytes: null, params: null, headers: null };
    const c = apiConfigSchema.parse({ url: 'https://x.test/', ...nulls });
    expect(c).to.deep.include({ timeoutMs: 30_000, retries: 3, retryBaseMs: 500, retryMaxMs: 30_000, maxResponseBytes: 10 * 1024 * 1024, params: [], headers: [] });
    // where the request goes is never guessed
    for (const field of ['url', 'method', 'pathParams']) {
      const parsed = apiConfigSchema.safeParse({ url: 'https://x.test/', [field]: null });
      expect(parsed.error?.issues.map((i) => i.path.join('/')), field).to.deep.equal([field]);
    }
  });

  it('rejects a missing url, an unknown method and out-of-range numbers', () => {
    for (const bad of [{}, { url: '' }, { url: 'https://x.test', method: 'TRACE' }, { url: 'https://x.test', retries: -1 }, { url: 'https://x.test', retries: 11 }, { url: 'https://x.test', timeoutMs: 0 }]) {
      expect(apiConfigSchema.safeParse(bad).success, JSON.stringify(bad)).to.equal(false);
    }
  });
});

describe('api block: URL building', () => {
  it('percent-encodes path parameters, unicode and reserved characters included', () => {
    const url = buildUrl('https://api.test/v1/{city}/items/{id}', [{ key: 'city', value: 'São Paulo/?#&' }, { key: 'id', value: 42 }], []);
    expect(url).to.equal('https://api.test/v1/S%C3%A3o%20Paulo%2F%3F%23%26/items/42');
  });

  it('refuses a path parameter that leaves a whole segment empty (null or ""), not one inside a segment or the query', () => {
    for (const value of [null, undefined, '']) {
      const tryIt = (): string => buildUrl('https://api.test/items/{id}', [{ key: 'id', value }], []);
      expect(tryIt, String(value)).to.throw(/empty/).with.property('code', 'INVALID_CONFIG');
      expect(() => buildUrl('https://api.test/users/{id}/profile', [{ key: 'id', value }], [])).to.throw(/empty/);
    }
    expect(buildUrl('https://api.test/files/{name}.json', [{ key: 'name', value: '' }], [])).to.equal('https://api.test/files/.json');
    expect(buildUrl('https://api.test/search?q={q}', [{ key: 'q', value: null }], [])).to.equal('https://api.test/search?q=');
    expect(buildUrl('https://api.test/items/{id}', [], [])).to.equal('https://api.test/items/{id}');
  });

  it('refuses a path parameter that makes a segment . or .. (it would move the request), not one inside a segment or the query', () => {
    for (const value of ['..', '.', '%2e%2e', '.%2E']) {
      const tryIt = (): string => buildUrl('https://api.test/users/{id}/profile', [{ key: 'id', value }], []);
      if (value.includes('%')) expect(tryIt()).to.equal(`https://api.test/users/${encodeURIComponent(value)}/profile`);
      else expect(tryIt).to.throw(/dot segment/).with.property('code', 'INVALID_CONFIG');
    }
    expect(() => buildUrl('https://api.test/a/{x}./b', [{ key: 'x', value: '.' }], [])).to.throw(/dot segment/);
    expect(buildUrl('https://api.test/files/{name}.json', [{ key: 'name', value: '..' }], [])).to.equal('https://api.test/files/...json');
    expect(buildUrl('https://api.test/search?q={q}', [{ key: 'q', value: '..' }], [])).to.equal('https://api.test/search?q=..');
    expect(buildUrl('https://api.test/a/../{x}', [{ key: 'x', value: 'b' }], [])).to.equal('https://api.test/a/../b');
  });

  it('leaves unknown {placeholders} alone', () => {
    expect(buildUrl('https://api.test/{a}/{b}', [{ key: 'a', value: 'x' }], [])).to.equal('https://api.test/x/{b}');
  });

  it('appends encoded params after an existing query and before a fragment', () => {
    const params = [
      { key: 'q', value: 'café & crème=1+1' },
      { key: 'emoji', value: '☕' },
      { key: 'skip', value: null },
      { key: 'tag', value: ['a', 'b'] },
      { key: 'obj', value: { x: 1 } },
    ];
    expect(buildUrl('https://api.test/s?lang=fr#top', [], params)).to.equal(
      'https://api.test/s?lang=fr&q=caf%C3%A9%20%26%20cr%C3%A8me%3D1%2B1&emoji=%E2%98%95&tag=a&tag=b&obj=%7B%22x%22%3A1%7D#top',
    );
    expect(buildUrl('https://api.test/s', [], [{ key: 'a b', value: 1 }])).to.equal('https://api.test/s?a%20b=1');
    expect(buildUrl('https://api.test/s?', [], [{ key: 'a', value: 1 }])).to.equal('https://api.test/s?a=1');
  });
});

describe('api block: run against a live server', () => {
  let server: FaultServer;
  let client: OutboundClient;

  beforeEach(async () => {
    server = await startFaultServer();
    client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 20, clock: new InstantClock() });
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('sends the built request and outputs data, status, lower-case headers, error null', async () => {
    server.script('/v1/S%C3%A3o%20Paulo', [{ status: 200, headers: { 'X-Rate-Remaining': '9' }, body: { temp: 21 } }]);
    const res = await run(
      context(
        {
          url: server.url('/v1/{city}?fixed=1'),
          pathParams: [{ key: 'city', value: 'São Paulo' }],
          params: [{ key: 'units', value: 'métric&x' }],
          headers: [{ key: 'X-Client', value: 'troupe' }],
        },
        client,
      ),
    );
    expect(res.handles).to.deep.equal(['success']);
    expect(res.output).to.deep.include({ status: 200, data: { temp: 21 }, error: null });
    expect((res.output['headers'] as Record<string, string>)['x-rate-remaining']).to.equal('9');
    expect(res.attempts).to.equal(1);
    const seen = server.requests[0];
    expect(seen?.url).to.equal('/v1/S%C3%A3o%20Paulo?fixed=1&units=m%C3%A9tric%26x');
    expect(seen?.headers['x-client']).to.equal('troupe');
  });

  it('posts a JSON body; GET drops it', async () => {
    await run(context({ url: server.url('/p'), method: 'POST', body: { a: [1, 'two'] } }, client));
    await run(context({ url: server.url('/g'), method: 'GET', body: { a: 1 } }, client));
    expect(server.requestsTo('/p')[0]?.body).to.equal('{"a":[1,"two"]}');
    expect(server.requestsTo('/p')[0]?.headers['content-type']).to.equal('application/json');
    expect(server.requestsTo('/g')[0]?.body).to.equal('');
  });

  it('a 4xx completes with error set and takes the error handle only when connected', async () => {
    server.script('/missing', [{ status: 404, body: { error: 'nope' } }]);
    const connected = await run(context({ url: server.url('/missing') }, client, true));
    expect(connected.handles).to.deep.equal(['error']);
    expect(connected.output['status']).to.equal(404);
    expect(connected.output['data']).to.deep.equal({ error: 'nope' });
    expect(connected.output['error']).to.deep.equal({ code: 'HTTP_ERROR', message: 'the server answered 404', status: 404, attempts: 1 });
    const alone = await run(context({ url: server.url('/missing') }, client, false));
    expect(alone.handles).to.deep.equal(['success']);
    expect(alone.output['error']).to.include({ code: 'HTTP_ERROR', status: 404 });
    expect(server.requestsTo('/missing')).to.have.length(2);
  });

  it('a 5xx after every retry reports the attempts', async () => {
    server.script('/down', [{ status: 503 }]);
    const res = await run(context({ url: server.url('/down'), retries: 2 }, client));
    expect(res.attempts).to.equal(3);
    expect(res.attemptLog.map((a) => a.status)).to.deep.equal([503, 503, 503]);
    expect(res.output['error']).to.deep.include({ code: 'HTTP_ERROR', status: 503, attempts: 3 });
  });

  it('a Retry-After beyond retryMaxMs completes with RATE_LIMITED and retryAfterMs', async () => {
    server.script('/limited', [{ status: 429, headers: { 'Retry-After': '3600' } }]);
    const res = await run(context({ url: server.url('/limited') }, client, true));
    expect(res.handles).to.deep.equal(['error']);
    expect(res.output['status']).to.equal(429);
    expect(res.output['error']).to.deep.include({ code: 'RATE_LIMITED', status: 429, attempts: 1, retryAfterMs: 3_600_000 });
  });

  it('no response throws the TroupeError with the attempts', async () => {
    const port = await closedPort();
    const err = await rejection(run(context({ url: `http://127.0.0.1:${port}/`, retries: 1 }, client)));
    expect(err.code).to.equal('CONNECTION_FAILED');
    expect(err.details).to.deep.include({ attempts: 2 });
  });

  it('refuses the metadata address with BLOCKED_ADDRESS', async () => {
    const err = await rejection(run(context({ url: 'http://169.254.169.254/latest/meta-data/' }, client)));
    expect(err.code).to.equal('BLOCKED_ADDRESS');
  });

  it('fails clearly without an HTTP client', async () => {
    const err = await rejection(run(context({ url: server.url('/') }, undefined)));
    expect(err.code).to.equal('INTERNAL');
  });
});

describe('api block: secrets in the stored record', () => {
  it('are sent for real and shown as *** in the recorded input and output, echoes included (downstream blocks get the real data)', async () => {
    const server = await startFaultServer();
    const client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 5 });
    const secret = 'tok_9f8e7d6c5b4a';
    const config = {
      url: server.url('/echo') + '?key={{API_TOKEN}}',
      method: 'POST',
      headers: [{ key: 'Authorization', value: 'Bearer {{API_TOKEN}}' }],
      body: { token: '{{API_TOKEN}}' },
    };
    const block: CompiledBlock = {
      id: 'api', type: 'api', name: 'Api', normName: 'api', config, index: 1,
      incoming: [], outgoing: [], children: [], hasErrorConnection: false, references: [], needs: [],
    };
    try {
      const outcome = await runBlock(
        {
          executionId: 'e1', workflowId: 'w1', block, type: apiBlock,
          scope: { outputs: {}, blockNames: new Set(['start', 'api']), variables: {} },
          secrets: new Map([['API_TOKEN', secret]]),
          input: {}, trigger: { type: 'manual' }, services: services(client), emitChunk: () => undefined,
        },
        { aborted: false, signal: new AbortController().signal },
      );
      expect(outcome.kind).to.equal('completed');
      const seen = server.requestsTo('/echo')[0];
      expect(seen?.headers.authorization).to.equal(`Bearer ${secret}`);
      expect(seen?.body).to.contain(secret);
      if (outcome.kind !== 'completed') return;
      // everything but `live` is what gets recorded; `live` is what downstream blocks receive
      const { live, ...recordedParts } = outcome;
      const recorded = JSON.stringify(recordedParts);
      expect(recorded).to.not.contain(secret);
      expect(recorded).to.contain('Bearer ***');
      expect(JSON.stringify(outcome.output['data'])).to.contain('***');
      expect(JSON.stringify(live)).to.contain(secret);
    } finally {
      client.close();
      await server.close();
    }
  });
});
