import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local embeddings upstream speaking OpenAI's `POST /v1/embeddings` and Ollama's `POST /api/embed`:
 * each text's vector is its words hashed into 256 dimensions (texts sharing words are near), so a
 * vector store's nearest documents are predictable. Records each request (body and headers).
 */
export class FakeEmbeddings {
  readonly requests: Array<{
    path: string;
    body: Record<string, unknown>;
    headers: Record<string, unknown>;
  }> = [];
  private server: Server | null = null;
  /** Answers with this status and body instead, when set. */
  failWith: { status: number; body: string } | null = null;
  base = '';

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
        this.requests.push({ path: req.url ?? '', body, headers: { ...req.headers } });
        if (this.failWith) {
          res.writeHead(this.failWith.status, { 'content-type': 'application/json' }).end(this.failWith.body);
          return;
        }
        const input = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input ?? '')];
        const vectors = input.map(vectorOf);
        if (req.url === '/v1/embeddings') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              object: 'list',
              data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
              model: body.model,
              usage: { prompt_tokens: input.length, total_tokens: input.length },
            }),
          );
        } else if (req.url === '/api/embed') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ model: body.model, embeddings: vectors, prompt_eval_count: input.length }));
        } else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.requests.length = 0;
    this.failWith = null;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** Words of four letters or more (lower case) hashed into 256 counts. */
export function vectorOf(text: string): number[] {
  const v = new Array<number>(256).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]{4,}/g) ?? []) {
    const i = createHash('sha256').update(word).digest()[0] ?? 0;
    v[i] = (v[i] ?? 0) + 1;
  }
  return v;
}
