/**
 * Moment.js format tokens (Date & Time v1's `toFormat` and `fromFormat`) as Luxon tokens. Longest
 * token first; `[literal]` becomes Luxon's quoted literal. Tokens with no Luxon twin are kept as text.
 */
const TOKENS: Array<[string, string]> = [
  ['YYYY', 'yyyy'],
  ['YY', 'yy'],
  ['Q', 'q'],
  ['MMMM', 'MMMM'],
  ['MMM', 'MMM'],
  ['MM', 'MM'],
  ['M', 'M'],
  ['DDDD', 'ooo'],
  ['DDD', 'o'],
  ['DD', 'dd'],
  ['Do', 'd'],
  ['D', 'd'],
  ['dddd', 'cccc'],
  ['ddd', 'ccc'],
  ['d', 'c'],
  ['E', 'c'],
  ['WW', 'WW'],
  ['W', 'W'],
  ['GGGG', 'kkkk'],
  ['HH', 'HH'],
  ['H', 'H'],
  ['hh', 'hh'],
  ['h', 'h'],
  ['kk', 'HH'],
  ['mm', 'mm'],
  ['m', 'm'],
  ['ss', 'ss'],
  ['s', 's'],
  ['SSS', 'SSS'],
  ['SS', 'SSS'],
  ['S', 'S'],
  ['A', 'a'],
  ['a', 'a'],
  ['ZZ', 'ZZZ'],
  ['Z', 'ZZ'],
  ['X', 'X'],
  ['x', 'x'],
];

export function momentToLuxon(format: string): string {
  let out = '';
  let i = 0;
  while (i < format.length) {
    const ch = format[i] as string;
    if (ch === '[') {
      const end = format.indexOf(']', i);
      if (end === -1) {
        out += quote(format.slice(i));
        break;
      }
      out += quote(format.slice(i + 1, end));
      i = end + 1;
      continue;
    }
    const hit = TOKENS.find(([m]) => format.startsWith(m, i));
    if (hit) {
      out += hit[1];
      i += hit[0].length;
      continue;
    }
    out += /[A-Za-z]/.test(ch) ? quote(ch) : ch;
    i++;
  }
  return out;
}

const quote = (text: string) => (text === '' ? '' : `'${text.replaceAll("'", "''")}'`);
