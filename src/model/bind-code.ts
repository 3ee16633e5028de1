/**
 * References in function code and expressions are bound as values, never pasted as source
 * (SPEC §1.2): each one becomes a generated identifier whose value the sandbox injects.
 *
 * - in plain code, `<api.status> === 200` becomes `__ref0 === 200` with __ref0 = the value
 *   (any type);
 *   (spaced from a word it touches: `return<a.b>` becomes `return __ref0`, never `return__ref0`);
 * - inside a quoted string, `"Hi <start.name>!"` becomes `("Hi " + __ref1 + "!")` (a computed
 *   key `[(...)]` when the string is an object key) and inside template text `${__ref1}`, where
 *   __ref1 holds the value's text form (as in resolveValue);
 * - in comments and regular-expression literals references are left as written;
 * - `{{NAME}}` secrets are bound the same way when `scope.secrets` knows the name;
 * - the same reference in the same context is bound once.
 * The identifier prefix is lengthened with `_` until it does not occur in the source.
 */
import { lexRegions, type Region } from './js-lexer.js';
import { findReferences, findSecretTokens, readingFor } from './ref-parse.js';
import { lookupReference, lookupSecret, toText, withoutOverlaps, type ReferenceScope } from './resolve.js';

export interface BoundCode {
  source: string;
  bindings: Record<string, unknown>;
}

interface CodeToken {
  start: number;
  end: number;
  key: string;
  value: unknown;
}

function codeTokens(source: string, scope: ReferenceScope): CodeToken[] {
  const tokens: CodeToken[] = [];
  for (const ref of findReferences(source)) {
    const hit = lookupReference(ref, scope);
    if (!hit.found) continue;
    const read = readingFor(ref, scope.blockNames);
    tokens.push({ start: ref.start, end: ref.end, key: `r:${read.root}:${JSON.stringify(read.path)}`, value: hit.value });
  }
  for (const token of findSecretTokens(source)) {
    const value = lookupSecret(scope.secrets, token.name);
    if (value !== undefined) tokens.push({ start: token.start, end: token.end, key: `s:${token.name}`, value });
  }
  return withoutOverlaps(tokens);
}

/** Lexing runs on a copy where tokens are masked, so `{{X}}` braces or `<a.b> / 2` cannot mislead it. */
function masked(source: string, tokens: readonly CodeToken[]): string {
  let out = source;
  for (const t of tokens) out = out.slice(0, t.start) + 'R'.repeat(t.end - t.start) + out.slice(t.end);
  return out;
}

function regionAt(regions: readonly Region[], pos: number): Region | undefined {
  return regions.find((r) => (r.kind === 'string' ? r.start < pos : r.start <= pos) && pos < r.end);
}

class Binder {
  readonly bindings: Record<string, unknown> = {};
  private readonly ids = new Map<string, string>();
  constructor(private readonly prefix: string) {}

  id(key: string, value: unknown): string {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = `${this.prefix}${this.ids.size}`;
      this.ids.set(key, id);
      this.bindings[id] = value;
    }
    return id;
  }
}

function uniquePrefix(source: string): string {
  let prefix = '__ref';
  while (source.includes(prefix)) prefix = `_${prefix}`;
  return prefix;
}

/** Rewrites one quoted literal holding tokens as a parenthesized concatenation. */
function splitLiteral(source: string, region: Region, inside: readonly CodeToken[], binder: Binder): string {
  const quote = source[region.start] ?? '"';
  const closed = region.end > region.start + 1 && source[region.end - 1] === quote;
  const bodyEnd = closed ? region.end - 1 : region.end;
  const parts: string[] = [];
  let cursor = region.start + 1;
  for (const t of inside) {
    parts.push(quote + source.slice(cursor, t.start) + quote, binder.id(`t:${t.key}`, toText(t.value)));
    cursor = t.end;
  }
  parts.push(quote + source.slice(cursor, bodyEnd) + quote);
  return `(${parts.join(' + ')})`;
}

/** A character that would join an identifier or number written against it (`return<a.b>`, `<a.b>in`). */
const WORD_CHAR = /[\p{ID_Continue}$\u200c\u200d]/u;

/** The bound identifier, spaced from a word it touches, so it never merges into it (`return __ref0`). */
function spaced(source: string, start: number, end: number, id: string): string {
  const before = start > 0 && WORD_CHAR.test(source[start - 1] ?? '') ? ' ' : '';
  const after = end < source.length && WORD_CHAR.test(source[end] ?? '') ? ' ' : '';
  return before + id + after;
}

/**
 * Whether a quoted literal is an object key (`{ '<a.b>': 1 }`, `, "x<a.b>": 2`): its rewrite, an
 * expression, must then be a computed key.
 */
function isObjectKey(source: string, region: Region): boolean {
  let before = region.start - 1;
  while (before >= 0 && /\s/.test(source[before] ?? '')) before -= 1;
  let after = region.end;
  while (after < source.length && /\s/.test(source[after] ?? '')) after += 1;
  const prev = source[before];
  return (prev === '{' || prev === ',') && source[after] === ':';
}

const escaped = (source: string, pos: number): boolean => {
  let n = 0;
  while (source[pos - 1 - n] === '\\') n += 1;
  return n % 2 === 1;
};

export function bindCode(source: string, scope: ReferenceScope): BoundCode {
  const tokens = codeTokens(source, scope);
  const binder = new Binder(uniquePrefix(source));
  if (tokens.length === 0) return { source, bindings: binder.bindings };
  const regions = lexRegions(masked(source, tokens));
  const edits: { start: number; end: number; text: string }[] = [];
  const literals = new Map<Region, CodeToken[]>();
  for (const t of tokens) {
    const region = regionAt(regions, t.start);
    if (region === undefined) edits.push({ start: t.start, end: t.end, text: spaced(source, t.start, t.end, binder.id(`v:${t.key}`, t.value)) });
    else if (region.kind === 'template' && !escaped(source, t.start)) {
      edits.push({ start: t.start, end: t.end, text: '${' + binder.id(`t:${t.key}`, toText(t.value)) + '}' });
    } else if (region.kind === 'string' && !escaped(source, t.start)) {
      literals.set(region, [...(literals.get(region) ?? []), t]);
    }
  }
  for (const [region, inside] of literals) {
    const text = splitLiteral(source, region, inside, binder);
    edits.push({ start: region.start, end: region.end, text: isObjectKey(source, region) ? `[${text}]` : text });
  }
  edits.sort((a, b) => b.start - a.start);
  let out = source;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return { source: out, bindings: binder.bindings };
}
