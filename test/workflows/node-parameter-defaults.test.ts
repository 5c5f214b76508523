import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { NodeRegistry } from '../../src/modules/workflows/engine/node-type.js';
import { converted, withDefaults } from '../../src/modules/workflows/engine/parameters.js';
import type { WorkflowNode } from '../../src/modules/workflows/engine/types.js';
import { allNodeTypes } from '../../src/modules/workflows/nodes/index.js';
import { FIXTURES } from './support/n8n-fixtures.js';

/**
 * The engine applies defaults and conversions with copies of each node schema made for speed
 * (engine/value-schemas.ts). Over every node of every vendored n8n workflow, and over every node
 * type with no parameters, both must give exactly what TypeBox gives with the schema as written.
 */
const registry = new NodeRegistry(allNodeTypes);

function workflowFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name === 'harness' || name === 'expressions' ? [] : workflowFiles(path);
    return name.endsWith('.json') ? [path] : [];
  });
}

const nodes = workflowFiles(FIXTURES).flatMap((file) => {
  const nodes = (JSON.parse(readFileSync(file, 'utf8')) as { nodes?: WorkflowNode[] }).nodes ?? [];
  return nodes.map((node) => ({ node, type: registry.get(node.type, node.typeVersion) }));
});

describe("node parameters' defaults and conversions are TypeBox's", () => {
  it('for every node of the vendored n8n workflows', () => {
    let compared = 0;
    for (const { node, type } of nodes) {
      if (!type) continue;
      const given = node.parameters ?? {};
      const at = `${node.type}@${node.typeVersion}`;
      expect(withDefaults(type.schema, given), at).toEqual(
        Value.Default(type.schema, structuredClone(given)),
      );
      expect(converted(type.schema, structuredClone(given)), at).toEqual(
        Value.Convert(type.schema, structuredClone(given)),
      );
      compared++;
    }
    expect(compared).toBeGreaterThan(300);
  });

  it('for every node type with no parameters', () => {
    for (const type of allNodeTypes)
      expect(withDefaults(type.schema, {}), type.type).toEqual(Value.Default(type.schema, {}));
  });
});
