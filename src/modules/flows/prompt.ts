import type { ChatMessage } from '../llm/index.js';

export interface Turn {
  role: 'user' | 'assistant';
  content: string;
}

interface PromptInput {
  systemPrompt: string;
  template: string;
  question: string;
  /** Retrieved passages and the caller's extra context, already joined. */
  context: string;
  /** Earlier turns (memory or the request's history), oldest first. */
  history: Turn[];
  vars: Record<string, unknown>;
}

const PLACEHOLDER = /\{(question|context|history|vars\.[A-Za-z0-9_]{1,100})\}/g;

function varText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function historyText(history: Turn[]): string {
  return history.map((t) => `${t.role === 'user' ? 'User' : 'Assistant'}: ${t.content}`).join('\n');
}

/**
 * The messages a flow sends: its system prompt, the earlier turns as messages (unless the template
 * places them with `{history}`), and the template filled in. One pass over the template: a question
 * or passage that contains `{context}` is not expanded again.
 */
export function buildMessages(input: PromptInput): ChatMessage[] {
  const placesHistory = input.template.includes('{history}');
  const filled = input.template.replace(PLACEHOLDER, (_whole, name: string) => {
    if (name === 'question') return input.question;
    if (name === 'context') return input.context;
    if (name === 'history') return historyText(input.history);
    return varText(input.vars[name.slice('vars.'.length)]);
  });
  const messages: ChatMessage[] = [];
  if (input.systemPrompt.trim() !== '') messages.push({ role: 'system', content: input.systemPrompt });
  if (!placesHistory)
    for (const turn of input.history) messages.push({ role: turn.role, content: turn.content });
  messages.push({ role: 'user', content: filled });
  return messages;
}

/** Flowise's history entries (`{role|type, content|message}`) as turns; empty ones dropped. */
export function turnsFromHistory(
  entries: ReadonlyArray<{ role?: string; type?: string; content?: string; message?: string }>,
): Turn[] {
  return entries.flatMap((e) => {
    const who = e.role ?? e.type;
    const content = e.content ?? e.message ?? '';
    if (content === '' || (who !== 'userMessage' && who !== 'apiMessage')) return [];
    return [{ role: who === 'userMessage' ? ('user' as const) : ('assistant' as const), content }];
  });
}
