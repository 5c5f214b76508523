import { validationError } from '../../../core/errors.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../../core/http/json-guard.js';
import { NODE_TYPES, type NodeRole } from './node-types.js';

/** Nodes a canvas may hold: Flowise's own flows have tens; the cap bounds parsing and conversion. */
export const MAX_NODES = 200;
export const MAX_EDGES = 1_000;
/** Longest `flowData` text (the JSON of the canvas). */
export const MAX_FLOW_DATA_CHARS = 2_000_000;

export interface CanvasNode {
  id: string;
  /** Flowise's node type (`data.name`: chatOpenAI, conversationChain…). */
  name: string;
  role: NodeRole;
  inputs: Record<string, unknown>;
  /** The credential the node names (`data.credential`, Flowise's credential id); '' when none. */
  credential: string;
}

/** A checked canvas: its nodes by id, the edges between them, and the one node that answers. */
export interface Canvas {
  nodes: Map<string, CanvasNode>;
  edges: Array<{ source: string; target: string; targetHandle: string }>;
  ending: CanvasNode;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const fail = (message: string, field = 'flowData') => validationError(message, [{ field, message }]);

/**
 * Reads Flowise's canvas JSON and checks it: its size, node types this platform runs (the unknown
 * ones named), edges between nodes it has, no cycle, and exactly one ending node that is a chain.
 */
export function parseFlowData(text: string): Canvas {
  if (text.length > MAX_FLOW_DATA_CHARS)
    throw fail(`flowData is longer than ${MAX_FLOW_DATA_CHARS} characters`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw fail('flowData is not JSON');
  }
  // Walked without recursion: a canvas nested thousands deep would overflow every later walk (and its save).
  if (nestedDeeperThan(raw)) throw fail(`flowData is nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (!isObject(raw) || !Array.isArray(raw.nodes) || !Array.isArray(raw.edges))
    throw fail('flowData must be an object with nodes and edges arrays');
  if (raw.nodes.length > MAX_NODES)
    throw fail(`flowData has ${raw.nodes.length} nodes; a chatflow holds at most ${MAX_NODES}`);
  if (raw.edges.length > MAX_EDGES)
    throw fail(`flowData has ${raw.edges.length} edges; a chatflow holds at most ${MAX_EDGES}`);
  const nodes = readNodes(raw.nodes);
  const edges = readEdges(raw.edges, nodes);
  const ending = endingNode(nodes, edges);
  return { nodes, edges, ending };
}

function readNodes(list: unknown[]): Map<string, CanvasNode> {
  const nodes = new Map<string, CanvasNode>();
  const unknown = new Set<string>();
  for (const [i, node] of list.entries()) {
    const data = isObject(node) ? node.data : undefined;
    const id = isObject(node) ? node.id : undefined;
    if (
      typeof id !== 'string' ||
      id === '' ||
      id.length > 200 ||
      !isObject(data) ||
      typeof data.name !== 'string'
    )
      throw fail(`flowData.nodes[${i}] needs an id and data.name`, `flowData.nodes[${i}]`);
    if (nodes.has(id)) throw fail(`flowData has two nodes with id '${id}'`, `flowData.nodes[${i}].id`);
    const role = Object.hasOwn(NODE_TYPES, data.name) ? NODE_TYPES[data.name] : undefined;
    if (!role) {
      unknown.add(data.name);
      continue;
    }
    const inputs = isObject(data.inputs) ? data.inputs : {};
    const credential = [data.credential, inputs.credential].find((c) => typeof c === 'string' && c !== '');
    nodes.set(id, {
      id,
      name: data.name,
      role,
      inputs,
      credential: typeof credential === 'string' ? credential.slice(0, 200) : '',
    });
  }
  if (unknown.size > 0) {
    const names = [...unknown].slice(0, 50);
    throw validationError(`Node types this platform does not run: ${names.join(', ')}`, [
      { field: 'flowData.nodes', message: `unknown node types: ${names.join(', ')}` },
    ]);
  }
  if (nodes.size === 0) throw fail('flowData has no nodes');
  return nodes;
}

function readEdges(list: unknown[], nodes: Map<string, CanvasNode>): Canvas['edges'] {
  return list.map((edge, i) => {
    const source = isObject(edge) ? edge.source : undefined;
    const target = isObject(edge) ? edge.target : undefined;
    if (typeof source !== 'string' || typeof target !== 'string' || !nodes.has(source) || !nodes.has(target))
      throw fail(`flowData.edges[${i}] must join two nodes of the flow`, `flowData.edges[${i}]`);
    const handle = isObject(edge) && typeof edge.targetHandle === 'string' ? edge.targetHandle : '';
    return { source, target, targetHandle: handle };
  });
}

/** The one node nothing depends on (Flowise's ending node); a cycle is refused naming a node on it. */
function endingNode(nodes: Map<string, CanvasNode>, edges: Canvas['edges']): CanvasNode {
  const outgoing = new Map<string, string[]>();
  const indegree = new Map<string, number>();
  for (const id of nodes.keys()) indegree.set(id, 0);
  for (const e of edges) {
    outgoing.set(e.source, [...(outgoing.get(e.source) ?? []), e.target]);
    indegree.set(e.target, (indegree.get(e.target) ?? 0) + 1);
  }
  // Kahn's order: nodes never reached sit on (or behind) a cycle.
  const ready = [...indegree].filter(([, n]) => n === 0).map(([id]) => id);
  let seen = 0;
  while (ready.length > 0) {
    const id = ready.pop() as string;
    seen++;
    for (const next of outgoing.get(id) ?? []) {
      const left = (indegree.get(next) ?? 0) - 1;
      indegree.set(next, left);
      if (left === 0) ready.push(next);
    }
  }
  if (seen < nodes.size) {
    const onCycle = [...indegree].filter(([, n]) => n > 0).map(([id]) => id);
    throw fail(`flowData has a cycle through: ${onCycle.slice(0, 20).join(', ')}`, 'flowData.edges');
  }
  const endings = [...nodes.values()].filter((n) => !outgoing.has(n.id) && n.role !== 'note');
  const chains = endings.filter((n) => n.role === 'chain');
  if (chains.length !== 1 || endings.length !== 1)
    throw fail(
      `flowData must end in exactly one chain node; its ending nodes are: ${endings.map((n) => n.id).join(', ')}`,
      'flowData.nodes',
    );
  return chains[0] as CanvasNode;
}
