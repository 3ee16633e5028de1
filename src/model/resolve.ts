/**
 * Reference resolution (SPEC §1.2).
 *
 * Decisions:
 * - a string that is exactly one reference keeps the referenced value's type;
 * - inside a longer string a value is inserted as text: strings as they are, everything else as
 *   its JSON text (objects and arrays as JSON, `null` as "null", numbers and booleans as usual).
 *   Missing values therefore read "null", like a JSON body would, rather than vanishing;
 * - a missing block output, a missing field, an index out of range, or a path through a
 *   non-object all resolve to `null` (never `undefined`);
 * - candidates that are not references (`<div>`, `a < b`, unknown names) are left as written;
 * - `{{NAME}}` secrets are substituted in the same pass when `scope.secrets` is given, so text
 *   coming out of a reference (e.g. user input holding "{{TOKEN}}") is never scanned again.
 */
import { mapStrings, type PathSegment } from './json.js';
import { findReferences, findSecretTokens, interpretReference, parseReference, type ParsedRef } from './ref-parse.js';
import { normalizeName } from './names.js';
import { setOwn } from './own.js';

export interface IterationScope {
  index: number;
  item: unknown;
  items: unknown[];
}

export type SecretSource = Readonly<Record<string, string>> | ReadonlyMap<string, string>;

export interface ReferenceScope {
  /**
   * Outputs by normalized block name. The starter is always `start`. A known block (in
   * `blockNames`) absent here did not run, so it resolves to null.
   */
  outputs: Readonly<Record<string, unknown>>;
  /** every normalized block name of the workflow, `start` included (CompiledWorkflow.blockNames) */
  blockNames: ReadonlySet<string>;
  variables: Readonly<Record<string, unknown>>;
  /** innermost enclosing loop / parallel iteration */
  loop?: IterationScope;
  parallel?: IterationScope;
  /** when given, `{{NAME}}` placeholders are substituted in the same pass (unknown names are left) */
  secrets?: SecretSource;
}

const hasOwn = (obj: object, key: string): boolean => Object.prototype.hasOwnProperty.call(obj, key);

export function lookupSecret(secrets: SecretSource | undefined, name: string): string | undefined {
  if (secrets === undefined) return undefined;
  if (secrets instanceof Map) return (secrets as ReadonlyMap<string, string>).get(name);
  const record = secrets as Readonly<Record<string, string>>;
  return hasOwn(record, name) ? record[name] : undefined;
}

/** Follows a path; anything missing resolves to null. Only own properties are read. */
export function navigate(value: unknown, path: readonly PathSegment[]): unknown {
  let current: unknown = value;
  for (const segment of path) {
    if (current === null || current === undefined) return null;
    if (Array.isArray(current)) {
      const index = typeof segment === 'number' ? segment : /^\d+$/.test(segment) ? Number(segment) : -1;
      current = index >= 0 && index < current.length ? current[index] : null;
    } else if (typeof current === 'object') {
      const key = String(segment);
      current = hasOwn(current, key) ? (current as Record<string, unknown>)[key] : null;
    } else {
      return null;
    }
  }
  return current === undefined ? null : current;
}

function variableValue(variables: Readonly<Record<string, unknown>>, path: readonly PathSegment[]): unknown {
  const [first, ...rest] = path;
  if (first === undefined) return null;
  const name = String(first);
  let key: string | undefined = hasOwn(variables, name) ? name : undefined;
  key ??= Object.keys(variables).find((k) => normalizeName(k) === normalizeName(name));
  return key === undefined ? null : navigate(variables[key], rest);
}

function iterationValue(scope: IterationScope | undefined, path: readonly PathSegment[]): unknown {
  const [first, ...rest] = path;
  if (scope === undefined) return null;
  if (first === 'index') return navigate(scope.index, rest);
  if (first === 'item') return navigate(scope.item, rest);
  if (first === 'items') return navigate(scope.items, rest);
  return null;
}

/** `{ found: false }` when the candidate is not a reference and must be left as written. */
export function lookupReference(token: ParsedRef, scope: ReferenceScope): { found: boolean; value: unknown } {
  const { kind, ref } = interpretReference(token, scope.blockNames);
  switch (kind) {
    case 'block': {
      const output = hasOwn(scope.outputs, ref.root) ? scope.outputs[ref.root] : null;
      return { found: true, value: navigate(output, ref.path) };
    }
    case 'variable':
      return { found: true, value: variableValue(scope.variables, ref.path) };
    case 'loop':
      return { found: true, value: iterationValue(scope.loop, ref.path) };
    case 'parallel':
      return { found: true, value: iterationValue(scope.parallel, ref.path) };
    default:
      return { found: false, value: undefined };
  }
}

/** How a value reads when inserted into a longer string. */
export function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'object') {
    try {
      return JSON.stringify(value) ?? 'null';
    } catch {
      return String(value);
    }
  }
  return String(value);
}

interface Token {
  start: number;
  end: number;
  value: unknown;
}

/** The references and known secrets of one string, in order, with their values. */
export function resolvedTokens(text: string, scope: ReferenceScope): Token[] {
  const tokens: Token[] = [];
  for (const ref of findReferences(text)) {
    const hit = lookupReference(ref, scope);
    if (hit.found) tokens.push({ start: ref.start, end: ref.end, value: hit.value });
  }
  if (scope.secrets !== undefined) {
    for (const token of findSecretTokens(text)) {
      const value = lookupSecret(scope.secrets, token.name);
      if (value !== undefined) tokens.push({ start: token.start, end: token.end, value });
    }
  }
  return withoutOverlaps(tokens);
}

/**
 * Tokens in order, each starting after the previous one ends. They overlap only when a block
 * name holds a `{{NAME}}` (`<a{{B}}.x>`): the reference, which starts first, wins.
 */
export function withoutOverlaps<T extends { start: number; end: number }>(tokens: T[]): T[] {
  tokens.sort((a, b) => a.start - b.start);
  let end = 0;
  return tokens.filter((t) => {
    if (t.start < end) return false;
    end = t.end;
    return true;
  });
}

export function resolveString(text: string, scope: ReferenceScope): unknown {
  const whole = parseReference(text);
  if (whole !== null) {
    const hit = lookupReference(whole, scope);
    if (hit.found) return hit.value;
  }
  const tokens = resolvedTokens(text, scope);
  if (tokens.length === 0) return text;
  let out = '';
  let cursor = 0;
  for (const token of tokens) {
    out += text.slice(cursor, token.start) + toText(token.value);
    cursor = token.end;
  }
  return out + text.slice(cursor);
}

/** Deep copy of `value` with every reference in every string value resolved. Keys are kept. */
export function resolveValue(value: unknown, scope: ReferenceScope): unknown {
  return mapStrings(value, (text) => resolveString(text, scope));
}

/** Resolves a block config except its code fields, which stay raw for `bindCode`. */
export function resolveConfig(
  config: Readonly<Record<string, unknown>>,
  scope: ReferenceScope,
  codeFields: readonly string[] = [],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    const resolved = codeFields.includes(key) ? value : resolveValue(value, scope);
    // a "__proto__" key stays data (setOwn), every other one a plain store: defineProperty with a
    // descriptor per key cost three times as much, on every block run
    setOwn(out, key, resolved);
  }
  return out;
}

