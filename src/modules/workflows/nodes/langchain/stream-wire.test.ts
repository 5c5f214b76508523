import { describe, expect, it } from 'vitest';
import type { OutboundResponse } from '../../../../core/http/outbound.js';
import { type LineReader, streamedEvents } from './stream-wire.js';

/** A reader that records its lines and passes each `text:` line on as the model's text. */
function recorder(): LineReader & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    line(line, text) {
      lines.push(line);
      if (line.startsWith('text:')) text(line.slice(5));
    },
    seen: () => true,
    end: () => ({ calls: [], doneReason: 'stop', usage: null }),
  };
}

async function read(chunks: Buffer[], reader: LineReader): Promise<string[]> {
  const events = await streamedEvents(
    async (onData) => {
      for (const chunk of chunks) onData(chunk);
      return { status: 200, headers: {}, body: '' } as OutboundResponse;
    },
    reader,
    async function* () {},
  );
  const texts: string[] = [];
  for await (const event of events) if (event.type === 'delta' && event.content) texts.push(event.content);
  return texts;
}

describe('streamed answers split into lines', () => {
  it('joins a line sent in many pieces, and splits many lines sent in one piece', async () => {
    const long = 'x'.repeat(300_000);
    const pieces: Buffer[] = [];
    for (let i = 0; i < long.length; i += 1_000) pieces.push(Buffer.from(long.slice(i, i + 1_000)));
    const reader = recorder();
    const texts = await read(
      [Buffer.from('text:a\r\ntext:'), ...pieces, Buffer.from('\ntext:b\ntext:c\n\ntext:'), Buffer.from('d')],
      reader,
    );
    expect(reader.lines.map((l) => l.length)).toEqual([6, 5 + long.length, 6, 6, 0, 6]);
    expect(texts).toEqual(['a', long, 'b', 'c', 'd']);
  });

  it('keeps a multi-byte character cut between two pieces', async () => {
    const bytes = Buffer.from('text:é\n');
    const reader = recorder();
    const texts = await read([bytes.subarray(0, 6), bytes.subarray(6)], reader);
    expect(texts).toEqual(['é']);
  });
});
