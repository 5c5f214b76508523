import { SandboxError, SandboxPool } from '../../../core/sandbox/sandbox-pool.js';

/**
 * The guest functions of a chatflow's tools, run in the platform's QuickJS sandbox (time and memory
 * bounded, never on the server's heap): Flowise's calculator, and its custom tool, whose function body
 * sees each input property as `$<name>` and the flow's variables as `$vars`, as in Flowise.
 */
const GUEST = String.raw`
var NOT_MATH = "I don't know how to do that.";
var MATH_NAMES = { sqrt: 1, cbrt: 1, abs: 1, sin: 1, cos: 1, tan: 1, asin: 1, acos: 1, atan: 1, log: 1,
  log10: 1, log2: 1, exp: 1, floor: 1, ceil: 1, round: 1, min: 1, max: 1, pow: 1, PI: 1, E: 1 };
globalThis.flowiseCalculate = function (expression) {
  var src = String(expression);
  if (src.length > 1000 || !/^[A-Za-z0-9_\s+\-*/%^().,]*$/.test(src)) return NOT_MATH;
  var words = src.match(/[A-Za-z_][A-Za-z0-9_]*/g) || [];
  for (var i = 0; i < words.length; i++) if (!MATH_NAMES[words[i]]) return NOT_MATH;
  var js = src.replace(/\^/g, '**').replace(/[A-Za-z_][A-Za-z0-9_]*/g, function (w) { return 'Math.' + w; });
  var value;
  try { value = new Function('return (' + js + ');')(); } catch (e) { return NOT_MATH; }
  return typeof value === 'number' ? String(value) : NOT_MATH;
};
globalThis.flowiseCustomTool = function (arg) {
  var input = JSON.parse(arg);
  var args = input.args || {};
  var names = Object.keys(args).filter(function (k) { return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k); });
  var params = names.map(function (n) { return '$' + n; }).concat(['$vars', '$flow']);
  var fn = new Function(params.join(','), 'return (async function () {\n' + input.code + '\n})();');
  var values = names.map(function (n) { return args[n]; }).concat([input.vars || {}, input.flow || {}]);
  return Promise.resolve(fn.apply(null, values)).then(function (v) {
    return typeof v === 'string' ? v : JSON.stringify(v === undefined ? null : v);
  });
};
`;

export interface ToolSandbox {
  calculate(expression: string, tenant: string): Promise<string>;
  custom(
    code: string,
    input: { args: Record<string, unknown>; vars: Record<string, unknown>; flow: Record<string, unknown> },
    tenant: string,
  ): Promise<string>;
  close(): Promise<void>;
}

/** One small pool per server: an account holds at most one of its workers at a time. */
export function toolSandbox(timeoutMs: number): ToolSandbox {
  const pool = new SandboxPool({
    scripts: [{ name: 'flowise-tools.js', code: GUEST }],
    workers: 2,
    memoryMb: 64,
    maxPerTenant: 1,
    maxQueue: 200,
  });
  const run = async (fn: string, arg: string, tenant: string) => {
    try {
      return await pool.call(fn, arg, timeoutMs, { tenant });
    } catch (error) {
      if (error instanceof SandboxError && error.limit === 'time')
        throw new Error(`the tool ran longer than ${timeoutMs} ms and was stopped`);
      if (error instanceof SandboxError && error.limit)
        throw new Error(`the tool was stopped: ${error.limit} limit`);
      throw error;
    }
  };
  return {
    calculate: (expression, tenant) => run('flowiseCalculate', expression, tenant),
    custom: (code, input, tenant) => run('flowiseCustomTool', JSON.stringify({ code, ...input }), tenant),
    close: () => pool.close(),
  };
}
