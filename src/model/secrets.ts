/**
 * `{{NAME}}` secrets (SPEC §1.2, §6): find, substitute, and keep out of anything recorded.
 * Prefer resolveValue with `scope.secrets` for block configs: it substitutes secrets and
 * references in one pass, so text that arrives through a reference is never read as a placeholder.
 */
import { forEachString, mapStrings } from './json.js';
import { findSecretTokens, secretPattern } from './ref-parse.js';

export const REDACTED = '***';

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

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Deep copy where every occurrence of any secret value, in string values and in object keys,
 * becomes `***`. Longer values are matched first, so a secret that contains another is hidden
 * whole. Empty values are ignored (they would match everywhere).
 */
export function redactSecrets(value: unknown, secretValues: readonly string[]): unknown {
  if (secretValues.length === 0) return value;
  const distinct = [...new Set(secretValues.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
  if (distinct.length === 0) return value;
  const pattern = new RegExp(distinct.map(escapeRegExp).join('|'), 'g');
  const redact = (text: string): string => text.replace(pattern, REDACTED);
  return mapStrings(value, redact, redact);
}

/** For recording configs: every `{{NAME}}` placeholder becomes `***`. */
export function maskSecretPlaceholders(value: unknown): unknown {
  return mapStrings(value, (text) => text.replace(secretPattern(), REDACTED));
}
