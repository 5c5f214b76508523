// Runs inside the QuickJS sandbox (never in Node), after JSONata's browser bundle defined `jsonata`.
// evaluateExpressions(request) evaluates a node's expressions, in order, over one item's data and
// answers with JSON: { ok: true, values: [{ v } | {}] } or { ok: false, index, message }.
// The host splits templates and rewrites `$node["x"]`; this side only compiles, evaluates and copies
// results into plain JSON data under the size and depth bounds.
(() => {
  const cache = new Map();
  const CACHE_MAX = 2000;

  const compile = (code, limits) => {
    let expr = cache.get(code);
    if (!expr) {
      expr = jsonata(code, { timeout: limits.timeoutMs, stack: limits.stack, sequence: limits.sequence });
      if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value);
      cache.set(code, expr);
    }
    return expr;
  };

  const toJson = (value, limits) => {
    let size = 0;
    const copy = (v, depth) => {
      if (v === undefined || v === null || typeof v === 'boolean') return v;
      if (typeof v === 'number') return Number.isFinite(v) ? v : null;
      if (typeof v === 'string') {
        size += v.length;
        if (size > limits.resultChars) throw new Error('result is too large');
        return v;
      }
      if (typeof v === 'function') throw new Error('result of type function is not JSON data');
      if (depth >= limits.depth) throw new Error(`result nests deeper than ${limits.depth} levels`);
      if (Array.isArray(v)) {
        const out = [];
        for (const x of v) {
          const c = copy(x, depth + 1);
          if (c !== undefined) out.push(c);
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v);
      if (typeof v === 'object' && (proto === Object.prototype || proto === null)) {
        const out = {};
        for (const k of Object.keys(v)) {
          const c = copy(v[k], depth + 1);
          if (c !== undefined) out[k] = c;
        }
        return out;
      }
      throw new Error(`result of type ${typeof v} is not JSON data`);
    };
    return copy(value, 0);
  };

  const stringify = (v) => {
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    return JSON.stringify(v);
  };

  globalThis.__limitError = (err) =>
    err instanceof InternalError && /^(interrupted|out of memory|stack overflow)/.test(String(err.message));

  // At most 2,000 characters: the message reaches the server's main thread, logs and execution records.
  const messageOf = (err) => {
    const text = err && typeof err === 'object' && 'message' in err ? String(err.message) : String(err);
    return text.length > 2_000 ? `${text.slice(0, 2_000)}…` : text;
  };

  globalThis.evaluateExpressions = async (requestText) => {
    const request = JSON.parse(requestText);
    const { data, limits } = request;
    const nowIso = data.now;
    const bindings = {
      json: data.json,
      node: data.node,
      workflow: data.workflow,
      execution: data.execution,
      env: data.env,
      now: () => nowIso,
    };
    const values = [];
    for (let index = 0; index < request.expressions.length; index++) {
      const parts = request.expressions[index];
      try {
        const whole = parts.length === 1 && parts[0].literal.trim() === '' && parts[0].code !== null;
        if (whole) {
          const v = toJson(await compile(parts[0].code, limits).evaluate(data.json, bindings), limits);
          values.push(v === undefined ? {} : { v });
        } else {
          let text = '';
          for (const part of parts) {
            text += part.literal;
            if (part.code !== null) {
              text += stringify(
                toJson(await compile(part.code, limits).evaluate(data.json, bindings), limits),
              );
            }
          }
          values.push({ v: text });
        }
      } catch (err) {
        // A limit of the sandbox is not the expression's own error: let the host see it as one.
        if (globalThis.__limitError(err)) throw err;
        return JSON.stringify({ ok: false, index, message: messageOf(err) });
      }
    }
    return JSON.stringify({ ok: true, values });
  };

  // Warm-up: the first evaluation in a fresh runtime is several times slower than the next ones.
  globalThis.evaluateExpressions(
    JSON.stringify({
      expressions: [[{ literal: '', code: '$string($sum([1, 2])) & $now()' }]],
      data: { json: {}, node: {}, workflow: {}, execution: {}, env: {}, now: '' },
      limits: { timeoutMs: 1000, stack: 100, sequence: 1000, resultChars: 1000, depth: 10 },
    }),
  );
})();
