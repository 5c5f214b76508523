/**
 * Issue 34: the MCP server's tools/call round trip, through the SDK's own client over loopback against
 * the shared platform: a knowledge_search (one small document) and a workflow marked as a tool
 * (webhook → set), WARMUP then CALLS sequential calls each; p50/p99 in ms on the client side. Each
 * call is one stateless POST (a fresh SDK server per request, docs/decisions.md). Also n8n's MCP Server
 * Trigger at /mcp/{path} with a Calculator attached (each message an execution of its workflow).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { client, fmt, percentile } from '../kit.js';

const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 200);
const WARMUP = 20;

// No scenario in the shared table: only the report below.
export default [];

async function roundTrips(mcp, name, args) {
  const times = [];
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const t0 = performance.now();
    const result = await mcp.callTool({ name, arguments: args });
    const ms = performance.now() - t0;
    if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content).slice(0, 300)}`);
    if (i >= WARMUP) times.push(ms);
  }
  times.sort((a, b) => a - b);
  return [percentile(times, 0.5), percentile(times, 0.99)];
}

export async function report({ baseUrl, key }) {
  const call = client(baseUrl, key);
  const doc = await call(
    'POST',
    '/api/documents/load',
    {
      source: 'markdown',
      content: '# Otters\n\nSea otters hold hands while they sleep.',
      topic: 'bench-mcp',
    },
    [200, 201],
  );
  await call('POST', `/api/documents/${doc.id}/process?wait=true`, {}, [200, 202]);
  const wf = await call(
    'POST',
    '/api/v1/workflows',
    {
      name: 'bench mcp tool',
      settings: { availableInMCP: true },
      nodes: [
        {
          name: 'Webhook',
          type: 'n8n-nodes-base.webhook',
          typeVersion: 2,
          position: [0, 0],
          parameters: { path: 'bench-mcp-tool', responseMode: 'lastNode' },
        },
        {
          name: 'Set',
          type: 'n8n-nodes-base.set',
          typeVersion: 1,
          position: [200, 0],
          parameters: {
            keepOnlySet: true,
            values: { string: [{ name: 'echo', value: '={{ $json.body.q }}' }] },
          },
        },
      ],
      connections: { Webhook: { main: [[{ node: 'Set', type: 'main', index: 0 }]] } },
    },
    [201],
  );
  // n8n's MCP Server Trigger with a Calculator attached: each message is an execution of that workflow.
  const trigger = await call(
    'POST',
    '/api/v1/workflows',
    {
      name: 'bench mcp trigger',
      nodes: [
        {
          name: 'MCP Server Trigger',
          type: '@n8n/n8n-nodes-langchain.mcpTrigger',
          typeVersion: 2,
          position: [0, 0],
          webhookId: 'bench-mcp-trigger',
          parameters: { path: 'bench-mcp-trigger' },
        },
        {
          name: 'Calculator',
          type: '@n8n/n8n-nodes-langchain.toolCalculator',
          typeVersion: 1,
          position: [0, 200],
          parameters: {},
        },
      ],
      connections: { Calculator: { ai_tool: [[{ node: 'MCP Server Trigger', type: 'ai_tool', index: 0 }]] } },
      settings: {},
    },
    [201],
  );
  await call('POST', `/api/v1/workflows/${trigger.id}/activate`, {}, [200]);
  const viaTrigger = new Client({ name: 'bench', version: '1.0.0' });
  await viaTrigger.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/bench-mcp-trigger`)));
  let triggerTimes;
  try {
    triggerTimes = await roundTrips(viaTrigger, 'calculator', { input: '6 * 7' });
  } finally {
    await viaTrigger.close();
  }
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const mcp = new Client({ name: 'bench', version: '1.0.0' });
  await mcp.connect(transport);
  try {
    const search = await roundTrips(mcp, 'knowledge_search', {
      query: 'otters sleep',
      topics: ['bench-mcp'],
    });
    const workflow = await roundTrips(mcp, `workflow_${wf.id}`, { q: 'hello' });
    return [
      `MCP tools/call round trip (SDK client, ${CALLS} sequential calls): knowledge_search p50 ${fmt(search[0], 1)} ms, p99 ${fmt(search[1], 1)} ms; workflow tool p50 ${fmt(workflow[0], 1)} ms, p99 ${fmt(workflow[1], 1)} ms; n8n MCP Server Trigger (Calculator) p50 ${fmt(triggerTimes[0], 1)} ms, p99 ${fmt(triggerTimes[1], 1)} ms`,
    ];
  } finally {
    await mcp.close();
  }
}
