import { expect } from 'chai';
import { createOutboundClient } from '../../src/outbound/client.js';
import type { LookupFn, OutboundClient, OutboundClientOptions } from '../../src/outbound/types.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { InstantClock, outboundRequest, rejection } from './support.js';

const signal = new AbortController().signal;

/** Test DNS: `*.test` names map to fixed addresses; anything else does not exist. */
function fakeDns(table: Record<string, string[]>, calls: string[] = []): LookupFn {
  return async (hostname) => {
    calls.push(hostname);
    const found = table[hostname];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

describe('outbound client: SSRF guard', () => {
  let server: FaultServer;
  const clients: OutboundClient[] = [];
  const make = (over: Partial<OutboundClientOptions> = {}): OutboundClient => {
    const client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: [], hostRps: 10_000, hostMaxInflight: 10, clock: new InstantClock(), ...over });
    clients.push(client);
    return client;
  };

  beforeEach(async () => {
    server = await startFaultServer();
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server.close();
  });

  it('refuses loopback, private, link-local/metadata and unspecified literals without retrying', async () => {
    const client = make();
    const targets = [
      server.url('/'),
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://0.0.0.0/',
      'http://[::1]/',
      'http://[::]/',
      'http://[fd00:ec2::254]/',
      'http://[fe80::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[::127.0.0.1]/', // IPv4-compatible: outside IPv6 global unicast
      'http://[::ffff:0:7f00:1]/',
      'http://2130706433/', // 127.0.0.1 spelled as one number
      'http://0x7f.1/',
    ];
    for (const url of targets) {
      const err = await rejection(client.send(outboundRequest(url), signal));
      expect(err.code, url).to.equal('BLOCKED_ADDRESS');
      expect(err.retryable, url).to.equal(false);
      expect(err.details, url).to.deep.include({ attempts: 1 });
    }
    expect(server.requests).to.have.length(0);
  });

  it('checks the resolved address, not the name', async () => {
    const client = make({ lookup: fakeDns({ 'metadata.test': ['169.254.169.254'], 'intranet.test': ['10.0.0.7'], 'mixed.test': ['203.0.113.5', '10.0.0.1'], 'local.test': ['127.0.0.1'], 'compat.test': ['::7f00:1'] }) });
    for (const host of ['metadata.test', 'intranet.test', 'mixed.test', `local.test:${server.port}`, 'compat.test']) {
      const err = await rejection(client.send(outboundRequest(`http://${host}/`), signal));
      expect(err.code, host).to.equal('BLOCKED_ADDRESS');
    }
    expect(server.requests).to.have.length(0);
  });

  it('lets the allow-list through: IP, CIDR, hostname and *.suffix', async () => {
    const lookup = fakeDns({ 'api.internal': ['127.0.0.1'], 'a.corp.test': ['127.0.0.1'] });
    for (const allowHosts of [['127.0.0.1'], ['127.0.0.0/8'], ['api.internal'], ['*.corp.test']]) {
      const client = make({ allowHosts, lookup });
      const host = allowHosts[0] === 'api.internal' ? 'api.internal' : allowHosts[0] === '*.corp.test' ? 'a.corp.test' : '127.0.0.1';
      const res = await client.send(outboundRequest(`http://${host}:${server.port}/ok`), signal);
      expect(res.status, String(allowHosts)).to.equal(200);
    }
  });

  it('TROUPE_ALLOW_PRIVATE_NETWORK lets everything through', async () => {
    const res = await make({ allowPrivateNetwork: true }).send(outboundRequest(server.url('/ok')), signal);
    expect(res.status).to.equal(200);
  });

  it('connects to the address it checked: one lookup per connection, no second resolution', async () => {
    const calls: string[] = [];
    let n = 0;
    // a rebinding resolver: the first answer is allowed, any later one is not
    const lookup: LookupFn = async (hostname) => {
      calls.push(hostname);
      n += 1;
      return [{ address: n === 1 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    };
    const client = make({ allowHosts: ['127.0.0.1'], lookup });
    const res = await client.send(outboundRequest(`http://rebind.test:${server.port}/x`), signal);
    expect(res.status).to.equal(200);
    expect(calls).to.deep.equal(['rebind.test']);
    expect(server.requestsTo('/x')[0]?.headers.host).to.equal(`rebind.test:${server.port}`);
  });

  it('re-checks every redirect hop: to a private literal, to a name resolving to metadata', async () => {
    const client = make({ allowHosts: ['127.0.0.1'], lookup: fakeDns({ 'metadata.test': ['169.254.169.254'] }) });
    server.script('/to-private', [{ redirect: 'http://10.0.0.1/admin' }]);
    server.script('/to-metadata', [{ redirect: 'http://metadata.test/latest/meta-data/' }]);
    server.script('/to-v6-loopback', [{ redirect: 'http://[::1]/' }]);
    for (const path of ['/to-private', '/to-metadata', '/to-v6-loopback']) {
      const err = await rejection(client.send(outboundRequest(server.url(path)), signal));
      expect(err.code, path).to.equal('BLOCKED_ADDRESS');
      expect(server.requestsTo(path), path).to.have.length(1);
    }
  });

  it('an allowed name does not vouch for a redirect to its raw address', async () => {
    const client = make({ allowHosts: ['api.internal'], lookup: fakeDns({ 'api.internal': ['127.0.0.1'] }) });
    server.script('/hop', [{ redirect: `http://127.0.0.1:${server.port}/secret` }]);
    const err = await rejection(client.send(outboundRequest(`http://api.internal:${server.port}/hop`), signal));
    expect(err.code).to.equal('BLOCKED_ADDRESS');
    expect(server.requestsTo('/secret')).to.have.length(0);
  });

  it('refuses a redirect to a non-http scheme', async () => {
    server.script('/to-file', [{ redirect: 'file:///etc/passwd' }]);
    const err = await rejection(make({ allowHosts: ['127.0.0.1'] }).send(outboundRequest(server.url('/to-file')), signal));
    expect(err.code).to.equal('BLOCKED_ADDRESS');
  });
});

describe('outbound client: redirects', () => {
  let server: FaultServer;
  let other: FaultServer;
  let client: OutboundClient;

  beforeEach(async () => {
    server = await startFaultServer();
    other = await startFaultServer();
    client = createOutboundClient({ allowPrivateNetwork: false, allowHosts: ['127.0.0.1'], hostRps: 10_000, hostMaxInflight: 10, clock: new InstantClock() });
  });
  afterEach(async () => {
    client.close();
    await server.close();
    await other.close();
  });

  it('follows up to 5 redirects and fails the 6th with TOO_MANY_REDIRECTS (not retried)', async () => {
    for (let i = 0; i < 6; i++) server.script(`/r${i}`, [{ redirect: `/r${i + 1}` }]);
    server.script('/r5', [{ status: 200, body: 'end of five' }]);
    const res = await client.send(outboundRequest(server.url('/r0')), signal);
    expect(res.data).to.equal('end of five');
    expect(res.attempts).to.have.length(1);
    server.script('/r5', [{ redirect: '/r6' }]);
    server.script('/r6', [{ status: 200 }]);
    const err = await rejection(client.send(outboundRequest(server.url('/r0')), signal));
    expect(err.code).to.equal('TOO_MANY_REDIRECTS');
    expect(err.details).to.deep.include({ attempts: 1 });
    expect(server.requestsTo('/r6')).to.have.length(0);
  });

  it('303 turns any method into GET and drops the body', async () => {
    server.script('/submit', [{ redirect: '/result', status: 303 }]);
    await client.send(outboundRequest(server.url('/submit'), { method: 'PUT', body: { a: 1 } }), signal);
    const result = server.requestsTo('/result')[0];
    expect(result?.method).to.equal('GET');
    expect(result?.body).to.equal('');
    expect(result?.headers['content-type']).to.equal(undefined);
  });

  it('301/302 turn POST into GET; 307/308 keep method and body', async () => {
    for (const status of [301, 302, 307, 308]) {
      server.script(`/from${status}`, [{ redirect: `/to${status}`, status }]);
      await client.send(outboundRequest(server.url(`/from${status}`), { method: 'POST', body: { n: status } }), signal);
    }
    expect(server.requestsTo('/to301')[0]?.method).to.equal('GET');
    expect(server.requestsTo('/to302')[0]?.method).to.equal('GET');
    for (const status of [307, 308]) {
      const r = server.requestsTo(`/to${status}`)[0];
      expect(r?.method).to.equal('POST');
      expect(JSON.parse(r?.body ?? '')).to.deep.equal({ n: status });
    }
  });

  it('keeps Authorization on a same-origin redirect and strips it across origins', async () => {
    server.script('/same', [{ redirect: '/landing' }]);
    server.script('/cross', [{ redirect: other.url('/landing') }]);
    const headers = { Authorization: 'Bearer s3cret', Cookie: 'sid=1', 'X-Keep': 'yes' };
    await client.send(outboundRequest(server.url('/same'), { headers }), signal);
    await client.send(outboundRequest(server.url('/cross'), { headers }), signal);
    expect(server.requestsTo('/landing')[0]?.headers.authorization).to.equal('Bearer s3cret');
    const crossed = other.requestsTo('/landing')[0];
    expect(crossed?.headers.authorization).to.equal(undefined);
    expect(crossed?.headers.cookie).to.equal(undefined);
    expect(crossed?.headers['x-keep']).to.equal('yes');
  });

  it('retries a 5xx after a redirect as one attempt of the whole chain', async () => {
    server.script('/start', [{ redirect: '/flaky' }]);
    server.script('/flaky', [{ status: 503 }, { status: 200, body: 'ok' }]);
    const res = await client.send(outboundRequest(server.url('/start')), signal);
    expect(res.data).to.equal('ok');
    expect(res.attempts.map((a) => a.status)).to.deep.equal([503, 200]);
    expect(server.requestsTo('/start')).to.have.length(2);
  });
});
