import { describe, expect, it } from 'vitest';
import { evaluateArithmetic } from '../../../../core/arithmetic.js';
import { definitionFromBody } from '../../definitions/definitions.js';
import { fixedNow } from '../../engine/testing.js';
import type { WorkflowDefinition } from '../../engine/types.js';
import { validateWorkflow } from '../../engine/validate.js';
import type { WorkflowBodyT } from '../../schemas.js';
import { defaultNodeRegistry } from '../catalogue.js';

const limits = { maxWaitMs: 86_400_000, now: fixedNow };

function agentWorkflow(extra: Record<string, unknown> = {}): WorkflowDefinition {
  return {
    id: 'wf_ai',
    name: 'ai',
    nodes: [
      {
        id: 't',
        name: 'Start',
        type: 'n8n-nodes-base.manualTrigger',
        typeVersion: 1,
        position: [0, 0],
        parameters: {},
      },
      {
        id: 'a',
        name: 'AI Agent',
        type: '@n8n/n8n-nodes-langchain.agent',
        typeVersion: 3.1,
        position: [1, 0],
        parameters: { promptType: 'define', text: 'hi' },
      },
      {
        id: 'm',
        name: 'Model',
        type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
        typeVersion: 1.2,
        position: [1, 1],
        parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
      },
      {
        id: 'n',
        name: 'NoOp',
        type: 'n8n-nodes-base.noOp',
        typeVersion: 1,
        position: [2, 0],
        parameters: {},
      },
    ],
    connections: {
      Start: { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
      Model: { ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]] },
      ...extra,
    } as WorkflowDefinition['connections'],
  };
}

describe("n8n's ai_* sub-node connections", () => {
  it('a chat model attached to an agent validates', () => {
    expect(validateWorkflow(agentWorkflow(), defaultNodeRegistry, limits)).toEqual([]);
  });

  it('refuses a sub-node attached to a node that takes no such input, an unknown type, a main input into a sub-node', () => {
    const def = agentWorkflow({
      Model: { ai_languageModel: [[{ node: 'NoOp', type: 'ai_languageModel', index: 0 }]] },
      NoOp: { main: [[{ node: 'Model', type: 'main', index: 0 }]], ai_bogus: [[]] },
    });
    const messages = validateWorkflow(def, defaultNodeRegistry, limits).map((p) => `${p.path}: ${p.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        "connections.Model.ai_languageModel[0][0].node: node 'NoOp' (n8n-nodes-base.noOp) takes no ai_languageModel",
        "connections.NoOp.ai_bogus: unknown connection type 'ai_bogus'",
        "connections.NoOp.main[0][0].index: node 'Model' takes no input",
      ]),
    );
  });

  it('refuses a node connected by a type it does not supply', () => {
    const def = agentWorkflow({ Model: { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] } });
    const messages = validateWorkflow(def, defaultNodeRegistry, limits).map((p) => p.message);
    expect(messages).toContain(
      "node 'Model' (@n8n/n8n-nodes-langchain.lmChatOpenAi) does not supply ai_tool",
    );
  });

  it('an imported body keeps its sub-node connections as given (no main added)', () => {
    const def = agentWorkflow();
    const body = {
      name: def.name,
      nodes: def.nodes,
      connections: def.connections,
    } as unknown as WorkflowBodyT;
    const saved = definitionFromBody('wf_ai', body);
    expect(saved.connections.Model).toEqual({
      ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]],
    });
  });
});

describe('calculator arithmetic', () => {
  it.each([
    ['5*5', 25],
    ['5 * 3', 15],
    ['2^10', 1024],
    ['-(1 + 2) * 3', -9],
    ['sqrt(16) + max(1, 2)', 6],
    ['10 % 4', 2],
  ])('%s = %d', (expr, value) => {
    expect(evaluateArithmetic(expr)).toBe(value);
  });

  it.each([
    'process.exit(1)',
    'constructor',
    '1 +',
    '(((1)',
    '1e999999'.repeat(200),
    `${'('.repeat(100)}1${')'.repeat(100)}`,
  ])('refuses %s', (expr) => {
    expect(() => evaluateArithmetic(expr)).toThrow();
  });
});
