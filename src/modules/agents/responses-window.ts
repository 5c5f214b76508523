import { validationError } from '../../core/errors.js';
import type { ChatMessage } from '../llm/index.js';

/** The most messages a Responses turn sends its model: the gateway's own bound on a chat request. */
export const MAX_CONVERSATION_MESSAGES = 10_000;
/** The most characters of messages a turn sends and stores (each turn stores its whole transcript). */
export const MAX_CONVERSATION_CHARS = 8_000_000;

const sizeOf = (m: ChatMessage) => JSON.stringify(m).length;

/**
 * A `previous_response_id` chain's messages within the bounds, as OpenAI's `truncation` says: `auto`
 * drops the oldest turns (from a user message on, so no tool result is left without its call);
 * `disabled` (the default) refuses the turn with a 400, as OpenAI does when a chain outgrows the
 * context. The messages this turn adds are never dropped.
 */
export function conversationWindow(
  earlier: ChatMessage[],
  added: ChatMessage[],
  truncation: 'auto' | 'disabled',
): ChatMessage[] {
  const sizes = [...earlier, ...added].map(sizeOf);
  let chars = sizes.reduce((a, b) => a + b, 0);
  let count = sizes.length;
  const fits = () => count <= MAX_CONVERSATION_MESSAGES && chars <= MAX_CONVERSATION_CHARS;
  if (fits()) return [...earlier, ...added];
  const over = () =>
    validationError('The conversation is too long', [
      {
        field: truncation === 'auto' ? 'input' : 'previous_response_id',
        message:
          `the conversation would send ${count} messages (${chars} characters); a response sends at most ` +
          `${MAX_CONVERSATION_MESSAGES} messages and ${MAX_CONVERSATION_CHARS} characters` +
          (truncation === 'auto' ? '' : ': set truncation to "auto" to drop the oldest turns'),
      },
    ]);
  if (truncation !== 'auto') throw over();
  let start = 0;
  while (start < earlier.length && !fits()) {
    chars -= sizes[start] ?? 0;
    count--;
    start++;
  }
  // A window opens on a user turn: a tool result or an assistant's call alone would confuse a model.
  while (start < earlier.length && earlier[start]?.role !== 'user') {
    chars -= sizes[start] ?? 0;
    count--;
    start++;
  }
  // Everything earlier dropped while this turn answers a tool call: the call would be gone with it.
  if (!fits() || (start === earlier.length && added[0]?.role !== 'user')) throw over();
  return [...earlier.slice(start), ...added];
}
