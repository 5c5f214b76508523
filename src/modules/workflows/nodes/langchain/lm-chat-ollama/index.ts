import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { LANGCHAIN } from '../ai-parts.js';
import { ollamaModel } from '../ollama-wire.js';

const num = (min: number, max: number) => Type.Optional(Type.Number({ minimum: min, maximum: max }));
const int = (min: number, max: number) => Type.Optional(Type.Integer({ minimum: min, maximum: max }));

/** n8n's lmChatOllama options (LangChain's ChatOllama fields), sent as Ollama's `options`. */
const Options = Type.Object(
  {
    temperature: num(0, 2),
    topK: int(-1, 1_000),
    topP: num(0, 1),
    frequencyPenalty: num(-2, 2),
    presencePenalty: num(-2, 2),
    repeatPenalty: num(0, 10),
    numCtx: int(1, 1_048_576),
    numPredict: int(-2, 1_048_576),
    numBatch: int(1, 65_536),
    numGpu: int(-1, 1_000),
    mainGpu: int(0, 1_000),
    numThread: int(0, 1_024),
    keepAlive: Type.Optional(Type.String({ maxLength: 20 })),
    lowVram: Type.Optional(Type.Boolean()),
    penalizeNewline: Type.Optional(Type.Boolean()),
    useMLock: Type.Optional(Type.Boolean()),
    useMMap: Type.Optional(Type.Boolean()),
    vocabOnly: Type.Optional(Type.Boolean()),
    format: Type.Optional(Type.Enum(['default', 'json'] as const)),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 300, default: 'llama3.2' }),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** n8n's option names → Ollama's. */
const OPTION_NAMES: Record<string, string> = {
  temperature: 'temperature',
  topK: 'top_k',
  topP: 'top_p',
  frequencyPenalty: 'frequency_penalty',
  presencePenalty: 'presence_penalty',
  repeatPenalty: 'repeat_penalty',
  numCtx: 'num_ctx',
  numPredict: 'num_predict',
  numBatch: 'num_batch',
  numGpu: 'num_gpu',
  mainGpu: 'main_gpu',
  numThread: 'num_thread',
  lowVram: 'low_vram',
  penalizeNewline: 'penalize_newline',
  useMLock: 'use_mlock',
  useMMap: 'use_mmap',
  vocabOnly: 'vocab_only',
};

/**
 * n8n's Ollama Chat Model: `POST {baseUrl}/api/chat` with the `ollamaApi` credential (`baseUrl`, optional
 * `apiKey` as a bearer token). The base may be this platform's own Ollama surface.
 */
export const lmChatOllamaNode = defineSubNode({
  type: `${LANGCHAIN}.lmChatOllama`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_languageModel',
  async supply(ctx, itemIndex) {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.ollamaApi);
    if (!credId) throw new NodeOperationError('No ollamaApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const base = (cred.baseUrl || 'http://localhost:11434').replace(/\/+$/, '');
    if (!/^https?:\/\//.test(base)) throw new NodeOperationError(`The base URL '${base}' is not http(s)`);
    const options: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(p.options)) {
      const name = OPTION_NAMES[key];
      if (name && value !== undefined) options[name] = value;
    }
    const top: Record<string, unknown> = {};
    if (p.options.keepAlive) top.keep_alive = p.options.keepAlive;
    if (p.options.format === 'json') top.format = 'json';
    return ollamaModel(ctx.deps, {
      base,
      headers: cred.apiKey ? { authorization: `Bearer ${cred.apiKey}` } : {},
      model: p.model,
      options,
      top,
      timeoutMs: 120_000,
    });
  },
});
