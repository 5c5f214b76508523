import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherAccountKey } from '../helpers/accounts.js';
import { redisAvailable, testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { type LlmTestbed, post, startLlmTestbed } from './support.js';

const dialects = await testDialects();
const withRedis = await redisAvailable();
const backends = [
  ...dialects.map((d) => ({ dialect: d, redis: false, name: d })),
  ...(withRedis ? [{ dialect: 'sqlite' as const, redis: true, name: 'sqlite + redis' }] : []),
];

const chat = (model: string, content: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content }],
  stream: false,
  ...extra,
});

describe.each(backends)('gateway keys, budgets, usage and cache on $name', ({ dialect, redis }) => {
  let bed: LlmTestbed;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect, { LLM_CACHE_TTL_SECONDS: '60' }, { redis });
  });
  afterAll(() => bed?.close());

  const key = (body: Record<string, unknown>) =>
    bed.p.createKey({ name: 'llm', type: 'development', services: ['llm'], role: 'Writer', ...body });

  it('a key limited to models sees and uses only those; others are 403 in each surface’s shape', async () => {
    const { key: limited } = await key({ models: ['llama3.2'] });
    const tags = await fetch(`${bed.url}/api/tags`, { headers: { authorization: `Bearer ${limited}` } });
    const names = ((await tags.json()) as { models: Array<{ name: string }> }).models.map((m) => m.name);
    expect(names).toEqual(['llama3.2']);
    expect((await post(bed, '/api/chat', chat('llama3.2', 'allowed'), limited)).status).toBe(200);
    const refused = await post(bed, '/api/chat', chat('gpt-4o-mini', 'not allowed'), limited);
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({
      error: expect.stringMatching(/may not use model/),
      code: 'FORBIDDEN',
    });
    const client = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: limited, maxRetries: 0 });
    await expect(
      client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
    await expect(client.models.retrieve('gpt-4o-mini')).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
  });

  it('a Custom key names its models as llm:model scopes', async () => {
    const { key: scoped } = await key({
      role: 'Custom',
      scopes: ['llm:read', 'llm:write', 'llm:model:gpt-4o-mini'],
    });
    expect((await post(bed, '/v1/chat/completions', chat('gpt-4o-mini', 'ok'), scoped)).status).toBe(200);
    expect((await post(bed, '/v1/chat/completions', chat('llama3.2', 'no'), scoped)).status).toBe(403);
  });

  it('a Reader may list and show models but not call them; a key of another service may do neither', async () => {
    const { key: reader } = await key({ role: 'Reader' });
    expect((await post(bed, '/api/show', { model: 'llama3.2' }, reader)).status).toBe(200);
    const call = await post(bed, '/api/chat', chat('llama3.2', 'x'), reader);
    expect(call.status).toBe(403);
    expect(call.json()).toMatchObject({ code: 'FORBIDDEN', details: { requiredScope: 'llm:write' } });
    const { key: other } = await key({ services: ['workflow'] });
    expect((await post(bed, '/api/show', { model: 'llama3.2' }, other)).status).toBe(403);
    const none = await post(bed, '/api/chat', chat('llama3.2', 'x'), 'DEV_API_nothing');
    expect(none.status).toBe(401);
    expect(none.json()).toMatchObject({ error: expect.any(String), code: 'UNAUTHORIZED' });
  });

  it('a daily token budget: calls until it is spent, then 429 with the token headers', async () => {
    const { key: budgeted } = await key({ dailyTokenBudget: 12 });
    const first = await post(bed, '/api/chat', chat('llama3.2', 'one two three'), budgeted);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('12');
    let last = first;
    for (let i = 0; i < 5 && last.status === 200; i++)
      last = await post(bed, '/api/chat', chat('llama3.2', 'one two three'), budgeted);
    expect(last.status).toBe(429);
    expect(last.json()).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      error: expect.stringMatching(/token budget/),
    });
    expect(last.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last.headers.get('x-ratelimit-limit')).not.toBeNull();
    const openai = await post(
      bed,
      '/v1/embeddings',
      { model: 'builtin/hashed-ngrams', input: 'x' },
      budgeted,
    );
    expect(openai.status).toBe(429);
    expect(openai.json()).toMatchObject({ error: { type: 'rate_limit_error' } });
  });

  it('calls in flight hold their max_tokens: a call the holds leave no room for is a 429 for a second, and the budget is free again when they end', async () => {
    const { key: budgeted } = await key({ dailyTokenBudget: 3_000 });
    const streamed = { ...chat('gpt-4o-mini', 'hi'), stream: true, max_tokens: 1_000 };
    bed.openai.stallAfterChunks = 1;
    const clients = [new AbortController(), new AbortController(), new AbortController()];
    try {
      // Each holds ~1,001 tokens from admission: 0, 1,001 and 2,002 held before them are under 3,000.
      for (const client of clients) {
        const res = await fetch(`${bed.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${budgeted}`, 'content-type': 'application/json' },
          body: JSON.stringify(streamed),
          signal: client.signal,
        });
        expect(res.status).toBe(200);
        await res.body?.getReader().read();
      }
      const refused = await post(bed, '/v1/chat/completions', { ...streamed, stream: false }, budgeted);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.json()).toMatchObject({
        error: { message: expect.stringMatching(/held by calls in flight/) },
      });
      // Without max_tokens a call holds 1,024 for its answer: refused too.
      const ollama = await post(bed, '/api/chat', chat('llama3.2', 'hi'), budgeted);
      expect(ollama.status).toBe(429);
    } finally {
      for (const client of clients) client.abort();
      bed.openai.stallAfterChunks = null;
    }
    // The streams ended: each gives back what it did not use, and calls are admitted again.
    const after = await until(async () => {
      const res = await post(bed, '/v1/chat/completions', { ...streamed, stream: false }, budgeted);
      return res.status === 200 && res;
    }, 'the held tokens given back');
    expect(Number(after.headers.get('x-ratelimit-remaining-tokens'))).toBeGreaterThan(1_900);
  });

  it('a max_tokens of 1e300 holds no more than the budget and wipes nothing: the budget still runs out', async () => {
    const { key: budgeted } = await key({ dailyTokenBudget: 100 });
    const huge = `{"model":"gpt-4o-mini","stream":false,"max_tokens":1e300,"messages":[{"role":"user","content":"hi"}]}`;
    let refusedAt = -1;
    for (let i = 0; i < 30 && refusedAt < 0; i++) {
      const res = await post(
        bed,
        '/v1/chat/completions',
        i % 2 === 0 ? huge : chat('gpt-4o-mini', 'one two three'),
        budgeted,
      );
      if (res.status === 429) refusedAt = i;
      else expect([200, 400], res.text).toContain(res.status);
    }
    expect(refusedAt, 'the call the spent budget refused').toBeGreaterThan(0);
  });

  it('records every call; /v1/llm/requests lists them with filters, and only the account’s own', async () => {
    const { key: k, id } = await key({});
    await post(bed, '/api/chat', chat('llama3.2', 'logged call'), k);
    await post(bed, '/api/chat', chat('dead-alone', 'failing call'), k);
    await post(bed, '/api/embed', { model: 'builtin/hashed-ngrams', input: ['a', 'b'] }, k);
    const list = await bed.p.request({ method: 'GET', url: `/v1/llm/requests?keyId=${id}` });
    expect(list.statusCode).toBe(200);
    const { data } = list.json() as { data: Array<Record<string, unknown>> };
    expect(data.map((d) => d.model)).toEqual(['builtin/hashed-ngrams', 'dead-alone', 'llama3.2']);
    expect(data[2]).toMatchObject({
      keyId: id,
      endpoint: 'chat',
      answeredBy: 'llama3.2',
      provider: 'ollama',
      status: 'success',
      tokensEstimated: false,
      cached: false,
    });
    expect(data[2]?.promptTokens).toBeGreaterThan(0);
    expect(data[2]?.ttftMs).toEqual(expect.any(Number));
    expect(data[1]).toMatchObject({ status: 'error', httpStatus: 502, errorCode: 'UPSTREAM_ERROR' });
    expect(data[0]).toMatchObject({ endpoint: 'embed', tokensEstimated: true, completionTokens: 0 });
    // No registry price for these models: no cost, rather than a made-up zero.
    expect(data.map((d) => d.costUsd)).toEqual([null, null, null]);
    const failed = await bed.p.request({ method: 'GET', url: `/v1/llm/requests?keyId=${id}&status=error` });
    expect((failed.json() as { data: unknown[] }).data).toHaveLength(1);
    const paged = await bed.p.request({ method: 'GET', url: `/v1/llm/requests?keyId=${id}&limit=2` });
    const page = paged.json() as { data: unknown[]; nextCursor: string };
    expect(page.data).toHaveLength(2);
    const rest = await bed.p.request({
      method: 'GET',
      url: `/v1/llm/requests?keyId=${id}&limit=2&cursor=${page.nextCursor}`,
    });
    expect((rest.json() as { data: unknown[]; nextCursor: null }).data).toHaveLength(1);
    const bad = await bed.p.request({ method: 'GET', url: '/v1/llm/requests?colour=red' });
    expect(bad.statusCode).toBe(400);
    const stranger = await otherAccountKey(bed.p);
    const theirs = await bed.p.request({ method: 'GET', url: '/v1/llm/requests', key: stranger });
    expect((theirs.json() as { data: unknown[] }).data).toEqual([]);
  });

  it('prices calls at the registry entry’s pricing: the request log, usage per model and the models list', async () => {
    const { key: k, id } = await key({});
    await post(
      bed,
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'price me' }] },
      k,
    );
    const logged = await bed.p.request({ method: 'GET', url: `/v1/llm/requests?keyId=${id}` });
    const row = (
      logged.json() as { data: Array<{ promptTokens: number; completionTokens: number; costUsd: number }> }
    ).data[0];
    // testModels prices gpt-4o-mini at 0.15 in and 0.60 out per million tokens.
    const expected = (row!.promptTokens * 0.15 + row!.completionTokens * 0.6) / 1e6;
    expect(row!.promptTokens).toBeGreaterThan(0);
    expect(row!.costUsd).toBeCloseTo(expected, 6);
    const usage = await bed.p.request({ method: 'GET', url: `/v1/usage?keyId=${id}` });
    const tokens = (usage.json() as { tokens: Array<{ model: string; costUsd: number | null }> }).tokens;
    expect(tokens).toEqual([expect.objectContaining({ model: 'gpt-4o-mini', costUsd: row!.costUsd })]);
    const models = await bed.p.request({ method: 'GET', url: '/v1/models', key: k });
    const listed = (models.json() as { data: Array<{ id: string; pricing?: unknown }> }).data;
    expect(listed.find((m) => m.id === 'gpt-4o-mini')?.pricing).toEqual({
      inputPerMillion: 0.15,
      outputPerMillion: 0.6,
    });
    expect(listed.find((m) => m.id === 'llama3.2')).not.toHaveProperty('pricing');
  });

  it('GET /v1/usage reports tokens per answering model', async () => {
    const { key: k, id } = await key({});
    await post(bed, '/api/chat', chat('llama3.2', 'count my tokens'), k);
    await post(bed, '/api/chat', chat('gpt-4o-mini', 'and these'), k);
    const res = await bed.p.request({ method: 'GET', url: `/v1/usage?keyId=${id}` });
    expect(res.statusCode).toBe(200);
    const usage = res.json() as {
      tokens: Array<{ model: string; requests: number; promptTokens: number; completionTokens: number }>;
      totals: { promptTokens: number; completionTokens: number };
    };
    expect(usage.tokens.map((t) => t.model).sort()).toEqual(['gpt-4o-mini', 'llama3.2']);
    const sum = usage.tokens.reduce((n, t) => n + t.promptTokens + t.completionTokens, 0);
    expect(usage.totals.promptTokens + usage.totals.completionTokens).toBe(sum);
    expect(sum).toBeGreaterThan(0);
  });

  it('caches exact stream:false, temperature-0 answers per account, marked in a header', async () => {
    const before = bed.ollama.requests.length;
    const body = chat('llama3.2', 'cache me', { options: { temperature: 0 } });
    const first = await post(bed, '/api/chat', body);
    const second = await post(bed, '/api/chat', body);
    expect(first.headers.get('x-llm-cache')).toBe('miss');
    expect(second.headers.get('x-llm-cache')).toBe('hit');
    expect((second.json() as { message: unknown }).message).toEqual(
      (first.json() as { message: unknown }).message,
    );
    expect(bed.ollama.requests.length - before).toBe(1);
    const warm = await post(
      bed,
      '/api/chat',
      chat('llama3.2', 'cache me', { options: { temperature: 0.7 } }),
    );
    expect(warm.headers.get('x-llm-cache')).toBeNull();
    const stranger = await otherAccountKey(bed.p);
    const theirs = await post(bed, '/api/chat', body, stranger);
    expect(theirs.headers.get('x-llm-cache')).toBe('miss');
  });

  it('a cached answer holds no tokens: served while calls in flight hold the budget, not once the day is spent', async () => {
    const { key: budgeted, id } = await key({ dailyTokenBudget: 5_000 });
    const body = chat('llama3.2', 'cache me within a budget', { options: { temperature: 0 } });
    const first = await post(bed, '/api/chat', body, budgeted);
    expect(first.headers.get('x-llm-cache')).toBe('miss');
    // Calls in flight hold the whole budget: a call that needs the model waits for them…
    const inFlight = await bed.p.ctx.limiter.reserveTokens(id, 5_000, 5_000);
    expect(inFlight.hold).not.toBeNull();
    const uncached = await post(bed, '/api/chat', chat('llama3.2', 'not cached'), budgeted);
    expect(uncached.status).toBe(429);
    expect(uncached.headers.get('retry-after')).toBe('1');
    // …one the cache answers does not.
    const hit = await post(bed, '/api/chat', body, budgeted);
    expect(hit.status, hit.text).toBe(200);
    expect(hit.headers.get('x-llm-cache')).toBe('hit');
    expect(hit.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    // Those calls end having used it all: the day is spent, and the cache answers no more.
    if (inFlight.hold) await bed.p.ctx.limiter.settleTokens(inFlight.hold, 5_000);
    const spent = await post(bed, '/api/chat', body, budgeted);
    expect(spent.status).toBe(429);
    expect(Number(spent.headers.get('retry-after'))).toBeGreaterThan(1);
  });
});
