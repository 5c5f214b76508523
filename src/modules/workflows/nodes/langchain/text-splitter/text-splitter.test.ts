import { describe, expect, it } from 'vitest';
import { testDeps, workflow } from '../../../engine/testing.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);
const one = (type: string, parameters: Record<string, unknown>) =>
  engine.validate(
    workflow([{ name: 'N', type: `@n8n/n8n-nodes-langchain.${type}`, typeVersion: 1, parameters }], []),
  );

describe('text splitters: chunkOverlap as n8n exports it', () => {
  it('text splitters take chunkOverlap as a number, or the `{}` some exports carry (no overlap)', () => {
    for (const type of [
      'textSplitterRecursiveCharacterTextSplitter',
      'textSplitterCharacterTextSplitter',
      'textSplitterTokenSplitter',
    ]) {
      expect(one(type, { chunkSize: 500, chunkOverlap: {} }), type).toEqual([]);
      expect(one(type, { chunkSize: 500, chunkOverlap: 30 }), type).toEqual([]);
      expect(
        one(type, { chunkSize: 500, chunkOverlap: 1.5 }).map((p) => p.path),
        type,
      ).toContain('nodes[0].parameters.chunkOverlap');
      expect(one(type, { chunkOverlap: { size: 3 } }).length, type).toBeGreaterThan(0);
    }
  });
});
