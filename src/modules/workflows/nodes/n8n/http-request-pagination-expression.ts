/**
 * The expressions of HTTP Request pagination (`nextURL`, parameter values, `completeExpression`), which
 * n8n evaluates per page with `$response`, `$pageCount` and `$request` bound. The platform's expression
 * evaluator cannot bind those yet, so they are evaluated here over plain data, on the host, with no user
 * code run: literals, `$response`/`$request`/`$pageCount`/`$version`/`$json` with `.name`, `["name"]`, `[0]` and
 * `.length`, `!`, arithmetic, comparisons, `&&`, `||` and parentheses. Anything else is refused by name
 * (at save time through `checkPaginationExpression`), never guessed.
 */

export interface PaginationScope {
  $response: unknown;
  $pageCount: number;
  $request: unknown;
  $json: unknown;
  $version: number;
}

type Node =
  | { k: 'lit'; v: unknown }
  | { k: 'var'; name: string }
  | { k: 'member'; obj: Node; key: Node }
  | { k: 'not'; arg: Node }
  | { k: 'neg'; arg: Node }
  | { k: 'bin'; op: string; left: Node; right: Node };

const VARIABLES = new Set(['$response', '$pageCount', '$request', '$json', '$version']);
const BINARY: Array<string[]> = [
  ['||'],
  ['&&'],
  ['===', '!==', '==', '!='],
  ['<=', '>=', '<', '>'],
  ['+', '-'],
  ['*', '/', '%'],
];
const TOKEN =
  /\s*(?:(\d+(?:\.\d+)?)|('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(\$?[A-Za-z_][A-Za-z0-9_]*)|(===|!==|==|!=|<=|>=|&&|\|\||[-+*/%<>!.()[\]]))/y;

export class PaginationExpressionError extends Error {}

function tokenize(code: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < code.length) {
    if (/^\s*$/.test(code.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(code);
    if (!m) throw new PaginationExpressionError(`unsupported syntax at '${code.slice(at).trim()}'`);
    tokens.push((m[1] ?? m[2] ?? m[3] ?? m[4]) as string);
  }
  return tokens;
}

function parse(code: string): Node {
  const tokens = tokenize(code);
  let pos = 0;
  const peek = () => tokens[pos];
  const take = (want?: string) => {
    const t = tokens[pos++];
    if (t === undefined || (want !== undefined && t !== want)) {
      throw new PaginationExpressionError(`expected '${want ?? 'a value'}' but found '${t ?? 'the end'}'`);
    }
    return t;
  };
  const binary = (level: number): Node => {
    const ops = BINARY[level];
    if (!ops) return unary();
    let left = binary(level + 1);
    for (let t = peek(); t !== undefined && ops.includes(t); t = peek()) {
      take();
      left = { k: 'bin', op: t, left, right: binary(level + 1) };
    }
    return left;
  };
  const unary = (): Node => {
    if (peek() === '!' || peek() === '-') {
      const op = take();
      return { k: op === '!' ? 'not' : 'neg', arg: unary() };
    }
    return postfix(primary());
  };
  const postfix = (node: Node): Node => {
    for (;;) {
      if (peek() === '.') {
        take();
        const name = take();
        if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name))
          throw new PaginationExpressionError(`bad name '${name}'`);
        node = { k: 'member', obj: node, key: { k: 'lit', v: name } };
      } else if (peek() === '[') {
        take();
        node = { k: 'member', obj: node, key: binary(0) };
        take(']');
      } else if (peek() === '(') {
        throw new PaginationExpressionError('function calls are not supported in pagination expressions yet');
      } else {
        return node;
      }
    }
  };
  const primary = (): Node => {
    const t = take();
    if (t === '(') {
      const inner = binary(0);
      take(')');
      return inner;
    }
    if (/^\d/.test(t)) return { k: 'lit', v: Number(t) };
    if (t.startsWith('"') || t.startsWith("'")) return { k: 'lit', v: unquote(t) };
    if (t === 'true' || t === 'false') return { k: 'lit', v: t === 'true' };
    if (t === 'null') return { k: 'lit', v: null };
    if (t === 'undefined') return { k: 'lit', v: undefined };
    if (VARIABLES.has(t)) return { k: 'var', name: t };
    throw new PaginationExpressionError(`'${t}' is not supported in pagination expressions yet`);
  };
  const tree = binary(0);
  if (pos < tokens.length) throw new PaginationExpressionError(`unexpected '${tokens[pos]}'`);
  return tree;
}

function unquote(literal: string): string {
  const body = literal.slice(1, -1);
  return body.replace(/\\(.)/g, (_m, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c);
}

/** Reading past undefined gives undefined: n8n's template engine swallows such TypeErrors too. */
function member(obj: unknown, key: unknown): unknown {
  if ((Array.isArray(obj) || typeof obj === 'string') && key === 'length') return obj.length;
  if (obj === null || typeof obj !== 'object') return undefined;
  const k = String(key);
  return Object.hasOwn(obj, k) ? (obj as Record<string, unknown>)[k] : undefined;
}

function evaluateNode(node: Node, scope: PaginationScope): unknown {
  switch (node.k) {
    case 'lit':
      return node.v;
    case 'var':
      return scope[node.name as keyof PaginationScope];
    case 'member':
      return member(evaluateNode(node.obj, scope), evaluateNode(node.key, scope));
    case 'not':
      return !evaluateNode(node.arg, scope);
    case 'neg':
      return -(evaluateNode(node.arg, scope) as number);
    case 'bin': {
      const left = evaluateNode(node.left, scope);
      if (node.op === '&&') return left ? evaluateNode(node.right, scope) : left;
      if (node.op === '||') return left ? left : evaluateNode(node.right, scope);
      return binaryOp(node.op, left, evaluateNode(node.right, scope));
    }
  }
}

/** JavaScript's operators over plain data (loose `==` as JavaScript has it). */
function binaryOp(op: string, a: unknown, b: unknown): unknown {
  const x = a as number;
  const y = b as number;
  switch (op) {
    case '===':
      return a === b;
    case '!==':
      return a !== b;
    case '==':
      // biome-ignore lint/suspicious/noDoubleEquals: n8n expressions are JavaScript; `==` is loose there.
      return a == b;
    case '!=':
      // biome-ignore lint/suspicious/noDoubleEquals: as above.
      return a != b;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    case '+':
      return typeof a === 'string' || typeof b === 'string' ? `${stringOf(a)}${stringOf(b)}` : x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    case '/':
      return x / y;
    case '%':
      return x % y;
    default:
      throw new PaginationExpressionError(`operator '${op}' is not supported`);
  }
}

const stringOf = (v: unknown): string =>
  v === null || v === undefined ? String(v) : typeof v === 'object' ? JSON.stringify(v) : String(v);

/** `{{ … }}` parts of a template `=text {{ code }} text`. */
function parts(source: string): Array<{ literal: string; code: string | null }> {
  const out: Array<{ literal: string; code: string | null }> = [];
  let rest = source.slice(1);
  for (;;) {
    const open = rest.indexOf('{{');
    const close = open < 0 ? -1 : rest.indexOf('}}', open + 2);
    if (open < 0 || close < 0) break;
    out.push({ literal: rest.slice(0, open), code: rest.slice(open + 2, close) });
    rest = rest.slice(close + 2);
  }
  if (rest !== '' || out.length === 0) out.push({ literal: rest, code: null });
  return out;
}

const isTemplate = (v: unknown): v is string =>
  typeof v === 'string' && v.startsWith('=') && v.includes('{{');

/** A parameter value for this page: literals as they are, `={{ … }}` evaluated over `scope`. */
export function evaluatePaginationValue(value: unknown, scope: PaginationScope): unknown {
  if (!isTemplate(value)) return typeof value === 'string' && value.startsWith('=') ? value.slice(1) : value;
  const ps = parts(value);
  const only = ps[0];
  if (ps.length === 1 && only && only.code !== null && only.literal.trim() === '') {
    return evaluateNode(parse(only.code), scope);
  }
  let text = '';
  for (const p of ps) {
    text += p.literal;
    if (p.code === null) continue;
    const v = evaluateNode(parse(p.code), scope);
    text += v === undefined || v === null ? '' : stringOf(v);
  }
  return text;
}

/** Why an expression cannot be evaluated here (null when it can), for a 400 at save time. */
export function checkPaginationExpression(value: unknown): string | null {
  if (!isTemplate(value)) return null;
  try {
    for (const p of parts(value)) if (p.code !== null) parse(p.code);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
