import type { ChatMessage, Unsupported } from '../types.js';

/**
 * OpenAI message fields the other dialects have no word for: a participant's `name`, and an image's
 * `detail` other than `auto` (what every model does unasked). A provider of another dialect refuses
 * the first one by name (`who`: "an Ollama model"), rather than answer as if it had not been sent.
 */
export function openAiOnlyMessageField(messages: readonly ChatMessage[], who: string): Unsupported | null {
  for (const [i, m] of messages.entries()) {
    if (m.name !== undefined)
      return {
        field: `body.messages.${i}.name`,
        reason: `is not taken by ${who}: its messages have no name`,
      };
    const detail = m.imageDetails?.find((d) => d.detail !== 'auto');
    if (detail)
      return {
        field: `body.messages.${i}.content.${detail.part}.image_url.detail`,
        reason: `is '${detail.detail}', but ${who} has no image detail levels (send 'auto' or none)`,
      };
  }
  return null;
}
