import { RE2JS } from 're2js';

/**
 * The Local File Trigger's `ignored` option: n8n hands it to chokidar, which tests the whole path with
 * anymatch globs (`**`, `*`, `?`, `[…]`, `{a,b}`, a leading `!` negating). This is that glob subset,
 * compiled once to a regular expression over the path and run by the linear-time engine (re2js): V8's
 * backtracking one took 31 s for a glob of seven `*a` and a `b` over a 60-character name, on the server's loop.
 */

const MAX_PATTERN_LENGTH = 500;
/** Wildcards (`*`, `**`) and brace groups a pattern may hold: each is a state per path character. */
export const MAX_WILDCARDS = 16;
const MAX_BRACES = 10;

function globSource(glob: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i] as string;
    if (ch === '*') {
      if (glob[i + 1] === '*') {
        // `**/` matches any number of folders (none included); a trailing `**` anything.
        const slash = glob[i + 2] === '/';
        out += slash ? '(?:[^/]*/)*' : '.*';
        i += slash ? 2 : 1;
      } else out += '[^/]*';
    } else if (ch === '?') out += '[^/]';
    else if (ch === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) out += '\\[';
      else {
        const body = glob.slice(i + 1, end).replace(/\\/g, '\\\\');
        out += `[${body.startsWith('!') ? `^${body.slice(1)}` : body}]`;
        i = end;
      }
    } else if (ch === '{') {
      braces++;
      out += '(?:';
    } else if (ch === '}' && braces > 0) {
      braces--;
      out += ')';
    } else if (ch === ',' && braces > 0) out += '|';
    else out += ch.replace(/[.+^$()|\\/]/g, '\\$&');
  }
  return out + ')'.repeat(braces);
}

export interface IgnorePattern {
  /** The pattern as written (scans of one folder with the same pattern are shared). */
  readonly source: string;
  /** Whether `fullPath` is ignored (`isDir`: a negated pattern never ignores a folder, else nothing inside would be seen). */
  ignores(fullPath: string, isDir: boolean): boolean;
}

/** The pattern, or an error message for a pattern that cannot be used. */
export function ignorePatternOf(pattern: string): IgnorePattern | string {
  if (pattern.length > MAX_PATTERN_LENGTH) return `the pattern is over ${MAX_PATTERN_LENGTH} characters`;
  const negated = pattern.startsWith('!');
  // Repeated `**/` adds nothing but states.
  const glob = (negated ? pattern.slice(1) : pattern).replace(/(?:\*\*\/)+/g, '**/');
  if ((glob.match(/\*+/g)?.length ?? 0) > MAX_WILDCARDS)
    return `the pattern holds more than ${MAX_WILDCARDS} wildcards (*, **)`;
  if ((glob.match(/\{/g)?.length ?? 0) > MAX_BRACES)
    return `the pattern holds more than ${MAX_BRACES} {…} groups`;
  let re: RE2JS;
  try {
    re = RE2JS.compile(`^${globSource(glob)}$`);
  } catch {
    return `'${pattern}' is not a pattern this trigger can read`;
  }
  return {
    source: pattern,
    ignores(fullPath, isDir) {
      if (negated) return !isDir && !re.test(fullPath);
      return re.test(fullPath);
    },
  };
}
