import { describe, expect, it } from 'vitest';
import { LocalSlots, POLL_MS } from './throttle-slots.js';

describe('LocalSlots', () => {
  it('grants `limit` slots, holds them while in flight, frees each a window after its answer', async () => {
    let now = 0;
    const slots = new LocalSlots(2, 1000, () => now);
    const a = await slots.tryTake();
    const b = await slots.tryTake();
    expect('ticket' in a && 'ticket' in b).toBe(true);
    // Both in flight: nobody knows when one frees up, so look again soon.
    expect(await slots.tryTake()).toEqual({ waitMs: POLL_MS });

    now = 300;
    if ('ticket' in a) await slots.release(a.ticket);
    now = 500;
    expect(await slots.tryTake()).toEqual({ waitMs: 800 });
    now = 1299;
    expect(await slots.tryTake()).toEqual({ waitMs: 1 });
    now = 1300;
    expect('ticket' in (await slots.tryTake())).toBe(true);
  });
});
