/**
 * Expressions (condition branches, rules-router values, while/doWhile conditions) evaluated
 * in-process when they are in the subset compile.ts reads, with the answer the sandbox would
 * give; otherwise `{ done: false }` and the caller asks the sandbox. See docs/expressions.md.
 */
import { parse, type Expression, type Options } from 'acorn';
import { TextCache } from './cache.js';
import { compile, type Evaluate } from './compile.js';
import { NO_RESULT, asResult, dataBindings } from './data.js';

export type InProcess = { done: true; value: unknown } | { done: false };

const NOT_DONE: InProcess = { done: false };
/** The sandbox runs the expression in a sloppy-mode script. */
const OPTIONS: Options = { ecmaVersion: 'latest', sourceType: 'script' };
/** Compiled expressions by source text; null for the ones outside the subset. */
const cache = new TextCache<Evaluate | null>(1000, 1_000_000);

/**
 * The expression the sandbox would run: its code, trimmed as the sandbox trims it, is the return
 * value of an async function (src/sandbox/runner.ts). Parsing the same wrapper reads the code as
 * V8 will (`await` is a keyword there, a trailing comment is fine) and refuses code that would
 * close the wrapper early, as the sandbox does.
 */
function returnedExpression(source: string): Expression | null {
  const code = source.replace(/[\s;]+$/, '');
  const program = parse(`(async function () { return (\n${code}\n);\n})`, OPTIONS);
  const statement = program.body.length === 1 ? program.body[0] : undefined;
  if (statement?.type !== 'ExpressionStatement' || statement.expression.type !== 'FunctionExpression') return null;
  const body = statement.expression.body.body;
  const ret = body.length === 1 ? body[0] : undefined;
  return ret?.type === 'ReturnStatement' && ret.argument !== null && ret.argument !== undefined ? ret.argument : null;
}

function compileSource(source: string): Evaluate | null {
  try {
    const node = returnedExpression(source);
    return node === null ? null : compile(node);
  } catch {
    // a syntax error (the sandbox reports it), a node outside the subset, or nesting past the stack
    return null;
  }
}

/** The compiled form of an expression, parsed once per source text (the cache is bounded). */
export function compiledExpression(source: string): Evaluate | null {
  const hit = cache.get(source);
  if (hit !== undefined || cache.has(source)) return hit ?? null;
  const compiled = compileSource(source);
  cache.set(source, compiled);
  return compiled;
}

/**
 * Evaluates bound source (bindCode's output) with its bindings, or says the sandbox must: the
 * expression is outside the subset, a bound value is not plain JSON data, V8 would throw (the
 * sandbox then gives the error with its own message), or the result is the sandbox's to judge.
 */
export function evaluateInProcess(source: string, bindings: Record<string, unknown>): InProcess {
  const evaluate = compiledExpression(source);
  if (evaluate === null) return NOT_DONE;
  const env = dataBindings(bindings);
  if (env === null) return NOT_DONE;
  let value: unknown;
  try {
    value = evaluate(env);
  } catch {
    return NOT_DONE;
  }
  const result = asResult(value);
  return result === NO_RESULT ? NOT_DONE : { done: true, value: result };
}
