import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OpenAI upstream speaking `/v1/chat/completions`: it answers from a queue of replies (as n8n's
 * own tests queue nock mocks) and records each request body; an empty queue answers 501, so a request
 * the test did not expect fails the run. Streaming requests (`stream: true`) get SSE chunks.
 */
export interface FakeReply {
  status?: number;
  body: unknown;
}

export class FakeOpenAi {
  readonly requests: Array<Record<string, unknown>> = [];
  private replies: FakeReply[] = [];
  private server: Server | null = null;
  base = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => {
        raw += c;
      });
      req.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          // recorded as empty
        }
        this.requests.push({ ...body, __path: req.url, __auth: req.headers.authorization ?? null });
        const reply = this.replies.shift();
        if (!reply || req.url !== '/v1/chat/completions') {
          res
            .writeHead(501, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'no reply queued' } }));
          return;
        }
        if (body.stream === true && (reply.status ?? 200) === 200) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const message = (reply.body as { choices: Array<{ message: { content: string | null } }> })
            .choices[0]?.message;
          res.write(
            `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: message?.content ?? '' } }] })}\n\n`,
          );
          res.end('data: [DONE]\n\n');
          return;
        }
        res
          .writeHead(reply.status ?? 200, { 'content-type': 'application/json' })
          .end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  queue(...replies: FakeReply[]): void {
    this.replies.push(...replies);
  }

  reset(): void {
    this.replies = [];
    this.requests.length = 0;
  }

  pending(): number {
    return this.replies.length;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** n8n's test helpers' shapes: a plain answer, and an answer that calls tools. */
export function completion(content: string): FakeReply {
  return {
    body: {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1700000000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  };
}

export function toolCalls(calls: Array<{ id: string; name: string; arguments: string }>): FakeReply {
  return {
    body: {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1700000000,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  };
}

export const badRequest: FakeReply = {
  status: 400,
  body: { error: { message: 'Bad request', type: 'invalid_request_error', code: null } },
};
