import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local model provider (Azure OpenAI, Mistral, Groq, OpenRouter, Gemini…): answers any path from a
 * queue of replies and records each request's method, URL (path and query), headers and JSON body; an
 * empty queue answers 501, so a request the test did not expect fails the run.
 */
export interface ProviderReply {
  status?: number;
  /** JSON unless a string or bytes (sent as they are, under `contentType`). */
  body: unknown;
  contentType?: string;
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  /** The body's bytes as sent (a multipart upload). */
  raw: Buffer;
}

export class FakeProvider {
  readonly requests: RecordedRequest[] = [];
  private replies: ProviderReply[] = [];
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        } catch {
          // recorded as empty
        }
        this.requests.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: { ...req.headers },
          body,
          raw,
        });
        const reply = this.replies.shift();
        if (!reply) {
          res
            .writeHead(501, { 'content-type': 'application/json' })
            .end('{"error":{"message":"no reply queued"}}');
          return;
        }
        const text =
          typeof reply.body === 'string' || Buffer.isBuffer(reply.body)
            ? reply.body
            : JSON.stringify(reply.body);
        res
          .writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' })
          .end(text);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  queue(...replies: ProviderReply[]): void {
    this.replies.push(...replies);
  }

  pending(): number {
    return this.replies.length;
  }

  reset(): void {
    this.replies = [];
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** Gemini generateContent answers: text, and functionCall parts. */
export function geminiText(text: string): ProviderReply {
  return {
    body: {
      candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 4, totalTokenCount: 15 },
      modelVersion: 'gemini-2.5-flash',
    },
  };
}

export function geminiCalls(calls: Array<{ name: string; args: unknown }>): ProviderReply {
  return {
    body: {
      candidates: [
        {
          content: {
            role: 'model',
            parts: calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })),
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 11, candidatesTokenCount: 4, totalTokenCount: 15 },
      modelVersion: 'gemini-2.5-flash',
    },
  };
}
