/**
 * The values an in-process expression may see and give back. The sandbox receives its bindings
 * as JSON text and answers with JSON text (src/sandbox/isolated.ts), so in-process evaluation is
 * exact only on values whose JSON round trip gives them back unchanged: finite numbers other
 * than -0, strings, booleans, null, and plain objects and arrays of them whose properties are
 * all own, enumerable data properties, each object reachable once. Anything else (NaN, a nested
 * undefined, a Date, a shared or cyclic object, a getter) leaves the expression to the sandbox.
 */
/** Values walked per evaluation before the sandbox, which copies them anyway, decides. */
const MAX_NODES = 10_000;
const MAX_DEPTH = 64;
/**
 * Bound strings longer than this in all, and results or intermediate strings longer than this,
 * go to the sandbox: its memory and result-size limits decide about them.
 */
export const MAX_STRING = 1 << 20;

interface Walk {
  nodes: number;
  chars: number;
  readonly seen: Set<object>;
}

function isDataProperty(object: object, key: string | symbol): boolean {
  if (typeof key !== 'string') return false;
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && descriptor.enumerable === true && 'value' in descriptor;
}

function plainArray(value: unknown[], walk: Walk, depth: number): boolean {
  if (Object.getPrototypeOf(value) !== Array.prototype) return false;
  // the indices and `length`, nothing more: no holes, no named properties
  if (Reflect.ownKeys(value).length !== value.length + 1) return false;
  for (let i = 0; i < value.length; i += 1) {
    if (!isDataProperty(value, String(i)) || !isData(value[i], walk, depth + 1)) return false;
  }
  return true;
}

function plainObject(value: object, walk: Walk, depth: number): boolean {
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key of Reflect.ownKeys(value)) {
    if (!isDataProperty(value, key) || !isData((value as Record<string, unknown>)[key as string], walk, depth + 1)) return false;
  }
  return true;
}

function isData(value: unknown, walk: Walk, depth: number): boolean {
  walk.nodes += 1;
  if (walk.nodes > MAX_NODES) return false;
  switch (typeof value) {
    case 'string':
      walk.chars += value.length;
      return walk.chars <= MAX_STRING;
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (depth > MAX_DEPTH || walk.seen.has(value)) return false;
      walk.seen.add(value);
      return Array.isArray(value) ? plainArray(value as unknown[], walk, depth) : plainObject(value, walk, depth);
    }
    default:
      return false;
  }
}

/**
 * The bindings as the sandbox would see them (a top-level undefined is null there), or null when
 * one of them is not plain JSON data.
 */
export function dataBindings(bindings: Record<string, unknown>): Map<string, unknown> | null {
  const walk: Walk = { nodes: 0, chars: 0, seen: new Set() };
  const values = new Map<string, unknown>();
  for (const name of Object.keys(bindings)) {
    const value = bindings[name] === undefined ? null : bindings[name];
    if (!isData(value, walk, 0)) return null;
    values.set(name, value);
  }
  return values;
}

const NO_RESULT = Symbol('no result');

/** Whether JSON data nests deeper than MAX_DEPTH (the sandbox's own bound, src/model/json.ts, is higher). */
function tooDeep(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth >= MAX_DEPTH) return true;
  return Object.values(value).some((item) => tooDeep(item, depth + 1));
}

/**
 * The result as the sandbox answers it (JSON: undefined and non-finite numbers are null, -0 is 0,
 * objects are copies), or NO_RESULT when the sandbox should decide (a long or deep result).
 */
export function asResult(value: unknown): unknown {
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'number':
      return Number.isFinite(value) ? value + 0 : null;
    case 'boolean':
      return value;
    case 'string':
      // a string's JSON text is at most six characters per character, plus the quotes
      if (value.length > MAX_STRING) return NO_RESULT;
      return value.length * 6 + 2 <= MAX_STRING || JSON.stringify(value).length <= MAX_STRING ? value : NO_RESULT;
    case 'object': {
      if (value === null) return null;
      const text = JSON.stringify(value);
      if (text.length > MAX_STRING) return NO_RESULT;
      const copy: unknown = JSON.parse(text);
      return tooDeep(copy, 0) ? NO_RESULT : copy;
    }
    default:
      return NO_RESULT;
  }
}

export { NO_RESULT };
