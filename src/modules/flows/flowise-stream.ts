import { AppError } from '../../core/errors.js';
import type { Prediction } from './prediction-service.js';

/**
 * One frame as Flowise writes it: an ignored `message:` field, then the event as JSON on one `data:`
 * line. The SDK reads only `data:` lines and JSON-parses them whole, so a frame never spans lines.
 */
function frame(event: string, data: unknown): string {
  return `message:\ndata:${JSON.stringify({ event, data })}\n\n`;
}

/**
 * Flowise's stream: `start` with the first token, every token (the first again, as Flowise sends
 * it), `sourceDocuments` of a rag flow or a retriever tool, a Tool Agent's `usedTools`, `metadata`,
 * then `end` `[DONE]`. A failure after the first
 * frame is an `error` event (its message) followed by `end`.
 */
export async function* flowiseEvents(prediction: Prediction): AsyncGenerator<string> {
  try {
    let started = false;
    for await (const token of prediction.tokens) {
      if (!started) {
        started = true;
        yield frame('start', token);
      }
      // An empty token only starts the stream (a Tool Agent's first answer that calls tools).
      if (token !== '') yield frame('token', token);
    }
    if (prediction.sourceDocuments.length > 0) yield frame('sourceDocuments', prediction.sourceDocuments);
    if (prediction.usedTools && prediction.usedTools.length > 0)
      yield frame('usedTools', prediction.usedTools);
    yield frame('metadata', metadataOf(prediction));
  } catch (error) {
    const message = error instanceof AppError ? error.message : 'The model failed mid-answer';
    yield frame('error', message);
  }
  yield frame('end', '[DONE]');
}

export function metadataOf(p: Prediction) {
  return {
    chatId: p.chatId,
    chatMessageId: p.chatMessageId,
    question: p.question,
    sessionId: p.sessionId,
    memoryType: p.memoryType,
    ...(p.executionId ? { executionId: p.executionId } : {}),
  };
}
