import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/core/errors.js';
import { errorBody, errorFormatSchemaName, registerErrorFormat } from '../../src/core/http/error-handler.js';

describe('error body formats', () => {
  it('a registered format renders its body with the platform fields beside it; unknown names get the platform body', () => {
    const render = (_error: AppError, message: string, platform: object) => ({
      problem: message,
      ...platform,
    });
    registerErrorFormat('test-product', render, { schemaName: 'TestProductError' });
    const error = new AppError('VALIDATION_ERROR', 'Invalid body', {
      fields: [{ field: 'body.x', message: 'is bad' }],
    });
    const body = errorBody('test-product', error, 'req-1');
    expect(body).toMatchObject({
      problem: 'Invalid body: body.x is bad',
      code: 'VALIDATION_ERROR',
      requestId: 'req-1',
    });
    expect(errorFormatSchemaName('test-product')).toBe('TestProductError');
    expect(errorBody('nobody-registered-this', error, 'req-2')).toMatchObject({
      error: true,
      message: 'Invalid body',
    });
    expect(errorFormatSchemaName('platform')).toBeNull();
    expect(() => registerErrorFormat('test-product', (e) => ({ e }), { schemaName: 'X' })).toThrow(/twice/);
    expect(() => registerErrorFormat('platform', render, { schemaName: 'X' })).toThrow();
  });

  it('core/http names no compatible product in its code (each adapter registers its own renderer)', () => {
    const dir = join(import.meta.dirname, '../../src/core/http');
    const named: string[] = [];
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'openapi.ts'))
      for (const line of readFileSync(join(dir, file), 'utf8').split('\n'))
        if (!/^\s*(\/\/|\*|\/\*\*)/.test(line) && /'(ollama|openai|flowise|anthropic)'/i.test(line))
          named.push(`${file}: ${line.trim()}`);
    expect(named).toEqual([]);
  });
});
