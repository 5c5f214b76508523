import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local AI upstream answering one path (Anthropic's `/v1/messages`, Ollama's `/api/chat`) from a queue
 * of replies, recording each request's body and headers; an unexpected request gets a 501 (the run fails).
 */
export interface UpstreamReply {
  status?: number;
  body: unknown;
}

export class FakeAiUpstream {
  readonly requests: Array<{ body: Record<string, unknown>; headers: Record<string, unknown> }> = [];
  private replies: UpstreamReply[] = [];
  private server: Server | null = null;
  base = '';

  constructor(private readonly path: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          // recorded as empty
        }
        this.requests.push({ body, headers: { ...req.headers } });
        const reply = this.replies.shift();
        if (!reply || req.url !== this.path) {
          res.writeHead(501, { 'content-type': 'application/json' }).end('{"error":"no reply queued"}');
          return;
        }
        const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' }).end(text);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  queue(...replies: UpstreamReply[]): void {
    this.replies.push(...replies);
  }

  reset(): void {
    this.replies = [];
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** Anthropic Messages API answers: text, and tool_use blocks. */
export function anthropicText(text: string): UpstreamReply {
  return {
    body: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 6 },
    },
  };
}

export function anthropicToolUse(calls: Array<{ id: string; name: string; input: unknown }>): UpstreamReply {
  return {
    body: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })),
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 6 },
    },
  };
}

/** Ollama `/api/chat` answers (`stream: false`): text, and tool calls with object arguments. */
export function ollamaText(content: string): UpstreamReply {
  return {
    body: {
      model: 'llama3.2',
      created_at: '2026-01-01T00:00:00Z',
      message: { role: 'assistant', content },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 20,
      eval_count: 7,
    },
  };
}

export function ollamaToolCalls(calls: Array<{ name: string; arguments: unknown }>): UpstreamReply {
  return {
    body: {
      model: 'llama3.2',
      created_at: '2026-01-01T00:00:00Z',
      message: {
        role: 'assistant',
        content: '',
        tool_calls: calls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })),
      },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 20,
      eval_count: 7,
    },
  };
}
