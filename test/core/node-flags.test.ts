import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// `npm start`, the `platform` bin and the benchmark must run the server with the same Node flags
// (young-generation sizing, docs/decisions.md); the bench reads them from the start script.
const flagsOf = (text: string, pattern: RegExp) => pattern.exec(text)?.[1]?.trim().split(' ') ?? [];

describe('Node flags of the server process', () => {
  it('the start script and the bin agree and size the young generation', () => {
    const start = JSON.parse(readFileSync('package.json', 'utf8')).scripts.start as string;
    const shebang = readFileSync('src/main.ts', 'utf8').split('\n')[0] ?? '';
    const fromStart = flagsOf(start, /node ((?:--\S+ )*)dist\/main\.js/);
    const fromBin = flagsOf(shebang, /^#!\/usr\/bin\/env -S node ((?:--\S+ ?)*)$/);
    expect(fromStart).toContain('--min-semi-space-size=16');
    expect(fromBin).toEqual(fromStart);
  });
});
