import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Clock } from '../blocks/types.js';
import { TroupeError } from '../errors.js';
import { linkSignal } from '../outbound/abort-link.js';
import { createAddressPolicy, type AddressPolicyOptions } from '../outbound/address-policy.js';
import { refuseBlockedLiteral } from '../outbound/attempt.js';
import { createGuardedAgents, systemLookup, type GuardedAgents } from '../outbound/guarded-agent.js';
import type { AttemptFailure} from '../outbound/retry-policy.js';
import { backoffDelay, classifyNetworkError, parseRetryAfter } from '../outbound/retry-policy.js';
import type { LookupFn } from '../outbound/types.js';
import { systemClock } from '../runtime/clock.js';

/**
 * HTTP for the model providers. The same address policy as the API block (SPEC §3): a base URL
 * pointing at a private, loopback or link-local address is refused unless the configuration
 * allows it, judged on the address connected to. An attempt that gets no answer, a 429 or a 5xx
 * is retried before its body is read, so a streamed answer is never sent twice.
 */
export interface TransportOptions extends AddressPolicyOptions {
  clock?: Clock;
  random?: () => number;
  lookup?: LookupFn;
}

export interface PostOptions {
  timeoutMs: number;
  retries: number;
  signal: AbortSignal;
  /** names the provider in error messages */
  provider: string;
  /** hears the answer's text as it streams; once any went out, a failure is final (no retry) */
  onToken?: ((text: string) => void) | undefined;
  /** the key sent: hidden in a provider's error message that quotes it (a process default is no run secret) */
  apiKey?: string | undefined;
}

const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 8_000;
/** a Retry-After longer than this ends the call instead of holding the block */
const RETRY_AFTER_LIMIT_MS = 30_000;
const ERROR_BODY_LIMIT = 64 * 1024;

/** Reads a 2xx answer; `sink` is the caller's onToken, watched by the transport. */
export type Consume<T> = (res: IncomingMessage, sink: ((text: string) => void) | undefined) => Promise<T>;

interface Tracked extends PostOptions {
  sink: ((text: string) => void) | undefined;
  emitted: () => boolean;
}

export class ProviderTransport {
  private readonly agents: GuardedAgents;
  private readonly policy;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(options: TransportOptions) {
    this.policy = createAddressPolicy(options);
    this.agents = createGuardedAgents(this.policy, options.lookup ?? systemLookup);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
  }

  /**
   * POSTs JSON and hands a 2xx response to `consume`, within the time limit of the attempt (the
   * body included). A status ≥ 400 after the retries is MODEL_ERROR with the provider's message.
   */
  async postJson<T>(url: string, headers: Record<string, string>, body: unknown, options: PostOptions, consume: Consume<T>): Promise<T> {
    const target = new URL(url);
    const payload = JSON.stringify(body);
    let emitted = false;
    const onToken = options.onToken;
    const sink = onToken === undefined ? undefined : (text: string): void => {
      emitted = true;
      onToken(text);
    };
    const tracked: Tracked = { ...options, sink, emitted: () => emitted };
    for (let attempt = 1; ; attempt++) {
      const last = attempt > options.retries;
      let outcome: Awaited<ReturnType<typeof this.attempt<T>>>;
      try {
        outcome = await this.attempt(attempt, target, headers, payload, tracked, consume);
      } catch (err) {
        throw err instanceof TroupeError ? withAttempts(err, attempt) : err;
      }
      if (outcome.kind === 'done') return outcome.value;
      if (last || outcome.waitMs === null) throw withAttempts(outcome.error, attempt);
      await this.clock.sleep(outcome.waitMs, options.signal);
    }
  }

  close(): void {
    this.agents.destroy();
  }

  private async attempt<T>(
    attempt: number,
    url: URL,
    headers: Record<string, string>,
    payload: string,
    options: Tracked,
    consume: Consume<T>,
  ): Promise<{ kind: 'done'; value: T } | { kind: 'retry'; error: TroupeError; waitMs: number | null }> {
    let timedOut = false;
    const link = linkSignal(options.signal);
    // once any of the answer went out, a failure is final: a retry would send it twice
    const final = options.emitted;
    const timer = setTimeout(() => {
      timedOut = true;
      link.abort();
    }, options.timeoutMs);
    try {
      const res = await this.send(url, headers, payload, link.signal);
      if (res.statusCode !== undefined && res.statusCode < 400) {
        try {
          return { kind: 'done', value: await consume(res, options.sink) };
        } catch (err) {
          // an answer given up half-read must not go back to the pool with its socket
          res.destroy();
          throw err;
        }
      }
      return await this.refused(res, options, attempt);
    } catch (err) {
      if (options.signal.aborted) throw new TroupeError('CANCELLED', 'the model call was cancelled');
      if (timedOut) {
        const error = new TroupeError('HTTP_TIMEOUT', `${options.provider} did not answer within ${options.timeoutMs} ms`);
        return { kind: 'retry', error, waitMs: final() ? null : this.backoff(attempt) };
      }
      if (err instanceof TroupeError) throw err;
      const failure = classifyNetworkError(err);
      const error = new TroupeError(failure.code, `${options.provider}: ${failure.message}`, { cause: err });
      return { kind: 'retry', error, waitMs: failure.retryable && !final() ? this.backoff(attempt) : null };
    } finally {
      clearTimeout(timer);
      link.unlink();
    }
  }

  private async refused(res: IncomingMessage, options: PostOptions, attempt: number): Promise<{ kind: 'retry'; error: TroupeError; waitMs: number | null }> {
    const status = res.statusCode ?? 0;
    const text = await readLimited(res, ERROR_BODY_LIMIT);
    const said = hidden(providerMessage(text), options.apiKey);
    const error = new TroupeError('MODEL_ERROR', `${options.provider} answered ${status}: ${said}`, { details: { status } });
    if (status === 429) {
      const header = res.headers['retry-after'];
      const after = parseRetryAfter(Array.isArray(header) ? header[0] : header, this.clock.now());
      if (after === undefined) return { kind: 'retry', error, waitMs: this.backoff(attempt) };
      if (after <= RETRY_AFTER_LIMIT_MS) return { kind: 'retry', error, waitMs: after };
      // as the API block does (SPEC §3): a wait longer than we hold a block for ends the call
      const limited = new TroupeError('RATE_LIMITED', `${options.provider} is rate limiting: it asks to wait ${Math.ceil(after / 1000)} s`, {
        details: { status, retryAfterMs: after },
      });
      return { kind: 'retry', error: limited, waitMs: null };
    }
    // 529: Anthropic's "overloaded"
    return { kind: 'retry', error, waitMs: status >= 500 ? this.backoff(attempt) : null };
  }

  private backoff(retry: number): number {
    return backoffDelay(retry, RETRY_BASE_MS, RETRY_MAX_MS, this.random);
  }

  private send(url: URL, headers: Record<string, string>, payload: string, signal: AbortSignal): Promise<IncomingMessage> {
    try {
      refuseBlockedLiteral(url, this.policy);
    } catch (err) {
      const failure = err as AttemptFailure;
      return Promise.reject(new TroupeError(failure.code, failure.message));
    }
    const secure = url.protocol === 'https:';
    const request = secure ? https.request : http.request;
    return new Promise((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        agent: secure ? this.agents.httpsAgent : this.agents.httpAgent,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
        signal,
      });
      req.on('response', resolve);
      req.on('error', reject);
      req.end(payload);
    });
  }
}

export async function readLimited(res: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      res.destroy();
      throw new TroupeError('RESPONSE_TOO_LARGE', `the model's answer is larger than ${limit} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The error message a provider put in its JSON error body, else the start of the body. */
function providerMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON: quote the text
  }
  const trimmed = text.trim();
  return trimmed === '' ? '(no message)' : trimmed.slice(0, 300);
}

/** The calls made, in the error's details (the block log's `attempts`, as for the API block). */
function withAttempts(error: TroupeError, attempts: number): TroupeError {
  const details = error.details !== null && typeof error.details === 'object' ? error.details : {};
  return new TroupeError(error.code, error.message, { details: { ...details, attempts }, cause: error.cause ?? error, retryable: error.retryable });
}

function hidden(text: string, secret: string | undefined): string {
  return secret === undefined || secret.length < 4 ? text : text.split(secret).join('***');
}
