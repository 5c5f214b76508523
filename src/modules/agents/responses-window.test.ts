import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../llm/index.js';
import { conversationWindow, MAX_CONVERSATION_MESSAGES } from './responses-window.js';

const turn = (i: number): ChatMessage[] => [
  { role: 'user', content: `question ${i}` },
  { role: 'assistant', content: `answer ${i}` },
];
const turns = (n: number) => Array.from({ length: n }, (_, i) => turn(i)).flat();

describe('conversationWindow: a previous_response_id chain within the bounds', () => {
  it('passes a chain within the bounds whole', () => {
    const earlier = turns(3);
    const added: ChatMessage[] = [{ role: 'user', content: 'next' }];
    expect(conversationWindow(earlier, added, 'disabled')).toEqual([...earlier, ...added]);
  });

  it('refuses a chain past 10,000 messages unless truncation is auto, naming the way out', () => {
    const earlier = turns(MAX_CONVERSATION_MESSAGES / 2);
    const added: ChatMessage[] = [{ role: 'user', content: 'one more' }];
    expect(() => conversationWindow(earlier, added, 'disabled')).toThrow(/too long/);
    try {
      conversationWindow(earlier, added, 'disabled');
    } catch (error) {
      expect(JSON.stringify((error as { details?: unknown }).details)).toMatch(/truncation to \\"auto\\"/);
    }
  });

  it('auto drops the oldest turns, opening on a user message, and keeps what this turn adds', () => {
    const earlier = [{ role: 'tool', content: 'orphan', toolCallId: 'x' } as ChatMessage, ...turns(5_000)];
    const added: ChatMessage[] = [{ role: 'user', content: 'latest' }];
    const window = conversationWindow(earlier, added, 'auto');
    expect(window.length).toBeLessThanOrEqual(MAX_CONVERSATION_MESSAGES);
    expect(window[0]?.role).toBe('user');
    expect(window.at(-1)).toEqual({ role: 'user', content: 'latest' });
    expect(window.at(-2)).toEqual({ role: 'assistant', content: 'answer 4999' });
  });

  it('auto still refuses when this turn alone is over the bounds', () => {
    const added: ChatMessage[] = [{ role: 'user', content: 'x'.repeat(8_000_001) }];
    expect(() => conversationWindow(turns(2), added, 'auto')).toThrow(/too long/);
  });

  it('auto refuses rather than send a tool result without the call it answers', () => {
    const big = 'x'.repeat(3_000_000);
    const earlier: ChatMessage[] = [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: big },
      { role: 'assistant', content: big },
      { role: 'assistant', content: big },
    ];
    const added = [{ role: 'tool', content: 'result', toolCallId: 'c1' } as ChatMessage];
    expect(() => conversationWindow(earlier, added, 'auto')).toThrow(/too long/);
  });
});
