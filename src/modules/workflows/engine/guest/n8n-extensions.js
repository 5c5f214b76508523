// Runs inside the QuickJS sandbox (never in Node), after Luxon's global bundle defined `luxon`.
// n8n's data-transformation functions (docs.n8n.io "Data transformation functions"): methods on strings,
// numbers, booleans, arrays, plain objects and dates, as n8n's expressions and Code node offer them.
// n8n rewrites calls at parse time; here they live on the sandbox's own prototypes (never Node's), as
// accessors so that an assignment of the same name to a data object still creates its own property.
(() => {
  const { DateTime, Duration } = luxon;

  const install = (proto, methods) => {
    for (const [name, fn] of Object.entries(methods)) {
      Object.defineProperty(proto, name, {
        get() {
          return fn;
        },
        set(value) {
          Object.defineProperty(this, name, { value, writable: true, enumerable: true, configurable: true });
        },
        enumerable: false,
        configurable: true,
      });
    }
  };

  const isPlainObject = (v) =>
    v !== null &&
    typeof v === 'object' &&
    (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

  const deepEqual = (a, b) => {
    if (a === b) return true;
    if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
    if (Array.isArray(a) !== Array.isArray(b)) return false;
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  };

  // n8n's `hash()` names: sha3 is SHA3-512 there too (jssha's variant).
  const HASH_ALGORITHMS = {
    md5: 'md5',
    sha1: 'sha1',
    sha224: 'sha224',
    sha256: 'sha256',
    sha384: 'sha384',
    sha512: 'sha512',
    sha3: 'sha3-512',
  };
  const EMAIL = /([\w.+-]+@[\w-]+(?:\.[\w-]+)+)/;
  const URL_RE = /(https?:\/\/[^\s"'<>]+)/;
  const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,}$/i;

  const words = (s) =>
    String(s)
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .split(/[^A-Za-z0-9\u00C0-\u024F]+/)
      .filter(Boolean);

  const toDateTime = (value, format) => {
    if (DateTime.isDateTime(value)) return value;
    if (value instanceof Date) return DateTime.fromJSDate(value);
    if (typeof value === 'number') return DateTime.fromMillis(value);
    const s = String(value);
    if (format) {
      const parsed = DateTime.fromFormat(s, format);
      if (parsed.isValid) return parsed;
    }
    for (const parse of [DateTime.fromISO, DateTime.fromRFC2822, DateTime.fromHTTP, DateTime.fromSQL]) {
      const dt = parse.call(DateTime, s, { setZone: true });
      if (dt.isValid) return dt;
    }
    const ms = Date.parse(s);
    if (!Number.isNaN(ms)) return DateTime.fromMillis(ms);
    throw new Error(`can't convert '${s}' to a date`);
  };
  globalThis.__toDateTime = toDateTime;

  const UNITS = {
    ms: 'milliseconds',
    millisecond: 'milliseconds',
    milliseconds: 'milliseconds',
    s: 'seconds',
    second: 'seconds',
    seconds: 'seconds',
    m: 'minutes',
    minute: 'minutes',
    minutes: 'minutes',
    h: 'hours',
    hour: 'hours',
    hours: 'hours',
    d: 'days',
    day: 'days',
    days: 'days',
    w: 'weeks',
    week: 'weeks',
    weeks: 'weeks',
    M: 'months',
    month: 'months',
    months: 'months',
    q: 'quarters',
    quarter: 'quarters',
    quarters: 'quarters',
    y: 'years',
    year: 'years',
    years: 'years',
  };
  const unitOf = (u = 'milliseconds') => {
    const unit = UNITS[u] ?? UNITS[String(u).toLowerCase()];
    if (!unit) throw new Error(`unknown unit '${u}'`);
    return unit;
  };
  const singular = (u) => unitOf(u).replace(/s$/, '');

  install(String.prototype, {
    isEmpty() {
      return this.length === 0;
    },
    isNotEmpty() {
      return this.length > 0;
    },
    isNumeric() {
      return this.trim() !== '' && !Number.isNaN(Number(this));
    },
    isEmail() {
      return /^[\w.+-]+@[\w-]+(?:\.[\w-]+)+$/.test(this);
    },
    isUrl() {
      return /^https?:\/\/[^\s]+$/.test(this);
    },
    isDomain() {
      return DOMAIN.test(this);
    },
    extractEmail() {
      return EMAIL.exec(this)?.[1];
    },
    extractUrl() {
      return URL_RE.exec(this)?.[1];
    },
    extractDomain() {
      const s = String(this);
      const email = /^[\w.+-]+@([\w-]+(?:\.[\w-]+)+)$/.exec(s);
      if (email) return email[1];
      const url = /^(?:[a-z]+:\/\/)?([^/:?#\s]+)/i.exec(s);
      return url?.[1];
    },
    extractUrlPath() {
      const m = /^[a-z]+:\/\/[^/]+(\/[^?#]*)?/i.exec(this);
      return m ? m[1] || '/' : undefined;
    },
    toNumber() {
      const n = Number(this);
      if (this.trim() === '' || Number.isNaN(n)) throw new Error(`can't convert '${this}' to a number`);
      return n;
    },
    toBoolean() {
      const s = this.trim().toLowerCase();
      return !(s === '' || s === 'false' || s === '0' || s === 'no' || s === 'n' || s === 'off');
    },
    toDateTime(format) {
      return toDateTime(String(this), format);
    },
    toTitleCase() {
      return String(this).replace(/\w\S*/g, (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase());
    },
    toSentenceCase() {
      const s = String(this).toLowerCase();
      return s.replace(/(^\s*\w|[.!?]\s+\w)/g, (m) => m.toUpperCase());
    },
    toSnakeCase() {
      return words(this)
        .map((w) => w.toLowerCase())
        .join('_');
    },
    toCamelCase() {
      return words(this)
        .map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()))
        .join('');
    },
    toKebabCase() {
      return words(this)
        .map((w) => w.toLowerCase())
        .join('-');
    },
    removeTags() {
      return String(this).replace(/<[^>]*>/g, '');
    },
    removeMarkdown() {
      return String(this)
        .replace(/```[\s\S]*?```/g, '')
        .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/^#{1,6}\s*/gm, '')
        .replace(/(\*\*|__|\*|_|~~|`)/g, '')
        .replace(/^\s*>\s?/gm, '')
        .replace(/^\s*[-*+]\s+/gm, '');
    },
    replaceSpecialChars() {
      return String(this)
        .normalize('NFD')
        .replace(/[\u0300-\u036f]/g, '');
    },
    quote(mark = '"') {
      return `${mark}${String(this).replaceAll(mark, `\\${mark}`)}${mark}`;
    },
    urlEncode(entireString = false) {
      return entireString ? encodeURIComponent(this) : encodeURI(this);
    },
    urlDecode(entireString = false) {
      return entireString ? decodeURIComponent(this) : decodeURI(this);
    },
    base64Encode() {
      return globalThis.__base64Encode(String(this));
    },
    base64Decode() {
      return globalThis.__base64Decode(String(this));
    },
    hash(algorithm = 'md5') {
      const name = String(algorithm).toLowerCase();
      if (name === 'base64') return globalThis.__base64Encode(String(this));
      const digest = HASH_ALGORITHMS[name];
      if (!digest)
        throw new Error(
          `Unknown algorithm ${algorithm}. Available algorithms are: ${['base64', ...Object.keys(HASH_ALGORITHMS)].join(', ')}`,
        );
      return globalThis.__hostHash(digest, String(this));
    },
    parseJson() {
      return JSON.parse(this);
    },
    toJsonString() {
      return JSON.stringify(String(this));
    },
  });

  install(Number.prototype, {
    round(decimals = 0) {
      const f = 10 ** decimals;
      return Math.round(this * f) / f;
    },
    floor() {
      return Math.floor(this);
    },
    ceil() {
      return Math.ceil(this);
    },
    abs() {
      return Math.abs(this);
    },
    isEven() {
      return Number.isInteger(Number(this)) && this % 2 === 0;
    },
    isOdd() {
      return Number.isInteger(Number(this)) && Math.abs(this % 2) === 1;
    },
    isInteger() {
      return Number.isInteger(Number(this));
    },
    toBoolean() {
      return Number(this) !== 0;
    },
    format(locale = 'en-US', options = {}) {
      return new Intl.NumberFormat(locale, options).format(this);
    },
    toDateTime(format = 'ms') {
      const n = Number(this);
      if (format === 's') return DateTime.fromSeconds(n);
      if (format === 'excel') return DateTime.fromMillis(Math.round((n - 25569) * 86400000), { zone: 'UTC' });
      return DateTime.fromMillis(n);
    },
  });

  install(Boolean.prototype, {
    toNumber() {
      return this.valueOf() ? 1 : 0;
    },
    toInt() {
      return this.valueOf() ? 1 : 0;
    },
  });

  const numbers = (arr) =>
    arr.map((v) => {
      const n = typeof v === 'number' ? v : Number(v);
      if (Number.isNaN(n)) throw new Error('array holds a value that is not a number');
      return n;
    });
  const keyOf = (item, fields) =>
    fields.length === 0 ? JSON.stringify(item) : JSON.stringify(fields.map((f) => item?.[f]));

  install(Array.prototype, {
    isEmpty() {
      return this.length === 0;
    },
    isNotEmpty() {
      return this.length > 0;
    },
    first() {
      return this[0];
    },
    last() {
      return this[this.length - 1];
    },
    sum() {
      return numbers(this).reduce((a, b) => a + b, 0);
    },
    max() {
      return Math.max(...numbers(this));
    },
    min() {
      return Math.min(...numbers(this));
    },
    average() {
      if (this.length === 0) throw new Error("can't average an empty array");
      return this.sum() / this.length;
    },
    compact() {
      return this.filter(
        (v) => v !== null && v !== undefined && v !== '' && !(Number.isNaN(v) && typeof v === 'number'),
      );
    },
    unique(...fields) {
      const seen = new Set();
      return this.filter((v) => {
        const k = keyOf(v, fields);
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    },
    removeDuplicates(...fields) {
      return this.unique(...fields);
    },
    chunk(size) {
      if (!(size >= 1)) throw new Error('chunk size must be at least 1');
      const out = [];
      for (let i = 0; i < this.length; i += size) out.push(this.slice(i, i + size));
      return out;
    },
    pluck(...fields) {
      if (fields.length === 0) return this.slice();
      return this.map((v) => {
        if (fields.length === 1) return v?.[fields[0]];
        const out = {};
        for (const f of fields) out[f] = v?.[f];
        return out;
      });
    },
    randomItem() {
      return this[Math.floor(Math.random() * this.length)];
    },
    difference(other) {
      return this.filter((v) => !other.some((o) => deepEqual(v, o)));
    },
    intersection(other) {
      return this.filter((v) => other.some((o) => deepEqual(v, o))).unique();
    },
    union(other) {
      return [...this, ...other].unique();
    },
    append(...values) {
      return [...this, ...values];
    },
    merge(other) {
      const out = {};
      for (const v of [...this, ...(other ?? [])]) if (isPlainObject(v)) Object.assign(out, v);
      return out;
    },
    smartJoin(keyField, valueField) {
      const out = {};
      for (const v of this) if (v && typeof v === 'object') out[v[keyField]] = v[valueField];
      return out;
    },
    renameKeys(...pairs) {
      return this.map((v) => {
        if (!isPlainObject(v)) return v;
        const out = { ...v };
        for (let i = 0; i + 1 < pairs.length; i += 2) {
          if (pairs[i] in out) {
            out[pairs[i + 1]] = out[pairs[i]];
            delete out[pairs[i]];
          }
        }
        return out;
      });
    },
    toJsonString() {
      return JSON.stringify(this);
    },
  });

  const objectMethods = {
    isEmpty() {
      return Object.keys(this).length === 0;
    },
    isNotEmpty() {
      return Object.keys(this).length > 0;
    },
    hasField(name) {
      return Object.hasOwn(this, name);
    },
    removeField(name) {
      const out = { ...this };
      delete out[name];
      return out;
    },
    removeFieldsContaining(value) {
      const out = {};
      for (const [k, v] of Object.entries(this))
        if (!(typeof v === 'string' && v.includes(value))) out[k] = v;
      return out;
    },
    keepFieldsContaining(value) {
      const out = {};
      for (const [k, v] of Object.entries(this)) if (typeof v === 'string' && v.includes(value)) out[k] = v;
      return out;
    },
    compact() {
      const out = {};
      for (const [k, v] of Object.entries(this)) if (v !== null && v !== undefined && v !== '') out[k] = v;
      return out;
    },
    merge(other) {
      return { ...(other ?? {}), ...this };
    },
    keys() {
      return Object.keys(this);
    },
    values() {
      return Object.values(this);
    },
    toJsonString() {
      return JSON.stringify(this);
    },
    urlEncode() {
      return Object.entries(this)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
        .join('&');
    },
  };
  install(Object.prototype, objectMethods);

  // Dates: Luxon's DateTime (what $now is) gains n8n's forms; JS Dates convert to it.
  const dtProto = DateTime.prototype;
  const luxonPlus = dtProto.plus;
  const luxonMinus = dtProto.minus;
  const shift = (original) =>
    function (amount, unit) {
      if (typeof amount === 'number') return original.call(this, { [unitOf(unit)]: amount });
      return original.call(this, amount);
    };
  install(dtProto, {
    plus: shift(luxonPlus),
    minus: shift(luxonMinus),
    format(fmt) {
      return this.toFormat(fmt);
    },
    beginningOf(unit = 'week') {
      return this.startOf(singular(unit));
    },
    endOfMonth() {
      return this.endOf('month');
    },
    extract(part = 'week') {
      const p = singular(part);
      return p === 'week' ? this.weekNumber : this.get(p);
    },
    isWeekend() {
      return this.weekday >= 6;
    },
    isBetween(a, b) {
      const x = this.toMillis();
      const lo = toDateTime(a).toMillis();
      const hi = toDateTime(b).toMillis();
      return x > Math.min(lo, hi) && x < Math.max(lo, hi);
    },
    isInLast(n = 0, unit = 'minutes') {
      const now = DateTime.now();
      return this <= now && this >= now.minus({ [unitOf(unit)]: n });
    },
    isInNext(n = 0, unit = 'minutes') {
      const now = DateTime.now();
      return this >= now && this <= now.plus({ [unitOf(unit)]: n });
    },
    diffTo(other, unit = 'days') {
      const units = Array.isArray(unit) ? unit.map(unitOf) : unitOf(unit);
      const d = this.diff(toDateTime(other), units).toObject();
      return Array.isArray(unit) ? d : d[units];
    },
    diffToNow(unit = 'days') {
      return this.diffTo(DateTime.now(), unit);
    },
    toDateTime() {
      return this;
    },
  });
  install(Date.prototype, {
    toDateTime() {
      return DateTime.fromJSDate(this);
    },
    format(fmt) {
      return DateTime.fromJSDate(this).toFormat(fmt);
    },
    plus(amount, unit) {
      return DateTime.fromJSDate(this).plus(amount, unit).toJSDate();
    },
    minus(amount, unit) {
      return DateTime.fromJSDate(this).minus(amount, unit).toJSDate();
    },
  });
  globalThis.__Duration = Duration;
})();

export {};
