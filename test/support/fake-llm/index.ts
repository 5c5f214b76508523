/**
 * Fake language-model upstreams for tests: real Ollama and OpenAI wire formats on 127.0.0.1, with
 * knobs for failures, stalls, cut sockets and garbage, a request log and an abort count.
 *
 *   const ollama = await startFakeOllama();
 *   ollama.failNext(503);            // the next model call answers 503 in Ollama's error shape
 *   ollama.stallAfterChunks = 2;     // two NDJSON lines, then silence
 *   await ollama.untilAborted();     // the client went away
 *   await ollama.close();
 */
export {
  echoChunks,
  echoReply,
  type FakeKnobs,
  type FakeLlmRequest,
  type FakeLlmServer,
  type FakeToolCall,
  fakeEmbedding,
  fakeTokenCount,
} from './fake-base.js';
export {
  FAKE_OLLAMA_MODELS,
  FAKE_OLLAMA_TIMINGS,
  FAKE_OLLAMA_VERSION,
  type FakeOllamaOptions,
  ollamaModelName,
  startFakeOllama,
} from './ollama-server.js';
export {
  FAKE_ARGUMENT_PIECE,
  FAKE_OPENAI_MODELS,
  type FakeOpenAiOptions,
  float32Base64,
  openAiError,
  startFakeOpenAi,
} from './openai-server.js';
