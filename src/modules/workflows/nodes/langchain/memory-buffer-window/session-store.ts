import type { ChatMessage } from '../../../../llm/index.js';

/**
 * Simple Memory's sessions, in this process (as n8n keeps them in its own): keyed by account, workflow and
 * session key so no account reads another's, bounded in sessions (least recently used go first), in
 * messages per session and in characters per message.
 */
const MAX_SESSIONS = 5_000;
const MAX_MESSAGES = 200;
const MAX_MESSAGE_CHARS = 20_000;

const sessions = new Map<string, ChatMessage[]>();

export function sessionKeyOf(tenant: string | undefined, workflowId: string, key: string): string {
  return `${tenant ?? ''}\u0000${workflowId}\u0000${key}`;
}

export function loadSession(key: string, lastMessages: number): ChatMessage[] {
  const list = sessions.get(key);
  if (!list) return [];
  sessions.delete(key);
  sessions.set(key, list);
  return lastMessages > 0 ? list.slice(-lastMessages) : [];
}

/** Forgets a session (the Chat Memory Manager's delete). */
export function clearSession(key: string): void {
  sessions.delete(key);
}

export function appendSession(key: string, messages: ChatMessage[]): void {
  const list = sessions.get(key) ?? [];
  sessions.delete(key);
  for (const m of messages) list.push({ role: m.role, content: m.content.slice(0, MAX_MESSAGE_CHARS) });
  if (list.length > MAX_MESSAGES) list.splice(0, list.length - MAX_MESSAGES);
  sessions.set(key, list);
  while (sessions.size > MAX_SESSIONS) {
    const oldest = sessions.keys().next().value;
    if (oldest === undefined) break;
    sessions.delete(oldest);
  }
}
