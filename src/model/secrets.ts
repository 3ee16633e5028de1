/**
 * `{{NAME}}` secrets (SPEC §1.2, §6): find, substitute, and keep out of anything recorded.
 * Prefer resolveValue with `scope.secrets` for block configs: it substitutes secrets and
 * references in one pass, so text that arrives through a reference is never read as a placeholder.
 */
import { forEachString, mapStrings } from './json.js';
import { escapeRegExp, REDACTED, redactText } from './redaction.js';
import { findSecretTokens, secretPattern } from './ref-parse.js';

export { REDACTED, redactSecrets } from './redaction.js';

/** Distinct secret names used in any string value, in order of first use. */
export function findSecretNames(value: unknown): string[] {
  const names = new Set<string>();
  forEachString(value, (text) => {
    if (!text.includes('{{')) return;
    for (const token of findSecretTokens(text)) names.add(token.name);
  });
  return [...names];
}

/** Deep copy with known `{{NAME}}` placeholders replaced in string values; unknown names are kept. */
export function substituteSecrets(value: unknown, secrets: Readonly<Record<string, string>>): unknown {
  return mapStrings(value, (text) =>
    text.replace(secretPattern(), (whole, name: string) =>
      Object.prototype.hasOwnProperty.call(secrets, name) ? (secrets[name] ?? whole) : whole,
    ),
  );
}

/** For recording configs: every `{{NAME}}` placeholder becomes `***`. */
export function maskSecretPlaceholders(value: unknown): unknown {
  return mapStrings(value, (text) => text.replace(secretPattern(), REDACTED));
}

/**
 * Redaction of streamed text (agent tokens): a secret may arrive split over several pieces, so
 * the end of what came so far that could still grow into a secret is held back (unredacted)
 * until the next piece or the end decides; what is let through is redacted as a whole.
 */
export class StreamRedactor {
  private pending = '';
  private readonly secrets: string[];
  private readonly pattern: RegExp | null;

  constructor(
    secretValues: readonly string[],
    private readonly emit: (text: string) => void,
  ) {
    this.secrets = [...new Set(secretValues.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
    this.pattern = this.secrets.length === 0 ? null : new RegExp(this.secrets.map(escapeRegExp).join('|'), 'g');
  }

  write(text: string): void {
    this.pending += text;
    if (this.pattern === null) return this.release(this.pending.length);
    let cut = this.pending.length - heldBack(this.pending, this.secrets);
    // never cut through a whole secret: it would be let out in two unrecognisable halves
    for (const m of this.pending.matchAll(this.pattern)) {
      if (m.index < cut && m.index + m[0].length > cut) cut = m.index;
    }
    this.release(cut);
  }

  /** the held-back end: no secret can start there any more */
  flush(): void {
    this.release(this.pending.length);
  }

  private release(upTo: number): void {
    const out = this.pending.slice(0, upTo);
    this.pending = this.pending.slice(upTo);
    if (out !== '') this.emit(redactText(out, this.secrets));
  }
}

/** Length of the longest end of `text` that is the start (not the whole) of a secret. */
function heldBack(text: string, secrets: readonly string[]): number {
  let longest = 0;
  for (const secret of secrets) {
    for (let n = Math.min(secret.length - 1, text.length); n > longest; n--) {
      if (text.endsWith(secret.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}
