import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Static, Type } from 'typebox';
import { VERSION } from '../../../../../version.js';
import { defineNode } from '../../../engine/node-type.js';
import { withDefaults } from '../../../engine/parameters.js';
import { credentialRefOf, type Item, type Json, type WorkflowNode } from '../../../engine/types.js';
import type { WebhookNodeInfo } from '../../../engine/webhook-nodes.js';
import { WebhookParameters, type WebhookParams } from '../../platform/webhook/index.js';
import { type AiTool, LANGCHAIN, toolsOf } from '../ai-parts.js';
import { toolNameOf } from '../from-ai.js';

const Parameters = Type.Object(
  {
    authentication: Type.Enum(['none', 'bearerAuth', 'headerAuth', 'n8nOAuth2'] as const, {
      default: 'none',
    }),
    path: Type.String({ default: '', maxLength: 500 }),
    instructions: Type.Optional(Type.String({ maxLength: 20_000 })),
    requireExecuteAccess: Type.Optional(Type.Boolean()),
    includeUserInOutput: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
type Params = Static<typeof Parameters>;

/** Most bytes of one JSON-RPC message. */
const MAX_MESSAGE_BYTES = 1024 * 1024;
/** A tools/call still running after this long answers a timed-out tool error. */
const TOOL_TIMEOUT_MS = 120_000;
/** Most characters of a tool's answer. */
const MAX_RESULT_CHARS = 100_000;
/** The request headers the MCP transport reads. */
const MCP_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id'];

/**
 * n8n's MCP Server Trigger: the tools attached to it (any ai_tool sub-node) served as an MCP server at
 * `/mcp/{path}` on the Streamable HTTP transport — stateless, JSON answers, as the platform's own MCP
 * server — while the workflow is active. Each message runs the workflow from this trigger, which
 * answers it (initialize, tools/list, tools/call, ping); a tool's failure or timeout is a tool error
 * result. Authentication as n8n's: none, bearer or header credential. n8n's SSE transport (its
 * `/sse` stream) and n8n user OAuth are not served.
 */
export const mcpTriggerNode = defineNode({
  type: `${LANGCHAIN}.mcpTrigger`,
  versions: [1, 1.1, 2, 2.1],
  schema: Parameters,
  trigger: true,
  inputs: 0,
  aiInputs: ['ai_tool'],
  webhook: { parse: mcpWebhooks },
  check(params) {
    const problems = [];
    if (params.authentication === 'n8nOAuth2')
      problems.push({
        path: 'parameters.authentication',
        message: "n8n user auth (OAuth2) is not supported here: use 'bearerAuth' or 'headerAuth'",
      });
    if (typeof params.path === 'string' && !params.path.startsWith('=') && params.path.trim() === '')
      problems.push({ path: 'parameters.path', message: 'the MCP server needs a path' });
    return problems;
  },
  async execute(ctx) {
    const item = ctx.items[0] ?? { json: {} };
    const p = await ctx.params(0);
    const tools = await toolsOf(ctx.subNodes('ai_tool'), 0);
    const serverName = (ctx.node.typeVersion ?? 1) > 1 ? toolNameOf(ctx.node.name) : 'n8n-mcp-server';
    const seen: Json[] = [];
    const answer = await answerMessage(item, tools, serverName, p, (call) => seen.push(call));
    const text = await answer.text();
    const headers: Record<string, string> = {};
    const type = answer.headers.get('content-type');
    if (type) headers['content-type'] = type;
    let body: unknown = null;
    if (text !== '') {
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        body = text;
      }
    }
    return {
      kind: 'respond',
      output: [[{ json: { mcpMessage: (item.json.body ?? null) as Json, mcpToolCalls: seen } }]],
      response: { statusCode: answer.status, headers, body },
    };
  },
});

/** Answers one JSON-RPC message (the webhook item's body) with a fresh stateless SDK server. */
async function answerMessage(
  item: Item,
  tools: AiTool[],
  serverName: string,
  p: Params,
  onCall: (call: Json) => void,
): Promise<Response> {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = types;
  const instructions = p.instructions ? String(p.instructions) : undefined;
  const server = new Server(
    { name: serverName, version: VERSION },
    { capabilities: { tools: { listChanged: false } }, ...(instructions ? { instructions } : {}) },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.parameters as { type: 'object' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
    const args = request.params.arguments ?? {};
    const result = await callTool(tool, args);
    onCall({ name, arguments: args as Json, isError: result.isError === true });
    return result;
  });
  const headers = new Headers();
  const given = (item.json.headers ?? {}) as Record<string, Json>;
  for (const name of MCP_HEADERS) {
    const value = given[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    return await transport.handleRequest(new Request('http://platform/mcp', { method: 'POST', headers }), {
      parsedBody: item.json.body,
    });
  } finally {
    await server.close().catch(() => undefined);
  }
}

async function callTool(tool: AiTool, args: Record<string, unknown>): Promise<CallToolResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`Tool ${tool.name} did not finish within ${TOOL_TIMEOUT_MS} ms`)),
      TOOL_TIMEOUT_MS,
    );
  });
  try {
    const output = await Promise.race([tool.run(args), timeout]);
    const text = typeof output === 'string' ? output : (JSON.stringify(output) ?? 'null');
    return {
      content: [
        { type: 'text', text: text.length > MAX_RESULT_CHARS ? text.slice(0, MAX_RESULT_CHARS) : text },
      ],
    };
  } catch (error) {
    return {
      content: [{ type: 'text', text: error instanceof Error ? error.message : String(error) }],
      isError: true,
    };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The trigger's paths as n8n has them: `{path}` (v2+) and, before v2, `{path}/messages` (where n8n
 * 1.x posts messages); POST answers, GET and DELETE are registered so that they answer 405 (no stream,
 * no session) rather than 404.
 */
function mcpWebhooks(node: WorkflowNode): WebhookNodeInfo[] {
  const p = withDefaults(Parameters, node.parameters) as Params;
  const base = p.path.trim().replace(/^\/+|\/+$/g, '');
  if (base === '' || base.startsWith('=')) return [];
  const defaults = withDefaults(WebhookParameters, { path: base }) as WebhookParams;
  const auth =
    p.authentication === 'bearerAuth' || p.authentication === 'headerAuth' ? p.authentication : 'none';
  const credentialType = auth === 'bearerAuth' ? 'httpBearerAuth' : 'httpHeaderAuth';
  const paths = (node.typeVersion ?? 1) < 2 ? [base, `${base}/messages`] : [base];
  return paths.flatMap((path) =>
    (['POST', 'GET', 'DELETE'] as const).map((httpMethod) => ({
      nodeName: node.name,
      nodeId: node.id,
      path,
      dynamicPrefix: null,
      httpMethod,
      authentication: auth,
      credentialId: auth === 'none' ? null : (credentialRefOf(node.credentials?.[credentialType]) ?? null),
      responseMode: 'responseNode' as const,
      responseCode: 200,
      responseData: 'firstEntryJson' as const,
      options: {
        ...defaults.options,
        bodyLimitBytes: MAX_MESSAGE_BYTES,
        rawBody: false,
        dedupeKey: null,
        ipAllowList: null,
        binaryBody: 'never' as const,
        binaryPropertyName: null,
        rawBodyAs: 'json' as const,
      },
      responseBinaryPropertyName: 'data',
      mcp: true,
    })),
  );
}
