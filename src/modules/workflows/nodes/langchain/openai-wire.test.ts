import { describe, expect, it } from 'vitest';
import { errorText } from './openai-wire.js';

describe("an OpenAI-compatible server's error text", () => {
  it("reads OpenAI's error object, a bare error string, and Mistral's top-level message", () => {
    expect(
      errorText({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }),
    ).toBe('Incorrect API key provided');
    expect(errorText({ error: 'model not found' })).toBe('model not found');
    expect(errorText({ message: 'Unauthorized', request_id: 'r1' })).toBe('Unauthorized');
    expect(errorText({ detail: 'x' })).toBe('no error message');
    expect(errorText(null)).toBe('no error message');
  });
});
