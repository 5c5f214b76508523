import { describe, expect, it } from 'vitest';
import { validatorFor } from './structured-output.js';

describe('validatorFor (output parsers’ JSON schemas)', () => {
  it('two schemas with the same $id (two workflows, two accounts) each check their own shape', () => {
    const text = validatorFor({ $id: 'answer', type: 'object', properties: { x: { type: 'string' } } });
    const number = validatorFor({ $id: 'answer', type: 'object', properties: { x: { type: 'number' } } });
    expect(text({ x: 's' })).toBe(true);
    expect(number({ x: 1 })).toBe(true);
    expect(number({ x: 's' })).toBe(false);
  });

  it('keeps working past the compiled-schema bound (the Ajv instance is renewed with its cache)', () => {
    for (let i = 0; i < 600; i++) {
      const validate = validatorFor({ type: 'object', properties: { [`k${i}`]: { type: 'integer' } } });
      expect(validate({ [`k${i}`]: 1 })).toBe(true);
      expect(validate({ [`k${i}`]: 'x' })).toBe(false);
    }
  });
});
