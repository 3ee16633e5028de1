/**
 * The script that makes a context a hardened realm, run once when the context is created, before
 * any user code exists in it. It is the body of a closure (isolated-vm's evalClosure) given the
 * host's sleep Reference as `$0`: the Reference lives only in this closure's scope, never on the
 * global object, so no user code can reach it at any moment. It then
 *
 * - removes what workflow code does not need and could use to sidestep limits or keep state
 *   (WebAssembly, Atomics, SharedArrayBuffer, FinalizationRegistry, whose callbacks could run
 *   during a later call, and RegExp's legacy static match properties, which hold the last match
 *   of the whole context);
 * - turns the properties authors commonly assign on their own objects (`err.name = …`,
 *   `obj.toString = …`) into accessors that define an own property, so freezing the prototypes
 *   does not break that code (an assignment to a frozen inherited property would fail);
 * - freezes every object reachable from the global object and from the intrinsics only syntax
 *   reaches (async, generator and iterator prototypes), and the global object itself;
 *
 * and answers the function the host calls for each call: `call(factory, valuesJson)`. Each call
 * gets its own console, its own timers, its own binding values and its own instance of the user's
 * function; nothing any call can write outlives it (see docs/sandbox.md).
 *
 * A call resolves to one JSON text: `{"r": result, "o": [lines]}` or `{"e": {...}, "o": [...]}`.
 */

/** the longest result, as JSON text, a call may return (a block output travels into records, events and answers) */
export const MAX_RESULT_CHARS = 10 * 1024 * 1024;
/** console output kept per call; what goes past it is dropped, and the output says so */
export const MAX_STDOUT_CHARS = 1024 * 1024;
/** timers a call may have pending at once */
export const MAX_PENDING_TIMERS = 1000;
/** the longest delay a timer may ask for (setTimeout's own limit) */
const MAX_SLEEP_MS = 2 ** 31 - 1;

/** names a binding may not take: the context's globals and the factory's own parameters */
export const RESERVED_NAMES: ReadonlySet<string> = new Set(
  ('Object Function Array Number parseFloat parseInt Infinity NaN undefined Boolean String Symbol Date Promise '
    + 'RegExp Error AggregateError EvalError RangeError ReferenceError SyntaxError TypeError URIError globalThis '
    + 'JSON Math Intl ArrayBuffer Uint8Array Int8Array Uint16Array Int16Array Uint32Array Int32Array Float32Array '
    + 'Float64Array Uint8ClampedArray BigUint64Array BigInt64Array DataView Map BigInt Set WeakMap WeakSet Proxy '
    + 'Reflect FinalizationRegistry WeakRef decodeURI decodeURIComponent encodeURI encodeURIComponent escape '
    + 'unescape eval isFinite isNaN console SharedArrayBuffer Atomics WebAssembly setTimeout setInterval '
    + 'clearTimeout clearInterval __troupeValues arguments').split(' '),
);

const HARDEN = String.raw`
const G = globalThis;
const { freeze, getPrototypeOf, getOwnPropertyDescriptor, defineProperty } = Object;
const ownKeys = Reflect.ownKeys;
delete G.WebAssembly; delete G.Atomics; delete G.SharedArrayBuffer;
// its callbacks run whenever the collector decides, which may be during a later call
delete G.FinalizationRegistry;
for (const key of ['$1', '$2', '$3', '$4', '$5', '$6', '$7', '$8', '$9', 'input', '$_', 'lastMatch', '$&',
  'lastParen', '$+', 'leftContext', '$' + '\x60', 'rightContext', "$'"]) delete RegExp[key];
// the override mistake: an inherited frozen data property cannot be shadowed by assignment
const tame = (proto, key) => {
  const d = getOwnPropertyDescriptor(proto, key);
  if (d === undefined || !('value' in d) || !d.writable) return;
  const value = d.value;
  defineProperty(proto, key, {
    get: function () { return value; },
    set: function (v) {
      if (this === proto) throw new TypeError('Cannot assign to ' + String(key) + ': built-ins are frozen');
      defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
    },
    enumerable: d.enumerable, configurable: false,
  });
};
for (const key of ['constructor', 'toString', 'valueOf', 'toLocaleString', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable']) tame(Object.prototype, key);
for (const E of [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError]) {
  for (const key of ['name', 'message', 'toString', 'constructor']) tame(E.prototype, key);
}
tame(Function.prototype, 'toString'); tame(Function.prototype, 'constructor');
tame(Array.prototype, 'toString'); tame(Array.prototype, 'constructor');
tame(Promise.prototype, 'constructor');
const harden = (root) => {
  const seen = new Set();
  const todo = [root];
  while (todo.length > 0) {
    const o = todo.pop();
    if ((typeof o !== 'object' || o === null) && typeof o !== 'function') continue;
    if (seen.has(o)) continue;
    seen.add(o);
    freeze(o);
    todo.push(getPrototypeOf(o));
    for (const key of ownKeys(o)) {
      const d = getOwnPropertyDescriptor(o, key);
      if (d === undefined) continue;
      if ('value' in d) todo.push(d.value); else todo.push(d.get, d.set);
    }
  }
};
const hiddenRoots = [
  async function () {}, function* () {}, async function* () {}, (async function* () {})(), (function* () {})(),
  [][Symbol.iterator](), new Map().entries(), new Set().values(), ''[Symbol.iterator](), 'a'.matchAll(/a/g),
  new Intl.Segmenter().segment('')[Symbol.iterator](), new Intl.Segmenter().segment(''),
  (function () { return arguments; })(),
];
// iterator helpers, where this V8 has them: their prototypes are reachable only through calls
if (typeof G.Iterator === 'function') {
  try { hiddenRoots.push([].values().map((x) => x)); } catch {}
  try { hiddenRoots.push(G.Iterator.from({ next() { return { done: true }; } })); } catch {}
}
for (const root of hiddenRoots) harden(root);
harden(G);
`;

const CALL = String.raw`
const stringify = JSON.stringify, parse = JSON.parse, ErrorType = Error;
const promiseThen = Promise.prototype.then;
const hardened = new WeakSet();
const format = (value) => {
  if (typeof value === 'string') return value;
  try {
    if (value instanceof ErrorType) return String(value.name) + ': ' + String(value.message);
    const text = stringify(value); return text === undefined ? String(value) : text;
  }
  catch { try { return String(value); } catch { return '[unprintable]'; } }
};
const lineOf = (stack) => {
  const match = /troupe-code\.js:(\d+):\d+/.exec(String(stack));
  const line = match ? Number(match[1]) : NaN;
  return line >= 1 ? line : undefined;
};
const describe = (err) => {
  try {
    if (err instanceof ErrorType) return { name: String(err.name), message: String(err.message), line: lineOf(err.stack) };
    return { name: 'Error', message: format(err) };
  } catch { return { name: 'Error', message: 'an unprintable value was thrown' }; }
};
const serialize = (value, lines) => {
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
// Timers on the host's clock through the closure's Reference. The call keeps its own timer
// queue and has at most one host wait armed at a time (until its earliest timer), re-armed only
// when an earlier timer arrives: a thousand zero-delay intervals cost the host one wake-up per
// round, not a thousand. Callbacks run only while their call runs (a timer of an ended call
// never fires), in due order, each followed by the microtasks it queued, as in Node.
const makeTimers = (state) => {
  const timers = new Map();
  let lastTimer = 0, armedAt = Infinity, armToken = 0;
  const arm = () => {
    if (state.ended || timers.size === 0) return;
    let next = Infinity;
    for (const t of timers.values()) if (t.at < next) next = t.at;
    if (next >= armedAt) return;
    armedAt = next;
    const token = ++armToken;
    sleep.apply(undefined, [Math.max(0, next - Date.now())], { result: { promise: true } })
      .then(() => { if (token === armToken) { armedAt = Infinity; fire(); } }, () => undefined);
  };
  const fire = async () => {
    const now = Date.now();
    const due = [];
    for (const [id, t] of timers) if (t.at <= now) due.push(id);
    due.sort((x, y) => timers.get(x).at - timers.get(y).at || x - y);
    for (const id of due) {
      const t = timers.get(id);
      if (state.ended) return;
      if (t === undefined) continue;
      if (t.repeat) t.at = Date.now() + t.ms; else timers.delete(id);
      // a callback that throws does not stop the others (nor, as before, the call)
      try { t.fn(...t.args); } catch {}
      await undefined;
    }
    arm();
  };
  const timer = (repeat) => (fn, ms, ...args) => {
    if (typeof fn !== 'function') throw new TypeError('the callback must be a function');
    if (state.ended) return 0;
    if (timers.size >= ${MAX_PENDING_TIMERS}) throw new RangeError('too many pending timers (at most ${MAX_PENDING_TIMERS})');
    const id = ++lastTimer;
    const delay = Math.min(Math.max(0, Number(ms) || 0), ${MAX_SLEEP_MS});
    timers.set(id, { at: Date.now() + delay, ms: delay, fn, args, repeat });
    arm();
    return id;
  };
  const clear = (id) => { timers.delete(id); };
  return [timer(false), timer(true), clear, clear, () => timers.clear()];
};
const makeConsole = (lines) => {
  let chars = 0;
  const log = (...args) => {
    if (chars > ${MAX_STDOUT_CHARS}) return;
    const line = args.map(format).join(' ');
    chars += line.length + 1;
    lines.push(chars > ${MAX_STDOUT_CHARS} ? '[stdout cut at ${MAX_STDOUT_CHARS} characters]' : line);
  };
  return freeze({ log, info: log, warn: log, error: log, debug: log });
};
return function call(factory, valuesJson) {
  // the factory is shared by the calls of one code text: nothing may be left on it
  if (!hardened.has(factory)) { harden(factory); hardened.add(factory); }
  const lines = [];
  const state = { ended: false };
  const [setTimeout, setInterval, clearTimeout, clearInterval, clearAll] = makeTimers(state);
  const end = (text) => { state.ended = true; clearAll(); return text; };
  try {
    const running = factory(parse(valuesJson), makeConsole(lines), setTimeout, setInterval, clearTimeout, clearInterval);
    return promiseThen.call(running, (value) => end(serialize(value, lines)), (err) => end(stringify({ e: describe(err), o: lines })));
  } catch (err) { return end(stringify({ e: describe(err), o: lines })); }
};
`;

/** the closure body run once per context; `$0` is the host's sleep Reference */
export const REALM_SOURCE = `'use strict';\nconst sleep = $0;\n${HARDEN}\n${CALL}`;
