import { isIP } from 'node:net';
import { linkSignal, type LinkedSignal } from './abort-link.js';
import type { AddressPolicy } from './address-policy.js';
import { decodeResponseBody, deleteHeader, type HttpMethod } from './body.js';
import type { GuardedAgents } from './guarded-agent.js';
import { bareHost } from './ip.js';
import { AttemptFailure, classifyNetworkError } from './retry-policy.js';
import type { HostThrottle } from './throttle.js';
import { sendHop, type HopRequest, type HopResponse } from './transport.js';

/**
 * One attempt of a send: the request and every redirect hop after it, each hop address-checked
 * and throttled, the final body streamed under the size cap, all within one deadline.
 */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

export interface PreparedRequest {
  url: URL;
  method: HttpMethod;
  headers: Record<string, string>;
  data: string | Buffer | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
}

export interface FinalResponse {
  status: number;
  headers: Record<string, string>;
  data: unknown;
}

export interface AttemptDeps {
  policy: AddressPolicy;
  agents: GuardedAgents;
  throttle: HostThrottle;
}

/** The attempt's signal: aborted by the caller's signal or by a timer armed when the first hop starts. */
class Deadline {
  private readonly link: LinkedSignal;
  private readonly callbacks = new Set<() => void>();
  readonly signal: AbortSignal;
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(outer: AbortSignal) {
    this.link = linkSignal(outer, () => {
      for (const cb of this.callbacks) cb();
    });
    this.signal = this.link.signal;
  }

  get aborted(): boolean {
    return this.signal.aborted;
  }

  /** like an abort listener on `signal`, minus the EventTarget cost; returns the unsubscribe */
  onAbort(cb: () => void): () => void {
    this.callbacks.add(cb);
    return () => void this.callbacks.delete(cb);
  }

  arm(ms: number): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.link.abort();
    }, ms);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.link.unlink();
  }
}

export async function runAttempt(request: PreparedRequest, deps: AttemptDeps, signal: AbortSignal): Promise<FinalResponse> {
  const deadline = new Deadline(signal);
  try {
    return await followHops(request, deps, deadline);
  } catch (err) {
    if (signal.aborted) throw new AttemptFailure('CANCELLED', 'the request was cancelled', false, err);
    if (deadline.timedOut) {
      throw new AttemptFailure('HTTP_TIMEOUT', `no complete response within ${request.timeoutMs} ms`, true, err);
    }
    throw classifyNetworkError(err);
  } finally {
    deadline.stop();
  }
}

async function followHops(request: PreparedRequest, deps: AttemptDeps, deadline: Deadline): Promise<FinalResponse> {
  let hop: HopRequest = { url: request.url, method: request.method, headers: request.headers, data: request.data };
  for (let redirects = 0; ; redirects++) {
    refuseBlockedLiteral(hop.url, deps.policy);
    const release = await deps.throttle.acquire(hop.url.host, deadline.signal);
    try {
      deadline.arm(request.timeoutMs);
      const res = await sendHop(hop, deps.agents, deadline);
      const next = redirectTarget(hop, res);
      if (next === null) {
        const bytes = await readCapped(res, request.maxResponseBytes, deadline);
        const headers = lowerCaseHeaders(res.headers);
        return { status: res.status, headers, data: decodeResponseBody(bytes, headers['content-type']) };
      }
      res.body.destroy();
      if (redirects >= MAX_REDIRECTS) {
        throw new AttemptFailure('TOO_MANY_REDIRECTS', `more than ${MAX_REDIRECTS} redirects`, false);
      }
      hop = next;
    } finally {
      release();
    }
  }
}

/** Node connects to IP literals without a lookup, so the guarded agent never sees them. */
export function refuseBlockedLiteral(url: URL, policy: AddressPolicy): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AttemptFailure('BLOCKED_ADDRESS', `refused to follow a ${url.protocol} URL`, false);
  }
  const host = bareHost(url.hostname);
  if (isIP(host) === 0) return;
  const reason = policy.refusal(host, host);
  if (reason !== null) throw new AttemptFailure('BLOCKED_ADDRESS', `refused to connect to ${host}: ${reason}`, false);
}

/**
 * The next hop of a redirect, or null when `res` is the final response. 303 turns into GET, and
 * so does a POST answered by 301/302 (what browsers do); the body goes with the method change.
 * Credentials do not follow a redirect to another origin.
 */
function redirectTarget(hop: HopRequest, res: HopResponse): HopRequest | null {
  const location: unknown = res.headers['location'];
  if (!REDIRECT_STATUSES.has(res.status) || typeof location !== 'string' || location === '') return null;
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    return null; // an unreadable Location: hand the 3xx itself to the workflow
  }
  const headers = { ...hop.headers };
  let { method, data } = hop;
  if ((res.status === 303 && method !== 'GET') || ((res.status === 301 || res.status === 302) && method === 'POST')) {
    method = 'GET';
    data = undefined;
    for (const name of ['content-type', 'content-length', 'transfer-encoding']) deleteHeader(headers, name);
  }
  if (url.origin !== hop.url.origin) {
    for (const name of ['authorization', 'proxy-authorization', 'cookie']) deleteHeader(headers, name);
  }
  return { url, method, headers, data };
}

function lowerCaseHeaders(headers: HopResponse['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || value === null) continue;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.join(', ') : String(value);
    out[key] = key in out ? `${out[key]}, ${text}` : text;
  }
  return out;
}

function tooLarge(cap: number): AttemptFailure {
  return new AttemptFailure('RESPONSE_TOO_LARGE', `the response body exceeds maxResponseBytes (${cap})`, false);
}

/** Reads the body, giving up (and closing the connection) the moment it passes `cap` bytes. */
function readCapped(res: HopResponse, cap: number, deadline: Deadline): Promise<Buffer> {
  const stream = res.body;
  const abortTransfer = (): void => {
    stream.destroy();
    res.request.destroy();
  };
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > cap) {
    abortTransfer();
    return Promise.reject(tooLarge(cap));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let unsubscribe = (): void => undefined;
    const finish = (err: unknown, body?: Buffer): void => {
      if (settled) return;
      settled = true;
      unsubscribe();
      if (err === null && body) resolve(body);
      else reject(err);
    };
    const onAbort = (): void => {
      abortTransfer();
      finish(new Error('aborted while reading the response body'));
    };
    if (deadline.signal.aborted) return onAbort();
    unsubscribe = deadline.onAbort(onAbort);
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > cap) {
        abortTransfer();
        finish(tooLarge(cap));
      } else {
        chunks.push(chunk);
      }
    });
    stream.once('end', () => finish(null, Buffer.concat(chunks, size)));
    stream.once('error', (err) => finish(err));
    // 'close' follows 'end' on every response: the error (and its stack trace) only when it comes first
    stream.once('close', () => {
      if (!settled) finish(Object.assign(new Error('response closed before its end'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    });
  });
}
