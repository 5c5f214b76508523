import type { Connections, WorkflowNode } from '../types.js';

const NODE_W = 160;
const NODE_H = 48;
const MARGIN = 24;

function edgesOf(connections: Connections): Array<{ from: string; to: string; output: number }> {
  const edges: Array<{ from: string; to: string; output: number }> = [];
  for (const [from, kinds] of Object.entries(connections ?? {}))
    for (const outputs of Object.values(kinds ?? {}))
      outputs?.forEach((targets, output) => {
        for (const t of targets ?? []) edges.push({ from, to: t.node, output });
      });
  return edges;
}

/** A workflow drawn read-only from its nodes' positions and connections (n8n's coordinates). */
export function WorkflowGraph(props: {
  nodes: WorkflowNode[];
  connections: Connections;
  title: string;
  /** The node whose parameters are shown (chosen in the parameter form), drawn highlighted. */
  selected?: string | undefined;
}) {
  const { nodes } = props;
  if (nodes.length === 0) return <p>This workflow has no nodes.</p>;
  const minX = Math.min(...nodes.map((n) => n.position[0]));
  const minY = Math.min(...nodes.map((n) => n.position[1]));
  const at = new Map(
    nodes.map((n) => [n.name, { x: n.position[0] - minX + MARGIN, y: n.position[1] - minY + MARGIN }]),
  );
  const width = Math.max(...[...at.values()].map((p) => p.x)) + NODE_W + MARGIN;
  const height = Math.max(...[...at.values()].map((p) => p.y)) + NODE_H + MARGIN;
  const edges = edgesOf(props.connections);
  const described = edges
    .filter((e) => at.has(e.from) && at.has(e.to))
    .map((e) => `${e.from} → ${e.to}`)
    .join('; ');
  return (
    <figure class="graph">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-label={`${props.title}: ${nodes.length} nodes. ${described || 'No connections.'}`}
      >
        <defs>
          <marker
            id="arrow"
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="7"
            markerHeight="7"
            orient="auto"
          >
            <path d="M0,0 L10,5 L0,10 z" class="arrow" />
          </marker>
        </defs>
        {edges.map((e) => {
          const a = at.get(e.from);
          const b = at.get(e.to);
          if (!a || !b) return null;
          const x1 = a.x + NODE_W;
          const y1 = a.y + NODE_H / 2;
          const x2 = b.x;
          const y2 = b.y + NODE_H / 2;
          const bend = Math.max(40, Math.abs(x2 - x1) / 2);
          return (
            <path
              key={`${e.from}-${e.output}-${e.to}`}
              class="edge"
              d={`M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`}
              marker-end="url(#arrow)"
            />
          );
        })}
        {nodes.map((n) => {
          const p = at.get(n.name);
          if (!p) return null;
          const name = n.name.length > 22 ? `${n.name.slice(0, 21)}…` : n.name;
          const type = n.type.replace(/^.*\./, '');
          return (
            <g
              key={n.id}
              class={`node${n.disabled ? ' disabled' : ''}${n.name === props.selected ? ' selected' : ''}`}
              data-node={n.name}
            >
              <title>
                {n.name} ({n.type})
              </title>
              <rect x={p.x} y={p.y} width={NODE_W} height={NODE_H} rx="6" />
              <text x={p.x + 10} y={p.y + 20} class="name">
                {name}
              </text>
              <text x={p.x + 10} y={p.y + 37} class="type">
                {type.length > 24 ? `${type.slice(0, 23)}…` : type}
              </text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
