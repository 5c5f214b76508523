/**
 * Rewrites a JavaScript regular expression into RE2 syntax with the same meaning, or says it cannot
 * (null): backreferences, lookaround, the `v` flag, Unicode properties, `[]`/`[^]`, identity escapes of
 * letters and anything else whose meaning differs between the engines go to the JavaScript engine on a
 * worker thread instead. The pattern must already compile as a JavaScript RegExp (syntax errors are
 * the RegExp constructor's, in its words), so this only walks valid patterns.
 *
 * What differs and is rewritten: `.` and `\s` take JavaScript's sets (RE2's `.` stops only at `\n`, its
 * `\s` is ASCII), `\uXXXX`/`\xHH`/`\cX`/`\0` become `\x{…}`, named groups `(?P<name>…)`, and `y` anchors
 * at the start. What differs on some inputs only (line terminators other than `\n` under `m`,
 * surrogates, non-ASCII under `i`) is the caller's check (`re2Fits`).
 */

/** JavaScript's `\s` (WhiteSpace and LineTerminator), as the body of an RE2 class. */
const JS_SPACE =
  '\\t\\n\\x{b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';
const ANY = '[\\x{0}-\\x{10ffff}]';
/** RE2 refuses larger repeat counts. */
const MAX_REPEAT = 1000;

export interface Re2Translation {
  pattern: string;
  multiline: boolean;
  dotAll: boolean;
  ignoreCase: boolean;
}

class Untranslatable extends Error {}

const hex = (code: number) => `\\x{${code.toString(16)}}`;
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isHex = (s: string) => /^[0-9A-Fa-f]+$/.test(s);
const isPunct = (c: string) => /^[!-/:-@[-`{-~]$/.test(c);

export function jsToRe2(source: string, flags: string): Re2Translation | null {
  if (flags.includes('v') || (flags.includes('i') && flags.includes('u'))) return null;
  try {
    const body = new Walker(source, flags.includes('u'), flags.includes('s'), flags.includes('i')).pattern();
    return {
      pattern: flags.includes('y') ? `\\A(?:${body})` : body,
      multiline: flags.includes('m'),
      dotAll: flags.includes('s'),
      ignoreCase: flags.includes('i'),
    };
  } catch (err) {
    if (err instanceof Untranslatable) return null;
    throw err;
  }
}

class Walker {
  private i = 0;
  constructor(
    private readonly src: string,
    private readonly unicode: boolean,
    private readonly dotAll: boolean,
    /** Case folding differs outside ASCII (`/\u017f/i` does not match `s` in JavaScript, does in RE2). */
    private readonly ignoreCase: boolean,
  ) {}

  private code(code: number): string {
    if (this.ignoreCase && code > 0x7f) throw new Untranslatable();
    return hex(code);
  }

  pattern(): string {
    let out = '';
    while (this.i < this.src.length) out += this.term();
    return out;
  }

  private term(): string {
    const c = this.src[this.i++] as string;
    switch (c) {
      case '\\':
        return this.escape(false);
      case '[':
        return this.charClass();
      case '.':
        return this.dotAll ? ANY : JS_DOT;
      case '(':
        return this.group();
      case ')':
      case '|':
      case '^':
      case '$':
      case '*':
      case '+':
      case '?':
        return c;
      case '{':
        return this.brace();
      case ']':
      case '}':
        return `\\${c}`;
      default:
        return c;
    }
  }

  /** A `{n}`, `{n,}` or `{n,m}` quantifier, else (outside `u` mode) a literal brace. */
  private brace(): string {
    const m = /^(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i, this.i + 24));
    if (!m) {
      if (this.unicode) throw new Untranslatable();
      return '\\{';
    }
    const counts = [m[1], m[3]].filter((n) => n !== undefined && n !== '').map(Number);
    if (counts.some((n) => n > MAX_REPEAT)) throw new Untranslatable();
    this.i += m[0].length;
    return `{${m[0]}`;
  }

  private group(): string {
    if (this.src[this.i] !== '?') return '(';
    const next = this.src[this.i + 1];
    if (next === ':') {
      this.i += 2;
      return '(?:';
    }
    if (next === '<' && this.src[this.i + 2] !== '=' && this.src[this.i + 2] !== '!') {
      const m = /^<([A-Za-z_][A-Za-z0-9_]*)>/.exec(this.src.slice(this.i + 1, this.i + 260));
      if (!m) throw new Untranslatable();
      this.i += 1 + m[0].length;
      return `(?P<${m[1]}>`;
    }
    // Lookahead, lookbehind and modifier groups.
    throw new Untranslatable();
  }

  /** After a backslash; `inClass` changes `\b` (backspace) and forbids `\B`. */
  private escape(inClass: boolean): string {
    const c = this.src[this.i++];
    if (c === undefined) throw new Untranslatable();
    switch (c) {
      case 'd':
      case 'D':
      case 'w':
      case 'W':
        return `\\${c}`;
      case 'b':
        return inClass ? hex(8) : '\\b';
      case 'B':
        if (inClass) throw new Untranslatable();
        return '\\B';
      case 's':
        return inClass ? JS_SPACE : `[${JS_SPACE}]`;
      case 'S':
        if (inClass) throw new Untranslatable();
        return `[^${JS_SPACE}]`;
      case 't':
        return '\\t';
      case 'n':
        return '\\n';
      case 'r':
        return '\\r';
      case 'f':
        return '\\f';
      case 'v':
        return hex(11);
      case '0':
        if (isDigit(this.src[this.i])) throw new Untranslatable();
        return hex(0);
      case 'x': {
        const digits = this.src.slice(this.i, this.i + 2);
        if (digits.length !== 2 || !isHex(digits)) throw new Untranslatable();
        this.i += 2;
        return this.code(Number.parseInt(digits, 16));
      }
      case 'u':
        return this.unicodeEscape();
      case 'c': {
        const letter = this.src[this.i];
        if (letter === undefined || !/^[A-Za-z]$/.test(letter)) throw new Untranslatable();
        this.i += 1;
        return hex(letter.charCodeAt(0) % 32);
      }
      default:
        // Backreferences, `\k<name>`, `\p{…}`, and letters whose meaning differs (`\A`, `\z`, `\Q` are
        // RE2 syntax but literal letters in JavaScript).
        if (isPunct(c)) return `\\${c}`;
        throw new Untranslatable();
    }
  }

  private unicodeEscape(): string {
    if (this.src[this.i] === '{') {
      const end = this.src.indexOf('}', this.i);
      const digits = end < 0 ? '' : this.src.slice(this.i + 1, end);
      if (!this.unicode || !isHex(digits) || digits.length > 6) throw new Untranslatable();
      this.i = end + 1;
      return this.code(Number.parseInt(digits, 16));
    }
    const digits = this.src.slice(this.i, this.i + 4);
    if (digits.length !== 4 || !isHex(digits)) throw new Untranslatable();
    this.i += 4;
    const code = Number.parseInt(digits, 16);
    // Surrogate halves (and pairs written as two escapes) mean code units, not code points.
    if (code >= 0xd800 && code <= 0xdfff) throw new Untranslatable();
    return this.code(code);
  }

  /** `[...]` after its `[`: items re-emitted one by one, a `-` kept as a range only between two single characters. */
  private charClass(): string {
    // `[\s\S]`, `[\d\D]`, `[\w\W]`: the idiom for "any character" (and `[^\s\S]` for none).
    const pair = /^(\^?)\\([sdw])\\([sdwSDW])\]/i.exec(this.src.slice(this.i, this.i + 6));
    if (pair && pair[2] !== pair[3] && pair[2]?.toLowerCase() === pair[3]?.toLowerCase()) {
      this.i += pair[0].length;
      return pair[1] ? '[^\\x{0}-\\x{10ffff}]' : ANY;
    }
    let out = '[';
    if (this.src[this.i] === '^') {
      out += '^';
      this.i += 1;
    }
    // `[]` never matches and `[^]` matches anything in JavaScript; RE2 reads `]` there as a literal.
    if (this.src[this.i] === ']') throw new Untranslatable();
    let previousSingle = false;
    while (this.i < this.src.length && this.src[this.i] !== ']') {
      const c = this.src[this.i++] as string;
      if (c === '-' && previousSingle && this.src[this.i] !== ']' && this.i < this.src.length) {
        const next = this.classAtom();
        if (!next.single) throw new Untranslatable(); // `[a-\d]`: JavaScript reads a literal `-` there
        out += `-${next.text}`;
        previousSingle = false;
        continue;
      }
      this.i -= 1;
      const atom = this.classAtom();
      out += atom.text;
      previousSingle = atom.single;
    }
    if (this.src[this.i] !== ']') throw new Untranslatable();
    this.i += 1;
    return `${out}]`;
  }

  private classAtom(): { text: string; single: boolean } {
    const c = this.src[this.i++] as string;
    if (c === '\\') {
      const letter = this.src[this.i];
      const text = this.escape(true);
      return { text, single: !'dDwWs'.includes(letter ?? '') };
    }
    if (c === '[' || c === '^' || c === '-' || c === '&' || c === '~' || c === ':') {
      return { text: `\\${c}`, single: true };
    }
    return { text: c, single: true };
  }
}
