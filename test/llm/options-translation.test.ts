import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic } from '../support/fake-llm/anthropic-server.js';
import type { FakeLlmServer } from '../support/fake-llm/index.js';
import { type LlmTestbed, startLlmTestbed } from './support.js';

const ANTHROPIC_KEY = 'sk-ant-options-test';

/**
 * Issue 32: an option of one dialect reaching a provider of another arrives under the name that
 * provider reads, or is refused with a 400 naming it. Each fake upstream records the exact body.
 */
describe('options across dialects: translated or refused by name, never dropped', () => {
  let bed: LlmTestbed;
  let anthropicUpstream: FakeLlmServer;
  let ollama: Ollama;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const lastOpenAi = () => bed.openai.requests.at(-1)?.body as Record<string, unknown>;
  const lastOllama = () => bed.ollama.requests.at(-1)?.body as Record<string, unknown>;
  const lastAnthropic = () => anthropicUpstream.requests.at(-1)?.body as Record<string, unknown>;
  const upstreamCalls = () =>
    bed.openai.requests.length + bed.ollama.requests.length + anthropicUpstream.requests.length;

  beforeAll(async () => {
    anthropicUpstream = await startFakeAnthropic({ apiKey: ANTHROPIC_KEY });
    bed = await startLlmTestbed(
      'sqlite',
      { ANTHROPIC_OPTIONS_KEY: ANTHROPIC_KEY },
      {
        extraModels: (_ollama, fakeOpenAi) => {
          const on = { provider: 'openai', baseUrl: fakeOpenAi.url, upstreamModel: 'gpt-4o-mini' };
          return [
            { ...on, name: 'on-vllm', compat: 'vllm' },
            { ...on, name: 'on-llama-cpp', compat: 'llama.cpp' },
            // An OpenAI embedder that never answers, falling back to Ollama's.
            {
              provider: 'openai',
              baseUrl: 'http://127.0.0.1:9',
              name: 'dead-embed',
              kind: 'embedding',
              fallbacks: ['nomic-embed-text'],
              timeoutMs: 2_000,
            },
            {
              name: 'claude',
              provider: 'anthropic',
              upstreamModel: 'claude-sonnet-4-5',
              baseUrl: anthropicUpstream.url,
              apiKeyEnv: 'ANTHROPIC_OPTIONS_KEY',
            },
          ];
        },
      },
    );
    ollama = new Ollama({ host: bed.url, headers: { authorization: `Bearer ${bed.p.adminKey}` } });
    openai = new OpenAI({ baseURL: `${bed.url}/v1`, apiKey: bed.p.adminKey, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: bed.url, apiKey: bed.p.adminKey, maxRetries: 0 });
  });
  afterAll(async () => {
    await bed?.close();
    await anthropicUpstream?.close();
  });

  /** An Ollama chat that must be refused before any upstream is called; the error's message. */
  async function ollamaRefused(request: Parameters<Ollama['chat']>[0] & { stream?: false }): Promise<string> {
    const before = upstreamCalls();
    const error = await ollama.chat({ ...request, stream: false }).then(
      () => null,
      (e: unknown) => e as { status_code?: number; error?: string },
    );
    expect(error?.status_code).toBe(400);
    expect(upstreamCalls()).toBe(before);
    return error?.error ?? '';
  }

  const hello = [{ role: 'user', content: 'hello' }];

  describe('Ollama options reaching an OpenAI-compatible upstream', () => {
    it('those with an OpenAI field arrive under its name (num_predict is max_tokens)', async () => {
      await ollama.chat({
        model: 'gpt-4o-mini',
        messages: hello,
        stream: false,
        options: {
          num_predict: 42,
          temperature: 0.3,
          top_p: 0.8,
          top_k: 12,
          stop: ['END'],
          seed: 7,
          presence_penalty: 0.5,
          frequency_penalty: 0.25,
        },
      });
      const sent = lastOpenAi();
      expect(sent).toMatchObject({
        max_tokens: 42,
        temperature: 0.3,
        top_p: 0.8,
        top_k: 12,
        stop: ['END'],
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: 0.25,
      });
      expect(sent.num_predict).toBeUndefined();
      expect(sent.options).toBeUndefined();
    });

    it('sampling options OpenAI has no word for are refused by name on an OpenAI entry', async () => {
      expect(
        await ollamaRefused({ model: 'gpt-4o-mini', messages: hello, options: { repeat_penalty: 1.1 } }),
      ).toMatch(/body\.options\.repeat_penalty.*compat/);
      expect(
        await ollamaRefused({ model: 'gpt-4o-mini', messages: hello, options: { mirostat: 2 } }),
      ).toMatch(/body\.options\.mirostat/);
      expect(
        await ollamaRefused({ model: 'gpt-4o-mini', messages: hello, options: { typical_p: 0.9 } }),
      ).toMatch(/body\.options\.typical_p/);
    });

    it('runtime options (num_ctx, num_gpu, …) are refused by name on every OpenAI-compatible server', async () => {
      for (const model of ['gpt-4o-mini', 'on-vllm', 'on-llama-cpp'])
        expect(await ollamaRefused({ model, messages: hello, options: { num_ctx: 8192 } })).toMatch(
          /body\.options\.num_ctx.*runtime setting/,
        );
      expect(
        await ollamaRefused({ model: 'on-llama-cpp', messages: hello, options: { num_gpu: 1 } }),
      ).toMatch(/body\.options\.num_gpu/);
    });

    it('a vLLM entry receives repeat_penalty as repetition_penalty and min_p; mirostat is refused', async () => {
      await ollama.chat({
        model: 'on-vllm',
        messages: hello,
        stream: false,
        options: { repeat_penalty: 1.15, min_p: 0.05, num_predict: 9 },
      });
      const sent = lastOpenAi();
      expect(sent).toMatchObject({ repetition_penalty: 1.15, min_p: 0.05, max_tokens: 9 });
      expect(sent.repeat_penalty).toBeUndefined();
      expect(await ollamaRefused({ model: 'on-vllm', messages: hello, options: { mirostat: 1 } })).toMatch(
        /body\.options\.mirostat.*vllm/,
      );
    });

    it("a llama.cpp entry receives its server's own sampling fields", async () => {
      await ollama.chat({
        model: 'on-llama-cpp',
        messages: hello,
        stream: false,
        options: {
          repeat_penalty: 1.2,
          repeat_last_n: 32,
          min_p: 0.1,
          typical_p: 0.9,
          mirostat: 2,
          mirostat_tau: 4.5,
          mirostat_eta: 0.2,
          num_keep: 5,
        },
      });
      expect(lastOpenAi()).toMatchObject({
        repeat_penalty: 1.2,
        repeat_last_n: 32,
        min_p: 0.1,
        typical_p: 0.9,
        mirostat: 2,
        mirostat_tau: 4.5,
        mirostat_eta: 0.2,
        n_keep: 5,
      });
      expect(
        await ollamaRefused({ model: 'on-llama-cpp', messages: hello, options: { penalize_newline: true } }),
      ).toMatch(/body\.options\.penalize_newline/);
    });

    it('think: a level is reasoning_effort; true switches the template on vLLM and is refused on OpenAI', async () => {
      await ollama.chat({ model: 'gpt-4o-mini', messages: hello, stream: false, think: 'high' });
      expect(lastOpenAi().reasoning_effort).toBe('high');
      await ollama.chat({ model: 'on-vllm', messages: hello, stream: false, think: false });
      expect(lastOpenAi().chat_template_kwargs).toEqual({ enable_thinking: false });
      expect(await ollamaRefused({ model: 'gpt-4o-mini', messages: hello, think: true })).toMatch(
        /body\.think/,
      );
    });

    it('keep_alive is refused on an OpenAI-compatible upstream', async () => {
      expect(await ollamaRefused({ model: 'gpt-4o-mini', messages: hello, keep_alive: '5m' })).toMatch(
        /body\.keep_alive/,
      );
    });
  });

  describe('OpenAI and Ollama fields reaching Ollama and Anthropic upstreams', () => {
    it("Ollama's think level reaches an Ollama upstream as the level, not true", async () => {
      await ollama.chat({ model: 'llama3.2', messages: hello, stream: false, think: 'low' });
      expect(lastOllama().think).toBe('low');
    });

    it('an Anthropic upstream refuses logprobs, n and Ollama options by name; user becomes metadata', async () => {
      const refusedBy = async (body: Record<string, unknown>) => {
        const before = upstreamCalls();
        const error = await openai.chat.completions
          .create({ model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...body })
          .then(
            () => null,
            (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
          );
        expect(error?.status).toBe(400);
        expect(upstreamCalls()).toBe(before);
        return error?.message ?? '';
      };
      expect(await refusedBy({ logprobs: true })).toMatch(/body\.logprobs/);
      expect(await refusedBy({ n: 2 })).toMatch(/body\.n/);
      expect(await ollamaRefused({ model: 'claude', messages: hello, options: { num_ctx: 4096 } })).toMatch(
        /body\.options\.num_ctx/,
      );
      await openai.chat.completions.create({
        model: 'claude',
        messages: [{ role: 'user', content: 'hi' }],
        user: 'end-user-9',
      });
      expect(lastAnthropic().metadata).toEqual({ user_id: 'end-user-9' });
    });
  });

  describe('OpenAI message names and image detail levels', () => {
    const image = 'iVBORw0KGgo=';
    const withImage = (detail: 'auto' | 'low' | 'high'): OpenAI.ChatCompletionUserMessageParam => ({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${image}`, detail } },
      ],
    });
    const refusedBy = async (model: string, messages: OpenAI.ChatCompletionMessageParam[]) => {
      const before = upstreamCalls();
      const error = await openai.chat.completions.create({ model, messages }).then(
        () => null,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      );
      expect(error?.status).toBe(400);
      expect(upstreamCalls()).toBe(before);
      return error?.message ?? '';
    };

    it('reach an OpenAI upstream on the translating path (a model whose fallback is on Ollama)', async () => {
      await openai.chat.completions.create({
        model: 'openai-primary',
        messages: [
          { role: 'system', content: 'be brief', name: 'house-rules' },
          { ...withImage('low'), name: 'alice' },
        ],
      });
      const [system, asked] = lastOpenAi().messages as Array<Record<string, unknown>>;
      expect(system).toMatchObject({ role: 'system', name: 'house-rules' });
      expect(asked).toMatchObject({
        role: 'user',
        name: 'alice',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${image}`, detail: 'low' } },
        ],
      });
    });

    it('Ollama, Anthropic and built-in models refuse them by name; detail auto is what they do anyway', async () => {
      const named = [{ role: 'user' as const, content: 'hi', name: 'alice' }];
      for (const model of ['llama3.2', 'claude', 'builtin/extractive'])
        expect(await refusedBy(model, named)).toMatch(/body\.messages\.0\.name/);
      for (const model of ['llama3.2', 'claude'])
        expect(await refusedBy(model, [withImage('high')])).toMatch(
          /body\.messages\.0\.content\.1\.image_url\.detail/,
        );
      await openai.chat.completions.create({ model: 'llama3.2', messages: [withImage('auto')] });
      expect((lastOllama().messages as Array<{ images?: string[] }>)[0]?.images).toEqual([image]);
    });

    it("a tool message's name is its tool's: Ollama's tool_name", async () => {
      await openai.chat.completions.create({
        model: 'llama3.2',
        messages: [
          { role: 'user', content: 'weather?' },
          { role: 'tool', tool_call_id: 'call_elsewhere', content: 'sunny', name: 'weather' } as never,
        ],
      });
      expect((lastOllama().messages as Array<Record<string, unknown>>)[1]).toMatchObject({
        role: 'tool',
        tool_name: 'weather',
      });
    });
  });

  describe('embedding options: passed where the provider takes them, refused by name where not', () => {
    const ollamaEmbedRefused = async (body: Record<string, unknown>, path = '/api/embed') => {
      const before = upstreamCalls();
      const res = await fetch(`${bed.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bed.p.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      expect(upstreamCalls()).toBe(before);
      return ((await res.json()) as { error: string }).error;
    };

    it('/api/embed and the legacy /api/embeddings pass options and keep_alive to an Ollama upstream', async () => {
      await ollama.embed({
        model: 'nomic-embed-text',
        input: 'x',
        options: { num_ctx: 2048, temperature: 0 },
        keep_alive: '1m',
      });
      expect(lastOllama()).toMatchObject({ options: { num_ctx: 2048, temperature: 0 }, keep_alive: '1m' });
      await ollama.embeddings({
        model: 'nomic-embed-text',
        prompt: 'x',
        options: { num_thread: 2 },
        keep_alive: 0,
      });
      expect(lastOllama()).toMatchObject({ options: { num_thread: 2 }, keep_alive: 0 });
    });

    it('an OpenAI-compatible embedder refuses every Ollama option and keep_alive by name', async () => {
      expect(
        await ollamaEmbedRefused({ model: 'text-embedding-3-small', input: 'x', options: { num_ctx: 8 } }),
      ).toMatch(/body\.options\.num_ctx is a runtime setting/);
      expect(
        await ollamaEmbedRefused(
          { model: 'text-embedding-3-small', prompt: 'x', options: { temperature: 0 } },
          '/api/embeddings',
        ),
      ).toMatch(/body\.options\.temperature/);
      expect(
        await ollamaEmbedRefused({ model: 'text-embedding-3-small', input: 'x', keep_alive: '5m' }),
      ).toMatch(/body\.keep_alive/);
    });

    it('a built-in embedder takes what a deterministic model honours and refuses the rest', async () => {
      await ollama.embed({
        model: 'builtin/hashed-ngrams',
        input: 'x',
        options: { num_ctx: 4096, temperature: 0.7, seed: 1 },
      });
      expect(
        await ollamaEmbedRefused({ model: 'builtin/hashed-ngrams', input: 'x', options: { num_predict: 5 } }),
      ).toMatch(/body\.options\.num_predict/);
    });

    it('/v1/embeddings: user reaches an OpenAI upstream, is refused elsewhere, and skips a fallback that would drop it', async () => {
      await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'x', user: 'end-user-7' });
      expect(lastOpenAi().user).toBe('end-user-7');
      const refused = await openai.embeddings
        .create({ model: 'builtin/hashed-ngrams', input: 'x', user: 'end-user-7' })
        .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
      expect((refused as Error).message).toMatch(/body\.user/);
      // The dead OpenAI embedder takes user; its Ollama fallback would drop it, so it is not tried.
      const before = bed.ollama.requests.length;
      const failed = await openai.embeddings
        .create({ model: 'dead-embed', input: 'x', user: 'end-user-7' })
        .catch((e: unknown) => e as InstanceType<typeof OpenAI.APIError>);
      expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect(bed.ollama.requests.length).toBe(before);
      const answered = await openai.embeddings.create({ model: 'dead-embed', input: 'x' }).withResponse();
      expect(answered.response.headers.get('x-llm-model')).toBe('nomic-embed-text');
    });
  });

  describe('the Anthropic dialect', () => {
    const toolTurns: Anthropic.MessageParam[] = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Oslo' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'station offline', is_error: true },
        ],
      },
    ];
    const weather = { name: 'weather', input_schema: { type: 'object' as const, properties: {} } };

    it('is_error reaches an Anthropic upstream as the flag, OpenAI and Ollama as an Error: prefix', async () => {
      await anthropic.messages.create({
        model: 'claude',
        max_tokens: 50,
        messages: toolTurns,
        tools: [weather],
      });
      const blocks = (lastAnthropic().messages as Array<{ content: Array<Record<string, unknown>> }>)[2]
        ?.content;
      expect(blocks?.[0]).toMatchObject({ type: 'tool_result', is_error: true, content: 'station offline' });

      await anthropic.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 50,
        messages: toolTurns,
        tools: [weather],
      });
      const toOpenAi = (lastOpenAi().messages as Array<Record<string, unknown>>).at(-1);
      expect(toOpenAi).toMatchObject({
        role: 'tool',
        tool_call_id: 'toolu_1',
        content: 'Error: station offline',
      });

      await anthropic.messages.create({
        model: 'llama3.2',
        max_tokens: 50,
        messages: toolTurns,
        tools: [weather],
      });
      const toOllama = (lastOllama().messages as Array<Record<string, unknown>>).at(-1);
      expect(toOllama).toMatchObject({
        role: 'tool',
        content: 'Error: station offline',
        tool_name: 'weather',
      });
    });

    it('a strict tool reaches OpenAI and Anthropic; an Ollama model refuses it', async () => {
      const strict = { ...weather, strict: true };
      await anthropic.messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [strict],
      });
      expect((lastOpenAi().tools as Array<{ function: Record<string, unknown> }>)[0]?.function.strict).toBe(
        true,
      );
      await anthropic.messages.create({
        model: 'claude',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [strict],
      });
      expect((lastAnthropic().tools as Array<Record<string, unknown>>)[0]?.strict).toBe(true);
      const error = await anthropic.messages
        .create({
          model: 'llama3.2',
          max_tokens: 20,
          messages: [{ role: 'user', content: 'hi' }],
          tools: [strict],
        })
        .then(
          () => null,
          (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
        );
      expect(error?.status).toBe(400);
      expect(error?.message).toMatch(/tools\.0\.strict/);
    });

    it('a thinking budget is the closest reasoning level on OpenAI and Ollama, exact on Anthropic', async () => {
      const ask = (model: string) =>
        anthropic.messages.create({
          model,
          max_tokens: 4000,
          thinking: { type: 'enabled', budget_tokens: 2048 },
          messages: [{ role: 'user', content: 'think' }],
        });
      await ask('gpt-4o-mini');
      expect(lastOpenAi().reasoning_effort).toBe('low');
      await ask('llama3.2');
      expect(lastOllama().think).toBe('low');
      await ask('claude');
      expect(lastAnthropic().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    });

    it("output_format (the structured-outputs beta's name) is output_config.format", async () => {
      const schema = { type: 'object', properties: { city: { type: 'string' } } };
      const res = await fetch(`${bed.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': bed.p.adminKey,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          model: 'gpt-4o-mini',
          max_tokens: 20,
          messages: [{ role: 'user', content: 'json' }],
          output_format: { type: 'json_schema', schema },
        }),
      });
      expect(res.status).toBe(200);
      expect(lastOpenAi().response_format).toMatchObject({ type: 'json_schema', json_schema: { schema } });
    });

    it('fields the Messages API does not have, or the gateway cannot honour, are 400s naming them', async () => {
      const refused = async (extra: Record<string, unknown>, messages?: unknown) => {
        const before = upstreamCalls();
        const res = await fetch(`${bed.url}/v1/messages`, {
          method: 'POST',
          headers: {
            'x-api-key': bed.p.adminKey,
            'anthropic-version': '2023-06-01',
            'content-type': 'application/json',
          },
          body: JSON.stringify({
            model: 'gpt-4o-mini',
            max_tokens: 20,
            messages: messages ?? [{ role: 'user', content: 'hi' }],
            ...extra,
          }),
        });
        expect(res.status).toBe(400);
        expect(upstreamCalls()).toBe(before);
        const body = (await res.json()) as { type: string; error: { message: string } };
        expect(body.type).toBe('error');
        return body.error.message;
      };
      expect(await refused({ top_logprobs: 3 })).toMatch(/body\.top_logprobs is not a Messages API field/);
      expect(await refused({ metadata: { user_id: 'u', team: 'x' } })).toMatch(/body\.metadata\.team/);
      expect(await refused({ tools: [{ ...weather, defer_loading: true }] })).toMatch(
        /body\.tools\.0\.defer_loading/,
      );
      expect(
        await refused({}, [
          {
            role: 'user',
            content: [{ type: 'text', text: 'hi', citations: [{ type: 'char_location', cited_text: 'x' }] }],
          },
        ]),
      ).toMatch(/citations/);
      expect(await refused({ output_format: { type: 'json_schema' } })).toMatch(/body\.output_format/);
    });
  });
});
