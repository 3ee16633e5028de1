/**
 * For a position in function code or an expression: whether it sits in plain code, a quoted
 * string, the text of a template literal, a comment or a regular expression. bindCode needs this
 * so a reference written inside a string literal is inserted as text (still bound, never pasted)
 * instead of turning into an identifier name. acorn's tokenizer decides it, with its own
 * tracking of where a `/` starts a regular expression and where a `}` resumes a template.
 */
import { tokenizer, tokTypes, type Options } from 'acorn';
import { TextCache } from './expression/cache.js';

export type RegionKind = 'string' | 'template' | 'comment' | 'regex';

export interface Region {
  kind: RegionKind;
  /** for 'string': from the opening quote to after the closing quote; for 'template': the raw text only */
  start: number;
  end: number;
}

/** Function code is the body of an async function in sloppy mode (src/sandbox/runner.ts). */
const OPTIONS: Options = { ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true };

function kindOf(type: unknown): RegionKind | undefined {
  if (type === tokTypes.string) return 'string';
  if (type === tokTypes.template || type === tokTypes.invalidTemplate) return 'template';
  if (type === tokTypes.regexp) return 'regex';
  return undefined;
}

/**
 * Regions by source text. A block binds the same code on every run, and tokenizing it again cost
 * about ten times what a lookup does.
 */
const cache = new TextCache<readonly Region[]>(1000, 4_000_000);

export function lexRegions(src: string): readonly Region[] {
  let regions = cache.get(src);
  if (regions === undefined) {
    regions = tokenRegions(src);
    cache.set(src, regions);
  }
  return regions;
}

function tokenRegions(src: string): readonly Region[] {
  const regions: Region[] = [];
  const onComment = (_block: boolean, _text: string, start: number, end: number): void => {
    regions.push({ kind: 'comment', start, end });
  };
  try {
    for (const token of tokenizer(src, { ...OPTIONS, onComment })) {
      const kind = kindOf(token.type);
      if (kind !== undefined) regions.push({ kind, start: token.start, end: token.end });
    }
  } catch {
    // Code that does not tokenize (an unclosed string or template, a bad escape) fails in the
    // sandbox with its SyntaxError anyway. The regions read so far stand, and the rest counts as
    // plain code: a reference there is bound as a value, which still pastes no text.
  }
  return Object.freeze(regions.sort((a, b) => a.start - b.start));
}
