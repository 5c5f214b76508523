import {
  MAX_MCP_TOOLS,
  McpConnection,
  type McpConnectorOptions,
  type McpServerTool,
  mcpSchemaProblem,
} from './mcp-client.js';
import { isMcpTool, type ToolDefinition } from './tool-specs.js';

/** An agent tool of type `mcp` as a request gives it: the credential's value in clear, once. */
export interface McpToolBody {
  type: 'mcp';
  name: string;
  url: string;
  credential?: { header: string; value?: string };
  include?: string[];
}

type Problem = { field: string; message: string };

const isMcpBody = (tool: unknown): tool is McpToolBody =>
  typeof tool === 'object' && tool !== null && (tool as { type?: unknown }).type === 'mcp';

/** What an agent shows of an MCP tool: never the credential's value, the tools by name. */
export function mcpToolView(tool: McpServerTool) {
  return {
    type: 'mcp' as const,
    name: tool.name,
    url: tool.url,
    ...(tool.credential ? { credential: { header: tool.credential.header } } : {}),
    ...(tool.include ? { include: tool.include } : {}),
    tools: tool.tools.map((t) => ({
      name: t.name,
      ...(t.description ? { description: t.description } : {}),
    })),
  };
}

/**
 * Saving an agent's MCP tools: the credential sealed (a re-sent tool without its value keeps the
 * stored one, for the same name, URL and header), the server's tools listed through the outbound
 * guard and kept with the agent. A server that cannot be listed is a 400 naming the tool.
 */
export class McpToolSaver {
  constructor(private readonly options: McpConnectorOptions | null) {}

  async prepare(
    tools: readonly unknown[],
    previous: readonly ToolDefinition[],
    problems: Problem[],
  ): Promise<ToolDefinition[]> {
    const out: ToolDefinition[] = [];
    for (const [i, tool] of tools.entries()) {
      if (!isMcpBody(tool)) {
        out.push(tool as ToolDefinition);
        continue;
      }
      const prepared = await this.prepareOne(tool, previous, `tools[${i}]`, problems);
      if (prepared) out.push(prepared);
    }
    return out;
  }

  private async prepareOne(
    body: McpToolBody,
    previous: readonly ToolDefinition[],
    field: string,
    problems: Problem[],
  ): Promise<McpServerTool | null> {
    if (!this.options) {
      problems.push({ field, message: 'MCP servers are not enabled on this server' });
      return null;
    }
    let credential: McpServerTool['credential'];
    if (body.credential) {
      const { header, value } = body.credential;
      if (value !== undefined) credential = { header, sealed: this.options.box.encrypt(value) };
      else {
        const kept = previous.find(
          (t) =>
            isMcpTool(t) && t.name === body.name && t.url === body.url && t.credential?.header === header,
        );
        credential = kept && isMcpTool(kept) ? kept.credential : undefined;
        if (!credential) {
          problems.push({
            field: `${field}.credential.value`,
            message: 'is required (none is stored for this tool)',
          });
          return null;
        }
      }
    }
    const connection = new McpConnection(
      { url: body.url, ...(credential ? { credential } : {}) },
      this.options,
    );
    let listed: McpServerTool['tools'];
    try {
      listed = await connection.listTools();
    } catch (error) {
      problems.push({ field, message: (error as Error).message });
      return null;
    } finally {
      await connection.close();
    }
    const names = new Set(listed.map((t) => t.name));
    for (const name of body.include ?? [])
      if (!names.has(name))
        problems.push({ field: `${field}.include`, message: `the server has no tool '${name}'` });
    const kept = body.include ? listed.filter((t) => body.include?.includes(t.name)) : listed;
    if (kept.length > MAX_MCP_TOOLS)
      problems.push({
        field,
        message: `the server lists ${kept.length} tools; at most ${MAX_MCP_TOOLS} (choose some with include)`,
      });
    for (const t of kept) {
      const problem = mcpSchemaProblem(t);
      if (problem) problems.push({ field, message: problem });
    }
    return {
      type: 'mcp',
      name: body.name,
      url: body.url,
      ...(credential ? { credential } : {}),
      ...(body.include ? { include: body.include } : {}),
      tools: kept,
    };
  }
}
