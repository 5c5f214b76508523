import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from './support.js';

const dialects = await testDialects();

const MAX_BYTES = 1_000;
const MAX_FILES = 3;

/**
 * Issue 32: a per-account quota on /v1/files (bytes and count, configurable), refused in OpenAI's
 * error body through the official client: 413 past the bytes, 400 past the count; concurrent uploads
 * cannot pass it together; one account's files leave another's room alone.
 */
describe.each(dialects)('OpenAI files quota on %s', (dialect) => {
  let bed: LlmTestbed;
  let client: OpenAI;
  let stranger: OpenAI;

  const upload = async (as: OpenAI, bytes: number) =>
    as.files.create({ file: await toFile(Buffer.alloc(bytes, 'x'), 'data.txt'), purpose: 'user_data' });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => null,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
  const clear = async (as: OpenAI) => {
    for (const file of (await as.files.list()).data) await as.files.delete(file.id);
  };

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect, {
      LLM_FILES_MAX_BYTES_PER_ACCOUNT: String(MAX_BYTES),
      LLM_FILES_MAX_PER_ACCOUNT: String(MAX_FILES),
    });
    client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
    stranger = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: await otherAccountKey(bed.p), maxRetries: 0 });
  });
  afterAll(() => bed?.close());

  it('past the bytes: a 413 in OpenAI body naming the quota; another account still has its room', async () => {
    await clear(client);
    await upload(client, 600);
    const refused = await failure(upload(client, 600));
    expect(refused?.status).toBe(413);
    expect(refused?.error).toMatchObject({ type: 'invalid_request_error', code: 'payload_too_large' });
    expect(refused?.message).toContain(`quota of ${MAX_BYTES} bytes`);
    // A file bigger than the whole quota is refused the same way.
    expect((await failure(upload(client, MAX_BYTES + 1)))?.status).toBe(413);
    expect((await upload(stranger, 600)).bytes).toBe(600);
    // What fits still goes in: 600 + 400 is the quota exactly.
    expect((await upload(client, 400)).bytes).toBe(400);
    expect((await client.files.list()).data).toHaveLength(2);
  });

  it('past the count: a 400 in OpenAI body; deleting a file makes room again', async () => {
    await clear(client);
    const kept = [];
    for (let i = 0; i < MAX_FILES; i++) kept.push(await upload(client, 10));
    const refused = await failure(upload(client, 10));
    expect(refused?.status).toBe(400);
    expect(refused?.error).toMatchObject({ type: 'invalid_request_error' });
    expect(refused?.message).toContain(`holds ${MAX_FILES} files`);
    await client.files.delete(kept[0]?.id ?? '');
    expect((await upload(client, 10)).bytes).toBe(10);
  });

  it('concurrent uploads cannot pass the quota together', async () => {
    await clear(client);
    const results = await Promise.all(Array.from({ length: 6 }, () => failure(upload(client, 400))));
    // 2 × 400 fit in 1,000 bytes; the other four are refused, whichever order they ran in.
    expect(results.filter((r) => r === null)).toHaveLength(2);
    expect(results.filter((r) => r?.status === 413)).toHaveLength(4);
    const held = (await client.files.list()).data;
    expect(held.reduce((n, f) => n + f.bytes, 0)).toBe(800);
  });
});
