import { AppError, isAppError } from '../../core/errors.js';
import { functionCallItem } from './responses-format.js';
import type { ResponseTurn } from './responses-service.js';

type Item = Record<string, unknown>;

/**
 * A response as OpenAI streams it: `response.created`, then per output item `output_item.added`, its
 * text deltas or function call arguments, `output_item.done`, and `response.completed` (or
 * `response.failed`) last; every event numbered by `sequence_number`.
 */
export async function* responseEvents(
  turn: ResponseTurn,
  signal: AbortSignal,
  onUnexpected: (error: unknown) => void,
): AsyncGenerator<string> {
  let sequence = 0;
  const frame = (type: string, fields: Item) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  yield frame('response.created', { response: turn.started });
  yield frame('response.in_progress', { response: turn.started });
  let index = 0;
  let text: string | null = null;
  const item_id = turn.messageId;
  function* closeText(): Generator<string> {
    if (text === null) return;
    const part = { type: 'output_text', text, annotations: [], logprobs: [] };
    const at = { item_id, output_index: index, content_index: 0 };
    yield frame('response.output_text.done', { ...at, text, logprobs: [] });
    yield frame('response.content_part.done', { ...at, part });
    const item = { type: 'message', id: item_id, status: 'completed', role: 'assistant', content: [part] };
    yield frame('response.output_item.done', { output_index: index, item });
    text = null;
    index++;
  }
  const run = turn.run(signal);
  let finished = false;
  try {
    for (;;) {
      const next = await run.next();
      if (next.done) {
        finished = true;
        yield* closeText();
        yield frame('response.completed', { response: next.value });
        return;
      }
      const event = next.value;
      if (event.type === 'delta') {
        if (text === null) {
          text = '';
          const item = {
            type: 'message',
            id: item_id,
            status: 'in_progress',
            role: 'assistant',
            content: [],
          };
          yield frame('response.output_item.added', { output_index: index, item });
          yield frame('response.content_part.added', {
            item_id,
            output_index: index,
            content_index: 0,
            part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
          });
        }
        text += event.delta;
        yield frame('response.output_text.delta', {
          item_id,
          output_index: index,
          content_index: 0,
          delta: event.delta,
          logprobs: [],
        });
      } else if (event.type === 'tool.call') {
        yield* closeText();
        const item = functionCallItem(event);
        const at = { item_id: item.id, output_index: index };
        yield frame('response.output_item.added', {
          output_index: index,
          item: { ...item, arguments: '', status: 'in_progress' },
        });
        yield frame('response.function_call_arguments.delta', { ...at, delta: item.arguments });
        yield frame('response.function_call_arguments.done', { ...at, arguments: item.arguments });
        yield frame('response.output_item.done', { output_index: index, item });
        index++;
      }
    }
  } catch (error) {
    if (signal.aborted) return;
    if (!isAppError(error)) onUnexpected(error);
    const failure = isAppError(error)
      ? error
      : new AppError('UPSTREAM_ERROR', 'The response failed mid-answer');
    yield frame('response.failed', {
      response: {
        ...turn.started,
        status: 'failed',
        error: { code: failure.code.toLowerCase(), message: failure.message },
      },
    });
  } finally {
    // A consumer that stops between frames ends the turn's run too (its model call records itself
    // and gives its token hold back).
    if (!finished) await run.return(undefined as never).catch(() => undefined);
  }
}
