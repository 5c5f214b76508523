import {
  AI_CONNECTION_TYPES,
  type AiConnectionType,
  type ConnectionTarget,
  type WorkflowDefinition,
  type WorkflowNode,
} from './types.js';

/** A sub-node attached to a root node, and the root's input index it is attached at. */
export interface AttachedNode {
  node: WorkflowNode;
  inputIndex: number;
}

/** The shape of a workflow: nodes by name, who feeds whom. Built once per definition. */
export class WorkflowGraph {
  readonly nodes: ReadonlyMap<string, WorkflowNode>;
  private readonly parentsOf = new Map<
    string,
    Array<{ node: string; outputIndex: number; inputIndex: number }>
  >();
  /** `${rootName}\u0000${connectionType}` → the sub-nodes attached there (n8n's ai_* connections). */
  private readonly attachedTo = new Map<string, AttachedNode[]>();

  constructor(readonly definition: WorkflowDefinition) {
    this.nodes = new Map(definition.nodes.map((n) => [n.name, n]));
    for (const [from, outputs] of Object.entries(definition.connections)) {
      (outputs.main ?? []).forEach((targets, outputIndex) => {
        for (const t of targets ?? []) {
          const list = this.parentsOf.get(t.node) ?? [];
          list.push({ node: from, outputIndex, inputIndex: t.index });
          this.parentsOf.set(t.node, list);
        }
      });
      const source = this.nodes.get(from);
      if (!source) continue;
      for (const type of AI_CONNECTION_TYPES) {
        for (const targets of outputs[type] ?? []) {
          for (const t of targets ?? []) {
            const key = `${t.node}\u0000${type}`;
            const list = this.attachedTo.get(key) ?? [];
            list.push({ node: source, inputIndex: t.index });
            this.attachedTo.set(key, list);
          }
        }
      }
    }
    for (const list of this.attachedTo.values()) list.sort((a, b) => a.inputIndex - b.inputIndex);
  }

  node(name: string): WorkflowNode | undefined {
    return this.nodes.get(name);
  }

  /** The enabled sub-nodes attached to `root` by `type`, by input index (a fallback model is index 1). */
  attached(root: string, type: AiConnectionType): AttachedNode[] {
    return (this.attachedTo.get(`${root}\u0000${type}`) ?? []).filter((a) => !a.node.disabled);
  }

  /** Targets fed by output `outputIndex` of `name`. */
  children(name: string, outputIndex: number): ConnectionTarget[] {
    return this.definition.connections[name]?.main?.[outputIndex] ?? [];
  }

  /** Every output's targets of `name`, per output index. */
  outputsOf(name: string): ConnectionTarget[][] {
    return this.definition.connections[name]?.main ?? [];
  }

  parents(name: string): Array<{ node: string; outputIndex: number; inputIndex: number }> {
    return this.parentsOf.get(name) ?? [];
  }

  /** Every node upstream of `name` by main connections, nearest first (n8n's `getParentNodes`). */
  ancestors(name: string): WorkflowNode[] {
    const seen = new Set<string>([name]);
    const found: WorkflowNode[] = [];
    for (let queue = [name]; queue.length > 0; ) {
      const next: string[] = [];
      for (const current of queue)
        for (const parent of this.parents(current)) {
          if (seen.has(parent.node)) continue;
          seen.add(parent.node);
          const node = this.nodes.get(parent.node);
          if (node) found.push(node);
          next.push(parent.node);
        }
      queue = next;
    }
    return found;
  }

  /** The input indexes of `name` that some connection feeds (what a merge waits for). */
  connectedInputs(name: string): number[] {
    return [...new Set(this.parents(name).map((p) => p.inputIndex))].sort((a, b) => a - b);
  }
}
