import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTHING_FOUND_IN_KNOWLEDGE } from '../../src/modules/llm/builtin/extractive.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { loaded, processed } from './support.js';

/** builtin/extractive over the knowledge base, asked what the issue lists as bad input: clear and fast. */
describe('the extractive answerer on bad questions', () => {
  let p: TestPlatform;

  beforeAll(async () => {
    p = await createTestPlatform({ dialect: 'sqlite' });
    const doc = await loaded(p, {
      source: 'text',
      content: 'Standard shipping costs $6.95. Express shipping costs $18 and takes two days.',
    });
    await processed(p, doc.documentId);
  });
  afterAll(() => p?.close());

  const ask = async (content: string) => {
    const started = performance.now();
    const res = await p.request({
      method: 'POST',
      url: '/api/chat',
      payload: { model: 'builtin/extractive', stream: false, messages: [{ role: 'user', content }] },
    });
    return { res, ms: performance.now() - started };
  };

  it('searches a 10,000-word message by its question, its last sentence', async () => {
    const { res, ms } = await ask(
      `${'Some filler words here. '.repeat(2_500)}How much does express shipping cost?`,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().message.content).toMatch(
      /^Express shipping costs \$18 and takes two days\.\n\nSources: /,
    );
    expect(ms).toBeLessThan(5_000);
  });

  it('says it found nothing for a question of stop words only', async () => {
    const { res, ms } = await ask('what is the of and to it?');
    expect(res.statusCode).toBe(200);
    expect(res.json().message.content).toBe(NOTHING_FOUND_IN_KNOWLEDGE);
    expect(ms).toBeLessThan(2_000);
  });
});
