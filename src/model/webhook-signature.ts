/**
 * Webhook signatures (SPEC, webhooks): each provider signs the raw request body with
 * HMAC-SHA256 of the trigger's secret and sends a hex digest in its own header format. Stripe
 * and Slack also sign a timestamp, which bounds replays to a 5-minute window; the generic
 * provider does when the sender adds X-Signature-Timestamp (SPEC §4.3), and a trigger with
 * `requireTimestamp` takes nothing else. GitHub signs no time: a captured delivery verifies
 * forever. Pure: the caller
 * passes the raw body, lower-cased headers and the clock, so the rules are testable alone.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type WebhookProvider = 'generic' | 'github' | 'stripe' | 'slack';

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** Stripe's and Slack's documented replay window */
const TOLERANCE_SECONDS = 300;

const SIGNATURE_HEADERS: Record<WebhookProvider, readonly string[]> = {
  generic: Object.freeze(['x-signature']),
  // the SHA-1 x-hub-signature is never checked, but it is still a signature: keep it from the workflow
  github: Object.freeze(['x-hub-signature-256', 'x-hub-signature']),
  stripe: Object.freeze(['stripe-signature']),
  slack: Object.freeze(['x-slack-signature']),
};

/** credentials of the caller that must never reach a workflow's input */
const CREDENTIAL_HEADERS: readonly string[] = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'];

function fail(reason: string): SignatureCheck {
  return { ok: false, reason };
}

/** a header's value, with empty or whitespace-only values treated like absent ones */
function headerOf(headers: Record<string, string | undefined>, name: string): string | undefined {
  const value = headers[name];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

function hmacHex(secret: string, ...parts: (string | Buffer)[]): string {
  const mac = createHmac('sha256', secret);
  // updating part by part signs the body's exact bytes, never a re-decoded string copy of them
  for (const part of parts) mac.update(part);
  return mac.digest('hex');
}

/**
 * Compares the hex texts rather than decoded bytes: Buffer.from(hex) silently stops at the first
 * non-hex character, which would let trailing garbage through.
 */
function sameHex(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** unix seconds as digits only: Number() alone would accept '', ' 1', '1e3' and '0x10' */
function parseSeconds(raw: string): number | null {
  return /^\d+$/.test(raw) ? Number(raw) : null;
}

function withinTolerance(seconds: number, nowMs: number): boolean {
  // callers negate this test, so a NaN clock (every comparison false) fails closed instead of passing
  // whole seconds, as the providers' own libraries count: a timestamp exactly 300 s old passes
  return Math.abs(Math.floor(nowMs / 1000) - seconds) <= TOLERANCE_SECONDS;
}

const STALE = 'timestamp outside the 5-minute tolerance';
const MISMATCH = 'signature does not match';

/** generic and GitHub: `sha256=<hex>` of the raw body, or of `<timestamp>.<raw body>` when a timestamp is signed */
function verifySha256Header(label: string, value: string | undefined, secret: string, rawBody: Buffer, timestamp?: string): SignatureCheck {
  if (value === undefined) return fail(`missing ${label} header`);
  if (!value.startsWith('sha256=')) return fail(`malformed ${label} header: expected sha256=<hex>`);
  const expected = timestamp === undefined ? hmacHex(secret, rawBody) : hmacHex(secret, `${timestamp}.`, rawBody);
  return sameHex(expected, value.slice('sha256='.length)) ? { ok: true } : fail(MISMATCH);
}

/**
 * generic (SPEC §4.3): `X-Signature-Timestamp: <unix seconds>`, when sent, is signed with the
 * body and bounds the delivery to 5 minutes; `requireTimestamp` refuses a delivery without one.
 */
function verifyGeneric(secret: string, rawBody: Buffer, headers: Record<string, string | undefined>, nowMs: number, requireTimestamp: boolean): SignatureCheck {
  const signature = headerOf(headers, 'x-signature');
  const timestamp = headerOf(headers, 'x-signature-timestamp');
  if (timestamp === undefined) {
    if (requireTimestamp) return fail('missing X-Signature-Timestamp header (this webhook requires a signed timestamp)');
    return verifySha256Header('X-Signature', signature, secret, rawBody);
  }
  const seconds = parseSeconds(timestamp);
  if (seconds === null) return fail('malformed X-Signature-Timestamp header: expected unix seconds');
  if (signature === undefined) return fail('missing X-Signature header');
  if (!withinTolerance(seconds, nowMs)) return fail(STALE);
  return verifySha256Header('X-Signature', signature, secret, rawBody, timestamp);
}

export interface SignatureOptions {
  /** generic only: refuse deliveries without X-Signature-Timestamp */
  requireTimestamp?: boolean | undefined;
}

interface StripeHeader {
  timestamps: string[];
  v1: string[];
}

function parseStripeHeader(value: string): StripeHeader {
  const parsed: StripeHeader = { timestamps: [], v1: [] };
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const item = part.slice(eq + 1).trim();
    if (key === 't') parsed.timestamps.push(item);
    else if (key === 'v1' && item !== '') parsed.v1.push(item);
    // v0 and unknown schemes are ignored: only v1 is HMAC-SHA256 with the endpoint secret
  }
  return parsed;
}

function verifyStripe(secret: string, rawBody: Buffer, headers: Record<string, string | undefined>, nowMs: number): SignatureCheck {
  const value = headerOf(headers, 'stripe-signature');
  if (value === undefined) return fail('missing Stripe-Signature header');
  const { timestamps, v1 } = parseStripeHeader(value);
  // two t= values make it ambiguous which one was signed, so neither is trusted
  const [t] = timestamps;
  const seconds = timestamps.length === 1 && t !== undefined ? parseSeconds(t) : null;
  if (t === undefined || seconds === null) return fail('malformed Stripe-Signature header: expected one numeric t=');
  if (v1.length === 0) return fail('malformed Stripe-Signature header: no v1 signature');
  if (!withinTolerance(seconds, nowMs)) return fail(STALE);
  const expected = hmacHex(secret, `${t}.`, rawBody);
  return v1.some((candidate) => sameHex(expected, candidate)) ? { ok: true } : fail(MISMATCH);
}

function verifySlack(secret: string, rawBody: Buffer, headers: Record<string, string | undefined>, nowMs: number): SignatureCheck {
  const timestamp = headerOf(headers, 'x-slack-request-timestamp');
  const signature = headerOf(headers, 'x-slack-signature');
  if (timestamp === undefined) return fail('missing X-Slack-Request-Timestamp header');
  if (signature === undefined) return fail('missing X-Slack-Signature header');
  const seconds = parseSeconds(timestamp);
  if (seconds === null) return fail('malformed X-Slack-Request-Timestamp header: expected unix seconds');
  if (!signature.startsWith('v0=')) return fail('malformed X-Slack-Signature header: expected v0=<hex>');
  if (!withinTolerance(seconds, nowMs)) return fail(STALE);
  const expected = hmacHex(secret, `v0:${timestamp}:`, rawBody);
  return sameHex(expected, signature.slice('v0='.length)) ? { ok: true } : fail(MISMATCH);
}

export function verifySignature(
  provider: WebhookProvider,
  secret: string,
  rawBody: Buffer,
  headers: Record<string, string | undefined>,
  nowMs: number,
  options: SignatureOptions = {},
): SignatureCheck {
  // an empty key is a valid HMAC key that anyone can sign with: fail closed instead
  if (secret === '') return fail('the webhook has no secret to check the signature with');
  switch (provider) {
    case 'generic':
      return verifyGeneric(secret, rawBody, headers, nowMs, options.requireTimestamp === true);
    case 'github':
      return verifySha256Header('X-Hub-Signature-256', headerOf(headers, 'x-hub-signature-256'), secret, rawBody);
    case 'stripe':
      return verifyStripe(secret, rawBody, headers, nowMs);
    case 'slack':
      return verifySlack(secret, rawBody, headers, nowMs);
    default:
      // reachable only from untyped callers, e.g. a provider read from stored JSON
      return fail(`unknown webhook provider ${JSON.stringify(provider)}`);
  }
}

/** the header names (lower case) that carry the provider's signature, left out of the starter's input */
export function signatureHeaders(provider: WebhookProvider): readonly string[] {
  return SIGNATURE_HEADERS[provider];
}

/** headers handed to the workflow: every header except credentials and the provider's signature headers */
export function starterHeaders(provider: WebhookProvider, headers: Record<string, string | undefined>): Record<string, string> {
  const dropped = new Set([...CREDENTIAL_HEADERS, ...signatureHeaders(provider)]);
  const kept = Object.entries(headers).filter(
    (entry): entry is [string, string] => typeof entry[1] === 'string' && !dropped.has(entry[0].toLowerCase()),
  );
  // fromEntries defines own properties, so a header named __proto__ cannot reach the prototype
  return Object.fromEntries(kept);
}

function stripeEventId(body: unknown): string | undefined {
  return stringField(body, 'id');
}

/** Slack's Events API sends a retry (`X-Slack-Retry-Num`) with the same `event_id` */
function slackEventId(body: unknown): string | undefined {
  return stringField(body, 'event_id');
}

function stringField(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const value: unknown = (body as Record<string, unknown>)[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * The delivery id used for de-duplication, or null: the provider's own id first (GitHub's
 * X-GitHub-Delivery, the Stripe event's `id` or the Slack event's `event_id` in the parsed body),
 * then Idempotency-Key, then X-Delivery-Id.
 */
export function deliveryIdOf(provider: WebhookProvider, headers: Record<string, string | undefined>, body: unknown): string | null {
  const own =
    provider === 'github' ? headerOf(headers, 'x-github-delivery')
    : provider === 'stripe' ? stripeEventId(body)
    : provider === 'slack' ? slackEventId(body)
    : undefined;
  return own ?? headerOf(headers, 'idempotency-key') ?? headerOf(headers, 'x-delivery-id') ?? null;
}

/**
 * the header(s), lower-cased, that sign rawBody for the provider at nowMs: for tests and clients.
 * `timestamped`: the generic provider's timestamped form (X-Signature-Timestamp).
 */
export function signHeaders(provider: WebhookProvider, secret: string, rawBody: Buffer, nowMs: number, timestamped = false): Record<string, string> {
  const t = String(Math.floor(nowMs / 1000));
  switch (provider) {
    case 'generic':
      return timestamped
        ? { 'x-signature-timestamp': t, 'x-signature': `sha256=${hmacHex(secret, `${t}.`, rawBody)}` }
        : { 'x-signature': `sha256=${hmacHex(secret, rawBody)}` };
    case 'github':
      return { 'x-hub-signature-256': `sha256=${hmacHex(secret, rawBody)}` };
    case 'stripe':
      return { 'stripe-signature': `t=${t},v1=${hmacHex(secret, `${t}.`, rawBody)}` };
    case 'slack':
      return { 'x-slack-request-timestamp': t, 'x-slack-signature': `v0=${hmacHex(secret, `v0:${t}:`, rawBody)}` };
    default:
      throw new Error(`unknown webhook provider ${JSON.stringify(provider)}`);
  }
}
