/**
 * The pure built-ins an in-process expression may call, by the receiver's type. Each is the
 * host's own built-in (the same V8 as the sandbox's isolates), applied to plain JSON data
 * (data.ts), so it answers what the sandbox would. Left out on purpose: anything taking a
 * callback or a regular expression, anything locale- or clock-dependent (localeCompare,
 * toLocaleString, Date, Math.random), and anything whose result can grow far past its inputs
 * (repeat, padStart, padEnd, replace, replaceAll): those run in the sandbox, under its limits.
 */
import { MAX_STRING } from './data.js';

type Method = (receiver: unknown, args: unknown[]) => unknown;

/** A built-in method called on its receiver, as `receiver.name(...args)` does. */
function native(fn: (...args: never[]) => unknown): Method {
  return (receiver, args) => Reflect.apply(fn, receiver, args);
}

function table(prototype: object, names: readonly string[]): ReadonlyMap<string, Method> {
  const methods = new Map<string, Method>();
  for (const name of names) {
    const fn: unknown = Reflect.get(prototype, name);
    if (typeof fn === 'function') methods.set(name, native(fn as (...args: never[]) => unknown));
  }
  return methods;
}

const STRING_METHODS = table(String.prototype, [
  'at', 'charAt', 'charCodeAt', 'codePointAt', 'concat', 'endsWith', 'includes', 'indexOf', 'lastIndexOf', 'slice',
  'split', 'startsWith', 'substring', 'toLowerCase', 'toString', 'toUpperCase', 'trim', 'trimEnd', 'trimStart',
]);

const joinArray = native(Array.prototype.join as (...args: never[]) => unknown);

const ARRAY_METHODS = new Map<string, Method>([
  ...table(Array.prototype, ['at', 'concat', 'includes', 'indexOf', 'lastIndexOf', 'slice']),
  [
    'join',
    (receiver, args) => {
      // a long separator between many items is the one way join grows past its inputs
      const separator = args[0];
      if (typeof separator === 'string' && separator.length * (receiver as unknown[]).length > MAX_STRING) throw new RangeError('too long');
      return joinArray(receiver, args);
    },
  ],
]);

const NUMBER_METHODS = table(Number.prototype, ['toFixed', 'toPrecision', 'toString']);

/** The method `name` of a receiver of this type, or undefined when it is not on the list. */
export function methodFor(receiver: unknown, name: string): Method | undefined {
  if (typeof receiver === 'string') return STRING_METHODS.get(name);
  if (typeof receiver === 'number') return NUMBER_METHODS.get(name);
  if (Array.isArray(receiver)) return ARRAY_METHODS.get(name);
  return undefined;
}

type Fn = (args: unknown[]) => unknown;

const call = (fn: (...args: never[]) => unknown): Fn => (args) => Reflect.apply(fn, undefined, args);

function namespace(owner: object, names: readonly string[]): ReadonlyMap<string, Fn> {
  return new Map(names.map((name) => [name, call(Reflect.get(owner, name) as (...args: never[]) => unknown)]));
}

/** Functions reached through a global namespace: `Math.max(a, b)`, `Number.isInteger(x)`. */
const STATIC_FUNCTIONS: Readonly<Record<string, ReadonlyMap<string, Fn>>> = {
  Math: namespace(Math, [
    'abs', 'cbrt', 'ceil', 'exp', 'floor', 'hypot', 'log', 'log10', 'log2', 'max', 'min', 'pow', 'round', 'sign', 'sqrt', 'trunc',
  ]),
  Number: namespace(Number, ['isFinite', 'isInteger', 'isNaN', 'isSafeInteger', 'parseFloat', 'parseInt']),
  Array: namespace(Array, ['isArray']),
  Object: namespace(Object, ['keys', 'values']),
};

/** Constants reached through a global namespace: `Math.PI`, `Number.MAX_SAFE_INTEGER`. */
const STATIC_CONSTANTS: Readonly<Record<string, ReadonlySet<string>>> = {
  Math: new Set(['E', 'LN10', 'LN2', 'LOG10E', 'LOG2E', 'PI', 'SQRT1_2', 'SQRT2']),
  Number: new Set(['EPSILON', 'MAX_SAFE_INTEGER', 'MAX_VALUE', 'MIN_SAFE_INTEGER', 'MIN_VALUE', 'NEGATIVE_INFINITY', 'POSITIVE_INFINITY', 'NaN']),
};

/** Global functions called by name: `Number(x)`, `parseInt(s, 10)`. */
const GLOBAL_FUNCTIONS: ReadonlyMap<string, Fn> = new Map([
  ['Boolean', call(Boolean)],
  ['Number', call(Number)],
  ['String', call(String)],
  ['isFinite', call(isFinite)],
  ['isNaN', call(isNaN)],
  ['parseFloat', call(parseFloat)],
  ['parseInt', call(parseInt)],
]);

export function staticFunction(owner: string, name: string): Fn | undefined {
  return Object.hasOwn(STATIC_FUNCTIONS, owner) ? STATIC_FUNCTIONS[owner]?.get(name) : undefined;
}

export function staticConstant(owner: string, name: string): { value: unknown } | undefined {
  if (!Object.hasOwn(STATIC_CONSTANTS, owner) || STATIC_CONSTANTS[owner]?.has(name) !== true) return undefined;
  return { value: Reflect.get(owner === 'Math' ? Math : Number, name) };
}

export function globalFunction(name: string): Fn | undefined {
  return GLOBAL_FUNCTIONS.get(name);
}

/** Global names with fixed values (non-writable globals of every realm). */
export const GLOBAL_CONSTANTS: ReadonlyMap<string, unknown> = new Map<string, unknown>([
  ['undefined', undefined],
  ['NaN', NaN],
  ['Infinity', Infinity],
]);
