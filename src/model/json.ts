/** Small JSON helpers shared by validation and reference handling. */
import { setOwn } from './own.js';

export type PathSegment = string | number;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function escapeSegment(segment: PathSegment): string {
  return String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** RFC 6901 JSON Pointer for a list of segments ("" for the document itself). */
export function toPointer(segments: readonly PathSegment[]): string {
  return segments.map((s) => '/' + escapeSegment(s)).join('');
}

/** Visits every string value (not keys) of a JSON value, with its path. */
export function forEachString(value: unknown, visit: (text: string, path: PathSegment[]) => void, path: PathSegment[] = []): void {
  if (typeof value === 'string') {
    visit(value, path);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => forEachString(item, visit, [...path, i]));
  } else if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) forEachString(item, visit, [...path, key]);
  }
}

/**
 * Whether some string value (not a key) of a JSON value passes `test`; stops at the first. For
 * the checks that need no path: forEachString builds one per value visited.
 */
export function someString(value: unknown, test: (text: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (Array.isArray(value)) {
    for (const item of value) if (someString(item, test)) return true;
  } else if (isPlainObject(value)) {
    for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key) && someString(value[key], test)) return true;
  }
  return false;
}

/** Deep copy mapping every string value (and optionally keys); other leaves are kept as they are. */
export function mapStrings(value: unknown, map: (text: string) => unknown, mapKey?: (key: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map, mapKey));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const k = mapKey ? mapKey(key) : key;
      // a "__proto__" key stays data instead of changing the prototype
      setOwn(out, k, mapStrings(item, map, mapKey));
    }
    return out;
  }
  return value;
}

/**
 * How deep JSON data may nest. Far beyond what real documents need, and well inside what the
 * recursive walks over data (references, redaction, serialisation) can take before the stack
 * runs out: deeper input is refused where it enters (request bodies, function results, model
 * answers).
 */
export const MAX_JSON_DEPTH = 100;

/**
 * Whether JSON parsed from `text` nests deeper than MAX_JSON_DEPTH. Each level takes an opening
 * and a closing bracket, so a short text (request bodies, most results) is judged by its length
 * without walking the value.
 */
export function jsonTextNestsTooDeep(text: string, value: unknown): boolean {
  return text.length >= 2 * (MAX_JSON_DEPTH + 1) && nestsDeeperThan(value);
}

/** Whether a parsed JSON value nests deeper than `max` arrays/objects (iterative: no stack to overflow). */
export function nestsDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop() as [unknown, number];
    if (item === null || typeof item !== 'object') continue;
    if (depth >= max) return true;
    for (const child of Object.values(item as Record<string, unknown>)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
