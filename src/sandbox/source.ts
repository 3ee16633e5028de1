/**
 * The user code as the script each context compiles once: a factory that takes the call's
 * binding values and capabilities (console, timers) as arguments, declares each binding as a
 * `const`, and calls the user's code as the body of an async function made for that call:
 *
 *   (function (__troupeValues, console, setTimeout, …) { const a = __troupeValues[0]; …
 *   return (async function () {
 *   <user code>
 *   })(); })
 *
 * Before anything is compiled the whole text is parsed (acorn) and must be exactly that shape,
 * with the user's code wholly inside the inner function's body: code that closes that function
 * early (`return 1 }); …; (async function () {`) is a SyntaxError, whatever its spelling.
 */
import { parse, type Node } from 'acorn';

export type RunnerKind = 'function' | 'expression';

/** Where user line 1 sits in the script, so stack lines can be reported as the user's lines. */
export const CODE_FILENAME = 'troupe-code.js';

/** what a function call's code gets beside its bindings; an expression gets only console */
const FUNCTION_PARAMS = ['console', 'setTimeout', 'setInterval', 'clearTimeout', 'clearInterval'];
const EXPRESSION_PARAMS = ['console'];
const VALUES = '__troupeValues';

/** the script, its binding names in the order the factory takes their values, and line offset */
export interface UserSource {
  source: string;
  names: readonly string[];
  lineOffset: number;
}

/** a code text the parser refused, with the user's line */
export class UserSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number | undefined,
  ) {
    super(message);
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Built sources by kind, binding names and code text: a block runs the same code on every call,
 * and the parse is the costly part. Cleared whole when full.
 */
const built = new Map<string, UserSource | UserSyntaxError>();
const BUILT_CACHE_SIZE = 512;

export function cachedUserSource(kind: RunnerKind, code: string, names: readonly string[]): UserSource {
  const key = `${kind}\u0000${names.join(',')}\u0000${code}`;
  let found = built.get(key);
  if (found === undefined) {
    if (built.size >= BUILT_CACHE_SIZE) built.clear();
    try {
      found = userSource(kind, code, names);
    } catch (err) {
      if (!(err instanceof UserSyntaxError)) throw err;
      found = err;
    }
    built.set(key, found);
  }
  if (found instanceof UserSyntaxError) throw found;
  return found;
}

export function userSource(kind: RunnerKind, code: string, names: readonly string[]): UserSource {
  for (const name of names) {
    if (!IDENTIFIER.test(name)) throw new UserSyntaxError(`binding name "${name}" is not an identifier`, undefined);
  }
  const params = [VALUES, ...(kind === 'function' ? FUNCTION_PARAMS : EXPRESSION_PARAMS)].join(', ');
  const consts = names.length === 0 ? '' : `const ${names.map((n, i) => `${n} = ${VALUES}[${i}]`).join(', ')}; `;
  // Line 1 holds the headers, so the user's line 1 is the script's line 2.
  const head = `(function (${params}) { ${consts}return (async function () {`;
  const body = kind === 'expression' ? ' return (\n' + code.replace(/[\s;]+$/, '') + '\n);' : '\n' + code;
  const close = '\n})(); })';
  const source = head + body + close;
  // the inner function's node runs from `async` to its closing brace
  verify(source, head.lastIndexOf('(async function') + 1, source.length - close.length + 2, kind, code);
  return { source, names, lineOffset: -1 };
}

/**
 * The parsed script must be the factory alone, whose last statement returns the call of the
 * inner function spanning exactly [innerStart, innerEnd): then no character of the user's code
 * sits outside that function's body.
 */
function verify(source: string, innerStart: number, innerEnd: number, kind: RunnerKind, code: string): void {
  let program: Node;
  try {
    program = parse(source, { ecmaVersion: 'latest', sourceType: 'script', locations: true });
  } catch (err) {
    const e = err as SyntaxError & { loc?: { line: number } };
    const message = e.message.replace(/\s*\(\d+:\d+\)$/, '');
    throw new UserSyntaxError(message, userLine(e.loc === undefined ? undefined : e.loc.line - 1, code));
  }
  const inner = innerFunction(program);
  const wrong = 'the code must be a function body (it closes the function it is given)';
  if (inner === undefined || inner.start !== innerStart || inner.end !== innerEnd) {
    throw new UserSyntaxError(wrong, undefined);
  }
  if (kind === 'expression') {
    const statements = (inner as unknown as { body: { body: Node[] } }).body.body;
    if (statements.length !== 1 || statements[0]?.type !== 'ReturnStatement') {
      throw new UserSyntaxError('an expression must be a single expression', undefined);
    }
  }
}

/** `(function (…) { …; return (async function () {…})(); })` → the async function's node */
function innerFunction(program: Node): Node | undefined {
  const top = (program as unknown as { body: Node[] }).body;
  if (top.length !== 1 || top[0]?.type !== 'ExpressionStatement') return undefined;
  const factory = (top[0] as unknown as { expression: Node }).expression;
  if (factory.type !== 'FunctionExpression') return undefined;
  const statements = (factory as unknown as { body: { body: Node[] } }).body.body;
  const last = statements[statements.length - 1];
  if (last?.type !== 'ReturnStatement') return undefined;
  const call = (last as unknown as { argument: Node | null }).argument;
  if (call?.type !== 'CallExpression') return undefined;
  const callee = (call as unknown as { callee: Node }).callee;
  return callee.type === 'FunctionExpression' ? callee : undefined;
}

/**
 * The line only when it is one of the user's: V8 sometimes places an error thrown by a one-line
 * expression at the runner's call site, which is no line of theirs.
 */
export function userLine(line: number | undefined, code: string): number | undefined {
  if (line === undefined || !(line >= 1)) return undefined;
  // V8 counts these as line terminators too
  const lines = code.split(/\r\n|[\n\r\u2028\u2029]/).length;
  return line <= lines ? line : undefined;
}
