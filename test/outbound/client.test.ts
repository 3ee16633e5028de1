import { expect } from 'chai';
import { createOutboundClient } from '../../src/outbound/client.js';
import type { LookupFn, OutboundClient, OutboundClientOptions } from '../../src/outbound/types.js';
import { closedPort, startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { InstantClock, outboundRequest, rejection } from './support.js';

describe('outbound client: retries (SPEC §3 table)', () => {
  let server: FaultServer;
  let clock: InstantClock;
  let client: OutboundClient;
  const signal = new AbortController().signal;

  beforeEach(async () => {
    server = await startFaultServer();
    clock = new InstantClock();
    client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 50, clock, random: () => 0.5 });
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('retries 5xx with full-jitter exponential backoff, then succeeds', async () => {
    server.script('/flaky', [{ status: 503 }, { status: 500 }, { status: 502 }, { status: 200, body: { ok: true } }]);
    const res = await client.send(outboundRequest(server.url('/flaky'), { retryBaseMs: 100, retryMaxMs: 250 }), signal);
    expect(res.status).to.equal(200);
    expect(res.data).to.deep.equal({ ok: true });
    expect(server.requestsTo('/flaky')).to.have.length(4);
    // random() = 0.5 × min(250, 100·2^(n-1)) → 50, 100, 125
    expect(clock.sleeps).to.deep.equal([50, 100, 125]);
    expect(res.attempts).to.deep.equal([
      { attempt: 1, status: 503, delayMs: 50 },
      { attempt: 2, status: 500, delayMs: 100 },
      { attempt: 3, status: 502, delayMs: 125 },
      { attempt: 4, status: 200 },
    ]);
  });

  it('uses the random source for jitter (0 and just under 1)', async () => {
    server.script('/down', [{ status: 500 }]);
    const draws = [0, 0.999];
    const jitterClient = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 5, clock, random: () => draws.shift() ?? 0 });
    try {
      const res = await jitterClient.send(outboundRequest(server.url('/down'), { retries: 2, retryBaseMs: 1000, retryMaxMs: 5000 }), signal);
      expect(res.status).to.equal(500);
      expect(res.attempts.map((a) => a.delayMs)).to.deep.equal([0, 1998, undefined]);
    } finally {
      jitterClient.close();
    }
  });

  it('stops after `retries` retries: 3 → 4 attempts, and returns the last 5xx response', async () => {
    server.script('/down', [{ status: 500, body: 'still down' }]);
    const res = await client.send(outboundRequest(server.url('/down')), signal);
    expect(res.status).to.equal(500);
    expect(res.data).to.equal('still down');
    expect(server.requestsTo('/down')).to.have.length(4);
    expect(res.attempts.map((a) => a.status)).to.deep.equal([500, 500, 500, 500]);
    expect(res.attempts[3]).to.not.have.property('delayMs');
  });

  for (const status of [400, 401, 403, 404, 409, 422]) {
    it(`never retries ${status}`, async () => {
      server.script('/no', [{ status, body: { error: 'no' } }, { status: 200 }]);
      const res = await client.send(outboundRequest(server.url('/no')), signal);
      expect(res.status).to.equal(status);
      expect(res.data).to.deep.equal({ error: 'no' });
      expect(server.requestsTo('/no')).to.have.length(1);
      expect(clock.sleeps).to.deep.equal([]);
    });
  }

  it('honours Retry-After in seconds exactly', async () => {
    server.script('/busy', [{ status: 429, headers: { 'Retry-After': '2' } }, { status: 200, body: 'ok' }]);
    const res = await client.send(outboundRequest(server.url('/busy'), { retryMaxMs: 5000 }), signal);
    expect(res.status).to.equal(200);
    expect(clock.sleeps).to.deep.equal([2000]);
    expect(res.attempts[0]).to.deep.equal({ attempt: 1, status: 429, retryAfterMs: 2000, delayMs: 2000 });
  });

  it('honours Retry-After as an HTTP-date against the clock', async () => {
    const at = new Date(clock.now() + 3000);
    at.setMilliseconds(0);
    const expected = at.getTime() - clock.now();
    server.script('/busy', [{ status: 429, headers: { 'Retry-After': at.toUTCString() } }, { status: 200 }]);
    const res = await client.send(outboundRequest(server.url('/busy'), { retryMaxMs: 5000 }), signal);
    expect(res.status).to.equal(200);
    expect(clock.sleeps).to.deep.equal([expected]);
  });

  it('429 without Retry-After backs off like a 5xx', async () => {
    server.script('/busy', [{ status: 429 }, { status: 200 }]);
    const res = await client.send(outboundRequest(server.url('/busy'), { retryBaseMs: 10 }), signal);
    expect(res.status).to.equal(200);
    expect(clock.sleeps).to.deep.equal([5]);
  });

  it('stops with the 429 and retryAfterMs when Retry-After exceeds retryMaxMs', async () => {
    server.script('/busy', [{ status: 429, headers: { 'Retry-After': '120' }, body: { error: 'slow down' } }, { status: 200 }]);
    const res = await client.send(outboundRequest(server.url('/busy'), { retryMaxMs: 30_000 }), signal);
    expect(res.status).to.equal(429);
    expect(res.retryAfterMs).to.equal(120_000);
    expect(res.data).to.deep.equal({ error: 'slow down' });
    expect(server.requestsTo('/busy')).to.have.length(1);
    expect(clock.sleeps).to.deep.equal([]);
  });

  it('retries a reset connection (server destroys the socket)', async () => {
    server.script('/reset', [{ reset: true }, { reset: true }, { status: 200, body: 'back' }]);
    const res = await client.send(outboundRequest(server.url('/reset')), signal);
    expect(res.data).to.equal('back');
    expect(res.attempts.map((a) => a.errorCode ?? a.status)).to.deep.equal(['CONNECTION_FAILED', 'CONNECTION_FAILED', 200]);
  });

  it('retries a connection reset in the middle of the body', async () => {
    server.script('/half', [{ resetMidBody: true }, { status: 200, body: 'whole' }]);
    const res = await client.send(outboundRequest(server.url('/half')), signal);
    expect(res.data).to.equal('whole');
    expect(res.attempts[0]?.errorCode).to.equal('CONNECTION_FAILED');
  });

  it('fails with CONNECTION_FAILED after retrying a refused connection', async () => {
    const port = await closedPort();
    const err = await rejection(client.send(outboundRequest(`http://127.0.0.1:${port}/`, { retries: 2 }), signal));
    expect(err.code).to.equal('CONNECTION_FAILED');
    expect(err.message).to.contain('ECONNREFUSED');
    expect(err.details).to.deep.include({ attempts: 3 });
    expect((err.details as { attemptLog: unknown[] }).attemptLog).to.have.length(3);
    expect(clock.sleeps).to.have.length(2);
  });

  it('retries a DNS failure (ENOTFOUND)', async () => {
    let calls = 0;
    const lookup: LookupFn = async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('getaddrinfo ENOTFOUND flaky.test'), { code: 'ENOTFOUND' });
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const dnsClient = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 5, clock, random: () => 0.5, lookup });
    try {
      const res = await dnsClient.send(outboundRequest(`http://flaky.test:${server.port}/hello`), signal);
      expect(res.status).to.equal(200);
      expect(res.attempts[0]?.errorCode).to.equal('CONNECTION_FAILED');
      expect(calls).to.equal(2);
    } finally {
      dnsClient.close();
    }
  });

  it('times out a slow response (the timeout covers the body download) and retries it', async () => {
    server.script('/slow', [{ stream: { chunkBytes: 10, intervalMs: 20, totalBytes: 10_000 } }, { status: 200, body: 'fast' }]);
    const res = await client.send(outboundRequest(server.url('/slow'), { timeoutMs: 400 }), signal);
    expect(res.data).to.equal('fast');
    expect(res.attempts[0]?.errorCode).to.equal('HTTP_TIMEOUT');
  });

  it('fails with HTTP_TIMEOUT when every attempt hangs', async () => {
    server.script('/hang', [{ hang: true }]);
    const err = await rejection(client.send(outboundRequest(server.url('/hang'), { timeoutMs: 60, retries: 1 }), signal));
    expect(err.code).to.equal('HTTP_TIMEOUT');
    expect(err.retryable).to.equal(true);
    expect(err.details).to.deep.include({ attempts: 2 });
    expect(server.requestsTo('/hang')).to.have.length(2);
  });

  it('does not retry when retries is 0', async () => {
    server.script('/down', [{ status: 503 }]);
    const res = await client.send(outboundRequest(server.url('/down'), { retries: 0 }), signal);
    expect(res.status).to.equal(503);
    expect(res.attempts).to.deep.equal([{ attempt: 1, status: 503 }]);
  });

  it('an abort cancels the wait between attempts', async () => {
    const ctl = new AbortController();
    const realClient = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 5, random: () => 1 });
    server.script('/down', [{ status: 503 }]);
    try {
      const pending = realClient.send(outboundRequest(server.url('/down'), { retryBaseMs: 60_000, retryMaxMs: 60_000 }), ctl.signal);
      const started = Date.now();
      setTimeout(() => ctl.abort(), 100);
      const err = await rejection(pending);
      expect(err.code).to.equal('CANCELLED');
      expect(Date.now() - started).to.be.below(10_000);
      expect(server.requestsTo('/down')).to.have.length(1);
    } finally {
      realClient.close();
    }
  });

  it('an abort cancels a request in flight', async () => {
    const ctl = new AbortController();
    server.script('/hang', [{ hang: true }]);
    const pending = client.send(outboundRequest(server.url('/hang'), { timeoutMs: 60_000 }), ctl.signal);
    setTimeout(() => ctl.abort(), 50);
    const err = await rejection(pending);
    expect(err.code).to.equal('CANCELLED');
    expect(server.requestsTo('/hang')).to.have.length(1);
  });
});

describe('outbound client: request and response shapes', () => {
  let server: FaultServer;
  let client: OutboundClient;
  const signal = new AbortController().signal;
  const options: OutboundClientOptions = { allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 50, clock: new InstantClock() };

  beforeEach(async () => {
    server = await startFaultServer();
    client = createOutboundClient(options);
  });
  afterEach(async () => {
    client.close();
    await server.close();
  });

  it('keeps one Idempotency-Key across the attempts of a POST and a new one per send', async () => {
    server.script('/pay', [{ status: 503 }, { status: 502 }, { status: 201 }]);
    await client.send(outboundRequest(server.url('/pay'), { method: 'POST', body: { amount: 5 } }), signal);
    const keys = server.requestsTo('/pay').map((r) => r.headers['idempotency-key']);
    expect(keys).to.have.length(3);
    expect(keys[0]).to.match(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).to.equal(1);
    server.script('/pay', [{ status: 201 }]);
    await client.send(outboundRequest(server.url('/pay'), { method: 'PATCH', body: { amount: 5 } }), signal);
    const next = server.requestsTo('/pay')[3]?.headers['idempotency-key'];
    expect(next).to.be.a('string').and.not.equal(keys[0]);
  });

  it("keeps the author's Idempotency-Key whatever its case", async () => {
    server.script('/pay', [{ status: 500 }, { status: 200 }]);
    await client.send(outboundRequest(server.url('/pay'), { method: 'POST', headers: { 'idempotency-KEY': 'mine-1' }, body: {} }), signal);
    expect(server.requestsTo('/pay').map((r) => r.headers['idempotency-key'])).to.deep.equal(['mine-1', 'mine-1']);
  });

  it('adds no Idempotency-Key to GET/PUT/DELETE, or when retries is 0', async () => {
    for (const method of ['GET', 'PUT', 'DELETE'] as const) await client.send(outboundRequest(server.url('/x'), { method }), signal);
    await client.send(outboundRequest(server.url('/x'), { method: 'POST', retries: 0, body: 'a' }), signal);
    expect(server.requestsTo('/x').map((r) => r.headers['idempotency-key'])).to.deep.equal([undefined, undefined, undefined, undefined]);
  });

  it('sends objects and arrays as JSON with application/json', async () => {
    for (const body of [{ a: 1, b: ['x'] }, [1, 2]]) {
      await client.send(outboundRequest(server.url('/json'), { method: 'POST', body }), signal);
    }
    const [obj, arr] = server.requestsTo('/json');
    expect(obj?.headers['content-type']).to.equal('application/json');
    expect(JSON.parse(obj?.body ?? '')).to.deep.equal({ a: 1, b: ['x'] });
    expect(arr?.body).to.equal('[1,2]');
  });

  it("keeps the author's Content-Type; strings go as given (text/plain by default)", async () => {
    await client.send(outboundRequest(server.url('/t'), { method: 'PUT', body: '<a>1</a>', headers: { 'content-type': 'application/xml' } }), signal);
    await client.send(outboundRequest(server.url('/t'), { method: 'PATCH', body: 'plain words' }), signal);
    await client.send(outboundRequest(server.url('/t'), { method: 'POST', body: { a: 1 }, headers: { 'Content-Type': 'application/vnd.api+json' } }), signal);
    const [xml, text, vnd] = server.requestsTo('/t');
    expect(xml?.headers['content-type']).to.equal('application/xml');
    expect(xml?.body).to.equal('<a>1</a>');
    expect(text?.headers['content-type']).to.equal('text/plain; charset=utf-8');
    expect(text?.body).to.equal('plain words');
    expect(vnd?.headers['content-type']).to.equal('application/vnd.api+json');
    expect(vnd?.body).to.equal('{"a":1}');
  });

  it('treats a blank Content-Type, Accept or Idempotency-Key as not set: the default applies', async () => {
    const blank = { 'Content-Type': '', accept: ' ', 'IDEMPOTENCY-KEY': '' };
    await client.send(outboundRequest(server.url('/blank'), { method: 'POST', body: { a: 1 }, headers: blank }), signal);
    await client.send(outboundRequest(server.url('/blank'), { method: 'GET', headers: { 'content-type': '' } }), signal);
    const [post, get] = server.requestsTo('/blank');
    expect(post?.headers['content-type']).to.equal('application/json');
    expect(post?.headers['accept']).to.equal('application/json, text/plain, */*');
    expect(post?.headers['idempotency-key']).to.match(/^[0-9a-f-]{36}$/);
    expect(get?.headers).to.not.have.property('content-type');
  });

  it('form-encodes an object when the author asks for x-www-form-urlencoded', async () => {
    await client.send(outboundRequest(server.url('/f'), { method: 'POST', body: { q: 'a b&c', n: 2 }, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }), signal);
    expect(server.requestsTo('/f')[0]?.body).to.equal('q=a+b%26c&n=2');
  });

  it('drops the body of GET and DELETE', async () => {
    for (const method of ['GET', 'DELETE'] as const) {
      await client.send(outboundRequest(server.url('/nobody'), { method, body: { secret: 'x' } }), signal);
    }
    for (const r of server.requestsTo('/nobody')) {
      expect(r.body).to.equal('');
      expect(r.headers['content-type']).to.equal(undefined);
    }
  });

  it('parses JSON responses (application/json and +json) and keeps text otherwise', async () => {
    server.script('/j', [{ body: '{"a":[1]}', headers: { 'Content-Type': 'application/json; charset=utf-8' } }]);
    server.script('/p', [{ body: '{"b":2}', headers: { 'Content-Type': 'application/problem+json' } }]);
    server.script('/t', [{ body: '{"looks":"json"}', headers: { 'Content-Type': 'text/plain' } }]);
    server.script('/broken', [{ body: '{not json', headers: { 'Content-Type': 'application/json' } }]);
    server.script('/empty', [{ status: 204 }]);
    const data = async (path: string): Promise<unknown> => (await client.send(outboundRequest(server.url(path)), signal)).data;
    expect(await data('/j')).to.deep.equal({ a: [1] });
    expect(await data('/p')).to.deep.equal({ b: 2 });
    expect(await data('/t')).to.equal('{"looks":"json"}');
    expect(await data('/broken')).to.equal('{not json');
    expect(await data('/empty')).to.equal('');
  });

  it('lower-cases response header names and joins repeated ones', async () => {
    server.script('/h', [{ headers: { 'X-Trace-ID': 'abc', 'Set-Cookie': ['a=1', 'b=2'] }, body: 'ok' }]);
    const res = await client.send(outboundRequest(server.url('/h')), signal);
    expect(res.headers['x-trace-id']).to.equal('abc');
    expect(res.headers['set-cookie']).to.equal('a=1, b=2');
    expect(Object.keys(res.headers).every((k) => k === k.toLowerCase())).to.equal(true);
  });

  it('decodes a declared charset', async () => {
    server.script('/latin', [{ body: Buffer.from([0x63, 0x61, 0x66, 0xe9]), headers: { 'Content-Type': 'text/plain; charset=iso-8859-1' } }]);
    expect((await client.send(outboundRequest(server.url('/latin')), signal)).data).to.equal('café');
  });

  it('aborts a response over maxResponseBytes while streaming, without retrying', async () => {
    server.script('/endless', [{ stream: { chunkBytes: 16 * 1024, intervalMs: 1 } }]);
    const err = await rejection(client.send(outboundRequest(server.url('/endless'), { maxResponseBytes: 100_000 }), signal));
    expect(err.code).to.equal('RESPONSE_TOO_LARGE');
    expect(err.details).to.deep.include({ attempts: 1 });
    expect(server.requestsTo('/endless')).to.have.length(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(server.streamsCutByClient).to.equal(1);
    expect(server.bytesStreamed.get('/endless')).to.be.below(2_000_000);
  });

  it('refuses a declared Content-Length over the cap before reading', async () => {
    server.script('/big', [{ body: 'x'.repeat(5000) }]);
    const err = await rejection(client.send(outboundRequest(server.url('/big'), { maxResponseBytes: 4999 }), signal));
    expect(err.code).to.equal('RESPONSE_TOO_LARGE');
    const ok = await client.send(outboundRequest(server.url('/big'), { maxResponseBytes: 5000 }), signal);
    expect((ok.data as string).length).to.equal(5000);
  });

  it('rejects a non-http URL before sending', async () => {
    const err = await rejection(client.send(outboundRequest('file:///etc/passwd'), signal));
    expect(err.code).to.equal('INVALID_CONFIG');
    const bad = await rejection(client.send(outboundRequest('not a url'), signal));
    expect(bad.code).to.equal('INVALID_CONFIG');
  });
});
