/**
 * Reference syntax (SPEC §1.2): `<name>` or `<name.path>`, path with dots and indexes
 * (`items[0].id` = `items.0.id`).
 *
 * Decision on what counts as a reference. A block name may hold any character but `.`, `<` and
 * `>` (SPEC §1), so any such name must be writable as the first segment, while `a < b`, `<div>`,
 * e-mail addresses in angle brackets and code comparisons stay plain text:
 * - a token is a *candidate* when its first segment is one or more characters other than `.`,
 *   `<`, `>` and line breaks, neither starting nor ending with whitespace (`< start.x >` and
 *   `a < b` are not candidates), and its path is strict: segments of letters, digits, `_`, `$`,
 *   `-`, or `[n]`. So `i<arr.length && j>0` is none either: after `.length` comes no `>`;
 * - a candidate whose normalized first segment is a known block name (or `start`) is a block
 *   reference, with or without a path, whatever characters the name holds;
 * - `variable`, `loop` and `parallel` are reference prefixes only when followed by a path;
 * - any other candidate WITHOUT a path (`<div>`, `<br>`) is left alone as text (HTML);
 * - any other candidate WITH a path is a reference to a block that does not exist (a validation
 *   error, left alone if it ever reaches resolution) when its first segment reads like a name:
 *   letters, digits, whitespace and `_ - + # $ ' ( ) [ ]` only (brackets balanced), with a letter
 *   or `_` (`<wether.data>`, `<Fetch (v3).result>`). Otherwise it is text: the `<` of a comparison
 *   or of markup, an address or a URL, never meant as a name (`a<b && c.d>e`,
 *   `<ada@example.com>`, `<a href=x.html>`, `<https://example.com>`, `<0.5>`).
 * - a first segment ending in `[n]` groups may be a name (`Step [2]`) or a name and an index
 *   (`items[0]`): the longest reading that names a block wins, else the index reading.
 */
import { isEntry } from './capabilities.js';
import { MAX_NAME_LENGTH, normalizeName } from './names.js';
import { forEachString, type PathSegment } from './json.js';

/** One way of reading a token: its first segment (as written, and normalized) and its path. */
export interface RefReading {
  rawRoot: string;
  root: string;
  path: PathSegment[];
  hasPath: boolean;
}

/** A candidate token, read with the shortest first segment (`items[0]` = `items` + `[0]`). */
export interface ParsedRef extends RefReading {
  /** offsets of the token in the scanned string: text.slice(start, end) === raw */
  start: number;
  end: number;
  raw: string;
  /**
   * Longer first segments that keep trailing `[n]` groups (a name such as `Step [2]`), longest
   * first; absent when there are none. See readingFor.
   */
  longer?: readonly LongerRoot[];
}

/** A first segment that takes the first `pathTaken` segments of the shortest reading's path. */
export interface LongerRoot {
  rawRoot: string;
  root: string;
  pathTaken: number;
}

export interface LocatedRef extends ParsedRef {
  /** where the string holding it sits inside the walked value */
  at: PathSegment[];
}

export const REFERENCE_PREFIXES = ['variable', 'loop', 'parallel'] as const;
export const ITERATION_FIELDS = ['index', 'item', 'items'] as const;

// A name may hold anything but `.`, `<` and `>` (SPEC §1). A reference is written on one line,
// and whitespace at either end would make `a < b` and `< x.y >` look like one. The first segment
// runs to the first `.` or `>`, so `[n]` groups right after a name belong to it here and are
// split off by readings(): two ways to match the same text would cost quadratic backtracking.
const ROOT = String.raw`[^\s.<>](?:[^.<>\r\n\u2028\u2029]*[^\s.<>])?`;
const SEG = String.raw`[\p{L}\p{N}_$\-]+`;
const PATH = String.raw`(?:\.${SEG}(?:\.${SEG}|\[\d+\])*)?`;
const REF_SOURCE = `<(${ROOT})(${PATH})>`;
const SEGMENT = /\.([\p{L}\p{N}_$-]+)|\[(\d+)\]/gu;
/** Lowercasing may double a character (`İ`), removing whitespace only shortens. */
const MAX_NORMALIZED_NAME = 2 * MAX_NAME_LENGTH;

function parsePath(text: string): PathSegment[] {
  const out: PathSegment[] = [];
  for (const m of text.matchAll(SEGMENT)) {
    const dotted = m[1];
    if (dotted !== undefined) out.push(/^\d+$/.test(dotted) ? Number(dotted) : dotted);
    else out.push(Number(m[2]));
  }
  return out;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Where the trailing `[n]` groups of a first segment start, last group first (`a[1][2]` → 4, 1). */
function trailingIndexStarts(root: string): number[] {
  const starts: number[] = [];
  let end = root.length;
  while (root[end - 1] === ']') {
    let open = end - 2;
    while (open > 0 && isDigit(root[open])) open -= 1;
    // no digits, no `[`, or a group that is all that is left: not an index after a name
    if (open === end - 2 || open === 0 || root[open] !== '[') break;
    starts.push(open);
    end = open;
  }
  return starts;
}

interface Readings {
  shortest: RefReading;
  longer: LongerRoot[];
}

/**
 * The readings of a token: the shortest first segment, and the longer ones that keep trailing
 * `[n]` groups (longest first), only while they could still be a name. A longer one's path is
 * the shortest one's less the groups it keeps, made when it is chosen (readingFor).
 */
function readings(rawRoot: string, pathText: string): Readings {
  const base = parsePath(pathText);
  const starts = trailingIndexStarts(rawRoot);
  if (starts.length === 0) return { shortest: { rawRoot, root: normalizeName(rawRoot), path: base, hasPath: base.length > 0 }, longer: [] };
  // cuts[k]: where the first segment ends when its last k groups go to the path
  const cuts = [rawRoot.length, ...starts];
  const valid = cuts.map((cut) => !/\s/u.test(rawRoot[cut - 1] ?? ''));
  const shortest = valid.lastIndexOf(true);
  // the groups cut off are untouched by normalization, so a prefix's normal form is a prefix of the whole one's
  const normalized = normalizeName(rawRoot);
  const rootAt = (cut: number): string => normalized.slice(0, normalized.length - (rawRoot.length - cut));
  const cut = cuts[shortest] ?? rawRoot.length;
  const path = [...parsePath(rawRoot.slice(cut)), ...base];
  const longer: LongerRoot[] = [];
  for (let k = 0; k < shortest; k++) {
    const root = rootAt(cuts[k] ?? 0);
    if (valid[k] && root.length <= MAX_NORMALIZED_NAME) longer.push({ rawRoot: rawRoot.slice(0, cuts[k]), root, pathTaken: shortest - k });
  }
  return { shortest: { rawRoot: rawRoot.slice(0, cut), root: rootAt(cut), path, hasPath: path.length > 0 }, longer };
}

function toRef(m: RegExpMatchArray): ParsedRef {
  const { shortest, longer } = readings(m[1] ?? '', m[2] ?? '');
  const start = m.index ?? 0;
  // shared by every run that scans the same text: nobody may change what the next one reads
  Object.freeze(shortest.path);
  const ref: ParsedRef = { start, end: start + m[0].length, raw: m[0], ...shortest };
  if (longer.length > 0) ref.longer = Object.freeze(longer.map((r) => Object.freeze(r)));
  return Object.freeze(ref);
}

/** Every syntactic candidate in a string, in order (see the module comment for what is one). */
export function findReferences(text: string): readonly ParsedRef[] {
  return memoized(foundRefs, text, scanReferences);
}

function scanReferences(text: string): readonly ParsedRef[] {
  if (!text.includes('<')) return NONE;
  return Object.freeze([...text.matchAll(new RegExp(REF_SOURCE, 'gu'))].map(toRef));
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
  return m ? toRef(m) : null;
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
 * The reading of `ref` to use: the longest whose first segment is a known block name (a block
 * named `Step [2]`), else the shortest (`items[0]` is block `items`, index 0).
 */
export function readingFor<T extends ParsedRef>(ref: T, blockNames: ReadonlySet<string>): T {
  const known = ref.longer?.find((r) => blockNames.has(r.root));
  if (known === undefined) return ref;
  const path = ref.path.slice(known.pathTaken);
  return { ...ref, rawRoot: known.rawRoot, root: known.root, path, hasPath: path.length > 0 };
}

// See the module comment: what an unknown first segment must look like to be reported.
const NAME_CHARS = /^[\p{L}\p{M}\p{N}\s_\-+#$'()[\]]+$/u;
const NAME_LETTER = /[\p{L}_]/u;

function bracketsBalanced(text: string): boolean {
  const closers: string[] = [];
  for (const c of text) {
    if (c === '(') closers.push(')');
    else if (c === '[') closers.push(']');
    else if ((c === ')' || c === ']') && closers.pop() !== c) return false;
  }
  return closers.length === 0;
}

function readsLikeName(rawRoot: string): boolean {
  return NAME_CHARS.test(rawRoot) && NAME_LETTER.test(rawRoot) && bracketsBalanced(rawRoot);
}

/**
 * What a candidate means given the known block names (normalized, including `start`), and the
 * reading it is taken in (its `root` and `path` are the ones to use): 'text' = left alone,
 * 'unknown' = names a block that does not exist.
 */
export function interpretReference<T extends ParsedRef>(ref: T, blockNames: ReadonlySet<string>): { kind: RefKind; ref: T } {
  const read = readingFor(ref, blockNames);
  if ((REFERENCE_PREFIXES as readonly string[]).includes(read.root)) {
    return { kind: read.hasPath ? (read.root as 'variable' | 'loop' | 'parallel') : 'text', ref: read };
  }
  if (blockNames.has(read.root)) return { kind: 'block', ref: read };
  return { kind: read.hasPath && readsLikeName(read.rawRoot) ? 'unknown' : 'text', ref: read };
}

export function classifyReference(ref: ParsedRef, blockNames: ReadonlySet<string>): RefKind {
  return interpretReference(ref, blockNames).kind;
}

/**
 * Names a reference may use: every block (disabled ones too: they resolve to null) and `start`.
 * The starter answers to `start` only, because its output travels under that name.
 */
export function referenceableNames(blocks: readonly { normName: string; def: { type: string } }[]): Set<string> {
  const names = new Set<string>(['start']);
  for (const b of blocks) if (!isEntry(b.def.type)) names.add(b.normName);
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
