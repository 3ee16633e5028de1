/**
 * Redaction of secret values in what Troupe keeps or shows (SPEC §1.2, §3). Only user data is
 * redacted: the inputs, the values blocks produce, error messages. Troupe's own structure
 * (statuses, ids, codes, field names, block names, timestamps) never is: a stored secret
 * whose value is an ordinary word ("completed", "result") must not reshape a record that
 * clients and the runtime itself read back (an execution's status, a log's fields).
 */
import { capabilitiesOf } from './capabilities.js';
import { isPlainObject } from './json.js';
import { setOwn } from './own.js';

export const REDACTED = '***';

/** one pattern per list of values: the runtime passes the same list (one per execution) again and again */
const patterns = new WeakMap<readonly string[], RegExp | null>();

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Longer values first, so a secret that contains another is hidden whole; empty ones never match. */
function patternOf(values: readonly string[]): RegExp | null {
  // most runs have no secret at all
  if (values.length === 0) return null;
  let pattern = patterns.get(values);
  if (pattern === undefined) {
    const distinct = [...new Set(values.filter((s) => s.length > 0))].sort((a, b) => b.length - a.length);
    pattern = distinct.length === 0 ? null : new RegExp(distinct.map(escapeRegExp).join('|'), 'g');
    patterns.set(values, pattern);
  }
  return pattern;
}

/** `text` with every occurrence of a secret value as `***`. */
export function redactText(text: string, secretValues: readonly string[]): string {
  const pattern = patternOf(secretValues);
  return pattern === null ? text : text.replace(pattern, REDACTED);
}

/**
 * User data: a deep copy where every occurrence of a secret value, in string values and in
 * object keys (a function may return `{ [secret]: 1 }`), becomes `***`.
 */
export function redactSecrets(value: unknown, secretValues: readonly string[]): unknown {
  const pattern = patternOf(secretValues);
  return pattern === null ? value : redactData(value, pattern);
}

function redactData(value: unknown, pattern: RegExp): unknown {
  if (typeof value === 'string') return value.replace(pattern, REDACTED);
  if (Array.isArray(value)) return value.map((item) => redactData(item, pattern));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setOwn(out, key.replace(pattern, REDACTED), redactData(item, pattern));
  return out;
}


/** What tells a block's type by its normalized name (the names of a container's children). */
export type TypeOfName = (name: string) => string | undefined;

/**
 * Fields of Troupe's own objects (block outputs, errors, tool calls, memories) whose values are
 * Troupe's too: error codes, message roles, handle ids of the definition, the trigger (its type
 * and ids), token counts, the API block's attempt log (numbers and codes), timestamps.
 */
const OWN_VALUES: ReadonlySet<string> = new Set([
  'code', 'role', 'selectedBranch', 'selectedRoute', 'trigger', 'conversationId', 'tokens', 'attemptLog', 'createdAt',
]);
/** Fields whose values are more of Troupe's objects, or lists of them: their field names are kept too. */
const OWN_OBJECTS: ReadonlySet<string> = new Set(['error', 'toolCalls', 'memories', 'issues']);
/*
 * Outputs that spread data among their own fields (capabilities.ts `ownOutputFields`: the
 * starter spreads its input's fields, an agent with a response format the fields of the model's
 * JSON answer) hold user data, keys included; the type's own fields (and `error`, the output of
 * a failure taken by an error connection) are Troupe's.
 */

function redactOwn(obj: Record<string, unknown>, pattern: RegExp, typeOf: TypeOfName | undefined, container: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) setOwn(out, key, redactOwnField(key, value, pattern, typeOf, container));
  return out;
}

function redactOwnField(key: string, value: unknown, pattern: RegExp, typeOf: TypeOfName | undefined, container: boolean): unknown {
  if (OWN_VALUES.has(key)) return value;
  if (OWN_OBJECTS.has(key)) return redactOwnList(value, pattern);
  if (container && key === 'results' && Array.isArray(value)) return value.map((r) => redactIteration(r, pattern, typeOf));
  return redactData(value, pattern);
}

function redactOwnList(value: unknown, pattern: RegExp): unknown {
  const one = (item: unknown): unknown => (isPlainObject(item) ? redactOwn(item, pattern, undefined, false) : redactData(item, pattern));
  return Array.isArray(value) ? value.map(one) : one(value);
}

/** One iteration's result: child block name → its output. The names are the workflow's. */
function redactIteration(result: unknown, pattern: RegExp, typeOf: TypeOfName | undefined): unknown {
  if (!isPlainObject(result)) return redactData(result, pattern);
  const out: Record<string, unknown> = {};
  for (const [name, output] of Object.entries(result)) {
    setOwn(out, name, isPlainObject(output) ? redactBlockOutput(output, pattern, typeOf?.(name), typeOf) : redactData(output, pattern));
  }
  return out;
}

function redactBlockOutput(output: Record<string, unknown>, pattern: RegExp, type: string | undefined, typeOf: TypeOfName | undefined): Record<string, unknown> {
  const caps = capabilitiesOf(type);
  const own = caps.ownOutputFields;
  if (own === null) return redactOwn(output, pattern, typeOf, caps.contains);
  // a chat's or a webhook's input has Troupe's fields (`message`, `body`, ...): so has the starter's output then
  const triggerType = caps.entry && isPlainObject(output['trigger']) ? output['trigger']['type'] : undefined;
  const shaped = typeof triggerType === 'string' && TRIGGER_INPUTS.has(triggerType);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(output)) {
    if (key === 'input' && shaped) setOwn(out, key, redactTriggerInput(value, pattern, triggerType));
    else if (own.has(key) || shaped) setOwn(out, key, redactInputField(key, value, pattern));
    else setOwn(out, key.replace(pattern, REDACTED), redactData(value, pattern));
  }
  return out;
}

/**
 * Triggers whose input Troupe shapes (SPEC §4.3, §4.4): a webhook's `{ body, headers, query,
 * method }`, a chat message's `{ message, conversationId, turn, history }` (history entries are
 * `{ role, content }`). Their field names are kept; what the sender sent is user data.
 */
const TRIGGER_INPUTS: ReadonlySet<string> = new Set(['webhook', 'chat']);

function redactTriggerInput(input: unknown, pattern: RegExp, triggerType: string | undefined): unknown {
  if (triggerType === undefined || !TRIGGER_INPUTS.has(triggerType) || !isPlainObject(input)) return redactData(input, pattern);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) setOwn(out, key, redactInputField(key, value, pattern));
  return out;
}

function redactInputField(key: string, value: unknown, pattern: RegExp): unknown {
  return key === 'history' ? redactOwnList(value, pattern) : redactOwnField(key, value, pattern, undefined, false);
}

/** An execution's input as recorded: user data, in the fields Troupe gives a chat's or a webhook's input. */
export function redactInput(input: unknown, secretValues: readonly string[], triggerType: string | undefined): unknown {
  const pattern = patternOf(secretValues);
  return pattern === null ? input : redactTriggerInput(input, pattern, triggerType);
}

/**
 * A block's output as recorded. Its field names are the block type's (`data`, `result`, ...)
 * and are kept, with the values Troupe sets (OWN_VALUES, an error's code); the rest is user
 * data, and so are the fields a starter or an agent spreads among its own (SPREAD_OUTPUTS). A
 * container's `results` are iteration results, child block name → that child's output
 * (`typeOf` tells the child's type).
 */
export function redactOutput(
  output: Record<string, unknown>,
  secretValues: readonly string[],
  type: string | undefined,
  typeOf?: TypeOfName,
): Record<string, unknown> {
  const pattern = patternOf(secretValues);
  return pattern === null ? output : redactBlockOutput(output, pattern, type, typeOf);
}

/** An iteration's result (child block name → output) as a container's iteration state records it. */
export function redactIterationResult(result: unknown, secretValues: readonly string[], typeOf: TypeOfName): unknown {
  const pattern = patternOf(secretValues);
  return pattern === null ? result : redactIteration(result, pattern, typeOf);
}

/** A block error as recorded: its code (and attempt log) kept, its message and details redacted. */
export function redactError<E extends { code: string; message: string }>(error: E, secretValues: readonly string[]): E {
  const pattern = patternOf(secretValues);
  return pattern === null ? error : (redactOwn(error, pattern, undefined, false) as E);
}

/** A config as a block log records it: its own field names kept, their values user data. */
export function redactFields(config: unknown, secretValues: readonly string[]): unknown {
  const pattern = patternOf(secretValues);
  if (pattern === null) return config;
  if (!isPlainObject(config)) return redactData(config, pattern);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) setOwn(out, key, redactData(value, pattern));
  return out;
}
