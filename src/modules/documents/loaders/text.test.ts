import { describe, expect, it } from 'vitest';
import { textDocument } from './text.js';

const title = (text: string) => textDocument(text, 'text/markdown').title;

describe('textDocument: the title guessed from Markdown', () => {
  it("takes the first ATX heading's text, without a closing run of #", () => {
    expect(title('intro line\n\n## Getting started ##\nbody')).toBe('Getting started');
    expect(title('   # Spaced   \t\nx')).toBe('Spaced');
    expect(title('# C# in depth\n')).toBe('C# in depth');
    expect(title('#Not a heading\nSecond')).toBe('#Not a heading');
    expect(title('plain\n    # indented code')).toBe('plain');
  });

  it('falls back to the first non-blank line, and null for no text', () => {
    expect(title('\n\n  first words  \nmore')).toBe('first words');
    expect(title('   \n ')).toBeNull();
  });

  it('reads a heading followed by a long run of spaces or of # in one pass', () => {
    // Each took seconds of backtracking in the single regex this replaced (an audit's probe).
    const spaces = `# a${' '.repeat(60_000)}x\n`;
    expect(title(spaces)).toBe('a…');
    expect(title(`# a${'#'.repeat(60_000)}b`)).toMatch(/^a#+/);
    expect(title(`#${' '.repeat(60_000)}`)).toBe('#');
  }, 5_000);
});
