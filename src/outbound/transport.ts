import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import type { GuardedAgents } from './guarded-agent.js';
import type { HttpMethod } from './body.js';
import { packageVersion } from '../package-root.js';

/**
 * One HTTP exchange (one hop of an attempt) on node's http client, sending what axios' node
 * adapter sent before (the client was built on it): header values cleaned the same way, the
 * same default User-Agent, Accept-Encoding and Content-Length, a URL's userinfo sent as Basic
 * credentials, and gzip, deflate and brotli bodies decoded with their Content-Encoding removed.
 * Doing it here costs a fraction of the adapter's per-call work (config and header objects,
 * listeners, an extra setsockopt per request), which the API block pays on every call.
 */
export interface HopRequest {
  url: URL;
  method: HttpMethod;
  headers: Record<string, string>;
  data: string | Buffer | undefined;
}

export interface HopResponse {
  status: number;
  /** node's headers (lower-case names), minus a Content-Encoding that was decoded */
  headers: IncomingMessage['headers'];
  /** the body, decoded */
  body: Readable;
  request: ClientRequest;
}

/** Where the hop learns that its attempt is over: the attempt's deadline. */
export interface HopAbort {
  readonly aborted: boolean;
  onAbort(cb: () => void): () => void;
}

/** the client says what it is; the other defaults are kept as the axios adapter sent them */
const USER_AGENT = `troupe/${packageVersion()}`;
const ACCEPT_ENCODING = 'gzip, compress, deflate, br';
const ZLIB_OPTIONS = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI_OPTIONS = { flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };

// what a header value cannot carry is dropped (not refused), then the value is trimmed
const NOT_BYTE_STRING = /[^\t\x20-\x7e\x80-\xff]+/g;
const EDGE_BLANKS = /^[ \t]+|[ \t]+$/g;

function cleanValue(value: string): string {
  return value.replace(NOT_BYTE_STRING, '').replace(EDGE_BLANKS, '');
}

function decodeSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The headers to send: names trimmed, a name given twice in different cases sent once (the
 * first spelling, the last value), defaults added where absent.
 */
export function wireHeaders(hop: HopRequest, hasAuth: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  const spelling = new Map<string, string>();
  const put = (name: string, value: string, replace: boolean): void => {
    const lower = name.toLowerCase();
    const key = spelling.get(lower);
    if (key !== undefined && !replace) return;
    if (key === undefined) spelling.set(lower, name);
    out[key ?? name] = cleanValue(value);
  };
  for (const [name, value] of Object.entries(hop.headers)) {
    const trimmed = name.trim();
    if (trimmed !== '') put(trimmed, value, true);
  }
  put('User-Agent', USER_AGENT, false);
  if (hop.data !== undefined && hop.data !== '') put('Content-Length', String(Buffer.byteLength(hop.data)), false);
  // credentials in the URL replace an Authorization header (node sends them as Basic)
  if (hasAuth) {
    const key = spelling.get('authorization');
    if (key !== undefined) delete out[key];
  }
  put('Accept-Encoding', ACCEPT_ENCODING, false);
  return out;
}

/** Adds a zlib header to a raw deflate stream (servers send either), so inflate reads both. */
class DeflateHeader extends Transform {
  private first = true;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.first && chunk.length > 0) {
      this.first = false;
      if (chunk[0] !== 0x78) this.push(Buffer.from([0x78, 0x9c]));
    }
    callback(null, chunk);
  }
}

function decodedBody(res: IncomingMessage): Readable {
  const headers = res.headers;
  if (headers['content-encoding'] === undefined || headers['content-encoding'] === '') return res;
  if (res.statusCode === 204) delete headers['content-encoding'];
  const stages: NodeJS.ReadWriteStream[] = [];
  switch ((headers['content-encoding'] ?? '').toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
    case 'compress':
    case 'x-compress':
      stages.push(zlib.createUnzip(ZLIB_OPTIONS));
      break;
    case 'deflate':
      stages.push(new DeflateHeader(), zlib.createUnzip(ZLIB_OPTIONS));
      break;
    case 'br':
      stages.push(zlib.createBrotliDecompress(BROTLI_OPTIONS));
      break;
    default:
      return res;
  }
  delete headers['content-encoding'];
  return pipeline([res, ...stages], () => undefined) as unknown as Readable;
}

/** Sends one request and resolves with its response head; the caller reads (or destroys) the body. */
export function sendHop(hop: HopRequest, agents: GuardedAgents, abort: HopAbort): Promise<HopResponse> {
  const { url } = hop;
  const hasAuth = url.username !== '' || url.password !== '';
  const secure = url.protocol === 'https:';
  return new Promise<HopResponse>((resolve, reject) => {
    if (abort.aborted) return reject(Object.assign(new Error('the request was aborted'), { code: 'ERR_CANCELED' }));
    let req: ClientRequest;
    try {
      const options: http.RequestOptions = {
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: hop.method,
        headers: wireHeaders(hop, hasAuth),
        agent: secure ? agents.httpsAgent : agents.httpAgent,
        insecureHTTPParser: false,
      };
      if (hasAuth) options.auth = `${decodeSafe(url.username)}:${decodeSafe(url.password)}`;
      req = (secure ? https : http).request(options);
    } catch (err) {
      return reject(err); // a header node refuses (ERR_INVALID_CHAR, ...)
    }
    const unsubscribe = abort.onAbort(() => {
      const err = Object.assign(new Error('the request was aborted'), { code: 'ERR_CANCELED' });
      req.destroy(err);
      reject(err);
    });
    req.once('response', (res: IncomingMessage) => {
      unsubscribe();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: decodedBody(res), request: req });
    });
    req.on('error', (err) => {
      unsubscribe();
      reject(err);
    });
    req.end(hop.data);
  });
}
