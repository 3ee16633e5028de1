import { expect } from 'chai';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { createOutboundClient } from '../../src/outbound/client.js';
import type { OutboundClient } from '../../src/outbound/types.js';
import { outboundRequest } from './support.js';

/**
 * What goes over the wire, pinned as the client sent it when it was built on axios' node
 * adapter (the same file passes against that build): default headers, body length, a URL's
 * userinfo as Basic credentials, header values cleaned rather than refused, and compressed
 * bodies decoded.
 */
interface Seen {
  method: string;
  headers: IncomingHttpHeaders;
  raw: string[];
  body: string;
}

const PAYLOAD = JSON.stringify({ ok: true, word: 'héllo' });
const encoders: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => zlib.gzipSync(b),
  deflate: (b) => zlib.deflateSync(b),
  'raw-deflate': (b) => zlib.deflateRawSync(b),
  br: (b) => zlib.brotliCompressSync(b),
};

describe('outbound client: on the wire', () => {
  let server: http.Server;
  let base: string;
  let seen: Seen[];
  let client: OutboundClient;
  const signal = new AbortController().signal;

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', headers: req.headers, raw: req.rawHeaders, body: Buffer.concat(chunks).toString('utf8') });
        const encoding = /^\/enc\/(.+)$/.exec(req.url ?? '')?.[1];
        const encode = encoding === undefined ? undefined : encoders[encoding];
        if (encode === undefined) {
          res.setHeader('content-type', 'application/json');
          res.end(PAYLOAD);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding === 'raw-deflate' ? 'deflate' : encoding });
        res.end(encode(Buffer.from(PAYLOAD)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    seen = [];
    client = createOutboundClient({ allowPrivateNetwork: true, allowHosts: [], hostRps: 10_000, hostMaxInflight: 10 });
  });
  afterEach(() => client.close());

  it('sends the default Accept, User-Agent and Accept-Encoding, and no length on a GET', async () => {
    const res = await client.send(outboundRequest(`${base}/plain`), signal);
    expect(res.data).to.deep.equal(JSON.parse(PAYLOAD));
    const headers = seen[0]?.headers;
    expect(headers?.['accept']).to.equal('application/json, text/plain, */*');
    expect(headers?.['user-agent']).to.match(/^troupe\/\d+\.\d+\.\d+/);
    expect(headers?.['accept-encoding']).to.equal('gzip, compress, deflate, br');
    expect(headers?.['content-length']).to.equal(undefined);
    expect(headers?.['transfer-encoding']).to.equal(undefined);
  });

  it("keeps the author's User-Agent and Accept-Encoding, whatever their case", async () => {
    await client.send(outboundRequest(`${base}/plain`, { headers: { 'user-agent': 'mine/1', 'ACCEPT-ENCODING': 'identity' } }), signal);
    expect(seen[0]?.headers['user-agent']).to.equal('mine/1');
    expect(seen[0]?.headers['accept-encoding']).to.equal('identity');
  });

  it('sends a body with its byte length', async () => {
    await client.send(outboundRequest(`${base}/plain`, { method: 'POST', body: { word: 'héllo ✓' }, retries: 0 }), signal);
    const s = seen[0];
    expect(s?.method).to.equal('POST');
    expect(s?.body).to.equal(JSON.stringify({ word: 'héllo ✓' }));
    expect(s?.headers['content-length']).to.equal(String(Buffer.byteLength(s?.body ?? '')));
    expect(s?.headers['content-type']).to.equal('application/json');
  });

  it("sends a URL's userinfo as Basic credentials instead of an Authorization header", async () => {
    const url = `${base.replace('http://', 'http://us%65r:p%40ss@')}/plain`;
    await client.send(outboundRequest(url, { headers: { Authorization: 'Bearer other' } }), signal);
    const auth = seen[0]?.raw.filter((_, i, raw) => i % 2 === 0 && raw[i]?.toLowerCase() === 'authorization');
    expect(auth).to.have.length(1);
    expect(seen[0]?.headers.authorization).to.equal(`Basic ${Buffer.from('user:p@ss').toString('base64')}`);
  });

  it('drops what a header value cannot carry and trims it; a name given in two cases goes once, last value', async () => {
    await client.send(outboundRequest(`${base}/plain`, { headers: { 'X-Word': '  a\u0100b\u2713c\t ', 'X-Twice': '1', 'x-twice': '2' } }), signal);
    const s = seen[0];
    expect(s?.headers['x-word']).to.equal('abc');
    expect(s?.raw.filter((name) => name.toLowerCase() === 'x-twice')).to.deep.equal(['X-Twice']);
    expect(s?.headers['x-twice']).to.equal('2');
  });

  for (const encoding of Object.keys(encoders)) {
    it(`decodes a ${encoding} body and drops its Content-Encoding`, async () => {
      const res = await client.send(outboundRequest(`${base}/enc/${encoding}`), signal);
      expect(res.status).to.equal(200);
      expect(res.data).to.deep.equal(JSON.parse(PAYLOAD));
      expect(res.headers).to.not.have.property('content-encoding');
      expect(res.headers['content-type']).to.equal('application/json');
    });
  }
});
