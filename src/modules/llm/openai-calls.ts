/**
 * The OpenAI calls that answer one whole body (no stream), shared by the routes and the batch runner:
 * a batch line is answered exactly as the same request on its own would be.
 */
import type { Static } from 'typebox';
import type { CallContext, Gateway } from './gateway.js';
import { base64Embedding, chatFromOpenAi, OpenAiWriter } from './openai-format.js';
import type { OpenAiChatBodyT, OpenAiEmbeddingsBodyT, OpenAiEmbeddingsResponse } from './openai-schemas.js';
import type { EmbedRequest } from './types.js';

export interface OpenAiAnswer<B = Record<string, unknown>> {
  body: B;
  headers: Record<string, string>;
}

/** A chat completion read whole (the caller checked `stream` is not true). */
export async function chatCompletionOnce(
  gateway: Gateway,
  ctx: CallContext,
  body: OpenAiChatBodyT,
): Promise<OpenAiAnswer> {
  const session = await gateway.chat(ctx, body.model, chatFromOpenAi(body));
  const writer = new OpenAiWriter(session.model, body.n ?? 1, body.logprobs === true);
  for await (const event of session.events) {
    const whole = writer.collect(event);
    if (whole) return { body: whole, headers: session.headers };
  }
  throw new Error('the model ended its answer without finishing');
}

/** Embeddings in OpenAI's list shape (token-id inputs and `user` go to providers that take them). */
export async function embeddingsOnce(
  gateway: Gateway,
  ctx: CallContext,
  body: OpenAiEmbeddingsBodyT,
): Promise<OpenAiAnswer<Static<typeof OpenAiEmbeddingsResponse>>> {
  const raw = typeof body.input === 'string' ? [body.input] : body.input;
  const tokens =
    typeof raw[0] === 'number' ? [raw as number[]] : Array.isArray(raw[0]) ? (raw as number[][]) : null;
  const input = tokens ? [] : (raw as string[]);
  const options: Omit<EmbedRequest, 'model' | 'input'> = {};
  if (body.dimensions !== undefined) options.dimensions = body.dimensions;
  if (tokens) options.tokens = tokens;
  if (body.user !== undefined) options.user = body.user;
  const result = await gateway.embed(ctx, body.model, input, options);
  const base64 = body.encoding_format === 'base64';
  return {
    headers: result.headers,
    body: {
      object: 'list' as const,
      data: result.embeddings.map((embedding, index) => ({
        object: 'embedding' as const,
        index,
        embedding: base64 ? base64Embedding(embedding) : embedding,
      })),
      model: result.model.name,
      usage: { prompt_tokens: result.promptTokens, total_tokens: result.promptTokens },
    },
  };
}
