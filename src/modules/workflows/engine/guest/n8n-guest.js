// Runs inside the QuickJS sandbox (never in Node), after luxon, jmespath and n8n-extensions.js.
// n8n's expression language (JavaScript inside `{{ }}`) and the Code node's JavaScript, over data the host
// sends as JSON: evaluateN8n(request) and runCode(request) answer JSON strings. The host splits templates;
// this side compiles (cached), evaluates with n8n's variables ($json, $input, $('Node'), $now, …) and copies
// results into plain JSON under the size and depth bounds. harden.js freezes everything afterwards.
(() => {
  const { DateTime, Duration, Interval } = luxon;
  const toDateTime = globalThis.__toDateTime;
  // From n8n-extensions.js: n8n's functions without a receiver, and Luxon's default zone (kept from guest code).
  const fns = globalThis.__n8nFunctions;
  const setDefaultZone = globalThis.__setDefaultZone;
  delete globalThis.__n8nFunctions;
  delete globalThis.__setDefaultZone;

  // --- base64 over UTF-8 (QuickJS has no btoa/atob) ---
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  globalThis.__base64Encode = (s) => {
    const bin = unescape(encodeURIComponent(s));
    let out = '';
    for (let i = 0; i < bin.length; i += 3) {
      const n =
        (bin.charCodeAt(i) << 16) | ((bin.charCodeAt(i + 1) || 0) << 8) | (bin.charCodeAt(i + 2) || 0);
      out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
      out += i + 1 < bin.length ? B64[(n >> 6) & 63] : '=';
      out += i + 2 < bin.length ? B64[n & 63] : '=';
    }
    return out;
  };
  globalThis.__base64Decode = (s) => {
    const clean = String(s).replace(/[^A-Za-z0-9+/]/g, '');
    let bin = '';
    for (let i = 0; i < clean.length; i += 4) {
      const n =
        (B64.indexOf(clean[i]) << 18) |
        (B64.indexOf(clean[i + 1]) << 12) |
        ((B64.indexOf(clean[i + 2] ?? 'A') & 63) << 6) |
        (B64.indexOf(clean[i + 3] ?? 'A') & 63);
      bin += String.fromCharCode((n >> 16) & 255);
      if (i + 2 < clean.length) bin += String.fromCharCode((n >> 8) & 255);
      if (i + 3 < clean.length) bin += String.fromCharCode(n & 255);
    }
    return decodeURIComponent(escape(bin));
  };

  // --- results into plain JSON, bounded ---
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
      if (typeof v === 'bigint') return v.toString();
      if (typeof v === 'function' || typeof v === 'symbol') return undefined;
      if (depth >= limits.depth) throw new Error(`result nests deeper than ${limits.depth} levels`);
      if (Array.isArray(v)) {
        const out = [];
        for (const x of v) {
          const c = copy(x, depth + 1);
          out.push(c === undefined ? null : c);
        }
        return out;
      }
      // Dates, Luxon values and anything else with toJSON serialise as JSON.stringify would.
      if (typeof v.toJSON === 'function' && Object.getPrototypeOf(v) !== Object.prototype)
        return copy(v.toJSON(), depth);
      const out = {};
      for (const k of Object.keys(v)) {
        const c = copy(v[k], depth + 1);
        if (c !== undefined) out[k] = c;
      }
      return out;
    };
    return copy(value, 0);
  };

  // In a template, n8n writes strings as is, dates as ISO text and other values as JSON.
  const stringify = (v) => {
    if (v === undefined || v === null) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
    if (DateTime.isDateTime(v)) return v.toISO();
    if (v instanceof Date) return v.toISOString();
    if (typeof v === 'function') return '[Function]';
    return JSON.stringify(v);
  };

  // A syntax error says so: QuickJS's own messages ("invalid property name") do not. At most 2,000
  // characters: the message reaches the server's main thread, its logs and the execution record.
  const MAX_MESSAGE = 2_000;
  const messageOf = (err) => {
    // QuickJS throws null when it cannot allocate even the error (150,000 items said just "null").
    const text = !(err && typeof err === 'object' && 'message' in err)
      ? err === null
        ? 'null was thrown: most likely the sandbox ran out of memory (fewer or smaller items fit)'
        : String(err)
      : err instanceof SyntaxError
        ? `SyntaxError: ${err.message}`
        : String(err.message);
    return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
  };

  // --- n8n's variables ---
  const NAMES = [
    '$json',
    '$binary',
    '$input',
    '$',
    '$node',
    '$items',
    '$prevNode',
    '$runIndex',
    '$itemIndex',
    '$position',
    '$workflow',
    '$execution',
    '$vars',
    '$env',
    '$now',
    '$today',
    '$if',
    '$ifEmpty',
    '$jmespath',
    '$max',
    '$min',
    '$parameter',
    '$response',
    '$pageCount',
    '$request',
    '$version',
    '$fromAI',
    '$evaluateExpression',
    '$not',
    '$average',
    'min',
    'max',
    'average',
    'numberList',
    'zip',
    'not',
    'DateTime',
    'Duration',
    'Interval',
  ];

  const items = (list) =>
    (list ?? []).map((i) =>
      i.binary
        ? { json: i.json, binary: i.binary, pairedItem: i.pairedItem }
        : { json: i.json, pairedItem: i.pairedItem },
    );

  /** The item of `list` paired with item `index` of the current node: same position, or the only one. */
  const paired = (list, index, name) => {
    if (list.length === 1) return list[0];
    const item = list[index];
    if (!item) {
      throw new Error(
        `Can't determine which item to use from '${name}': it has ${list.length} items and this is item ${index}; use .first(), .last(), .all() or .itemMatching(i)`,
      );
    }
    return item;
  };

  const lookupNode = (data, name) => {
    const nodes = data.nodes ?? {};
    if (!Object.hasOwn(nodes, name)) {
      if (data.allNodes && !data.allNodes.includes(name))
        throw new Error(`Referenced node doesn't exist: '${name}'`);
      throw new Error(`Node '${name}' hasn't been executed`);
    }
    return nodes[name];
  };

  // `$('Name')` itself never throws for a node that has not run (`.isExecuted` says so); reading its items does.
  const nodeAccessor = (data, state) => (name) => {
    const key = String(name);
    if (data.allNodes && !data.allNodes.includes(key))
      throw new Error(`Referenced node doesn't exist: '${key}'`);
    const list = () => items(lookupNode(data, key).items);
    return {
      get item() {
        return data.paired?.[key]?.[state.itemIndex] ?? paired(list(), state.itemIndex, key);
      },
      first: () => list()[0],
      last: () => list().at(-1),
      all: () => list(),
      itemMatching: (i) => list()[i],
      get params() {
        return lookupNode(data, key).params ?? {};
      },
      isExecuted: Object.hasOwn(data.nodes ?? {}, key),
      get runIndex() {
        return lookupNode(data, key).runIndex ?? 0;
      },
    };
  };

  const legacyNodes = (data, state) =>
    new Proxy(
      {},
      {
        get(_t, name) {
          if (typeof name !== 'string') return undefined;
          const node = lookupNode(data, name);
          const list = items(node.items);
          const item =
            data.paired?.[name]?.[state.itemIndex] ??
            (list.length === 0 ? { json: {} } : paired(list, state.itemIndex, name));
          return {
            json: item.json,
            parameter: node.params ?? {},
            runIndex: node.runIndex ?? 0,
            context: node.context ?? {},
          };
        },
        has: (_t, name) => Object.hasOwn(data.nodes ?? {}, name),
      },
    );

  /** The values for NAMES over the request's data; `state` holds the item being evaluated. */
  const contextOf = (data, state) => {
    const input = items(data.input);
    const zone = data.timezone || 'UTC';
    // Luxon values cost more to build than most expressions take: only when read.
    let now;
    const nowDt = () => {
      now ??= DateTime.fromISO(data.now, { zone });
      return now;
    };
    const values = {
      get $json() {
        return state.json;
      },
      get $binary() {
        return state.binary ?? state.item?.binary ?? input[state.itemIndex]?.binary ?? {};
      },
      $input: {
        get item() {
          return state.item ?? input[state.itemIndex];
        },
        all: () => input,
        first: () => input[0],
        last: () => input[input.length - 1],
        params: data.params ?? {},
        context: {},
      },
      get $() {
        return nodeAccessor(data, state);
      },
      get $node() {
        return legacyNodes(data, state);
      },
      $items: (name, _output, _run) => (name === undefined ? input : nodeAccessor(data, state)(name).all()),
      $prevNode: data.prevNode ?? { name: '', outputIndex: 0, runIndex: 0 },
      $runIndex: data.runIndex ?? 0,
      get $itemIndex() {
        return state.itemIndex;
      },
      get $position() {
        return state.itemIndex;
      },
      $workflow: data.workflow,
      get $execution() {
        return { ...data.execution, customData: customData() };
      },
      $vars: data.vars ?? {},
      $env: data.env ?? {},
      get $now() {
        return nowDt();
      },
      get $today() {
        return nowDt().startOf('day');
      },
      // n8n rewrites $if into `test ? a : b` (only one branch runs); here both arguments are evaluated.
      $if: (...args) => {
        if (args.length < 2)
          throw new Error('$if requires at least 2 parameters: test, value_if_true[, and value_if_false]');
        return args[0] ? args[1] : args.length > 2 ? args[2] : false;
      },
      $ifEmpty: fns.ifEmpty,
      $jmespath: (obj, expression) => {
        if (typeof expression !== 'string')
          throw new Error('$jmespath(): the second argument must be a JMESPath expression (text)');
        return jmespath.search(obj, expression);
      },
      $max: fns.max,
      $min: fns.min,
      $average: fns.average,
      $not: fns.not,
      min: fns.min,
      max: fns.max,
      average: fns.average,
      numberList: fns.numberList,
      zip: fns.zip,
      not: fns.not,
      get $evaluateExpression() {
        return (expression, itemIndex) => evaluateNested(data, state, expression, itemIndex);
      },
      $parameter: data.params ?? {},
      $response: data.extra?.$response,
      $pageCount: data.extra?.$pageCount,
      $request: data.extra?.$request,
      $version: data.extra?.$version,
      // n8n's $fromAI(key, description, type, default): an AI tool's argument, chosen by the model.
      $fromAI: (key, _description, _type, fallback) => {
        const args = data.extra?.$fromAI;
        if (!args || typeof args !== 'object')
          throw new Error('$fromAI() is only available in the parameters of a tool an AI agent calls');
        const value = Object.hasOwn(args, String(key)) ? args[String(key)] : undefined;
        return value === undefined ? fallback : value;
      },
      DateTime,
      Duration,
      Interval,
    };
    return values;
  };

  const customData = () => {
    const store = {};
    return {
      set: (k, v) => {
        store[String(k)] = String(v);
      },
      get: (k) => store[String(k)],
      setAll: (o) => Object.assign(store, o),
      getAll: () => ({ ...store }),
    };
  };

  /** Index of the `}}` closing code that starts at `from` (outside strings and braces the code opened), or -1. */
  const closingOf = (text, from) => {
    let depth = 0;
    let quote = '';
    for (let i = from; i < text.length; i++) {
      const c = text[i];
      if (quote) {
        if (c === '\\') i++;
        else if (c === quote) quote = '';
        continue;
      }
      if (c === '"' || c === "'" || c === '`') quote = c;
      else if (c === '{') depth++;
      else if (c === '}') {
        if (depth === 0 && text[i + 1] === '}') return i;
        if (depth > 0) depth--;
      }
    }
    return text.indexOf('}}', from);
  };

  /** `a {{ x }} b` → literal/code parts, as the host splits a parameter's template. */
  const splitTemplate = (text) => {
    const parts = [];
    let rest = text;
    for (;;) {
      const open = rest.indexOf('{{');
      if (open < 0) break;
      const close = closingOf(rest, open + 2);
      if (close < 0) break;
      parts.push({ literal: rest.slice(0, open), code: rest.slice(open + 2, close) });
      rest = rest.slice(close + 2);
    }
    if (rest !== '' || parts.length === 0) parts.push({ literal: rest, code: null });
    return parts;
  };

  /**
   * One `{{ }}` segment's value. n8n's evaluators (riot-tmpl, then tournament) run each segment in a
   * try/catch that hands the error to n8n's handler, which rethrows only n8n's own ExpressionErrors
   * (unknown nodes, item pairing, extension functions: plain Errors here): a TypeError or
   * ReferenceError of the code itself — `$json.missing.deeper`, a call of something that is not a
   * function — leaves the segment undefined (empty in a text) and the run goes on. A syntax error still
   * fails (compiling is outside the catch), as do the sandbox's limits.
   */
  const segment = (ctx, code) => {
    const fn = compileExpression(code);
    try {
      return fn.apply(ctx, argsOf(ctx, code));
    } catch (err) {
      if (globalThis.__limitError(err)) throw err;
      if (err instanceof TypeError || err instanceof ReferenceError) return undefined;
      throw err;
    }
  };

  /** The value of a template (`{{ code }}` alone gives the code's value; text around it gives text). */
  const evaluateParts = (ctx, parts) => {
    const whole = parts.length === 1 && parts[0].literal.trim() === '' && parts[0].code !== null;
    if (whole) return segment(ctx, parts[0].code);
    let text = '';
    for (const part of parts) {
      text += part.literal;
      if (part.code !== null) text += stringify(segment(ctx, part.code));
    }
    return text;
  };

  /** n8n's `$evaluateExpression(text, itemIndex?)`: a template evaluated over the same data. */
  const evaluateNested = (data, state, expression, itemIndex) => {
    if (typeof expression !== 'string') throw new Error('$evaluateExpression(): the expression must be text');
    const text = expression.startsWith('=') ? expression.slice(1) : expression;
    let nested = state;
    if (itemIndex !== undefined && itemIndex !== state.itemIndex) {
      const item = data.input?.[itemIndex];
      if (!item) throw new Error(`$evaluateExpression(): there is no input item ${itemIndex}`);
      nested = { json: item.json ?? {}, itemIndex, item, binary: item.binary };
    }
    return evaluateParts(contextOf(data, nested), splitTemplate(text));
  };

  /** The values of NAMES for `code`: the ones its text cannot name stay undefined (never built). */
  const argsOf = (ctx, code) => NAMES.map((n) => (code.includes(n) ? ctx[n] : undefined));

  // --- expressions ---
  const compiled = new Map();
  const CACHE_MAX = 2000;
  const compileExpression = (code) => {
    let fn = compiled.get(code);
    if (!fn) {
      // A newline before the closing parenthesis: a trailing `// comment` must not swallow it.
      fn = new Function(...NAMES, `return (${code}\n);`);
      // Reachable as `arguments.callee`: frozen, so one evaluation cannot plant on what the next calls.
      Object.freeze(fn.prototype);
      Object.freeze(fn);
      if (compiled.size >= CACHE_MAX) compiled.delete(compiled.keys().next().value);
      compiled.set(code, fn);
    }
    return fn;
  };

  globalThis.evaluateN8n = (requestText) => {
    const request = JSON.parse(requestText);
    const { data, limits } = request;
    setDefaultZone(data.timezone);
    const state = {
      json: data.json ?? {},
      itemIndex: data.itemIndex ?? 0,
      item: undefined,
      binary: data.binary,
    };
    state.item = data.binary ? { json: state.json, binary: data.binary } : { json: state.json };
    const ctx = contextOf(data, state);
    const values = [];
    for (let index = 0; index < request.expressions.length; index++) {
      const parts = request.expressions[index];
      try {
        const value = evaluateParts(ctx, parts);
        if (typeof value === 'string' && value.length > limits.resultChars)
          throw new Error('result is too large');
        const v = toJson(value, limits);
        values.push(v === undefined ? {} : { v });
      } catch (err) {
        if (globalThis.__limitError(err)) throw err;
        return JSON.stringify({ ok: false, index, message: messageOf(err) });
      }
    }
    return JSON.stringify({ ok: true, values });
  };

  // --- the Code node ---
  const AsyncFunction = (async () => {}).constructor;
  const CODE_NAMES = [...NAMES, 'items', 'item', 'console', '$getWorkflowStaticData', 'require'];

  const consoleFor = (logs, limits) => {
    const write =
      (level) =>
      (...args) => {
        if (logs.length >= limits.logLines) return;
        const line = args
          .map((a) => {
            if (typeof a === 'string') return a;
            try {
              return JSON.stringify(toJson(a, limits)) ?? String(a);
            } catch {
              return String(a);
            }
          })
          .join(' ');
        logs.push({
          level,
          message: line.length > limits.logChars ? `${line.slice(0, limits.logChars)}…` : line,
        });
      };
    return {
      log: write('log'),
      info: write('info'),
      warn: write('warn'),
      error: write('error'),
      debug: write('debug'),
    };
  };

  /** n8n's binary data on a returned item: each property `{ data: base64, mimeType, … }`. */
  const checkBinary = (binary, what) => {
    if (typeof binary !== 'object' || Array.isArray(binary))
      throw new Error(`A 'binary' property isn't an object (${what})`);
    const out = {};
    for (const [key, file] of Object.entries(binary)) {
      if (file === null || typeof file !== 'object' || typeof file.data !== 'string')
        throw new Error(`Binary property '${key}' needs its bytes as a base64 string in 'data' (${what})`);
      const entry = {
        data: file.data,
        mimeType: typeof file.mimeType === 'string' ? file.mimeType : 'application/octet-stream',
      };
      for (const meta of ['fileName', 'fileExtension', 'fileType', 'fileSize'])
        if (typeof file[meta] === 'string') entry[meta] = file[meta];
      out[key] = entry;
    }
    return out;
  };

  const toItem = (value, what) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      throw new Error(`${what} isn't an object: return objects, or items in the form { json: { … } }`);
    if (Object.hasOwn(value, 'json')) {
      const json = value.json;
      if (json === null || typeof json !== 'object' || Array.isArray(json))
        throw new Error(`A 'json' property isn't an object (${what})`);
      if (value.binary === undefined || value.binary === null) return { json };
      return { json, binary: checkBinary(value.binary, what) };
    }
    return { json: value };
  };

  globalThis.runCode = async (requestText) => {
    const request = JSON.parse(requestText);
    const { data, limits } = request;
    setDefaultZone(data.timezone);
    const logs = [];
    const input = items(data.input);
    const state = { json: undefined, itemIndex: 0, item: undefined };
    const ctx = contextOf(data, state);
    const unsupported = (what) => () => {
      throw new Error(`${what} is not available in this sandbox`);
    };
    const codeCtx = Object.assign(Object.create(null), {});
    for (const n of NAMES) Object.defineProperty(codeCtx, n, Object.getOwnPropertyDescriptor(ctx, n));
    codeCtx.items = input;
    codeCtx.item = undefined;
    codeCtx.console = consoleFor(logs, limits);
    codeCtx.$getWorkflowStaticData = unsupported('$getWorkflowStaticData');
    codeCtx.require = unsupported('require');
    let fn;
    try {
      // In a block of its own: n8n's globals are this function's parameters, and code that declares
      // `const items = $input.all()` (as published templates do) shadows them instead of failing.
      fn = new AsyncFunction(...CODE_NAMES, `{\n${request.code}\n}`);
    } catch (err) {
      return JSON.stringify({ ok: false, message: messageOf(err), logs });
    }
    const out = [];
    try {
      if (request.mode === 'runOnceForEachItem') {
        for (let i = 0; i < input.length; i++) {
          state.itemIndex = i;
          state.json = input[i].json;
          state.item = input[i];
          const args = CODE_NAMES.map((n) =>
            n === 'item' ? input[i] : request.code.includes(n) ? codeCtx[n] : undefined,
          );
          const result = await fn.apply(codeCtx, args);
          if (result === undefined || result === null) continue;
          if (Array.isArray(result))
            throw new Error(
              "Code doesn't return a single object: in 'Run Once for Each Item' mode return one object (an array belongs to 'Run Once for All Items')",
            );
          out.push(toItem(result, `The item returned for item ${i}`));
        }
      } else {
        const args = CODE_NAMES.map((n) => (request.code.includes(n) ? codeCtx[n] : undefined));
        const result = await fn.apply(codeCtx, args);
        if (result === undefined || result === null) {
          // n8n: returning nothing outputs no items.
        } else if (Array.isArray(result)) {
          result.forEach((r, i) => {
            out.push(toItem(r, `Item ${i} of the returned array`));
          });
        } else {
          out.push(toItem(result, 'The returned value'));
        }
      }
      return JSON.stringify({ ok: true, items: toJson(out, limits), logs });
    } catch (err) {
      if (globalThis.__limitError(err)) throw err;
      return JSON.stringify({ ok: false, message: messageOf(err), logs, itemIndex: state.itemIndex });
    }
  };

  globalThis.__toDateTimeForHost = toDateTime;

  // Warm-up: the first evaluation in a fresh runtime is several times slower than the next ones.
  globalThis.evaluateN8n(
    JSON.stringify({
      expressions: [[{ literal: '', code: '$json.a.toUpperCase() + $now.plus(1, "day").toISO()' }]],
      data: { json: { a: 'x' }, workflow: {}, execution: {}, env: {}, now: '2020-01-01T00:00:00Z' },
      limits: { resultChars: 1000, depth: 10 },
    }),
  );
})();

export {};
