/**
 * Request body encoding and response body decoding (SPEC §3 body and `data` rules).
 */
import { TextDecoder } from 'node:util';
import { jsonTextNestsTooDeep } from '../model/json.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

const METHODS_WITH_BODY: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

export function findHeader(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === wanted) return value;
  return undefined;
}

export function deleteHeader(headers: Record<string, string>, name: string): void {
  const wanted = name.toLowerCase();
  for (const key of Object.keys(headers)) if (key.toLowerCase() === wanted) delete headers[key];
}

/**
 * A header the author left blank (an empty editor row, a reference that resolved to "") counts as
 * not set: it is removed, so the default that header has applies instead of an empty value.
 */
export function dropBlankHeader(headers: Record<string, string>, name: string): void {
  const value = findHeader(headers, name);
  if (value !== undefined && value.trim() === '') deleteHeader(headers, name);
}

function mimeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function formEncode(body: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    form.append(key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return form.toString();
}

/**
 * The bytes to send and the headers to send them with. Only POST, PUT and PATCH carry a body;
 * `null`/absent means no body. Strings go as given (text/plain unless a Content-Type is set);
 * any other JSON value goes as JSON (application/json unless set), except that a plain object
 * with an explicit `application/x-www-form-urlencoded` Content-Type is form-encoded.
 */
export function encodeRequestBody(
  method: HttpMethod,
  body: unknown,
  headers: Record<string, string>,
): { data: string | Buffer | undefined; headers: Record<string, string> } {
  const out = { ...headers };
  if (!METHODS_WITH_BODY.has(method) || body === undefined || body === null) return { data: undefined, headers: out };
  const contentType = findHeader(out, 'content-type');
  if (typeof body === 'string') {
    if (contentType === undefined) out['Content-Type'] = 'text/plain; charset=utf-8';
    return { data: body, headers: out };
  }
  if (Buffer.isBuffer(body) || body instanceof Uint8Array) {
    if (contentType === undefined) out['Content-Type'] = 'application/octet-stream';
    return { data: Buffer.from(body), headers: out };
  }
  if (contentType === undefined) out['Content-Type'] = 'application/json';
  if (mimeOf(contentType) === 'application/x-www-form-urlencoded' && isPlainObject(body)) {
    return { data: formEncode(body), headers: out };
  }
  return { data: JSON.stringify(body), headers: out };
}

export function isJsonContentType(contentType: string | undefined): boolean {
  const mime = mimeOf(contentType);
  return mime === 'application/json' || mime === 'text/json' || mime.endsWith('+json');
}

function charsetOf(contentType: string | undefined): string {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return match?.[1]?.toLowerCase() ?? 'utf-8';
}

const decoders = new Map<string, TextDecoder>();

/** Decoders are stateless between whole-buffer decode() calls, so one per charset is reused. */
function decoderFor(charset: string): TextDecoder {
  let decoder = decoders.get(charset);
  if (!decoder) {
    try {
      decoder = new TextDecoder(charset);
    } catch {
      return decoderFor('utf-8'); // an unknown charset label: utf-8 is the best guess
    }
    if (decoders.size < 64) decoders.set(charset, decoder);
  }
  return decoder;
}

function decodeText(bytes: Buffer, contentType: string | undefined): string {
  return decoderFor(charsetOf(contentType)).decode(bytes); // drops a leading BOM
}

/**
 * `data` of the response: parsed JSON when the Content-Type says JSON and the body parses,
 * otherwise the text (an empty or broken "JSON" body stays text rather than failing the block).
 */
export function decodeResponseBody(bytes: Buffer, contentType: string | undefined): unknown {
  const text = decodeText(bytes, contentType);
  if (!isJsonContentType(contentType) || text.trim() === '') return text;
  try {
    const parsed = JSON.parse(text) as unknown;
    // nested past what the walks over outputs can take: kept as the text it came as
    return jsonTextNestsTooDeep(text, parsed) ? text : parsed;
  } catch {
    return text;
  }
}
