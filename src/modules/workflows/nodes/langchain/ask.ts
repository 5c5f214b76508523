import type { ChatMessage } from '../../../llm/index.js';
import type { AiDocument, ChatModel } from './ai-parts.js';

/** The chains' one model call: the messages in, the answer's text out (no tools offered). */
export async function askText(model: ChatModel, messages: ChatMessage[]): Promise<string> {
  const answer = await model.chat(messages, undefined);
  let text = '';
  for await (const e of answer.events) if (e.type === 'delta' && e.content) text += e.content;
  return text;
}

/** LangChain's `formatDocumentsAsString`: the documents' text, a blank line apart. */
export function documentsText(documents: AiDocument[]): string {
  return documents.map((d) => d.pageContent).join('\n\n');
}

/**
 * A LangChain f-string template filled with `values` (`{name}`; `{{`/`}}` are braces). Values are
 * inserted as text, never read as templates themselves.
 */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    return name !== undefined && name in values ? (values[name] ?? '') : whole;
  });
}
