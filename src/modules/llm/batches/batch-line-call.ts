/**
 * One batch line: its body checked as the route's parser and schema would check it, then answered as
 * the route would.
 */
import { Compile } from 'typebox/compile';
import { AppError } from '../../../core/errors.js';
import { assertSafeBody } from '../../../core/http/json-body.js';
import type { CallContext, Gateway } from '../gateway.js';
import { chatCompletionOnce, embeddingsOnce } from '../openai-calls.js';
import {
  OpenAiChatBody,
  type OpenAiChatBodyT,
  OpenAiEmbeddingsBody,
  type OpenAiEmbeddingsBodyT,
} from '../openai-schemas.js';
import type { BatchEndpoint } from './batch-input.js';

const chatBody = Compile(OpenAiChatBody);
const embeddingsBody = Compile(OpenAiEmbeddingsBody);

/** The body as `T`, or a 400 naming the first field that is wrong (as the route's validation would). */
function checked<T>(
  check: {
    Check(v: unknown): boolean;
    Errors(v: unknown): Iterable<{ instancePath: string; message: string }>;
  },
  body: unknown,
): T {
  if (check.Check(body)) return body as T;
  const first = [...check.Errors(body)][0];
  const field = `body${(first?.instancePath ?? '').replaceAll('/', '.')}`;
  const message = first?.message ?? 'does not match the schema';
  throw new AppError('VALIDATION_ERROR', `Invalid body: ${field} ${message}`, {
    fields: [{ field, message }],
  });
}

export async function lineCall(
  gateway: Gateway,
  endpoint: BatchEndpoint,
  body: Record<string, unknown>,
  ctx: CallContext,
): Promise<{ status: number; body: unknown }> {
  // The body parser's checks first, as for the same request alone: a line was read by JSON.parse,
  // and the schema's recursive walk must not meet a body nested thousands deep.
  assertSafeBody(body);
  const answer =
    endpoint === '/v1/chat/completions'
      ? await chatCompletionOnce(gateway, ctx, checked<OpenAiChatBodyT>(chatBody, body))
      : await embeddingsOnce(gateway, ctx, checked<OpenAiEmbeddingsBodyT>(embeddingsBody, body));
  return { status: 200, body: answer.body };
}
