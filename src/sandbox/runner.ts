/**
 * The script that runs inside a fresh isolated-vm Context for every call, built around the user's
 * code: `runnerSource(kind, code)`. It is compiled once per isolate and code text (IsolateSlot
 * caches the Script), so repeated runs of a block only pay for the fresh context and the run.
 * The user code becomes the body of a parenthesized async function expression defined first;
 * the runner below it installs console and bindings, calls it, and serializes the outcome.
 * Splicing (rather than `new AsyncFunction(code)` inside the context, which compiles again in
 * every fresh context) is what makes the Script cacheable. The runner's locals sit in a
 * function of their own, out of the user code's reach, and code that tries to close its function
 * early is a syntax error (the function is a parenthesized expression). A call's result is at
 * most MAX_RESULT_CHARS of JSON, its console output MAX_STDOUT_CHARS, its pending timers
 * MAX_PENDING_TIMERS: each would otherwise cost the host memory no isolate limit counts.
 *
 * Input: the bindings as a JSON object text in the global ARGS_GLOBAL (removed first). Resolves to a JSON envelope text:
 * `{"r": result, "o": [lines]}` or `{"e": {...}, "o": [...]}`; only one string crosses back.
 */
export type RunnerKind = 'function' | 'expression';

/** Where user line 1 sits in the script, so stack lines can be reported as the user's lines. */
export const CODE_FILENAME = 'troupe-code.js';

export const ARGS_GLOBAL = '__troupeArgs';

export interface RunnerSource {
  source: string;
  lineOffset: number;
}

/**
 * Built sources by kind and code text. A block runs the same code on every call: reusing the
 * string saves building it and, because V8 caches a string's hash on the string, hashing its
 * few kilobytes again for the per-isolate script cache. Cleared whole when full.
 */
const built: Record<RunnerKind, Map<string, RunnerSource>> = { function: new Map(), expression: new Map() };
const BUILT_CACHE_SIZE = 512;

export function cachedRunnerSource(kind: RunnerKind, code: string): RunnerSource {
  const cache = built[kind];
  let found = cache.get(code);
  if (found === undefined) {
    if (cache.size >= BUILT_CACHE_SIZE) cache.clear();
    found = runnerSource(kind, code);
    cache.set(code, found);
  }
  return found;
}

export function runnerSource(kind: RunnerKind, code: string): RunnerSource {
  // Line 1 holds the headers, so the user's line 1 is the script's line 2. The user function is a
  // parenthesized expression: code with one closing brace too many (`return 1; } foo();`) is then
  // a syntax error, as it would be on its own, instead of ending the function early and running
  // the rest as runner code.
  // The runner's own locals (its console lines, the timer capability, its helpers) live in a
  // function of their own, called with the user function: the user's code closes over `$0` (the
  // bindings it is given anyway) and itself, nothing of the runner's.
  const head = `(function ($0) { delete globalThis.${ARGS_GLOBAL}; const __troupeUser = (async function () {`;
  const body = kind === 'expression' ? ' return (\n' + code.replace(/[\s;]+$/, '') + '\n);' : '\n' + code;
  const tail = '\n}); return (function (__troupeUser, $0) {' + RUNNER_TAIL + '})(__troupeUser, $0);';
  return { source: head + body + tail + `})(globalThis.${ARGS_GLOBAL});`, lineOffset: -1 };
}

/** the longest result, as JSON text, a call may return (a block output travels into records, events and answers) */
export const MAX_RESULT_CHARS = 10 * 1024 * 1024;
/** console output kept per call; what goes past it is dropped, and the output says so */
export const MAX_STDOUT_CHARS = 1024 * 1024;
/** timers a call may have pending at once */
export const MAX_PENDING_TIMERS = 1000;

const RUNNER_TAIL = String.raw`
const stringify = JSON.stringify, parse = JSON.parse, defineProperty = Object.defineProperty, ErrorType = Error;
// taken before user code runs: code that replaces Promise.prototype.then must not decide what
// the call answers (a forged limit error, or a result that is not the runner's envelope)
const promiseThen = Promise.prototype.then;
const lines = [];
let stdoutChars = 0;
// an error's own properties are not enumerable, so as JSON it would print {}: print it as Node's
// first line does, the way code in a catch block means it
const format = (value) => {
  if (typeof value === 'string') return value;
  try {
    if (value instanceof ErrorType) return String(value.name) + ': ' + String(value.message);
    const text = stringify(value); return text === undefined ? String(value) : text;
  }
  catch { try { return String(value); } catch { return '[unprintable]'; } }
};
const log = (...args) => {
  if (stdoutChars > ${MAX_STDOUT_CHARS}) return;
  const line = args.map(format).join(' ');
  stdoutChars += line.length + 1;
  lines.push(stdoutChars > ${MAX_STDOUT_CHARS} ? '[stdout cut at ${MAX_STDOUT_CHARS} characters]' : line);
};
const hidden = (name, value) =>
  defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });
hidden('console', Object.freeze({ log, info: log, warn: log, error: log, debug: log }));
// Timers on the host's clock: the call's time limit still bounds them (a pending timer is a promise
// that has not settled). Callbacks run as microtasks of this call only.
const sleepRef = globalThis.__troupeSleep; delete globalThis.__troupeSleep;
if (sleepRef !== undefined) {
  const timers = new Map();
  let lastTimer = 0;
  const arm = (id, ms, tick) => sleepRef.apply(undefined, [Number(ms) || 0], { result: { promise: true } })
    .then(() => { if (timers.has(id)) tick(); }, () => undefined);
  const timer = (repeat) => (fn, ms, ...args) => {
    if (typeof fn !== 'function') throw new TypeError('the callback must be a function');
    if (timers.size >= ${MAX_PENDING_TIMERS}) throw new RangeError('too many pending timers (at most ${MAX_PENDING_TIMERS})');
    const id = ++lastTimer;
    timers.set(id, true);
    const tick = () => {
      if (!repeat) timers.delete(id);
      fn(...args);
      if (repeat && timers.has(id)) arm(id, ms, tick);
    };
    arm(id, ms, tick);
    return id;
  };
  const clear = (id) => { timers.delete(id); };
  hidden('setTimeout', timer(false));
  hidden('setInterval', timer(true));
  hidden('clearTimeout', clear);
  hidden('clearInterval', clear);
}
// WebAssembly memory and blocking atomics are not needed by workflow code and could sidestep limits.
delete globalThis.WebAssembly; delete globalThis.Atomics; delete globalThis.SharedArrayBuffer;
const bindings = parse($0);
for (const name of Object.keys(bindings)) {
  // A binding may not shadow a global: user code and this runner rely on the builtins.
  try { if (name in globalThis) throw 0; hidden(name, bindings[name]); }
  catch { return stringify({ e: { name: 'BindingError', message: 'binding name "' + name + '" is not allowed (it would shadow a global)' }, o: lines }); }
}
const lineOf = (stack) => {
  const match = /troupe-code\.js:(\d+):\d+/.exec(String(stack));
  const line = match ? Number(match[1]) : NaN;
  return line >= 1 ? line : undefined;
};
const describe = (err) => {
  try {
    if (err instanceof Error) return { name: String(err.name), message: String(err.message), line: lineOf(err.stack) };
    return { name: 'Error', message: format(err) };
  } catch { return { name: 'Error', message: 'an unprintable value was thrown' }; }
};
const failure = (err) => stringify({ e: describe(err), o: lines });
const finish = (value) => {
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
    return stringify({ e: { name: 'SerializationError', message: 'the result is a ' + typeof value + ', which is not JSON-serializable' }, o: lines });
  }
  let text;
  try { text = stringify(value === undefined ? null : value); }
  catch (err) { return stringify({ e: { name: 'SerializationError', message: 'the result is not JSON-serializable: ' + describe(err).message.split('\n')[0] }, o: lines }); }
  if (text !== undefined && text.length > ${MAX_RESULT_CHARS}) {
    return stringify({ e: { name: 'SerializationError', message: 'the result is ' + text.length + ' characters of JSON, over the ${MAX_RESULT_CHARS} a block output may hold' }, o: lines });
  }
  return '{"r":' + (text === undefined ? 'null' : text) + ',"o":' + stringify(lines) + '}';
};
try { return promiseThen.call(__troupeUser(), finish, failure); } catch (err) { return failure(err); }
`;
