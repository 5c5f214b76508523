import { describe, expect, it } from 'vitest';
import { ctx, jsonOf, testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

async function run(type: string, parameters: Record<string, unknown>) {
  const def = workflow(
    [
      { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
      { name: 'N', type, typeVersion: 1, parameters },
    ],
    [['T', 'N']],
  );
  const out = await engine.run(def, { nodeName: 'T', items: [{ json: { keep: true } }] }, ctx);
  return { out: jsonOf(out.state, 'N'), error: out.state.error };
}

describe('n8n-nodes-base.debugHelper', () => {
  it('throws the given error; out of memory is a bounded node error, never an allocation', async () => {
    expect((await run('n8n-nodes-base.debugHelper', { throwErrorMessage: 'boom' })).error?.message).toBe(
      'boom',
    );
    const oom = await run('n8n-nodes-base.debugHelper', { category: 'oom', memorySizeValue: 100_000 });
    expect(oom.error?.message).toBe('Out of memory is not simulated on this platform');
    expect((await run('n8n-nodes-base.debugHelper', { category: 'doNothing' })).out).toEqual([]);
  });

  it('generates seeded random data: the same seed gives the same records; counts are bounded', async () => {
    const p = { category: 'randomData', randomDataType: 'uuid', randomDataSeed: 'n8n', randomDataCount: 3 };
    const first = await run('n8n-nodes-base.debugHelper', p);
    expect(first.out).toHaveLength(3);
    expect(first.out[0]?.uuid).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect((await run('n8n-nodes-base.debugHelper', p)).out).toEqual(first.out);
    const single = await run('n8n-nodes-base.debugHelper', {
      ...p,
      randomDataType: 'nanoid',
      nanoidLength: '5',
      randomDataSingleArray: true,
    });
    expect(
      ((single.out[0]?.generatedItems ?? []) as Array<{ nanoId: string }>).map((g) => g.nanoId.length),
    ).toEqual([5, 5, 5]);
    expect(
      (await run('n8n-nodes-base.debugHelper', { ...p, randomDataCount: 1_000_000 })).error?.message,
    ).toBe('At most 10000 random records can be generated at once');
  });
});

describe('n8n-nodes-base.executionData and the n8n training nodes', () => {
  it('passes items through Execution Data and bounds the saved keys', async () => {
    const saved = { dataToSave: { values: [{ key: 'user', value: '42' }] } };
    expect((await run('n8n-nodes-base.executionData', saved)).out).toEqual([{ keep: true }]);
    const many = {
      dataToSave: { values: Array.from({ length: 11 }, (_, i) => ({ key: `k${i}`, value: 'v' })) },
    };
    expect((await run('n8n-nodes-base.executionData', many)).error?.message).toBe(
      'At most 10 keys of execution data can be saved',
    );
  });

  it('serves the training customers and messenger answers', async () => {
    const all = await run('n8n-nodes-base.n8nTrainingCustomerDatastore', {
      operation: 'getAllPeople',
      limit: 2,
    });
    expect(all.out.map((c) => c.name)).toEqual(['Jay Gatsby', 'José Arcadio Buendía']);
    const sent = await run('n8n-nodes-base.n8nTrainingCustomerMessenger', { customerId: '7', message: 'hi' });
    expect(sent.out).toEqual([{ output: 'Sent message to customer 7:  hi' }]);
  });
});
