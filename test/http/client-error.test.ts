/**
 * Requests Node's HTTP parser refuses before the app sees them, sent as raw bytes to the app on
 * a real server wired as `troupe serve` wires it (answerClientErrors).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { answerClientErrors } from '../../src/http/client-error.js';
import { makeHarness, type Harness } from './support.js';

const TOKEN = 'Bearer token-that-must-not-be-logged';

/** Writes `bytes` on a fresh connection and reads until the server closes it. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes, 'latin1'));
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
  });
}

function parse(answer: string): { status: number; body: unknown } {
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
  const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
  return { status, body: body === '' ? null : JSON.parse(body) };
}

describe('http: requests the HTTP parser refuses', () => {
  let h: Harness;
  let server: http.Server;
  let port: number;
  const logged: string[] = [];

  beforeEach(async () => {
    logged.length = 0;
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => { logged.push(chunk.toString()); done(); } });
    const logger = pino({ level: 'debug' }, sink);
    h = makeHarness({ logger });
    server = http.createServer(h.app.callback());
    answerClientErrors(server, logger);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await h.close();
  });

  it('answers them in the error envelope with the status Node would give (400, 431), not a bare status line', async () => {
    const cases: [string, number, string][] = [
      [`POST /api/workflows HTTP/1.1\r\nHost: x\r\nAuthorization: ${TOKEN}\r\nContent-Length: abc\r\n\r\n{}`, 400, 'INVALID_REQUEST'],
      [`POST /api/workflows HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`, 400, 'INVALID_REQUEST'],
      ['FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'INVALID_REQUEST'],
      [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
    ];
    for (const [bytes, status, code] of cases) {
      const answer = parse(await exchange(port, bytes));
      expect(answer.status, bytes.slice(0, 40)).to.equal(status);
      expect(answer.body, bytes.slice(0, 40)).to.have.nested.property('error.code', code);
      expect(answer.body).to.have.nested.property('error.details', null);
    }
  });

  it('logs none of the refused request, its credentials included', async () => {
    // a request with bytes after `Connection: close`: the parser fails while the app answers it
    const smuggled = `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: ${TOKEN}\r\n\r\ntrailing`;
    await exchange(port, smuggled);
    await exchange(port, `POST /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: ${TOKEN}\r\nContent-Length: abc\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const tokenBytes = [...Buffer.from('must-not-be-logged')].join(',');
    const text = logged.join('');
    expect(text).to.not.include('rawPacket');
    expect(text).to.not.include('must-not-be-logged');
    expect(text).to.not.include(tokenBytes);
  });

  it('logs what a response stream error is without the request bytes it carries', () => {
    const err = Object.assign(new Error('Parse Error: Data after `Connection: close`'), { code: 'HPE_CLOSED_CONNECTION', rawPacket: Buffer.from(`Authorization: ${TOKEN}`) });
    h.app.emit('error', err);
    const text = logged.join('');
    expect(text).to.include('HPE_CLOSED_CONNECTION');
    expect(text).to.not.include('rawPacket');
  });
});
