import { describe, expect, it } from 'vitest';
import { testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

describe('Simple Memory: contextWindowLength as n8n takes it', () => {
  it('chat memories take a window past 100 exchanges (n8n sets no maximum), up to 1,000', () => {
    const memory = (contextWindowLength: number) =>
      engine.validate(
        workflow(
          [
            {
              name: 'M',
              type: '@n8n/n8n-nodes-langchain.memoryBufferWindow',
              typeVersion: 1.3,
              parameters: { sessionIdType: 'customKey', sessionKey: 'k', contextWindowLength },
            },
          ],
          [],
        ),
      );
    expect(memory(200)).toEqual([]);
    expect(memory(1_001).map((p) => p.path)).toEqual(['nodes[0].parameters.contextWindowLength']);
  });
});
