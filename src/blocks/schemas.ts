/** Small zod helpers shared by block config schemas. */
import { z } from 'zod';
import type { ValidationIssue } from '../errors.js';
import { hasPlaceholder } from '../model/ref-parse.js';

/**
 * An out-handle id chosen by the author (condition branch, router route). Connections name it,
 * so it is literal: a reference or `{{NAME}}` in it would change it at run time.
 */
export const handleIdSchema = z
  .string()
  .min(1, 'an id is required')
  .max(128, 'an id is at most 128 characters')
  .refine((id) => !hasPlaceholder(id), 'an id is literal text: it cannot hold a reference or {{NAME}}');

/** Adds an issue for every id that repeats one before it or uses a reserved handle name. */
export function checkHandleIds(
  ids: readonly string[],
  ctx: z.RefinementCtx,
  listKey: string,
  reserved: readonly string[],
): void {
  const seen = new Set<string>();
  ids.forEach((id, index) => {
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
  return error.issues.map((issue) => ({ path: toPointer(issue.path), message: issue.message }));
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
