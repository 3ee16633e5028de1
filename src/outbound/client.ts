import { randomUUID } from 'node:crypto';
import type { Clock, HttpClientPort } from '../blocks/types.js';
import { TroupeError } from '../errors.js';
import { systemClock } from '../runtime/clock.js';
import { linkSignal } from './abort-link.js';
import { createAddressPolicy } from './address-policy.js';
import { runAttempt, type AttemptDeps, type FinalResponse, type PreparedRequest } from './attempt.js';
import { dropBlankHeader, encodeRequestBody, findHeader } from './body.js';
import { createGuardedAgents, systemLookup } from './guarded-agent.js';
import { AttemptFailure, backoffDelay, classifyNetworkError, isRetryableStatus, parseRetryAfter } from './retry-policy.js';
import { createHostThrottle } from './throttle.js';
import type { AttemptInfo, OutboundClient, OutboundClientOptions, OutboundRequest, OutboundResult } from './types.js';

/**
 * The outbound HTTP client of the API block (SPEC §3). One "attempt" is a whole request
 * including its redirect hops (see attempt.ts), so `retries` means what the SPEC says whatever
 * the redirects. Waits between attempts run on the injected clock; the per-request deadline is
 * a real timer because it races real sockets. The attempts are a plain loop (axios and
 * axios-retry drove them before: their request pipeline cost more per call than the loop,
 * which decided every retry itself anyway); transport.ts sends each hop.
 */
export function createOutboundClient(options: OutboundClientOptions): OutboundClient & HttpClientPort {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const policy = createAddressPolicy(options);
  const agents = createGuardedAgents(policy, options.lookup ?? systemLookup);
  const throttle = createHostThrottle({ rps: options.hostRps, maxInflight: options.hostMaxInflight, clock });
  const deps: AttemptDeps = {
    policy,
    agents,
    throttle,
  };
  let closed = false;

  return {
    async send(request, signal) {
      if (closed) throw new TroupeError('INTERNAL', 'the outbound HTTP client is closed');
      const prepared = prepareRequest(request);
      return new SendRun(request, prepared, deps, clock, random, signal).execute();
    },
    close() {
      closed = true;
      agents.destroy();
    },
  };
}

type Outcome = { kind: 'response'; response: FinalResponse; retryAfterMs?: number } | { kind: 'failure'; failure: AttemptFailure };

/** The state of one send across its attempts. */
class SendRun {
  readonly attempts: AttemptInfo[] = [];
  private last: Outcome | undefined;
  private nextDelayMs = 0;

  constructor(
    private readonly request: OutboundRequest,
    private readonly prepared: PreparedRequest,
    private readonly deps: AttemptDeps,
    private readonly clock: Clock,
    private readonly random: () => number,
    private readonly signal: AbortSignal,
  ) {}

  async execute(): Promise<OutboundResult> {
    const retries = Math.max(0, this.request.retries);
    try {
      // a signal aborted before an attempt (or during a wait) ends the send: settle() says CANCELLED
      while (!this.signal.aborted) {
        if (await this.attempt()) break;
        if (this.attempts.length > retries || !this.shouldRetry()) break;
        await this.waitBeforeRetry();
      }
    } catch (err) {
      if (!this.signal.aborted) throw toInternal(err);
    }
    return this.settle();
  }

  /** Runs one attempt and records it; true when its response is final (below 400). */
  private async attempt(): Promise<boolean> {
    const attempt = this.attempts.length + 1;
    let response: FinalResponse;
    try {
      response = await runAttempt(this.prepared, this.deps, this.signal);
    } catch (err) {
      const failure = err instanceof AttemptFailure ? err : classifyNetworkError(err);
      this.last = { kind: 'failure', failure };
      this.attempts.push({ attempt, errorCode: failure.code });
      return false;
    }
    const info: AttemptInfo = { attempt, status: response.status };
    const retryAfterMs = response.status === 429 ? parseRetryAfter(response.headers['retry-after'], this.clock.now()) : undefined;
    if (retryAfterMs !== undefined) info.retryAfterMs = retryAfterMs;
    this.attempts.push(info);
    this.last = retryAfterMs === undefined ? { kind: 'response', response } : { kind: 'response', response, retryAfterMs };
    return response.status < 400;
  }

  /** Called only while retries remain; also picks the wait before the next attempt. */
  private shouldRetry(): boolean {
    const last = this.last;
    if (this.signal.aborted || last === undefined) return false;
    const retry = this.attempts.length;
    const backoff = (): number => backoffDelay(retry, this.request.retryBaseMs, this.request.retryMaxMs, this.random);
    if (last.kind === 'failure') {
      if (!last.failure.retryable) return false;
      this.nextDelayMs = backoff();
      return true;
    }
    if (!isRetryableStatus(last.response.status)) return false;
    if (last.retryAfterMs !== undefined) {
      // honour the server exactly; a wait longer than we are willing to make ends the send
      if (last.retryAfterMs > this.request.retryMaxMs) return false;
      this.nextDelayMs = last.retryAfterMs;
    } else {
      this.nextDelayMs = backoff();
    }
    return true;
  }

  private async waitBeforeRetry(): Promise<void> {
    const current = this.attempts[this.attempts.length - 1];
    if (current) current.delayMs = this.nextDelayMs;
    // a child signal: the caller's signal is shared by parallel branches, keep its listeners few
    const link = linkSignal(this.signal);
    try {
      await this.clock.sleep(this.nextDelayMs, link.signal);
    } finally {
      link.unlink();
    }
  }

  private settle(): OutboundResult {
    const attempts = this.attempts.length;
    if (this.signal.aborted) {
      throw new TroupeError('CANCELLED', 'the request was cancelled', { details: { attempts, attemptLog: this.attempts } });
    }
    const last = this.last;
    if (last === undefined) throw new TroupeError('INTERNAL', 'the request ended without an attempt');
    if (last.kind === 'response') {
      const { status, headers, data } = last.response;
      const result: OutboundResult = { status, headers, data, attempts: this.attempts };
      if (last.retryAfterMs !== undefined) result.retryAfterMs = last.retryAfterMs;
      return result;
    }
    const { failure } = last;
    const suffix = attempts > 1 ? ` (after ${attempts} attempts)` : '';
    throw new TroupeError(failure.code, failure.message + suffix, {
      details: { attempts, attemptLog: this.attempts },
      retryable: failure.retryable,
      cause: failure.cause ?? failure,
    });
  }
}

function toInternal(err: unknown): TroupeError {
  if (err instanceof TroupeError) return err;
  return new TroupeError('INTERNAL', `outbound request failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}

/** URL check, default headers, Idempotency-Key and body encoding, done once per send. */
export function prepareRequest(request: OutboundRequest): PreparedRequest {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    throw new TroupeError('INVALID_CONFIG', 'the API block URL is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TroupeError('INVALID_CONFIG', `the API block URL must be http or https, not ${url.protocol}`);
  }
  const headers: Record<string, string> = { ...request.headers };
  // a blank one counts as not set, so its default (or the body's content type) applies
  for (const name of ['content-type', 'accept', 'idempotency-key']) dropBlankHeader(headers, name);
  if (findHeader(headers, 'accept') === undefined) headers['Accept'] = 'application/json, text/plain, */*';
  // only a request that may be sent twice needs a key the server can deduplicate on: one this
  // client retries, or one whose block run may be repeated (it names the run: idempotencyKey)
  const mayRepeat = (request.retries > 0 || request.idempotencyKey !== undefined) && (request.method === 'POST' || request.method === 'PATCH');
  if (mayRepeat && findHeader(headers, 'idempotency-key') === undefined) headers['Idempotency-Key'] = request.idempotencyKey ?? randomUUID();
  const encoded = encodeRequestBody(request.method, request.body, headers);
  return {
    url,
    method: request.method,
    headers: encoded.headers,
    data: encoded.data,
    timeoutMs: request.timeoutMs,
    maxResponseBytes: request.maxResponseBytes,
  };
}
