/**
 * Just enough JavaScript lexing to know, for a position in function code or an expression,
 * whether it sits in plain code, a quoted string, the text of a template literal, a comment or a
 * regular expression. bindCode needs this so a reference written inside a string literal is
 * inserted as text (still bound, never pasted) instead of turning into an identifier name.
 */
export type RegionKind = 'string' | 'template' | 'comment' | 'regex';

export interface Region {
  kind: RegionKind;
  /** for 'string': from the opening quote to after the closing quote; for 'template': the raw text only */
  start: number;
  end: number;
}

const REGEX_AFTER = new Set(['', '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^']);
const REGEX_AFTER_WORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'yield', 'await', 'instanceof']);

function endOfQuoted(src: string, from: number, quote: string): number {
  let j = from + 1;
  while (j < src.length) {
    const c = src[j];
    if (c === '\\') j += 2;
    else if (c === quote) return j + 1;
    else if (c === '\n') return j;
    else j += 1;
  }
  return src.length;
}

function endOfRegex(src: string, from: number): number {
  let j = from + 1;
  let inClass = false;
  while (j < src.length) {
    const c = src[j];
    if (c === '\\') j += 2;
    else if (c === '\n') return j;
    else {
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) break;
      j += 1;
    }
  }
  j += 1;
  while (j < src.length && /[a-z]/i.test(src[j] ?? '')) j += 1;
  return Math.min(j, src.length);
}

/** Scans template text from `from`; returns where code resumes and whether the literal closed. */
function templateText(src: string, from: number, regions: Region[]): { next: number; closed: boolean } {
  let j = from;
  while (j < src.length) {
    const c = src[j];
    if (c === '\\') {
      j += 2;
    } else if (c === '`') {
      regions.push({ kind: 'template', start: from, end: j });
      return { next: j + 1, closed: true };
    } else if (c === '$' && src[j + 1] === '{') {
      regions.push({ kind: 'template', start: from, end: j });
      return { next: j + 2, closed: false };
    } else {
      j += 1;
    }
  }
  regions.push({ kind: 'template', start: from, end: src.length });
  return { next: src.length, closed: true };
}

export function lexRegions(src: string): Region[] {
  const regions: Region[] = [];
  const openTemplates: number[] = []; // brace depth at which each `${` was opened
  let depth = 0;
  let prev = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i] ?? '';
    const next = src[i + 1];
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === '/' && (next === '/' || next === '*')) {
      const close = next === '/' ? src.indexOf('\n', i) : src.indexOf('*/', i + 2);
      const end = close < 0 ? src.length : next === '/' ? close : close + 2;
      regions.push({ kind: 'comment', start: i, end });
      i = end;
    } else if (c === '"' || c === "'") {
      const end = endOfQuoted(src, i, c);
      regions.push({ kind: 'string', start: i, end });
      [i, prev] = [end, 'x'];
    } else if (c === '/' && (REGEX_AFTER.has(prev) || REGEX_AFTER_WORDS.has(prev))) {
      const end = endOfRegex(src, i);
      regions.push({ kind: 'regex', start: i, end });
      [i, prev] = [end, 'x'];
    } else if (c === '`' || (c === '}' && openTemplates.at(-1) === depth)) {
      if (c === '}') openTemplates.pop();
      const { next: resume, closed } = templateText(src, i + 1, regions);
      if (!closed) openTemplates.push(depth);
      [i, prev] = [resume, closed ? 'x' : '{'];
    } else if (/[\p{L}\p{N}_$]/u.test(c)) {
      let j = i + 1;
      while (j < src.length && /[\p{L}\p{N}_$]/u.test(src[j] ?? '')) j += 1;
      [prev, i] = [src.slice(i, j), j];
    } else {
      if (c === '{') depth += 1;
      if (c === '}') depth -= 1;
      [prev, i] = [c, i + 1];
    }
  }
  return regions;
}
