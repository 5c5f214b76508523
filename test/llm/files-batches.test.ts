import { request as httpRequest } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { type LlmTestbed, startLlmTestbed } from './support.js';

const dialects = await testDialects();

/** What a result line's body holds, of the three shapes read here. */
interface LineBody {
  choices: Array<{ message: { content: string } }>;
  data: Array<{ embedding: number[] }>;
  error: { message: string };
}

const jsonl = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
const chatLine = (id: string, model: string, text: string) => ({
  custom_id: id,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model, messages: [{ role: 'user', content: text }], max_tokens: 20 },
});

/**
 * Issue 32: OpenAI's /v1/files and /v1/batches through the official `openai` client. Batches run on
 * the job queue against the fake upstreams (which record what they received); per account.
 */
describe.each(dialects)('OpenAI files and batches on %s', (dialect) => {
  let bed: LlmTestbed;
  let client: OpenAI;
  let stranger: OpenAI;

  const upload = async (text: string, purpose: 'batch' | 'user_data' = 'batch') =>
    client.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
  const settled = (id: string) =>
    until(async () => {
      const batch = await client.batches.retrieve(id);
      return ['completed', 'failed', 'cancelled'].includes(batch.status) && batch;
    }, `batch ${id} to end`);
  const linesOf = async (fileId: string | null | undefined) =>
    fileId
      ? (await (await client.files.content(fileId)).text())
          .trim()
          .split('\n')
          .map(
            (l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; body: LineBody } },
          )
      : [];

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
    stranger = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: await otherAccountKey(bed.p), maxRetries: 0 });
  });
  afterAll(() => bed?.close());

  it('files: upload, list, retrieve, content, delete; another account sees a 404; an unknown purpose is a 400', async () => {
    const file = await client.files.create({
      file: await toFile(Buffer.from('{"note": "kept"}\n'), 'notes.jsonl'),
      purpose: 'user_data',
    });
    expect(file).toMatchObject({ object: 'file', purpose: 'user_data', filename: 'notes.jsonl', bytes: 17 });
    const listed = await client.files.list({ purpose: 'user_data' });
    expect(listed.data.map((f) => f.id)).toContain(file.id);
    expect((await client.files.retrieve(file.id)).id).toBe(file.id);
    expect(await (await client.files.content(file.id)).text()).toBe('{"note": "kept"}\n');
    expect((await failure(stranger.files.retrieve(file.id)))?.status).toBe(404);
    expect((await failure(stranger.files.content(file.id)))?.status).toBe(404);
    expect((await stranger.files.list()).data.map((f) => f.id)).not.toContain(file.id);
    const wrong = await failure(
      client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'fine-tune' }),
    );
    expect(wrong?.status).toBe(400);
    expect(wrong?.message).toMatch(/body\.purpose/);
    expect(await client.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
    expect((await failure(client.files.retrieve(file.id)))?.status).toBe(404);
  });

  it('a 1 GB upload is refused by its Content-Length before its body is read', async () => {
    const { port } = new URL(bed.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/files',
          headers: {
            authorization: `Bearer ${bed.p.adminKey}`,
            'content-type': 'multipart/form-data; boundary=xyz',
            'content-length': String(1024 ** 3),
          },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            body += c;
          });
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body });
          });
        },
      );
      req.on('error', reject);
      req.write('--xyz\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n');
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error).toMatchObject({ type: 'invalid_request_error' });
  });

  it('a batch of chat lines runs on the queue against both upstreams; results and errors are JSONL files', async () => {
    const input = await upload(
      jsonl([
        chatLine('a', 'gpt-4o-mini', 'first question'),
        chatLine('b', 'llama3.2', 'second question'),
        chatLine('c', 'no-such-model', 'third question'),
      ]),
    );
    const created = await client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { job: 'nightly' },
    });
    expect(created).toMatchObject({
      object: 'batch',
      request_counts: { total: 3 },
      metadata: { job: 'nightly' },
    });
    const done = await settled(created.id);
    expect(done).toMatchObject({
      status: 'completed',
      request_counts: { total: 3, completed: 2, failed: 1 },
    });
    const output = await linesOf(done.output_file_id);
    const byId = Object.fromEntries(output.map((l) => [l.custom_id, l.response]));
    expect(byId.a?.status_code).toBe(200);
    expect(byId.a?.body.choices[0]?.message.content).toBe('Echo: first question');
    expect(byId.b?.body.choices[0]?.message.content).toBe('Echo: second question');
    // Each line reached its upstream as the same request on its own would.
    expect(bed.openai.requests.some((r) => JSON.stringify(r.body).includes('first question'))).toBe(true);
    expect(bed.ollama.requests.some((r) => JSON.stringify(r.body).includes('second question'))).toBe(true);
    // Each line is a call of the request log, under the batch's endpoint.
    await bed.p.ctx.apis.llm?.log.flush();
    const logged = await bed.p.ctx.db
      .selectFrom('llm_requests')
      .select('model')
      .where('endpoint', '=', 'batch.chat.completions')
      .execute();
    expect(logged.map((r) => r.model).sort()).toEqual(['gpt-4o-mini', 'llama3.2']);
    const errors = await linesOf(done.error_file_id);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ custom_id: 'c', response: { status_code: 404 } });
    expect(errors[0]?.response.body.error.message).toMatch(/no-such-model/);
    const newest = (await client.batches.list()).data.map((b) => b.id);
    expect(newest).toContain(created.id);
    const oldest = (await client.get('/batches', { query: { order: 'asc' } })) as {
      data: Array<{ id: string }>;
    };
    expect(oldest.data.map((b) => b.id)).toEqual([...newest].reverse());
    expect((await failure(stranger.batches.retrieve(created.id)))?.status).toBe(404);
    expect((await failure(stranger.files.content(done.output_file_id ?? '')))?.status).toBe(404);
  });

  it("a line's body gets the body parser's checks, as the same request alone: nesting, NUL, __proto__", async () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const nested = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { type: 'function', function: { name: 'f', parameters: { type: 'object', properties: deep } } },
      ],
    };
    const nul = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a\u0000b' }] };
    const alone = async (body: unknown) => {
      const res = await fetch(`${bed.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      return ((await res.json()) as { error: { message: string } }).error.message;
    };
    const line = (id: string, body: unknown) => ({
      custom_id: id,
      method: 'POST',
      url: '/v1/chat/completions',
      body,
    });
    const proto =
      '{"custom_id":"proto","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}],"metadata":{"__proto__":{"admin":"yes"}}}}';
    const before = bed.openai.requests.length;
    const input = await upload(`${jsonl([line('deep', nested), line('nul', nul)])}${proto}\n`);
    const created = await client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await settled(created.id);
    expect(done.request_counts).toMatchObject({ total: 3, completed: 0, failed: 3 });
    const byId = Object.fromEntries(
      (await linesOf(done.error_file_id)).map((l) => [l.custom_id, l.response]),
    );
    expect(byId.deep?.status_code).toBe(400);
    expect(byId.deep?.body.error.message).toBe(await alone(nested));
    expect(byId.nul?.status_code).toBe(400);
    expect(byId.nul?.body.error.message).toBe(await alone(nul));
    expect(byId.proto?.status_code).toBe(400);
    expect(byId.proto?.body.error.message).toMatch(/prototype/);
    expect(bed.openai.requests.length).toBe(before);
  });

  it('a batch of embeddings lines', async () => {
    const input = await upload(
      jsonl([
        {
          custom_id: 'e1',
          method: 'POST',
          url: '/v1/embeddings',
          body: { model: 'text-embedding-3-small', input: 'one' },
        },
        {
          custom_id: 'e2',
          method: 'POST',
          url: '/v1/embeddings',
          body: { model: 'builtin/hashed-ngrams', input: ['two', 'three'] },
        },
      ]),
    );
    const batch = await client.batches.create({
      input_file_id: input.id,
      endpoint: '/v1/embeddings',
      completion_window: '24h',
    });
    const done = await settled(batch.id);
    expect(done.status).toBe('completed');
    const output = await linesOf(done.output_file_id);
    const e2 = output.find((l) => l.custom_id === 'e2');
    expect(e2?.response.body.data).toHaveLength(2);
    expect(e2?.response.body.data[0]?.embedding).toHaveLength(384);
    expect(output.find((l) => l.custom_id === 'e1')?.response.status_code).toBe(200);
  });

  it('cancel ends a running batch: requests under way stop, the status becomes cancelled', async () => {
    bed.openai.delayHeadersMs = 1_500;
    try {
      const input = await upload(
        jsonl(Array.from({ length: 12 }, (_, i) => chatLine(`s${i}`, 'gpt-4o-mini', `slow ${i}`))),
      );
      const batch = await client.batches.create({
        input_file_id: input.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      await until(
        async () => (await client.batches.retrieve(batch.id)).status === 'in_progress',
        'in_progress',
      );
      const cancelling = await client.batches.cancel(batch.id);
      expect(['cancelling', 'cancelled']).toContain(cancelling.status);
      const done = await settled(batch.id);
      expect(done.status).toBe('cancelled');
      expect(done.request_counts?.completed ?? 0).toBeLessThan(12);
      expect(await failure(client.batches.cancel(batch.id))).toBeNull();
    } finally {
      bed.openai.delayHeadersMs = 0;
    }
  });

  it('bad batches are 400s naming the problem; unknown ids are 404s', async () => {
    const bad = await upload(
      jsonl([
        chatLine('x', 'gpt-4o-mini', 'ok'),
        { custom_id: 'y', method: 'GET', url: '/v1/chat/completions', body: {} },
      ]),
    );
    const badLine = await failure(
      client.batches.create({
        input_file_id: bad.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
    );
    expect(badLine?.status).toBe(400);
    expect(badLine?.message).toMatch(/line 2/);
    const wrongEndpoint = await failure(
      client.batches.create({ input_file_id: bad.id, endpoint: '/v1/completions', completion_window: '24h' }),
    );
    expect(wrongEndpoint?.message).toMatch(/body\.endpoint/);
    const notBatch = await upload('{}\n', 'user_data');
    expect(
      (
        await failure(
          client.batches.create({
            input_file_id: notBatch.id,
            endpoint: '/v1/embeddings',
            completion_window: '24h',
          }),
        )
      )?.message,
    ).toMatch(/purpose/);
    expect(
      (
        await failure(
          stranger.batches.create({
            input_file_id: bad.id,
            endpoint: '/v1/chat/completions',
            completion_window: '24h',
          }),
        )
      )?.status,
    ).toBe(404);
    expect((await failure(client.batches.retrieve('batch_nope')))?.status).toBe(404);
  });
});
