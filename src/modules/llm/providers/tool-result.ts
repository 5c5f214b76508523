import type { ChatMessage } from '../types.js';

/** What an Anthropic client writes for a failed tool, and what the dialects without a flag read. */
export const TOOL_ERROR_PREFIX = 'Error: ';

/**
 * A tool message's text for a provider with no error flag (OpenAI, Ollama): a failed tool's result
 * says so in its first word, the shape models trained on those APIs see for a failed call.
 */
export function toolResultText(message: ChatMessage): string {
  if (!message.isError || message.content.startsWith(TOOL_ERROR_PREFIX)) return message.content;
  return `${TOOL_ERROR_PREFIX}${message.content}`;
}
