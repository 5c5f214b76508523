import { SandboxError, SandboxPool } from '../../../core/sandbox/sandbox-pool.js';

/**
 * The guest functions of a chatflow's tools, run in the platform's QuickJS sandbox (time and memory
 * bounded, never on the server's heap): Flowise's custom tool, whose function body
 * sees each input property as `$<name>` and the flow's variables as `$vars`, as in Flowise.
 */
const GUEST = String.raw`
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
    custom: (code, input, tenant) => run('flowiseCustomTool', JSON.stringify({ code, ...input }), tenant),
    close: () => pool.close(),
  };
}
