/**
 * A calculator's expressions: numbers, + - * / % ^, parentheses, unary signs and a few functions and
 * constants. A recursive-descent parser in linear time over a bounded input (no eval of model text).
 */

const MAX_LENGTH = 1_000;
const MAX_DEPTH = 64;

const FUNCTIONS: Record<string, (...xs: number[]) => number> = {
  sqrt: Math.sqrt,
  abs: Math.abs,
  round: Math.round,
  floor: Math.floor,
  ceil: Math.ceil,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  log: Math.log,
  ln: Math.log,
  log10: Math.log10,
  exp: Math.exp,
  min: Math.min,
  max: Math.max,
  pow: Math.pow,
};
const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E, PI: Math.PI, E: Math.E };

export class ArithmeticError extends Error {}

export function evaluateArithmetic(source: string): number {
  if (source.length > MAX_LENGTH)
    throw new ArithmeticError(`expression longer than ${MAX_LENGTH} characters`);
  const text = source.replace(/\u00d7/g, '*').replace(/\u00f7/g, '/');
  let pos = 0;
  let depth = 0;

  const skip = () => {
    while (pos < text.length && /\s/.test(text[pos] as string)) pos++;
  };
  const peek = () => {
    skip();
    return text[pos];
  };
  const fail = (what: string): never => {
    throw new ArithmeticError(`${what} at position ${pos + 1} of '${source.slice(0, 100)}'`);
  };

  const expression = (): number => {
    if (++depth > MAX_DEPTH) fail('expression nested too deeply');
    let value = term();
    for (let op = peek(); op === '+' || op === '-'; op = peek()) {
      pos++;
      value = op === '+' ? value + term() : value - term();
    }
    depth--;
    return value;
  };
  const term = (): number => {
    let value = power();
    for (let op = peek(); op === '*' || op === '/' || op === '%'; op = peek()) {
      pos++;
      const right = power();
      value = op === '*' ? value * right : op === '/' ? value / right : value % right;
    }
    return value;
  };
  const power = (): number => {
    const base = unary();
    if (peek() === '^' || (peek() === '*' && text[pos + 1] === '*')) {
      pos += text[pos] === '^' ? 1 : 2;
      return base ** power();
    }
    return base;
  };
  const unary = (): number => {
    const c = peek();
    if (c === '-' || c === '+') {
      pos++;
      if (++depth > MAX_DEPTH) fail('expression nested too deeply');
      const v = unary();
      depth--;
      return c === '-' ? -v : v;
    }
    return primary();
  };
  const primary = (): number => {
    const c = peek();
    if (c === '(') {
      pos++;
      const v = expression();
      if (peek() !== ')') fail("expected ')'");
      pos++;
      return v;
    }
    const number = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(text.slice(pos, pos + 64));
    if (number) {
      pos += number[0].length;
      return Number(number[0]);
    }
    const name = /^[A-Za-z_][A-Za-z_0-9]*/.exec(text.slice(pos, pos + 32));
    if (name) {
      pos += name[0].length;
      const fn = FUNCTIONS[name[0]];
      if (fn) {
        if (peek() !== '(') fail(`expected '(' after ${name[0]}`);
        pos++;
        const args = [expression()];
        while (peek() === ',') {
          pos++;
          args.push(expression());
          if (args.length > 16) fail('too many arguments');
        }
        if (peek() !== ')') fail("expected ')'");
        pos++;
        return fn(...args);
      }
      const constant = CONSTANTS[name[0]];
      if (constant !== undefined) return constant;
      fail(`unknown name '${name[0]}'`);
    }
    return fail(c === undefined ? 'unexpected end' : `unexpected '${c}'`);
  };

  const value = expression();
  if (peek() !== undefined) fail(`unexpected '${text[pos]}'`);
  return value;
}
