/**
 * JavaScript's operators, applied by the host's own V8 to plain JSON data (data.ts): the same
 * coercions, NaN, -0 and string concatenation the sandbox's V8 applies. `in` is compile.ts's
 * (it answers only for own properties), `instanceof` is left out (it reaches constructors), and
 * `delete` has nothing to delete.
 */
// the operands are any JSON data, as in the author's JavaScript
type Binary = (a: any, b: any) => unknown;
type Unary = (a: any) => unknown;

export const BINARY: Readonly<Record<string, Binary>> = {
  '==': (a, b) => a == b,
  '!=': (a, b) => a != b,
  '===': (a, b) => a === b,
  '!==': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '<<': (a, b) => a << b,
  '>>': (a, b) => a >> b,
  '>>>': (a, b) => a >>> b,
  '+': (a, b) => a + b,
  '-': (a, b) => a - b,
  '*': (a, b) => a * b,
  '/': (a, b) => a / b,
  '%': (a, b) => a % b,
  '**': (a, b) => a ** b,
  '|': (a, b) => a | b,
  '^': (a, b) => a ^ b,
  '&': (a, b) => a & b,
};

export const UNARY: Readonly<Record<string, Unary>> = {
  '-': (a) => -a,
  '+': (a) => +a,
  '!': (a) => !a,
  '~': (a) => ~a,
  typeof: (a) => typeof a,
  void: () => undefined,
};
