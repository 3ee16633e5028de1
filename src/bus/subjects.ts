/**
 * Subject syntax (NATS rules, enforced identically by both bus adapters) and the subject
 * builders of the runtime. Pure: no I/O.
 *
 * A subject is tokens separated by `.`; tokens are non-empty and contain no whitespace.
 * Subscriptions may use `*` (exactly one token) and `>` (one or more trailing tokens, last only);
 * published subjects may not contain `*` or `>` at all.
 */
import { createHash } from 'node:crypto';
import { TroupeError } from '../errors.js';
import type { DurableStream } from './types.js';

export const DEFAULT_SUBJECT_PREFIX = 'troupe';

const DOT = 46;
const STAR = 42;
const GT = 62;

function isWhitespace(c: number): boolean {
  // space, \t, \n, \v, \f, \r: the separators of the NATS protocol line (and their kin)
  return c === 32 || (c >= 9 && c <= 13);
}

/** A literal subject (no wildcards), as accepted by publish. Hot path: a single char scan. */
export function isValidSubject(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  let tokenLen = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === DOT) {
      if (tokenLen === 0) return false;
      tokenLen = 0;
    } else if (c === STAR || c === GT || isWhitespace(c)) {
      return false;
    } else {
      tokenLen++;
    }
  }
  return tokenLen > 0;
}

/**
 * A subject that may be subscribed to: literal tokens, `*` tokens and a final `>`. A char scan
 * without splitting: every execution subscribes once, on the execute path.
 */
export function isValidSubscription(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  let start = 0;
  for (let i = 0; i <= n; i++) {
    if (i < n && s.charCodeAt(i) !== DOT) continue;
    if (!validPatternToken(s, start, i)) return false;
    start = i + 1;
  }
  return true;
}

/** The token s[from, to) of a subscription: `*`, `>` as the last token, or a literal token. */
function validPatternToken(s: string, from: number, to: number): boolean {
  if (to === from) return false;
  if (to - from === 1) {
    const c = s.charCodeAt(from);
    if (c === STAR) return true;
    if (c === GT) return to === s.length;
  }
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c === STAR || c === GT || isWhitespace(c)) return false;
  }
  return true;
}

export function isWildcard(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('>');
}

/** Queue group names: one non-empty run without whitespace or wildcards (dots allowed). */
export function isValidQueueName(q: string): boolean {
  return q.length > 0 && isValidSubject(q.replaceAll('.', '_'));
}

/** Whether a (valid) subscription pattern matches a (valid) literal subject. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    const t = p[i];
    if (t === '>') return s.length > i;
    if (i >= s.length) return false;
    if (t !== '*' && t !== s[i]) return false;
  }
  return p.length === s.length;
}

const SAFE_TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Turn any caller-supplied id into one subject token. Ids made of `[A-Za-z0-9_-]` (all ids the
 * API generates or accepts) pass through unchanged; anything else becomes `~` + hex of its UTF-16
 * code units, which is injective because `~` never occurs in a safe id.
 */
export function encodeToken(raw: string): string {
  if (SAFE_TOKEN.test(raw)) return raw;
  let hex = '~';
  for (let i = 0; i < raw.length; i++) hex += raw.charCodeAt(i).toString(16).padStart(4, '0');
  return hex;
}

function checkPrefix(prefix: string): string {
  if (!isValidSubject(prefix)) {
    throw new TroupeError('INVALID_SUBJECT', `invalid subject prefix "${prefix}"`, { details: { prefix } });
  }
  return prefix;
}

/** Where the block actor of `blockId` in scope `scopeKey` (e.g. `root`, `loop1-3`) listens. */
export function blockInbox(prefix: string, executionId: string, scopeKey: string, blockId: string): string {
  return `${checkPrefix(prefix)}.exec.${encodeToken(executionId)}.block.${encodeToken(scopeKey)}.${encodeToken(blockId)}`;
}

/** Everything addressed to one execution: its block inboxes and its control subject. */
export function executionSubjects(prefix: string, executionId: string): string {
  return `${checkPrefix(prefix)}.exec.${encodeToken(executionId)}.>`;
}

/** Cancellation and other commands for one execution. */
export function executionControl(prefix: string, executionId: string): string {
  return `${checkPrefix(prefix)}.exec.${encodeToken(executionId)}.control`;
}

export type ExecutionEventKind = 'started' | 'waiting' | 'completed' | 'failed' | 'cancelled';
const EVENT_KINDS: ReadonlySet<string> = new Set<ExecutionEventKind>(['started', 'waiting', 'completed', 'failed', 'cancelled']);

/** SPEC §5: `${prefix}.events.execution.${kind}`; `*` subscribes to all kinds. */
export function executionEvents(prefix: string, kind: ExecutionEventKind | '*'): string {
  if (kind !== '*' && !EVENT_KINDS.has(kind)) {
    throw new TroupeError('INVALID_SUBJECT', `unknown execution event kind "${String(kind)}"`);
  }
  return `${checkPrefix(prefix)}.events.execution.${kind}`;
}

/** SPEC §5: one message per accepted webhook event. */
export function webhookEvents(prefix: string, workflowId: string, triggerId: string): string {
  return `${checkPrefix(prefix)}.webhooks.${encodeToken(workflowId)}.${encodeToken(triggerId)}`;
}

/** Webhook events are kept a day on the bus, as their delivery ids are (SPEC §4.3). */
const WEBHOOK_STREAM_AGE_MS = 24 * 60 * 60 * 1000;

/** the prefixes whose stream is named as it always was: what TROUPE_BUS_PREFIX takes, in lower case */
const LOWERCASE_PREFIX = /^[a-z0-9_-]+$/;

/**
 * The JetStream stream that keeps the webhook events of one subject prefix (DESIGN: durable
 * streams for webhook events), one stream per prefix. An all-lowercase prefix keeps the name it
 * always had, the prefix in capitals then `_WEBHOOKS` (`troupe` → `TROUPE_WEBHOOKS`), so a
 * deployment finds its stream again. Capitals alone would give `probe` and `Probe` one stream,
 * whose subjects the second start rewrote: any other prefix is named by its capitals (at most 32
 * characters, `.` and the like as `_`), `_WEBHOOKS_`, and 12 hex digits of the prefix's SHA-256
 * (`Probe` → `PROBE_WEBHOOKS_…`), which no lowercase prefix's name ends with.
 */
export function webhookStream(prefix: string): DurableStream {
  checkPrefix(prefix);
  const capitals = prefix.toUpperCase();
  const name = LOWERCASE_PREFIX.test(prefix)
    ? `${capitals}_WEBHOOKS`
    : `${capitals.replace(/[^A-Z0-9_-]/g, '_').slice(0, 32)}_WEBHOOKS_${createHash('sha256').update(prefix).digest('hex').slice(0, 12).toUpperCase()}`;
  return { name, subjects: [`${prefix}.webhooks.>`], maxAgeMs: WEBHOOK_STREAM_AGE_MS };
}

/** Deploy, undeploy, key revocation and workflow deletion, for the other instances' lookup caches. */
export function cacheInvalidation(prefix: string): string {
  return `${checkPrefix(prefix)}.cache.invalidate`;
}
