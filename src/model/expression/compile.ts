/**
 * Compiles an expression's acorn AST, once, into a tree of closures over the bound values. Two
 * ways out, both to the sandbox: a node outside the subset makes the whole expression the
 * sandbox's (OUTSIDE, at compile time), and an evaluation the subset cannot answer exactly (an
 * error V8 would throw with its own message, a name that is not bound, a property inherited
 * from a prototype, a method not on the list) hands that one evaluation over (DECIDE). No
 * function, prototype or other host object is ever a value here: members are read only as own
 * properties of plain data (data.ts) and calls go only to the allow-list (methods.ts).
 */
import type {
  ArrayExpression, CallExpression, Expression, Literal, MemberExpression, ObjectExpression, Property,
  SpreadElement, TemplateLiteral,
} from 'acorn';
import { MAX_STRING } from './data.js';
import { GLOBAL_CONSTANTS, globalFunction, methodFor, staticConstant, staticFunction } from './methods.js';
import { BINARY, UNARY } from './operators.js';

/** The bound values by identifier (`__ref0`), as dataBindings gives them. */
export type Env = ReadonlyMap<string, unknown>;
export type Evaluate = (env: Env) => unknown;

/** The expression is outside the subset: the sandbox evaluates it, every time. */
export const OUTSIDE = new Error('outside the in-process subset');
/** This evaluation is the sandbox's to answer (V8 would throw, or read what the subset does not). */
export const DECIDE = new Error('the sandbox decides');
/** An optional chain (`a?.b.c`) that met null or undefined: the whole chain is undefined. */
const SHORT = Symbol('optional chain ended');

/** Identifiers bindCode generates (`__ref0`, `___ref1`): any other name is a global of the sandbox. */
const BOUND_NAME = /^_*__ref\d+$/;
const NAMESPACES = new Set(['Math', 'Number', 'Array', 'Object']);

function outside(): never {
  throw OUTSIDE;
}

function numberLiteral(raw: string): number {
  const text = raw.replaceAll('_', '');
  // 010 and 08: sloppy mode's legacy forms, which Number() reads differently
  if (/^0\d/.test(text)) outside();
  const value = Number(text);
  return Number.isNaN(value) ? outside() : value;
}

function literal(node: Literal): Evaluate {
  if (node.regex !== undefined || node.bigint !== undefined) outside();
  // the number from its source text by V8 itself: acorn's own reading of long hex forms can round differently
  const value = typeof node.value === 'number' ? numberLiteral(node.raw ?? '') : node.value;
  return () => value;
}

function identifier(name: string): Evaluate {
  if (GLOBAL_CONSTANTS.has(name)) {
    const value = GLOBAL_CONSTANTS.get(name);
    return () => value;
  }
  if (!BOUND_NAME.test(name)) outside();
  return (env) => (env.has(name) ? env.get(name) : decide());
}

function decide(): never {
  throw DECIDE;
}

/** A string the subset lets grow no further than its bound inputs could (data.ts). */
function bounded(value: unknown): unknown {
  return typeof value === 'string' && value.length > MAX_STRING ? decide() : value;
}

function template(node: TemplateLiteral): Evaluate {
  const texts = node.quasis.map((q) => (typeof q.value.cooked === 'string' ? q.value.cooked : outside()));
  const parts = node.expressions.map(compile);
  return (env) => {
    let out = texts[0] ?? '';
    for (let i = 0; i < parts.length; i += 1) {
      out = `${out}${(parts[i] as Evaluate)(env)}${texts[i + 1] ?? ''}`;
      bounded(out);
    }
    return out;
  };
}

/** A property read the way V8 reads it, when the answer is an own property or nothing at all. */
function readMember(object: unknown, key: unknown): unknown {
  if (object === null || object === undefined || (typeof key === 'object' && key !== null)) decide();
  const name = String(key);
  if (Object.prototype.hasOwnProperty.call(object, name)) return (object as Record<string, unknown>)[name];
  // a method, accessor or other property of a prototype: never handed out
  if (name in Object(object)) decide();
  return undefined;
}

/** `key in object`, when the answer is an own property or none that a prototype has either. */
function hasProperty(key: unknown, object: unknown): boolean {
  if (typeof object !== 'object' || object === null || (typeof key === 'object' && key !== null)) decide();
  const name = String(key);
  if (Object.prototype.hasOwnProperty.call(object, name)) return true;
  return name in object ? decide() : false;
}

/** `a.b` or `a['b']`: the name when it is written, not computed. */
function writtenName(node: MemberExpression): string | undefined {
  if (!node.computed && node.property.type === 'Identifier') return node.property.name;
  if (node.computed && node.property.type === 'Literal' && typeof node.property.value === 'string') return node.property.value;
  return undefined;
}

function namespaceOf(node: MemberExpression): string | undefined {
  return node.object.type === 'Identifier' && NAMESPACES.has(node.object.name) ? node.object.name : undefined;
}

function member(node: MemberExpression): Evaluate {
  if (node.object.type === 'Super' || node.property.type === 'PrivateIdentifier') outside();
  const owner = namespaceOf(node);
  if (owner !== undefined) {
    const constant = staticConstant(owner, writtenName(node) ?? '');
    if (constant === undefined) outside();
    return () => constant.value;
  }
  const object = compile(node.object);
  const name = writtenName(node);
  const key: Evaluate = name !== undefined ? () => name : compile(node.property);
  const optional = node.optional;
  return (env) => {
    const value = object(env);
    if (value === SHORT || (optional && (value === null || value === undefined))) return SHORT;
    return readMember(value, key(env));
  };
}

function argumentsOf(args: readonly (Expression | SpreadElement)[]): Evaluate {
  const parts = args.map((a) => (a.type === 'SpreadElement' ? outside() : compile(a)));
  return (env) => parts.map((p) => p(env));
}

function call(node: CallExpression): Evaluate {
  const callee = node.callee;
  if (node.optional || callee.type === 'Super') outside();
  const args = argumentsOf(node.arguments);
  if (callee.type === 'Identifier') {
    const fn = globalFunction(callee.name) ?? outside();
    return (env) => bounded(fn(args(env) as unknown[]));
  }
  if (callee.type !== 'MemberExpression' || callee.property.type === 'PrivateIdentifier') outside();
  const name = writtenName(callee) ?? outside();
  const owner = namespaceOf(callee);
  if (owner !== undefined) {
    const fn = staticFunction(owner, name) ?? outside();
    return (env) => fn(args(env) as unknown[]);
  }
  const receiver = compile(callee.object as Expression);
  const optional = callee.optional;
  return (env) => {
    const value = receiver(env);
    if (value === SHORT || (optional && (value === null || value === undefined))) return SHORT;
    const method = methodFor(value, name) ?? decide();
    return bounded(method(value, args(env) as unknown[]));
  };
}

function array(node: ArrayExpression): Evaluate {
  const items = node.elements.map((e) => (e === null || e.type === 'SpreadElement' ? outside() : compile(e)));
  return (env) => items.map((item) => item(env));
}

/** A property's key: written (`a`, `'a'`, `1`) or computed (`[expr]`). */
function propertyKey(p: Property): Evaluate {
  if (p.computed) {
    const key = compile(p.key);
    return (env) => {
      const value = key(env);
      if (typeof value === 'object' && value !== null) decide();
      const name = String(value);
      return name === '__proto__' ? decide() : name;
    };
  }
  let name: string;
  if (p.key.type === 'Identifier') name = p.key.name;
  else if (p.key.type === 'Literal' && typeof p.key.value === 'string') name = p.key.value;
  else if (p.key.type === 'Literal' && typeof p.key.value === 'number') name = String(numberLiteral(p.key.raw ?? ''));
  else outside();
  // `__proto__: x` sets the prototype instead of a property
  if (name === '__proto__') outside();
  return () => name;
}

function object(node: ObjectExpression): Evaluate {
  const props = node.properties.map((p) => {
    if (p.type === 'SpreadElement' || p.kind !== 'init' || p.method) outside();
    return { key: propertyKey(p), value: compile(p.value) };
  });
  return (env) => {
    const out: Record<string, unknown> = {};
    for (const p of props) out[p.key(env) as string] = p.value(env);
    return out;
  };
}

function operator(node: Expression): Evaluate {
  switch (node.type) {
    case 'UnaryExpression': {
      const op = Object.hasOwn(UNARY, node.operator) ? UNARY[node.operator] : undefined;
      if (op === undefined) outside();
      const argument = compile(node.argument);
      return (env) => op(argument(env));
    }
    case 'BinaryExpression': {
      if (node.left.type === 'PrivateIdentifier') outside();
      const [left, right] = [compile(node.left), compile(node.right)];
      if (node.operator === 'in') return (env) => hasProperty(left(env), right(env));
      const op = Object.hasOwn(BINARY, node.operator) ? BINARY[node.operator] : undefined;
      if (op === undefined) outside();
      return node.operator === '+' ? (env) => bounded(op(left(env), right(env))) : (env) => op(left(env), right(env));
    }
    case 'LogicalExpression': {
      const [left, right] = [compile(node.left), compile(node.right)];
      if (node.operator === '&&') return (env) => left(env) && right(env);
      if (node.operator === '||') return (env) => left(env) || right(env);
      return (env) => left(env) ?? right(env);
    }
    case 'ConditionalExpression': {
      const [test, yes, no] = [compile(node.test), compile(node.consequent), compile(node.alternate)];
      return (env) => (test(env) ? yes(env) : no(env));
    }
    default:
      return outside();
  }
}

export function compile(node: Expression): Evaluate {
  switch (node.type) {
    case 'Literal':
      return literal(node);
    case 'Identifier':
      return identifier(node.name);
    case 'TemplateLiteral':
      return template(node);
    case 'MemberExpression':
      return member(node);
    case 'ChainExpression': {
      const inner = compile(node.expression);
      return (env) => {
        const value = inner(env);
        return value === SHORT ? undefined : value;
      };
    }
    case 'CallExpression':
      return call(node);
    case 'ArrayExpression':
      return array(node);
    case 'ObjectExpression':
      return object(node);
    case 'SequenceExpression': {
      const parts = node.expressions.map(compile);
      return (env) => parts.reduce<unknown>((_, part) => part(env), undefined);
    }
    default:
      return operator(node);
  }
}
