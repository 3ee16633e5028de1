/** Small zod helpers shared by block config schemas. */
import { z } from 'zod';
import type { ValidationIssue } from '../errors.js';
import { hasPlaceholder } from '../model/ref-parse.js';
import { withoutFollowUps } from '../model/zod-issues.js';

/**
 * An out-handle id chosen by the author (condition branch, router route). Connections name it,
 * so it is literal: a reference or `{{NAME}}` in it would change it at run time.
 */
export const handleIdSchema = z
  .string()
  .min(1, 'an id is required')
  .max(128, 'an id is at most 128 characters')
  .refine((id) => !hasPlaceholder(id), 'an id is literal text: it cannot hold a reference or {{NAME}}');

/**
 * Params for a refinement that must run even when a field of its object failed its type: zod
 * skips an object's refinements once one did, so a config with one wrong type hid its duplicate
 * ids or missing fields until that was fixed, and SPEC §1 wants every issue at once. Such a
 * refinement sees the raw value of a broken field and must read the config defensively. It is
 * skipped when the value is no object or list at all: there are no fields to read then, and its
 * own type issue says everything.
 */
export const EVERY_ISSUE = { when: (payload: { value: unknown }): boolean => typeof payload.value === 'object' && payload.value !== null };

/** The string `id` of each element of a list (undefined where there is none), by position. */
export function idsOf(list: unknown, key = 'id'): (string | undefined)[] {
  if (!Array.isArray(list)) return [];
  return list.map((item: unknown) => (isPlainObject(item) && typeof item[key] === 'string' ? item[key] : undefined));
}

/**
 * An expression (condition branch, while/doWhile condition, rules-router value): it is run as
 * `return (expression)` with trailing whitespace and `;` cut, so a blank one (or only `;`) is a
 * syntax error at every run and is refused when the workflow is saved.
 */
export const expressionText = (message: string) => z.string().refine((text) => /[^\s;]/.test(text), message);

export const expressionSchema = expressionText('an expression is required');

/**
 * A setting given as a reference that reads `null` (SPEC §1.2: a missing field) is left unset,
 * so its default holds. Number coercion would otherwise turn null into 0: a temperature of 0 or
 * an API block's 0 retries without a word, or a window, limit or timeout of 0 refused. For
 * settings, not for where a request goes (a URL, method, base URL or key that reads null stays
 * an error).
 */
export function unsetWhenNull<T extends z.ZodType>(schema: T): z.ZodPreprocess<T> {
  return z.preprocess((value) => (value === null ? undefined : value), schema);
}

/** Adds an issue for every id that repeats one before it or uses a reserved handle name. */
export function checkHandleIds(
  ids: readonly (string | undefined)[],
  ctx: z.RefinementCtx,
  listKey: string,
  reserved: readonly string[],
): void {
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (id === undefined) return;
    if (reserved.includes(id)) {
      ctx.addIssue({ code: 'custom', path: [listKey, index, 'id'], message: `"${id}" is reserved and cannot be used as an id` });
    } else if (seen.has(id)) {
      ctx.addIssue({ code: 'custom', path: [listKey, index, 'id'], message: `duplicate id "${id}"` });
    }
    seen.add(id);
  });
}

/** `{ "Name": "value" }` or `[ { key, value } ]`: both spellings authors use for headers. */
export const keyValuesSchema = z.union([
  z.record(z.string(), z.unknown()),
  z.array(z.object({ key: z.string().min(1, 'a key is required'), value: z.unknown() })),
]);

export type KeyValues = z.infer<typeof keyValuesSchema>;

export function keyValueEntries(values: KeyValues | undefined): [string, unknown][] {
  if (values === undefined) return [];
  return Array.isArray(values) ? values.map((kv) => [kv.key, kv.value]) : Object.entries(values);
}

/** JSON Pointer (RFC 6901) for a zod issue path. */
export function toPointer(path: readonly PropertyKey[]): string {
  return path.map((segment) => '/' + String(segment).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}

export function zodIssues(error: z.ZodError): ValidationIssue[] {
  return withoutFollowUps(error.issues).map((issue) => ({ path: toPointer(issue.path), message: issue.message }));
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** RFC 9110 token characters: anything else cannot be a header name. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * What Node sends in a header value: tab, visible ASCII and Latin-1. Anything else (a line
 * break, a control character, `☃`) fails the request or is mangled on the way out.
 */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Why HTTP cannot carry this header name, or null. */
export function headerNameProblem(name: string): string | null {
  return HEADER_NAME.test(name) ? null : `header name ${JSON.stringify(name)} is not a valid HTTP header name`;
}

/** Why HTTP cannot carry this header value (already as text), or null. */
export function headerValueProblem(name: string, text: string): string | null {
  if (/[\r\n\0]/.test(text)) return `header "${name}" contains a line break or NUL character`;
  if (!HEADER_VALUE.test(text)) return `header "${name}" holds a character HTTP header values cannot carry (control characters, or beyond U+00FF)`;
  return null;
}

/** A header value as it is sent: text as it is, objects as JSON, other values as their text. */
export function headerText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function holdsPlaceholder(value: unknown): boolean {
  if (typeof value === 'string') return hasPlaceholder(value);
  if (Array.isArray(value)) return value.some(holdsPlaceholder);
  return isPlainObject(value) && Object.values(value).some(holdsPlaceholder);
}

/**
 * Refinement for headers written as `{ name: value }` or `[ { key, value } ]`: a literal name or
 * value that HTTP cannot carry is refused when the workflow is saved, since the block could only
 * fail (or send it mangled) when it runs. A row key or a value holding a reference or `{{NAME}}`
 * is checked once resolved; object keys are never resolved, so they are always literal.
 * `trimmed`: the block trims names and leaves out a row whose name is blank (the API block).
 * `values: false`: values are not checked (the API block's HTTP client trims a secret's trailing
 * line break, which a header value resolved from one may well carry).
 */
export function checkLiteralHeaders(headers: unknown, ctx: z.RefinementCtx, how: { trimmed: boolean; values: boolean }): void {
  const { trimmed } = how;
  const rows: { name: unknown; value: unknown; nameAt: PropertyKey[]; valueAt: PropertyKey[] }[] = Array.isArray(headers)
    ? headers.map((row: unknown, i) => (isPlainObject(row) ? { name: row['key'], value: row['value'], nameAt: [i, 'key'], valueAt: [i, 'value'] } : { name: undefined, value: undefined, nameAt: [], valueAt: [] }))
    : isPlainObject(headers)
      ? Object.entries(headers).map(([name, value]) => ({ name, value, nameAt: [name], valueAt: [name] }))
      : [];
  for (const { name, value, nameAt, valueAt } of rows) {
    // an empty row key is reported by the row's own schema ("a key is required")
    if (typeof name !== 'string' || (trimmed && name.trim() === '') || (name === '' && Array.isArray(headers)) || hasPlaceholder(name)) continue;
    const nameProblem = headerNameProblem(trimmed ? name.trim() : name);
    if (nameProblem !== null) ctx.addIssue({ code: 'custom', path: nameAt, message: nameProblem });
    if (!how.values || value === null || value === undefined || holdsPlaceholder(value)) continue;
    const valueProblem = headerValueProblem(name, headerText(value));
    if (valueProblem !== null) ctx.addIssue({ code: 'custom', path: valueAt, message: valueProblem });
  }
}
