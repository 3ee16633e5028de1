/**
 * What a webhook's starter sees as `body`: providers send JSON (GitHub, Stripe, Slack events)
 * or form fields (Slack commands and interactions), so the body is decoded by its Content-Type.
 */
import { TroupeError } from '../errors.js';
import { MAX_JSON_DEPTH, jsonTextNestsTooDeep } from '../model/json.js';

function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

/**
 * JSON types: the parsed value (400 INVALID_JSON when it does not parse); form-urlencoded: an
 * object of its fields (a repeated field keeps its last value); no type: JSON when it parses,
 * else text; any other type: the text. An empty body is null.
 */
export function parseWebhookBody(raw: Buffer, contentType: string): unknown {
  // a payload that can never be stored or run is refused now, not retried by the sender forever
  return shallowBody(raw.toString('utf8'), decodeWebhookBody(raw, contentType));
}

/** A request body nested deeper than MAX_JSON_DEPTH is the request's fault: 400 INVALID_JSON. */
export function shallowBody(text: string, value: unknown): unknown {
  if (jsonTextNestsTooDeep(text, value)) {
    throw new TroupeError('INVALID_JSON', `the request body nests deeper than ${MAX_JSON_DEPTH} levels`, { details: { maxDepth: MAX_JSON_DEPTH } });
  }
  return value;
}

function decodeWebhookBody(raw: Buffer, contentType: string): unknown {
  if (raw.length === 0) return null;
  const type = mediaType(contentType);
  const text = raw.toString('utf8');
  if (isJsonType(type)) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new TroupeError('INVALID_JSON', 'the request body is not valid JSON');
    }
  }
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text));
  if (type === '') {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}
