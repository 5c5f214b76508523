import { afterEach, describe, expect, it } from 'vitest';
import { CpuPool } from '../../../../../core/cpu/index.js';
import { NodeOperationError } from '../../../engine/node-type.js';
import { splitDocuments } from '../documents.js';
import { splitTokens } from './token.js';
import { hasRepeatRun, tokenWindows } from './token-windows.js';

const windows = (text: string, chunkSize: number, chunkOverlap = 0) =>
  tokenWindows({ text, chunkSize, chunkOverlap, maxChunks: 20_000 });

let pool: CpuPool | null = null;
afterEach(async () => {
  await pool?.close();
  pool = null;
});

describe('Token Splitter windows (cl100k_base, as n8n)', () => {
  it('cuts on real cl100k_base tokens: a word with its leading space, punctuation apart', async () => {
    // cl100k_base: "Hello", " world", ",", " this", " is", " a", " test".
    expect(await windows('Hello world, this is a test', 3)).toEqual(['Hello world,', ' this is a', ' test']);
    expect(await windows('Short text', 10)).toEqual(['Short text']);
    expect(await windows('', 10)).toEqual([]);
  });

  it('starts windows chunkSize - chunkOverlap tokens apart and stops at the window that reaches the end', async () => {
    expect(await windows('One two three four five six', 2, 1)).toEqual([
      'One two',
      ' two three',
      ' three four',
      ' four five',
      ' five six',
    ]);
    await expect(windows('One two', 2, 2)).rejects.toThrow('Cannot have chunkOverlap >= chunkSize');
  });

  it('counts a long common word as the one token it is (an estimate by length counted two)', async () => {
    const text = ' mother daughter'.repeat(1000);
    const chunks = await windows(text, 1000);
    expect(chunks).toEqual([' mother daughter'.repeat(500), ' mother daughter'.repeat(500)]);
  });

  it('reads special tokens as tokens (n8n allows them all)', async () => {
    expect(await windows('x<|endoftext|>y', 1)).toEqual(['x', '<|endoftext|>', 'y']);
  });

  it("cuts a text with a character repeated 1,000 times by characters, 4 a token (n8n's rule)", async () => {
    expect(hasRepeatRun(`${'a'.repeat(999)}b`, 1000)).toBe(false);
    expect(hasRepeatRun(`b${'😀'.repeat(1000)}`, 1000)).toBe(true);
    const text = 'a'.repeat(1000);
    const chunks = await windows(text, 100, 10);
    // 400-character windows starting 360 apart: 0, 360, 720.
    expect(chunks.map((c) => c.length)).toEqual([400, 400, 280]);
  });

  it('counts a piece no text has (5,000 letters in a row) a token per 4 characters, the text around it exactly', async () => {
    let letters = '';
    for (let i = 0; i < 5000; i++) letters += String.fromCharCode(97 + ((i * 7 + (i >> 3)) % 26));
    const text = `Hello world ${letters} this is a test`;
    const chunks = await windows(text, 1000);
    expect(chunks.join('')).toBe(text);
    // "Hello", " world", then " " + letters as one piece of 5,001 characters: 1,251 slices.
    expect(chunks).toHaveLength(2);
    expect(chunks[0]).toBe(`Hello world${text.slice(11, 11 + 998 * 4)}`);
    expect(chunks[1]?.endsWith(' this is a test')).toBe(true);
  });

  it('decodes a character cut between two tokens as n8n does (the replacement character)', async () => {
    const chunks = await windows('日本語のテキスト', 1);
    expect(chunks.join('').replaceAll('\uFFFD', '').length).toBeLessThan('日本語のテキスト'.length);
    expect(await windows('日本語のテキスト', 100)).toEqual(['日本語のテキスト']);
  });

  it('fails past the chunk limit', async () => {
    await expect(
      tokenWindows({ text: ' word'.repeat(50), chunkSize: 1, chunkOverlap: 0, maxChunks: 10 }),
    ).rejects.toThrow('more than 10 chunks');
  });
});

describe('Token Splitter in the CPU pool', () => {
  it('gives the same windows as inline, as the account whose run it is', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 256, maxQueue: 10 });
    const text = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
    const o = { chunkSize: 50, chunkOverlap: 10 };
    const inline = await splitTokens(text, o, {});
    expect(inline.length).toBeGreaterThan(10);
    expect(await splitTokens(text, o, { cpu: { pool, timeoutMs: 30_000 }, tenant: 'acct_a' })).toEqual(
      inline,
    );
  });

  it("fails the node, not the process, when the worker's deadline passes", async () => {
    pool = new CpuPool({ workers: 1, heapMb: 256, maxQueue: 10 });
    // Loading the vocabulary alone takes longer than 20 ms.
    const error = await splitTokens(
      'some text',
      { chunkSize: 5, chunkOverlap: 0 },
      { cpu: { pool, timeoutMs: 20 } },
    ).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(NodeOperationError);
    expect((error as Error).message).toMatch(
      /Splitting the text into tokens stopped: it took longer than 20 ms/,
    );
    expect(
      await splitTokens('one two', { chunkSize: 5, chunkOverlap: 0 }, { cpu: { pool, timeoutMs: 30_000 } }),
    ).toEqual(['one two']);
  });

  it('names a chunk setting the splitter refuses', async () => {
    pool = new CpuPool({ workers: 1, heapMb: 256, maxQueue: 10 });
    await expect(
      splitTokens('one two', { chunkSize: 5, chunkOverlap: 5 }, { cpu: { pool, timeoutMs: 30_000 } }),
    ).rejects.toThrow('Cannot have chunkOverlap >= chunkSize');
  });
});

describe('splitDocuments', () => {
  it('gives each chunk the lines it spans, counted once over the text', async () => {
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i + 1} of the text`);
    const text = lines.join('\n');
    const docs = await splitDocuments([{ pageContent: text, metadata: { source: 'x' } }], {
      kind: 'textSplitter',
      split: (t) => windows(t, 20, 5),
    });
    expect(docs.length).toBeGreaterThan(20);
    let searchFrom = 0;
    for (const doc of docs) {
      const at = text.indexOf(doc.pageContent, searchFrom);
      searchFrom = at + 1;
      const from = text.slice(0, at).split('\n').length;
      const to = from + doc.pageContent.split('\n').length - 1;
      expect(doc.metadata).toEqual({ source: 'x', loc: { lines: { from, to } } });
    }
  });
});
