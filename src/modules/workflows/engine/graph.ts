import type { ConnectionTarget, WorkflowDefinition, WorkflowNode } from './types.js';

/** The shape of a workflow: nodes by name, who feeds whom. Built once per definition. */
export class WorkflowGraph {
  readonly nodes: ReadonlyMap<string, WorkflowNode>;
  private readonly parentsOf = new Map<
    string,
    Array<{ node: string; outputIndex: number; inputIndex: number }>
  >();

  constructor(readonly definition: WorkflowDefinition) {
    this.nodes = new Map(definition.nodes.map((n) => [n.name, n]));
    for (const [from, { main }] of Object.entries(definition.connections)) {
      main.forEach((targets, outputIndex) => {
        for (const t of targets ?? []) {
          const list = this.parentsOf.get(t.node) ?? [];
          list.push({ node: from, outputIndex, inputIndex: t.index });
          this.parentsOf.set(t.node, list);
        }
      });
    }
  }

  node(name: string): WorkflowNode | undefined {
    return this.nodes.get(name);
  }

  /** Targets fed by output `outputIndex` of `name`. */
  children(name: string, outputIndex: number): ConnectionTarget[] {
    return this.definition.connections[name]?.main[outputIndex] ?? [];
  }

  /** Every output's targets of `name`, per output index. */
  outputsOf(name: string): ConnectionTarget[][] {
    return this.definition.connections[name]?.main ?? [];
  }

  parents(name: string): Array<{ node: string; outputIndex: number; inputIndex: number }> {
    return this.parentsOf.get(name) ?? [];
  }

  /** The input indexes of `name` that some connection feeds (what a merge waits for). */
  connectedInputs(name: string): number[] {
    return [...new Set(this.parents(name).map((p) => p.inputIndex))].sort((a, b) => a - b);
  }
}
