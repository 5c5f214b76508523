import type { ChatMessage, FileInput } from '../types.js';

/** Text documents: every dialect can carry them as text, Anthropic also as a text `document`. */
const TEXT_DOCUMENT = /^(text\/[a-z0-9.+-]+|application\/(json|xml|x-ndjson|yaml|x-yaml))$/;

export const isTextDocument = (mediaType: string): boolean => TEXT_DOCUMENT.test(mediaType);

/** A text document as a message's text: its name and type on a line, then its contents. */
export function documentText(file: FileInput): string {
  return `--- ${file.filename ?? 'file'} (${file.mediaType}) ---\n${Buffer.from(file.data, 'base64').toString('utf8')}`;
}

/**
 * Where a chat holds a document a text-only dialect (Ollama) cannot carry: the first file that is
 * not text, as `messages.<i>`, or null.
 */
export function firstBinaryDocument(
  messages: readonly ChatMessage[],
): { index: number; file: FileInput } | null {
  for (const [index, m] of messages.entries())
    for (const file of m.files ?? []) if (!isTextDocument(file.mediaType)) return { index, file };
  return null;
}
