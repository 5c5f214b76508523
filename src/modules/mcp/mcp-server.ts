import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Ajv, type ValidateFunction } from 'ajv';
import type { Principal } from '../../core/auth/principal.js';
import { isAppError } from '../../core/errors.js';
import { VERSION } from '../../version.js';
import type { McpTool, ToolCatalog } from './tool-catalog.js';

/** The SDK (and the zod schemas it is built on) load on the first MCP request, not at every start. */
async function sdk() {
  const [{ Server }, { WebStandardStreamableHTTPServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return { Server, WebStandardStreamableHTTPServerTransport, types };
}
type Sdk = Awaited<ReturnType<typeof sdk>>;

export interface McpServerOptions {
  catalog: ToolCatalog;
  /** A tools/call still running after this long answers a timed-out tool error. */
  toolTimeoutMs: number;
  /** A result's text at most this long. */
  maxResultChars: number;
  /** Failures that are not the platform's errors (bugs) are logged. */
  onUnexpected(error: unknown): void;
}

/** What the HTTP layer hands over and gets back: the Web standard Request and Response. */
export interface McpExchange {
  request: Request;
  body: unknown;
  principal: Principal;
}

const ajv = new Ajv({ allErrors: false, strict: false });
/** The catalog's input schemas are few and fixed: compiled once each. */
const validators = new Map<string, ValidateFunction>();

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(key, validate);
  }
  return validate;
}

class ToolTimeout extends Error {}

/**
 * The platform's MCP server, stateless (docs/decisions.md): every POST gets a fresh SDK server and
 * transport bound to the caller, so any process answers any request and nothing outlives it.
 */
export class PlatformMcpServer {
  constructor(private readonly options: McpServerOptions) {}

  async handle(exchange: McpExchange): Promise<Response> {
    const loaded = await sdk();
    const server = this.serverFor(loaded, exchange.principal);
    // Stateless (no session id) with JSON answers: one request, one bounded answer, no open stream.
    const transport = new loaded.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(exchange.request, { parsedBody: exchange.body });
    } finally {
      await server.close().catch(() => undefined);
    }
  }

  private serverFor({ Server: ServerClass, types }: Sdk, principal: Principal): Server {
    const { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } = types;
    const server = new ServerClass(
      { name: 'platform', version: VERSION },
      {
        capabilities: { tools: { listChanged: false } },
        instructions:
          "This account's workflows marked as tools, its knowledge base search and its agents, as the key's scopes allow.",
      },
    );
    const { catalog } = this.options;
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: (await catalog.list(principal)).map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name } = request.params;
      const tool = await catalog.find(principal, name);
      // The same answer for a tool that does not exist and one this key may not see.
      if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${name} not found`);
      const args = request.params.arguments ?? {};
      const validate = validatorOf(tool.inputSchema);
      if (!validate(args)) {
        const problems = (validate.errors ?? []).map(
          (e) => `${e.instancePath || '(arguments)'} ${e.message}`,
        );
        throw new McpError(
          ErrorCode.InvalidParams,
          `Invalid arguments for tool ${name}: ${problems.join('; ')}`,
        );
      }
      return this.call(tool, args, extra.signal);
    });
    return server;
  }

  /** Runs a tool within the time bound; its failure is a tool error result the client's model reads. */
  private async call(
    tool: McpTool,
    args: Record<string, unknown>,
    clientSignal: AbortSignal,
  ): Promise<CallToolResult> {
    const { toolTimeoutMs } = this.options;
    const controller = new AbortController();
    const onAbort = () => controller.abort(clientSignal.reason);
    clientSignal.addEventListener('abort', onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort(new ToolTimeout());
        reject(new ToolTimeout());
      }, toolTimeoutMs);
    });
    try {
      const output = await Promise.race([tool.run(args, controller.signal), timeout]);
      return this.result(output);
    } catch (error) {
      if (error instanceof ToolTimeout)
        return errorResult(`Tool ${tool.name} did not finish within ${toolTimeoutMs} ms`);
      // A tool's own failure is its answer; a programming error is also logged.
      if (!isAppError(error) && (error instanceof TypeError || !(error instanceof Error)))
        this.options.onUnexpected(error);
      return errorResult(error instanceof Error ? error.message : String(error));
    } finally {
      clearTimeout(timer);
      clientSignal.removeEventListener('abort', onAbort);
    }
  }

  /** JSON output as text (and as structured content when it is an object that fits). */
  private result(output: unknown): CallToolResult {
    const max = this.options.maxResultChars;
    const text = typeof output === 'string' ? output : (JSON.stringify(output) ?? 'null');
    if (text.length > max)
      return {
        content: [
          { type: 'text', text: text.slice(0, max) },
          { type: 'text', text: `[output cut at ${max} of ${text.length} characters]` },
        ],
      };
    const structured =
      output !== null && typeof output === 'object' && !Array.isArray(output)
        ? { structuredContent: output as Record<string, unknown> }
        : {};
    return { content: [{ type: 'text', text }], ...structured };
  }
}

const errorResult = (message: string): CallToolResult => ({
  content: [{ type: 'text', text: message }],
  isError: true,
});
