import type { Dialect } from '../../src/core/db/types.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { type FakeLlmServer, startFakeOllama, startFakeOpenAi } from '../support/fake-llm/index.js';

export const OPENAI_UPSTREAM_KEY = 'sk-upstream-test';

/** A platform listening on loopback with models on a fake Ollama and a fake OpenAI upstream. */
export interface LlmTestbed {
  p: TestPlatform;
  /** The platform's origin, e.g. `http://127.0.0.1:PORT`. */
  url: string;
  ollama: FakeLlmServer;
  openai: FakeLlmServer;
  close(): Promise<void>;
}

/** The registry the tests use: real names on each fake, fallback chains, and a dead upstream. */
export function testModels(ollama: FakeLlmServer, openai: FakeLlmServer, timeoutMs = 2_000) {
  const onOllama = { provider: 'ollama', baseUrl: ollama.url, timeoutMs };
  const onOpenAi = { provider: 'openai', baseUrl: openai.url, timeoutMs };
  return [
    { ...onOllama, name: 'llama3.2', contextWindow: 131_072 },
    { ...onOpenAi, name: 'gpt-4o-mini', pricing: { inputPerMillion: 0.15, outputPerMillion: 0.6 } },
    // Ollama answers through the OpenAI-compatible surface and the other way round.
    { ...onOllama, name: 'primary', upstreamModel: 'llama3.2', fallbacks: ['gpt-4o-mini'] },
    { ...onOpenAi, name: 'openai-primary', upstreamModel: 'gpt-4o-mini', fallbacks: ['llama3.2'] },
    { provider: 'ollama', baseUrl: 'http://127.0.0.1:9', timeoutMs, name: 'dead', fallbacks: ['llama3.2'] },
    { provider: 'ollama', baseUrl: 'http://127.0.0.1:9', timeoutMs, name: 'dead-alone', upstreamModel: 'x' },
    { ...onOllama, name: 'nomic-embed-text', kind: 'embedding' },
    { ...onOpenAi, name: 'text-embedding-3-small', kind: 'embedding' },
    { ...onOpenAi, name: 'omni-moderation-latest', kind: 'moderation' },
  ];
}

export async function startLlmTestbed(
  dialect: Dialect,
  env: Record<string, string> = {},
  options: {
    timeoutMs?: number;
    redis?: boolean;
    /** More registry entries, given the fakes (another compat on the same fake OpenAI, …). */
    extraModels?: (ollama: FakeLlmServer, openai: FakeLlmServer) => object[];
  } = {},
): Promise<LlmTestbed> {
  const ollama = await startFakeOllama();
  const openai = await startFakeOpenAi({ apiKey: OPENAI_UPSTREAM_KEY });
  let p: TestPlatform;
  try {
    p = await createTestPlatform({
      dialect,
      redis: options.redis ?? false,
      env: {
        LLM_MODELS: JSON.stringify([
          ...testModels(ollama, openai, options.timeoutMs),
          ...(options.extraModels?.(ollama, openai) ?? []),
        ]),
        // The fake is "OpenAI" here: OPENAI_API_KEY goes only to OPENAI_BASE_URL.
        OPENAI_BASE_URL: openai.url,
        // The default Ollama server (where a name no entry has is pulled) is the fake too.
        OLLAMA_URL: ollama.url,
        OPENAI_API_KEY: OPENAI_UPSTREAM_KEY,
        ...env,
      },
    });
  } catch (error) {
    await Promise.all([ollama.close(), openai.close()]);
    throw error;
  }
  const url = await p.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    p,
    url,
    ollama,
    openai,
    async close() {
      // A fetch aborted mid-stream leaves undici a spare connection it never closes (CLOSE-WAIT on
      // its side); the server has ended it, but server.close() would wait for the peer.
      p.app.server.closeAllConnections();
      await p.close();
      await Promise.all([ollama.close(), openai.close()]);
    },
  };
}

/** A raw HTTP call to the platform with a key (for what the clients hide: headers, raw lines). */
export async function post(
  bed: LlmTestbed,
  path: string,
  body: unknown,
  key = bed.p.adminKey,
): Promise<{ status: number; headers: Headers; text: string; json(): unknown }> {
  const res = await fetch(`${bed.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

/** NDJSON lines of a body, parsed. */
export const ndjsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
