import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchSize, LlmRequestLog } from '../../src/modules/llm/request-log.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';

const dialects = await testDialects();

describe('request log batch sizes', () => {
  it('splits any count into full batches and powers of two, so few statement texts exist', () => {
    const sizes = new Set<number>();
    for (let count = 1; count <= 1_000; count++) {
      let written = 0;
      while (written < count) {
        const size = batchSize(count - written);
        expect(size).toBeGreaterThan(0);
        sizes.add(size);
        written += size;
      }
      expect(written).toBe(count);
    }
    expect([...sizes].sort((a, b) => a - b)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 200]);
  });
});

describe.each(dialects)('request log flushes on %s', (dialect) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await createTestPlatform({ dialect });
  });
  afterAll(() => p?.close());

  it('writes every row and the day’s totals whatever the count pending', async () => {
    const log = new LlmRequestLog(p.ctx.db, p.ctx.clock, (error) => {
      throw error;
    });
    let recorded = 0;
    // Counts that take several sizes each (437 = 2×200 + 32 + 4 + 1), and one of a single row.
    for (const count of [437, 1, 255]) {
      for (let i = 0; i < count; i++)
        log.record({
          accountId: p.accountId,
          keyId: 'key_batches',
          endpoint: 'chat.completions',
          model: 'm',
          answeredBy: 'm',
          provider: 'openai',
          stream: false,
          promptTokens: 2,
          completionTokens: 3,
          tokensEstimated: false,
          latencyMs: 1,
          ttftMs: 1,
          status: 'success',
          httpStatus: 200,
          errorCode: null,
          cached: false,
          fallbacksTried: 0,
        });
      recorded += count;
      await log.flush();
      const rows = await p.ctx.db
        .selectFrom('llm_requests')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('key_id', '=', 'key_batches')
        .executeTakeFirstOrThrow();
      expect(Number(rows.n)).toBe(recorded);
    }
    const [total] = await log.tokensByModel(p.accountId, { keyId: 'key_batches', from: '0000', to: '9999' });
    expect(total).toMatchObject({
      requests: recorded,
      promptTokens: 2 * recorded,
      completionTokens: 3 * recorded,
    });
  });
});
