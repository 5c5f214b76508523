import { describe, expect, it } from 'vitest';
import { events, type Turn } from '../../src/modules/agents/messaging.js';
import type { ResponseTurn } from '../../src/modules/agents/responses-service.js';
import { responseEvents } from '../../src/modules/agents/responses-stream.js';

/**
 * A turn's run that streams deltas and notes when it is closed: the model call under a real run
 * settles its record and its token hold in that `finally`.
 */
function closingRun() {
  const state = { closed: false };
  async function* run(): AsyncGenerator<{ type: 'delta'; delta: string }, never> {
    try {
      for (;;) yield { type: 'delta', delta: 'x' };
    } finally {
      state.closed = true;
    }
  }
  return { state, run };
}

describe('a stream whose consumer stops between events ends the run under it', () => {
  it('agent turn events', async () => {
    const { state, run } = closingRun();
    const turn = { conversationId: 'c', runId: 'r', userMessage: null, run } as unknown as Turn;
    const stream = events(turn, new AbortController().signal, () => {});
    expect((await stream.next()).value).toMatchObject({ type: 'message.delta' });
    expect(state.closed).toBe(false);
    await stream.return(undefined);
    expect(state.closed).toBe(true);
  });

  it('Responses API events', async () => {
    const { state, run } = closingRun();
    const turn = { started: { id: 'resp' }, messageId: 'msg', run } as unknown as ResponseTurn;
    const stream = responseEvents(turn, new AbortController().signal, () => {});
    for (let i = 0; i < 5; i++) await stream.next();
    expect(state.closed).toBe(false);
    await stream.return(undefined);
    expect(state.closed).toBe(true);
  });
});
