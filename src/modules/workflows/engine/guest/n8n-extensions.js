// Runs inside the QuickJS sandbox (never in Node), after Luxon's global bundle defined `luxon`.
// n8n's data-transformation functions (docs.n8n.io "Data transformation functions"): methods on strings,
// numbers, booleans, arrays, plain objects and dates, as n8n's expressions and Code node offer them.
// n8n rewrites each call `x.name(args)` into `extend(x, 'name', args)`, which picks the function by the
// runtime type of `x`; here every name is an accessor on the sandbox's own prototypes (never Node's) whose
// function dispatches the same way (`extend` below), so an ISO date string gets the date functions as in
// n8n, and a function called on the wrong type fails with n8n's message. Assigning a property of the same
// name to a data object still creates its own property. Semantics follow n8n's own test cases
// (test/fixtures/n8n/expressions/cases.json); the code is this platform's.
(() => {
  const { DateTime, Settings } = luxon;

  // --- helpers ---
  const fail = (message) => {
    throw new Error(message);
  };
  const isObject = (v) => v !== null && typeof v === 'object';
  const isPlainObject = (v) =>
    isObject(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
  /** An own data field even for names like `__proto__` or an inherited accessor's name. */
  const defineField = (target, key, value) =>
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  const copyOf = (obj) => {
    const out = {};
    for (const key of Object.keys(obj)) defineField(out, key, obj[key]);
    return out;
  };

  /** A text that equal values share (deep equality as lodash's isEqual decides it for JSON-like data). */
  const canonical = (v) => {
    if (v === undefined) return 'u';
    if (v === null) return 'n';
    switch (typeof v) {
      case 'number':
        return `d${String(v)}`;
      case 'string':
        return `s${JSON.stringify(v)}`;
      case 'boolean':
        return `b${v}`;
      case 'bigint':
        return `i${v}`;
      case 'function':
      case 'symbol':
        return `f${String(v)}`;
    }
    if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
    if (v instanceof Date) return `D${v.getTime()}`;
    if (DateTime.isDateTime(v)) return `T${v.toISO()}`;
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  };
  const uniqueBy = (list, keyOf) => {
    const seen = new Set();
    return list.filter((v) => {
      const k = keyOf(v);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  };

  // --- strings: patterns (written for n8n's cases: URL, domain and e-mail as n8n decides them) ---
  const HOST = String.raw`(?:(?:[-\w]+\.)+(?:[a-z]{2,}|xn--[a-z0-9]+)|localhost|\d{1,3}(?:\.\d{1,3}){3})`;
  const PORT = String.raw`(?::\d+)?`;
  const TAIL = String.raw`(?:\/[^\s?#]*)?(?:\?[^\s#]*)?(?:#\S*)?`;
  const SCHEME = String.raw`(?:https?|ftp):\/\/`;
  const URL_EXACT = new RegExp(`^${SCHEME}(?:www\\.)?${HOST}${PORT}${TAIL}$`, 'i');
  // In text, a URL runs to the next white space (n8n's rule).
  const URL_IN_TEXT = new RegExp(`${SCHEME}(?:www\\.)?${HOST}${PORT}\\S*`, 'i');
  const DOMAIN_EXACT = new RegExp(`^(?:www\\.)?${HOST}${PORT}${TAIL}$`, 'i');
  const DOMAIN_OF = new RegExp(
    `^(?:${SCHEME})?(?:mailto:)?(?:\\/\\/)?((?:www\\.)?${HOST})${PORT}${TAIL}$`,
    'i',
  );
  const EMAIL_LOCAL = String.raw`(?:[^<>()[\]\\.,;:\s@"]+(?:\.[^<>()[\]\\.,;:\s@"]+)*|".+")`;
  const EMAIL_DOMAIN = String.raw`(\[\d{1,3}(?:\.\d{1,3}){3}\]|(?:[a-zA-Z\-0-9]+\.)+[a-zA-Z]{2,})`;
  const EMAIL = new RegExp(`${EMAIL_LOCAL}@${EMAIL_DOMAIN}`);
  // Currency symbols before or after an amount ("$1.50", "12 €") do not stop a number conversion.
  const CURRENCY = /\p{Sc}/gu;
  const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

  /** A string that is exactly a JavaScript Date's ISO form: n8n hands it to the date functions. */
  const isIsoDate = (v) =>
    typeof v === 'string' &&
    ISO_UTC.test(v) &&
    !Number.isNaN(Date.parse(v)) &&
    new Date(v).toISOString() === v;

  const isEmail = (s) => EMAIL.test(s) && !/\s/.test(s);

  const hexByte = (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  /** application/x-www-form-urlencoded (WHATWG URLSearchParams): space is `+`, only `*-._` stay bare. */
  const formEncode = (text) => {
    let out = '';
    for (const ch of String(text)) {
      if (/^[A-Za-z0-9*\-._]$/.test(ch)) out += ch;
      else if (ch === ' ') out += '+';
      else for (const b of utf8(ch)) out += hexByte(b);
    }
    return out;
  };
  const utf8 = (ch) => {
    const cp = ch.codePointAt(0);
    if (cp < 0x80) return [cp];
    if (cp < 0x800) return [0xc0 | (cp >> 6), 0x80 | (cp & 63)];
    if (cp < 0x10000) return [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
    return [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63)];
  };

  // n8n's `hash()` names: sha3 is SHA3-512 there too.
  const HASH_ALGORITHMS = {
    md5: 'md5',
    sha1: 'sha1',
    sha224: 'sha224',
    sha256: 'sha256',
    sha384: 'sha384',
    sha512: 'sha512',
    sha3: 'sha3-512',
  };

  const LATIN = {
    ß: 'ss',
    æ: 'ae',
    Æ: 'AE',
    ø: 'o',
    Ø: 'O',
    đ: 'd',
    Đ: 'D',
    ł: 'l',
    Ł: 'L',
    œ: 'oe',
    Œ: 'OE',
    þ: 'th',
    Þ: 'TH',
  };

  // --- dates ---
  const stringToDateTime = (value) => {
    const s = String(value).trim();
    for (const parse of [DateTime.fromISO, DateTime.fromHTTP, DateTime.fromRFC2822, DateTime.fromSQL]) {
      const dt = parse.call(DateTime, s, { setZone: true });
      if (dt.isValid) return dt;
    }
    const dt = DateTime.fromMillis(Date.parse(s));
    if (dt.isValid) return dt;
    throw new Error('cannot convert to Luxon DateTime');
  };
  const toDateTime = (value) => {
    if (DateTime.isDateTime(value)) return value;
    if (value instanceof Date) return DateTime.fromJSDate(value);
    if (typeof value === 'number') return DateTime.fromMillis(value);
    return stringToDateTime(value);
  };
  globalThis.__toDateTime = toDateTime;

  const numberToDateTime = (value, format = 'ms') => {
    switch (format) {
      case 'ms':
        return DateTime.fromMillis(value);
      case 's':
        return DateTime.fromSeconds(value);
      case 'us':
        return DateTime.fromMillis(value / 1000);
      case 'excel':
        // Days since 1900-01-00, counting Excel's phantom 1900-02-29: 25,569 days before 1970.
        return DateTime.fromSeconds((value - 25569) * 86400);
      default:
        return fail(
          `Unsupported format '${String(format)}'. toDateTime() supports 'ms', 's', 'us' and 'excel'.`,
        );
    }
  };

  const DURATION_UNITS = [
    'milliseconds',
    'seconds',
    'minutes',
    'hours',
    'days',
    'weeks',
    'months',
    'quarters',
    'years',
  ];
  const DATE_PARTS = [
    'day',
    'week',
    'month',
    'year',
    'hour',
    'minute',
    'second',
    'millisecond',
    'weekNumber',
    'yearDayNumber',
    'weekday',
  ];
  /** Singular and short names → Luxon's duration units (`plus(1, 'day')`). */
  const PLURAL = {
    day: 'days',
    month: 'months',
    year: 'years',
    week: 'weeks',
    hour: 'hours',
    minute: 'minutes',
    second: 'seconds',
    millisecond: 'milliseconds',
    quarter: 'quarters',
    ms: 'milliseconds',
    sec: 'seconds',
    secs: 'seconds',
    hr: 'hours',
    hrs: 'hours',
    min: 'minutes',
    mins: 'minutes',
  };
  /** Plural and short names → Luxon's date units (`beginningOf('days')`). */
  const SINGULAR = {
    days: 'day',
    months: 'month',
    years: 'year',
    weeks: 'week',
    quarters: 'quarter',
    hours: 'hour',
    minutes: 'minute',
    seconds: 'second',
    milliseconds: 'millisecond',
    hrs: 'hour',
    hr: 'hour',
    mins: 'minute',
    min: 'minute',
    secs: 'second',
    sec: 'second',
    ms: 'millisecond',
  };
  const durationOf = (amount, unit) => ({ [PLURAL[unit] ?? unit]: amount });
  /** Applies `fn` to the Luxon form of a date; a JS Date comes back as a JS Date, as in n8n. */
  const onDate = (date, fn) => {
    if (DateTime.isDateTime(date)) return fn(date);
    return fn(DateTime.fromJSDate(date)).toJSDate();
  };
  const luxonOf = (date) => (DateTime.isDateTime(date) ? date : DateTime.fromJSDate(date));
  /** isBetween's bounds: ISO-like text, a Date or a DateTime; anything else has no answer (undefined). */
  const boundOf = (value) => {
    if (typeof value === 'string') {
      const dt = DateTime.fromJSDate(new Date(value));
      return dt.isValid ? dt : undefined;
    }
    if (value instanceof Date) return DateTime.fromJSDate(value);
    if (DateTime.isDateTime(value)) return value;
    return undefined;
  };
  const shift = (sign) => (date, args) => {
    const duration = args.length === 1 ? args[0] : durationOf(args[0] ?? 0, args[1] ?? 'minutes');
    return onDate(date, (dt) => (sign > 0 ? luxonPlus.call(dt, duration) : luxonMinus.call(dt, duration)));
  };
  const luxonPlus = DateTime.prototype.plus;
  const luxonMinus = DateTime.prototype.minus;

  const diffTo = (date, [other, unit = 'days']) => {
    let units = Array.isArray(unit) ? unit : [unit];
    if (units.length === 0) units = ['days'];
    const allowed = new Set([...DATE_PARTS, ...DURATION_UNITS]);
    const wrong = units.find((u) => !allowed.has(u));
    if (wrong !== undefined)
      fail(
        `Unsupported unit '${String(wrong)}'. Supported: ${DURATION_UNITS.map((u) => `'${u}'`).join(', ')}.`,
      );
    const diff = luxonOf(date).diff(toDateTime(other), units);
    return units.length > 1 ? diff.toObject() : diff.as(units[0]);
  };

  // --- the functions, per type: (value, args) → result ---
  const numbersOnly = (list, name) => {
    if (list.some((v) => typeof v !== 'number')) fail(`${name}(): all array elements must be numbers`);
  };
  const sum = (list) => {
    numbersOnly(list, 'sum');
    return list.reduce((a, b) => a + b, 0);
  };
  const average = (list) => {
    numbersOnly(list, 'average');
    return list.length === 0 ? 0 : list.reduce((a, b) => a + b, 0) / list.length;
  };
  const isEmptyValue = (v) => v === null || v === undefined || v === 'nil' || v === '';
  const compactObject = (obj) => {
    const out = {};
    for (const [key, val] of Object.entries(obj)) {
      if (isEmptyValue(val)) continue;
      if (Array.isArray(val)) defineField(out, key, compactArray(val));
      else if (isPlainObject(val)) {
        if (Object.keys(val).length === 0) continue;
        defineField(out, key, compactObject(val));
      } else defineField(out, key, val);
    }
    return out;
  };
  const compactArray = (list) =>
    list
      .filter(
        (v) => !isEmptyValue(v) && !((Array.isArray(v) || isPlainObject(v)) && Object.keys(v).length === 0),
      )
      .map((v) => (Array.isArray(v) ? compactArray(v) : isPlainObject(v) ? compactObject(v) : v));
  /** `base` with the fields of `other` it lacks: the base wins a clash. */
  const withMissing = (base, other) => {
    const out = copyOf(base);
    if (isObject(other))
      for (const key of Object.keys(other)) if (!Object.hasOwn(out, key)) defineField(out, key, other[key]);
    return out;
  };
  const assignInto = (target, source) => {
    for (const key of Object.keys(source)) defineField(target, key, source[key]);
    return target;
  };
  const arrayArg = (others, name) => {
    if (!Array.isArray(others)) fail(`${name}(): expected array arg, e.g. .${name}([1, 2, 3, 4])`);
    return others;
  };
  const chunk = (list, size) => {
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1)
      fail('chunk(): expected a positive whole number, e.g. .chunk(5)');
    const out = [];
    for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
    return out;
  };
  const undefinedFn = () => undefined;

  const STRING = {
    hash(s, [algorithm = 'md5']) {
      const name = String(algorithm).toLowerCase();
      if (name === 'base64') return globalThis.__base64Encode(s);
      const digest = HASH_ALGORITHMS[name];
      if (!digest)
        fail(
          `Unknown algorithm ${name}. Available algorithms are: ${Object.keys(HASH_ALGORITHMS).join()}, and Base64.`,
        );
      return globalThis.__hostHash(digest, s);
    },
    removeMarkdown(s) {
      return s
        .replace(/^([ \t]*)(?:[*\-+]|\d+\.)\s+/gm, '$1')
        .replace(/<\/?[a-z][^<>]*>/gi, '')
        .replace(/^```.*$\n?/gm, '')
        .replace(/!\[([^\]]*)\]\([^)]*\)/g, '')
        .replace(/\[([^\]]*)\][[(][^\])]*[\])]/g, '$1')
        .replace(/^#{1,6}[ \t]*([^#\n]*?)[ \t]*#*$/gm, '$1')
        .replace(/(\*{1,3}|_{1,3})(\S(?:.*?\S)?)\1/g, '$2')
        .replace(/~~(.*?)~~/g, '$1')
        .replace(/`([^`]+)`/g, '$1')
        .replace(/^[ \t]*>[ \t]?/gm, '')
        .replace(/^[=-]{3,}[ \t]*$/gm, '')
        .replace(/\n{3,}/g, '\n\n');
    },
    removeTags(s) {
      return s.replace(/<[^>]*>?/g, '');
    },
    toDate(s) {
      const date = new Date(Date.parse(s));
      if (Number.isNaN(date.getTime())) fail('cannot convert to date');
      // A date without a time is that day's midnight.
      if (!s.includes(':')) date.setHours(0, 0, 0);
      return date;
    },
    toDateTime(s, [format]) {
      try {
        if (format === 'ms' || format === 's' || format === 'us' || format === 'excel')
          return numberToDateTime(Number(s), format);
        if (format) return DateTime.fromFormat(s, format);
        return stringToDateTime(s);
      } catch {
        return fail('cannot convert to Luxon DateTime');
      }
    },
    toBoolean(s) {
      const lower = s.toLowerCase();
      return lower.length > 0 && lower !== 'false' && lower !== 'no' && lower !== '0';
    },
    toNumber(s) {
      const n = Number(s.replace(CURRENCY, ''));
      if (Number.isNaN(n)) fail('cannot convert to number');
      return n;
    },
    toFloat(s) {
      if (s.includes(',')) fail('cannot convert to float, expected . as decimal separator');
      const n = Number.parseFloat(s.replace(CURRENCY, ''));
      if (Number.isNaN(n)) fail('cannot convert to float');
      return n;
    },
    toInt(s, [radix]) {
      const n = Number.parseInt(s.replace(CURRENCY, ''), radix);
      if (Number.isNaN(n)) fail('cannot convert to integer');
      return n;
    },
    toSentenceCase(s) {
      let out = '';
      let capital = true;
      for (const ch of s) {
        if (/\p{L}/u.test(ch)) {
          out += capital ? ch.toLocaleUpperCase() : ch.toLocaleLowerCase();
          capital = false;
        } else {
          if (ch === '.' || ch === '!' || ch === '?') capital = true;
          out += ch;
        }
      }
      return out;
    },
    toSnakeCase(s) {
      return s
        .toLocaleLowerCase()
        .replace(/[ -]/g, '_')
        .replace(/[^\p{L}\p{N}_]/gu, '');
    },
    toTitleCase(s) {
      return s.replace(/\S+/g, (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase());
    },
    // Platform additions beside n8n's set.
    toCamelCase(s) {
      return words(s)
        .map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()))
        .join('');
    },
    toKebabCase(s) {
      return words(s)
        .map((w) => w.toLowerCase())
        .join('-');
    },
    urlDecode(s, [entireString = false]) {
      try {
        return entireString ? decodeURI(s) : decodeURIComponent(s);
      } catch {
        return fail(
          `urlDecode(): '${s.length > 40 ? `${s.slice(0, 40)}…` : s}' is not valid percent-encoding`,
        );
      }
    },
    urlEncode(s, [entireString = false]) {
      return entireString ? encodeURI(s) : encodeURIComponent(s);
    },
    quote(s, [mark = '"']) {
      return `${mark}${s.replace(/\\/g, '\\\\').split(mark).join(`\\${mark}`)}${mark}`;
    },
    replaceSpecialChars(s) {
      return s
        .normalize('NFD')
        .replace(/[\u0300-\u036f]/g, '')
        .replace(/[^ -~\t\n\r]/g, (ch) => LATIN[ch] ?? '?');
    },
    length(s) {
      return s.length;
    },
    isDomain(s) {
      return DOMAIN_EXACT.test(s);
    },
    isEmail,
    isNumeric(s) {
      return !s.includes(' ') && !Number.isNaN(Number(s)) && !Number.isNaN(Number.parseFloat(s));
    },
    isUrl(s) {
      return URL_EXACT.test(s);
    },
    isEmpty(s) {
      return s === '';
    },
    isNotEmpty(s) {
      return s !== '';
    },
    isBlank(s) {
      return s.trim() === '';
    },
    isNotBlank(s) {
      return s.trim() !== '';
    },
    toJsonString(s) {
      return JSON.stringify(s);
    },
    extractEmail(s) {
      return EMAIL.exec(s)?.[0];
    },
    extractDomain(s) {
      if (isEmail(s)) return EMAIL.exec(s)?.[1];
      return DOMAIN_OF.exec(s)?.[1];
    },
    extractUrl(s) {
      return URL_IN_TEXT.exec(s)?.[0];
    },
    extractUrlPath(s) {
      const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/i.exec(s);
      return m ? m[1] || '/' : undefined;
    },
    parseJson(s) {
      try {
        return JSON.parse(s);
      } catch {
        return fail(s.includes("'") ? "Parsing failed. Check you're using double quotes" : 'Parsing failed');
      }
    },
    base64Encode(s) {
      return globalThis.__base64Encode(s);
    },
    base64Decode(s) {
      return globalThis.__base64Decode(s);
    },
  };
  STRING.toDecimalNumber = STRING.toFloat;
  STRING.toWholeNumber = STRING.toInt;

  const words = (s) =>
    String(s)
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);

  const NUMBER = {
    format(n, [locales = 'en-US', options = {}]) {
      return new Intl.NumberFormat(locales, options).format(n);
    },
    ceil: (n) => Math.ceil(n),
    floor: (n) => Math.floor(n),
    abs: (n) => Math.abs(n),
    isInteger: (n) => Number.isInteger(n),
    round(n, [decimals = 0]) {
      return +n.toFixed(decimals);
    },
    isEven(n) {
      if (!Number.isInteger(n)) fail('isEven() is only callable on integers');
      return n % 2 === 0;
    },
    isOdd(n) {
      if (!Number.isInteger(n)) fail('isOdd() is only callable on integers');
      return Math.abs(n) % 2 === 1;
    },
    toBoolean: (n) => n !== 0,
    toInt: (n) => +n.toFixed(0),
    toFloat: (n) => n,
    toDateTime(n, [format = 'ms']) {
      return numberToDateTime(n, format);
    },
  };

  const BOOLEAN = {
    toBoolean: (b) => b,
    toInt: (b) => (b ? 1 : 0),
    toFloat: (b) => (b ? 1 : 0),
    toNumber: (b) => (b ? 1 : 0),
    toDateTime: undefinedFn,
  };

  const ARRAY = {
    first: (list) => list[0],
    last: (list) => list[list.length - 1],
    isEmpty: (list) => list.length === 0,
    isNotEmpty: (list) => list.length > 0,
    pluck(list, fields) {
      if (fields.length === 0) return list;
      const out = [];
      for (const item of list) {
        if (!isObject(item)) continue;
        const found = Object.keys(item)
          .filter((k) => fields.includes(k))
          .map((k) => item[k]);
        if (found.length > 0) out.push(found.length === 1 ? found[0] : found);
      }
      return out;
    },
    randomItem: (list) => (list.length === 0 ? undefined : list[Math.floor(Math.random() * list.length)]),
    unique(list, fields) {
      return uniqueBy(list, (v) =>
        fields.length > 0 && isObject(v)
          ? canonical(Object.fromEntries(fields.map((f) => [f, Object.hasOwn(v, f) ? v[f] : undefined])))
          : canonical(v),
      );
    },
    sum,
    min(list) {
      numbersOnly(list, 'min');
      return Math.min(...list);
    },
    max(list) {
      numbersOnly(list, 'max');
      return Math.max(...list);
    },
    average,
    compact: compactArray,
    smartJoin(list, [keyField, valueField]) {
      if (!keyField || !valueField || typeof keyField !== 'string' || typeof valueField !== 'string')
        fail('smartJoin(): expected two string args, e.g. .smartJoin("name", "value")');
      const out = {};
      for (const v of list)
        if (isObject(v) && Object.hasOwn(v, keyField) && Object.hasOwn(v, valueField))
          defineField(out, v[keyField], v[valueField]);
      return out;
    },
    chunk: (list, [size]) => chunk(list, size),
    renameKeys(list, pairs) {
      if (pairs.length === 0 || pairs.length % 2 !== 0)
        fail(
          'renameKeys(): expected an even amount of args: from1, to1 [, from2, to2, ...]. e.g. .renameKeys("name", "title")',
        );
      return list.map((v) => {
        if (!isObject(v)) return v;
        const out = copyOf(v);
        for (let i = 0; i < pairs.length; i += 2) {
          if (!Object.hasOwn(out, pairs[i])) continue;
          const value = out[pairs[i]];
          delete out[pairs[i]];
          defineField(out, pairs[i + 1], value);
        }
        return out;
      });
    },
    // n8n: pairs up to the shorter array's length; within a pair the base array's element wins a clash,
    // a later pair wins over an earlier one. Without an argument, the array's own objects, first wins.
    merge(list, args) {
      const [others] = args;
      if (others === undefined) {
        let merged = {};
        for (const v of list) if (isObject(v) && !Array.isArray(v)) merged = withMissing(merged, v);
        return merged;
      }
      if (!Array.isArray(others))
        fail('merge(): expected array arg, e.g. .merge([{ id: 1, otherValue: 3 }])');
      const merged = {};
      for (let i = 0; i < Math.min(list.length, others.length); i++)
        if (isObject(list[i]) && isObject(others[i])) assignInto(merged, withMissing(list[i], others[i]));
      return merged;
    },
    // As merge(), over the longer array's length: an element without an object counterpart is kept.
    mergeIntoObject(list, [others]) {
      if (!Array.isArray(others))
        fail('mergeIntoObject(): expected array arg, e.g. .mergeIntoObject([{ id: 1, otherValue: 3 }])');
      const merged = {};
      for (let i = 0; i < Math.max(list.length, others.length); i++) {
        const base = isObject(list[i]) ? list[i] : {};
        assignInto(merged, withMissing(base, isObject(others[i]) ? others[i] : {}));
      }
      return merged;
    },
    union(list, [others]) {
      return uniqueBy([...list, ...arrayArg(others, 'union')], canonical);
    },
    difference(list, [others]) {
      const other = new Set(arrayArg(others, 'difference').map(canonical));
      return uniqueBy(
        list.filter((v) => !other.has(canonical(v))),
        canonical,
      );
    },
    intersection(list, [others]) {
      const other = new Set(arrayArg(others, 'intersection').map(canonical));
      return uniqueBy(
        list.filter((v) => other.has(canonical(v))),
        canonical,
      );
    },
    append: (list, values) => list.concat(values),
    toJsonString: (list) => JSON.stringify(list),
    toInt: undefinedFn,
    toFloat: undefinedFn,
    toBoolean: undefinedFn,
    toDateTime: undefinedFn,
  };
  ARRAY.removeDuplicates = ARRAY.unique;

  const OBJECT = {
    isEmpty: (obj) => Object.keys(obj).length === 0,
    isNotEmpty: (obj) => Object.keys(obj).length > 0,
    keys: (obj) => Object.keys(obj),
    values: (obj) => Object.values(obj),
    hasField: (obj, [name]) => Object.hasOwn(obj, name),
    removeField(obj, [name]) {
      if (!Object.hasOwn(obj, name)) return obj;
      const out = copyOf(obj);
      delete out[name];
      return out;
    },
    removeFieldsContaining(obj, [match]) {
      if (typeof match !== 'string' || match === '')
        fail('removeFieldsContaining(): expected non-empty string arg');
      const out = copyOf(obj);
      for (const [key, val] of Object.entries(obj))
        if (typeof val === 'string' && val.includes(match)) delete out[key];
      return out;
    },
    keepFieldsContaining(obj, [match]) {
      if (typeof match !== 'string' || match === '')
        fail('argument of keepFieldsContaining must be a non-empty string');
      const out = copyOf(obj);
      for (const [key, val] of Object.entries(obj))
        if (!(typeof val === 'string' && val.includes(match))) delete out[key];
      return out;
    },
    compact: (obj) => compactObject(obj),
    // A platform addition beside n8n's set: the object's fields win a clash.
    merge: (obj, [other]) => withMissing(obj, other),
    urlEncode(obj) {
      return Object.entries(obj)
        .map(([k, v]) => `${formEncode(k)}=${formEncode(String(v))}`)
        .join('&');
    },
    toJsonString: (obj) => JSON.stringify(obj),
    toInt: undefinedFn,
    toFloat: undefinedFn,
    toBoolean: undefinedFn,
    toDateTime: undefinedFn,
  };

  const DATE = {
    beginningOf(date, [unit = 'week']) {
      return onDate(date, (dt) => dt.startOf(SINGULAR[unit] ?? unit));
    },
    endOfMonth(date) {
      return onDate(date, (dt) => dt.endOf('month'));
    },
    extract(date, [part = 'week']) {
      const dt = luxonOf(date);
      if (part === 'yearDayNumber') return dt.ordinal;
      const unit = part === 'week' ? 'weekNumber' : (SINGULAR[part] ?? part);
      const value = DATE_PARTS.includes(unit) || unit === 'quarter' ? dt.get(unit) : undefined;
      return value ?? null;
    },
    format(date, [format, localeOptions = {}]) {
      return luxonOf(date).toFormat(format, { ...localeOptions });
    },
    isBetween(date, args) {
      if (args.length !== 2) fail('isBetween(): expected exactly two args');
      const a = boundOf(args[0]);
      const b = boundOf(args[1]);
      if (!a || !b) return undefined;
      const x = luxonOf(date);
      return a > b ? b < x && x < a : a < x && x < b;
    },
    isDst: (date) => luxonOf(date).isInDST,
    isInLast(date, [amount = 0, unit = 'minutes']) {
      const now = DateTime.now();
      const x = luxonOf(date);
      return luxonMinus.call(now, durationOf(amount, unit)) <= x && x <= now;
    },
    // A platform addition beside n8n's set: isInLast's mirror.
    isInNext(date, [amount = 0, unit = 'minutes']) {
      const now = DateTime.now();
      const x = luxonOf(date);
      return now <= x && x <= luxonPlus.call(now, durationOf(amount, unit));
    },
    isWeekend: (date) => luxonOf(date).weekday >= 6,
    minus: shift(-1),
    plus: shift(1),
    toDateTime: (date) => luxonOf(date),
    diffTo,
    diffToNow: (date, [unit]) => diffTo(date, [DateTime.now(), unit]),
    toInt: (date) => luxonOf(date).toMillis(),
    toFloat: (date) => luxonOf(date).toMillis(),
    toBoolean: undefinedFn,
    isEmpty: () => false,
    isNotEmpty: () => true,
  };

  const TYPES = [
    ['Array', ARRAY],
    ['Date', DATE],
    ['Number', NUMBER],
    ['Object', OBJECT],
    ['String', STRING],
    ['Boolean', BOOLEAN],
  ];

  /** n8n's dispatch: the function of `name` for the runtime type of `input`, as `extend()` finds it. */
  const extend = (input, name, args) => {
    let value = input;
    let table;
    if (Array.isArray(value)) table = ARRAY;
    else if (isIsoDate(value) && name !== 'toDate' && name !== 'toDateTime') {
      value = new Date(value);
      table = DATE;
    } else if (typeof value === 'string') table = STRING;
    else if (typeof value === 'number') table = NUMBER;
    else if (value instanceof Date || DateTime.isDateTime(value)) table = DATE;
    else if (isObject(value)) table = OBJECT;
    else if (typeof value === 'boolean') table = BOOLEAN;
    const fn = table && Object.hasOwn(table, name) ? table[name] : undefined;
    if (fn) return fn(value, args);
    const owners = TYPES.filter(([, t]) => Object.hasOwn(t, name)).map(([typeName]) => `"${typeName}"`);
    if (owners.length === 1) return fail(`${name}() is only callable on type ${owners[0]}`);
    const last = owners.pop();
    return fail(`${name}() is only callable on types ${owners.join(', ')}, and ${last}`);
  };

  /** Each name becomes a method of `proto` that dispatches through extend(). */
  const install = (proto, names) => {
    for (const name of names) {
      const method = {
        [name](...args) {
          return extend(this, name, args);
        },
      }[name];
      Object.defineProperty(proto, name, {
        get() {
          return method;
        },
        set(value) {
          defineField(this, name, value);
        },
        enumerable: false,
        configurable: true,
      });
    }
  };
  const dateNames = Object.keys(DATE);
  install(Object.prototype, Object.keys(OBJECT));
  install(Array.prototype, Object.keys(ARRAY));
  // Strings also get the date functions: an ISO date string is a date to n8n.
  install(String.prototype, [
    ...new Set([...Object.keys(STRING).filter((n) => n !== 'length'), ...dateNames]),
  ]);
  install(Number.prototype, Object.keys(NUMBER));
  install(Boolean.prototype, Object.keys(BOOLEAN));
  install(Date.prototype, dateNames);
  // Over Luxon's own plus/minus (n8n's take `(n, unit)` too) and its isWeekend getter.
  install(DateTime.prototype, dateNames);

  // n8n accepts a JS Date where Luxon wants ISO text (n8n issue #25267).
  const fromISO = DateTime.fromISO;
  DateTime.fromISO = function (text, options) {
    return fromISO.call(this, text instanceof Date ? text.toISOString() : text, options);
  };

  // --- n8n's functions without a receiver ---
  const MAX_LIST = 1_000_000;
  globalThis.__n8nFunctions = {
    min: (...n) => Math.min(...n),
    max: (...n) => Math.max(...n),
    average: (...n) => average(n),
    numberList(start, end) {
      const size = Math.abs(start - end) + 1;
      if (!Number.isFinite(size)) fail('numberList(): expected two numbers, e.g. numberList(1, 10)');
      if (size > MAX_LIST) fail(`numberList(): at most ${MAX_LIST.toLocaleString('en-US')} numbers`);
      const step = start <= end ? 1 : -1;
      return Array.from({ length: size }, (_, i) => start + i * step);
    },
    zip(keys, values) {
      if (!Array.isArray(keys) || !Array.isArray(values)) fail('keys and values must be arrays');
      if (keys.length !== values.length) fail('keys and values not of equal length');
      const out = {};
      keys.forEach((k, i) => {
        defineField(out, String(k), values[i]);
      });
      return out;
    },
    not: (value) => !value,
    ifEmpty(...args) {
      if (args.length !== 2) fail('expected two arguments (value, defaultValue) for this function');
      const [value, alternative] = args;
      if (value === undefined || value === null || value === '') return alternative;
      if (isObject(value) && Object.keys(value).length === 0) return alternative;
      return value;
    },
  };

  // The workflow's time zone for Luxon's "local" (DateTime.local(), fromISO without offset, toDateTime()):
  // set by the evaluator before each call. harden.js closes Luxon's Settings to guest code afterwards.
  const setDefaultZone = Object.getOwnPropertyDescriptor(Settings, 'defaultZone').set;
  globalThis.__setDefaultZone = (zone) => {
    setDefaultZone.call(Settings, zone && luxon.Info.isValidIANAZone(zone) ? zone : 'UTC');
  };
})();

export {};
