/**
 * Reference syntax (SPEC §1.2): `<name>` or `<name.path>`, path with dots and indexes
 * (`items[0].id` = `items.0.id`).
 *
 * Decision on what counts as a reference, so that `a < b`, `<div>` and e-mail addresses in
 * angle brackets stay plain text:
 * - a token is a *candidate* only if its first segment looks like a block name: a letter or `_`
 *   first, then letters, digits, `_`, `-` and spaces (names may contain spaces: `<My API.data>`);
 *   path segments are letters, digits, `_`, `$`, `-`, or `[n]`. Anything else (`a < b`,
 *   `<a@b.c>`, `<div class="x">`) is not a candidate at all.
 * - a candidate whose normalized first segment is a known block name (or `start`) is a block
 *   reference, with or without a path;
 * - `variable`, `loop` and `parallel` are reference prefixes only when followed by a path;
 * - any other candidate WITHOUT a path (`<div>`, `<br>`) is left alone as text (HTML);
 * - any other candidate WITH a path (`<wether.data>`) is a reference to a block that does not
 *   exist: a validation error, and left alone if it ever reaches resolution.
 */
import { normalizeName } from './names.js';
import { forEachString, type PathSegment } from './json.js';

export interface ParsedRef {
  /** offsets of the token in the scanned string: text.slice(start, end) === raw */
  start: number;
  end: number;
  raw: string;
  /** first segment as written, and normalized */
  rawRoot: string;
  root: string;
  path: PathSegment[];
  hasPath: boolean;
}

export interface LocatedRef extends ParsedRef {
  /** where the string holding it sits inside the walked value */
  at: PathSegment[];
}

export const REFERENCE_PREFIXES = ['variable', 'loop', 'parallel'] as const;
export const ITERATION_FIELDS = ['index', 'item', 'items'] as const;

const REF_SOURCE = String.raw`<([\p{L}_][\p{L}\p{N}_ \-]*)((?:\.[\p{L}\p{N}_$\-]+|\[\d+\])*)>`;
const SEGMENT = /\.([\p{L}\p{N}_$-]+)|\[(\d+)\]/gu;

function parsePath(text: string): PathSegment[] {
  const out: PathSegment[] = [];
  for (const m of text.matchAll(SEGMENT)) {
    const dotted = m[1];
    if (dotted !== undefined) out.push(/^\d+$/.test(dotted) ? Number(dotted) : dotted);
    else out.push(Number(m[2]));
  }
  return out;
}

function toRef(m: RegExpMatchArray): ParsedRef {
  const rawRoot = m[1] ?? '';
  const pathText = m[2] ?? '';
  const start = m.index ?? 0;
  return {
    start,
    end: start + m[0].length,
    raw: m[0],
    rawRoot,
    root: normalizeName(rawRoot),
    path: parsePath(pathText),
    hasPath: pathText.length > 0,
  };
}

/** Every syntactic candidate in a string, in order (see the module comment for what is one). */
export function findReferences(text: string): readonly ParsedRef[] {
  return memoized(foundRefs, text, scanReferences);
}

function scanReferences(text: string): readonly ParsedRef[] {
  if (!text.includes('<')) return NONE;
  return Object.freeze([...text.matchAll(new RegExp(REF_SOURCE, 'gu'))].map((m) => freezeRef(toRef(m))));
}

function freezeRef(ref: ParsedRef): ParsedRef {
  Object.freeze(ref.path);
  return Object.freeze(ref);
}

/**
 * The same config strings are scanned on every run of their block: their parse is kept, per
 * text, frozen (so a caller cannot change what the next run reads). Bounded: only short texts
 * are kept, and a service that sees more than this many distinct ones starts over.
 */
const MEMO_LIMIT = 20_000;
/** longer texts are scanned each time rather than kept */
const MEMO_TEXT_LIMIT = 2_048;
const NONE: readonly never[] = Object.freeze([]);
const foundRefs = new Map<string, readonly ParsedRef[]>();
const wholeRefs = new Map<string, ParsedRef | null>();
const secretTokens = new Map<string, readonly SecretToken[]>();

function memoized<T>(memo: Map<string, T>, text: string, compute: (text: string) => T): T {
  if (text.length > MEMO_TEXT_LIMIT) return compute(text);
  const hit = memo.get(text);
  if (hit !== undefined || memo.has(text)) return hit as T;
  const value = compute(text);
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(text, value);
  return value;
}

/** The reference when `text` is exactly one candidate token, else null. */
export function parseReference(text: string): ParsedRef | null {
  return memoized(wholeRefs, text, scanWholeReference);
}

const WHOLE_REF = new RegExp(`^${REF_SOURCE}$`, 'u');

function scanWholeReference(text: string): ParsedRef | null {
  if (!text.startsWith('<')) return null;
  const m = WHOLE_REF.exec(text);
  return m ? freezeRef(toRef(m)) : null;
}

/** Every candidate in every string of a JSON value (keys are not scanned). */
export function collectReferences(value: unknown): LocatedRef[] {
  const out: LocatedRef[] = [];
  forEachString(value, (text, at) => {
    for (const ref of findReferences(text)) out.push({ ...ref, at });
  });
  return out;
}

export type RefKind = 'block' | 'variable' | 'loop' | 'parallel' | 'text' | 'unknown';

/**
 * What a candidate means given the known block names (normalized, including `start`):
 * 'text' = left alone, 'unknown' = names a block that does not exist.
 */
export function classifyReference(ref: ParsedRef, blockNames: ReadonlySet<string>): RefKind {
  if ((REFERENCE_PREFIXES as readonly string[]).includes(ref.root)) {
    return ref.hasPath ? (ref.root as 'variable' | 'loop' | 'parallel') : 'text';
  }
  if (blockNames.has(ref.root)) return 'block';
  return ref.hasPath ? 'unknown' : 'text';
}

/**
 * Names a reference may use: every block (disabled ones too: they resolve to null) and `start`.
 * The starter answers to `start` only, because its output travels under that name.
 */
export function referenceableNames(blocks: readonly { normName: string; def: { type: string } }[]): Set<string> {
  const names = new Set<string>(['start']);
  for (const b of blocks) if (b.def.type !== 'starter') names.add(b.normName);
  return names;
}

const SECRET_SOURCE = String.raw`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`;

export interface SecretToken {
  start: number;
  end: number;
  name: string;
}

export function findSecretTokens(text: string): readonly SecretToken[] {
  return memoized(secretTokens, text, scanSecretTokens);
}

function scanSecretTokens(text: string): readonly SecretToken[] {
  if (!text.includes('{{')) return NONE;
  const tokens = [...text.matchAll(new RegExp(SECRET_SOURCE, 'g'))].map((m) => Object.freeze({
    start: m.index,
    end: m.index + m[0].length,
    name: m[1] ?? '',
  }));
  return Object.freeze(tokens);
}

/** True when `text` holds a reference candidate or a `{{NAME}}` anywhere: part of it is known only at run time. */
export function hasPlaceholder(text: string): boolean {
  return findReferences(text).length > 0 || findSecretTokens(text).length > 0;
}

/**
 * True when `text` is exactly one reference candidate or one `{{NAME}}`: a value known only at
 * run time, whatever type its field wants.
 */
export function isWholePlaceholder(text: string): boolean {
  if (parseReference(text) !== null) return true;
  const tokens = findSecretTokens(text);
  return tokens.length === 1 && tokens[0]?.start === 0 && tokens[0].end === text.length;
}

export function secretPattern(): RegExp {
  return new RegExp(SECRET_SOURCE, 'g');
}
