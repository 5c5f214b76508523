import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError } from '../types.js';
import {
  joinUrl,
  LineSplitter,
  MAX_LINE_BYTES,
  SseParser,
  UpstreamAgents,
  UpstreamCall,
} from './http-stream.js';

describe('LineSplitter', () => {
  it('splits at LF across chunks without breaking multi-byte characters', () => {
    const splitter = new LineSplitter(100);
    const bytes = Buffer.from('{"a":"é"}\n{"b":"日本"}\ntail');
    const out: string[] = [];
    // One byte at a time: every UTF-8 sequence is cut somewhere.
    for (let i = 0; i < bytes.length; i++) expect(splitter.push(bytes.subarray(i, i + 1), out)).toBe(true);
    expect(out).toEqual(['{"a":"é"}', '{"b":"日本"}']);
    expect(splitter.flush()).toBe('tail');
    expect(splitter.flush()).toBeNull();
  });

  it('refuses a line over the limit, within one chunk or across chunks', () => {
    expect(new LineSplitter(4).push(Buffer.from('12345\n'), [])).toBe(false);
    const split = new LineSplitter(4);
    expect(split.push(Buffer.from('123'), [])).toBe(true);
    expect(split.push(Buffer.from('45'), [])).toBe(false);
    const exact = new LineSplitter(4);
    const out: string[] = [];
    expect(exact.push(Buffer.from('1234\n'), out)).toBe(true);
    expect(out).toEqual(['1234']);
  });
});

describe('SseParser', () => {
  it('joins data lines, names events, skips comments and handles CRLF', () => {
    const parser = new SseParser();
    const lines = [
      ': keep-alive',
      'data: {"a":1}',
      '',
      'event: error',
      'data: line1\r',
      'data:line2\r',
      '\r',
      'id: 3',
      '',
    ];
    const events = lines.map((line) => parser.push(line)).filter((e) => e !== null);
    expect(events).toEqual([
      { event: undefined, data: '{"a":1}' },
      { event: 'error', data: 'line1\nline2' },
    ]);
    parser.push('data: [DONE]');
    expect(parser.end()).toEqual({ event: undefined, data: '[DONE]' });
  });
});

describe('joinUrl', () => {
  it('joins bases with or without a trailing slash or a path prefix', () => {
    expect(joinUrl('http://h:11434', '/api/chat').href).toBe('http://h:11434/api/chat');
    expect(joinUrl('https://api.openai.com/v1/', '/embeddings').href).toBe(
      'https://api.openai.com/v1/embeddings',
    );
    expect(joinUrl('https://proxy/ollama', '/api/embed').href).toBe('https://proxy/ollama/api/embed');
  });
});

describe('UpstreamCall', () => {
  let server: Server;
  let base: string;
  const agents = new UpstreamAgents();

  beforeAll(async () => {
    server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      if (req.url === '/long') {
        // A line that never ends, sent in 64 KiB pieces: the reader must stop at 1 MiB.
        const piece = 'x'.repeat(64 * 1024);
        let sent = 0;
        const pump = (): void => {
          while (sent < 2 * MAX_LINE_BYTES && !res.destroyed) {
            sent += piece.length;
            if (!res.write(piece)) return void res.once('drain', pump);
          }
          res.end('\n');
        };
        pump();
      } else if (req.url === '/pieces') {
        // A whole body in three reads.
        res.write('{"a":');
        setImmediate(() => {
          res.write('1,"b"');
          setImmediate(() => res.end(':2}'));
        });
      } else if (req.url === '/cut') {
        // Half of a declared length, then the connection goes.
        res.socket?.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"a":', () => res.socket?.destroy());
      } else if (req.url === '/stall') res.write('{"a":');
      else res.end('{"a":1}\n{"b":2}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    agents.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const open = (path: string, timeoutMs = 2000): Promise<UpstreamCall> =>
    UpstreamCall.open(
      {
        url: joinUrl(base, path),
        method: 'GET',
        headers: {},
        timeoutMs,
        signal: new AbortController().signal,
        label: 'Test',
      },
      agents,
    );

  it('yields every line, the unterminated last one included', async () => {
    const call = await open('/short');
    const lines: string[] = [];
    for await (const line of call.lines()) lines.push(line);
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('throws an UpstreamError on a line over 1 MiB', async () => {
    const call = await open('/long');
    let error: unknown;
    try {
      for await (const _ of call.lines()) {
        // no complete line is expected
      }
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toContain(`over ${MAX_LINE_BYTES} bytes`);
  });

  it('reads a whole body over several reads', async () => {
    const call = await open('/pieces');
    expect((await call.bytes()).toString()).toBe('{"a":1,"b":2}');
  });

  it('streams reads in order over several reads, and refuses a stream cut short or stalled', async () => {
    const pieces: string[] = [];
    for await (const chunk of (await open('/pieces')).chunks()) pieces.push(chunk.toString());
    expect(pieces.join('')).toBe('{"a":1,"b":2}');
    expect(pieces.length).toBeGreaterThan(1);
    const drain = async (call: UpstreamCall) => {
      for await (const _ of call.chunks()) {
        // read to the end
      }
    };
    await expect(drain(await open('/cut'))).rejects.toThrow(/closed the connection before the end/);
    await expect(drain(await open('/stall', 300))).rejects.toThrow(/sent nothing for 300 ms/);
    const lines = async (call: UpstreamCall) => {
      for await (const _ of call.lines()) {
        // read to the end
      }
    };
    await expect(lines(await open('/cut'))).rejects.toThrow(/closed the connection before the end/);
  });

  it('holds the upstream while a read is held, and ends it when the reader stops unreleased', async () => {
    const call = await open('/long');
    let held = 0;
    for await (const _ of call.chunks()) {
      held++;
      // While the reader holds its read, at most one more arrives, then the response is paused.
      for (let turn = 0; turn < 1000 && !call.response.isPaused(); turn++)
        await new Promise((resolve) => setImmediate(resolve));
      expect(call.response.isPaused()).toBe(true);
      if (held === 3) break;
    }
    // Stopped before the end without release(): the request is ended, not left open.
    expect(call.response.destroyed).toBe(true);
  });

  it('refuses a whole body over its bound, a body cut short and one that stalls', async () => {
    await expect((await open('/long')).bytes(100_000)).rejects.toThrow(/response is over 100000 bytes/);
    await expect((await open('/cut')).bytes()).rejects.toThrow(/closed the connection before the end/);
    const stalled = await open('/stall', 300);
    await expect(stalled.bytes()).rejects.toThrow(/sent nothing for 300 ms/);
  });
});
