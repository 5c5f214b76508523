import { describe, expect, it } from 'vitest';
import { CallSlots, toolCallsIn } from './call-slots.js';

const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } };

describe('CallSlots: tool calls under way per account', () => {
  it('counts every tool call of a batch', () => {
    expect(toolCallsIn(call)).toBe(1);
    expect(toolCallsIn([call, call, { jsonrpc: '2.0', method: 'ping', id: 2 }, null, 3])).toBe(2);
    expect(toolCallsIn({ method: 'tools/list' })).toBe(0);
  });

  it("takes a batch's slots together, or refuses it whole", () => {
    const slots = new CallSlots(8);
    const release = slots.acquire('a', 6);
    expect(slots.open('a')).toBe(6);
    expect(() => slots.acquire('a', 3)).toThrow(/under way/);
    expect(slots.open('a')).toBe(6);
    const two = slots.acquire('a', 2);
    expect(slots.open('a')).toBe(8);
    expect(slots.acquire('b', 8)).toBeTypeOf('function');
    release();
    two();
    two();
    expect(slots.open('a')).toBe(0);
  });

  it('refuses a batch of more calls than the bound, whatever else runs', () => {
    expect(() => new CallSlots(8).acquire('a', 20)).toThrow(/holds 20 MCP tool calls; at most 8/);
  });
});
