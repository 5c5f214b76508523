import { Ajv, type ValidateFunction } from 'ajv';
import { LRUCache } from 'lru-cache';
import type { ToolSpec } from '../llm/index.js';
import type { McpServerTool } from './mcp-client.js';

export const BUILTIN_TOOLS = [
  'knowledge_search',
  'user_profile',
  'blend_recommendations',
  'memory_append',
  'memory_replace',
  'archival_memory_insert',
  'archival_memory_search',
] as const;

/**
 * A tool as an agent lists it: a name, a workflow tool with its description and argument schema, or an
 * MCP server whose tools become the agent's.
 */
export type ToolDefinition =
  | string
  | { name: string; description?: string; parameters?: Record<string, unknown> }
  | McpServerTool
  | ClientTool;

/**
 * A function tool the server does not run (OpenAI's function tools): the turn stops with its calls
 * pending and the client submits their outputs.
 */
export interface ClientTool {
  type: 'function';
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export const isMcpTool = (tool: ToolDefinition): tool is McpServerTool =>
  typeof tool !== 'string' && 'type' in tool && tool.type === 'mcp';

export const isClientTool = (tool: ToolDefinition): tool is ClientTool =>
  typeof tool !== 'string' && 'type' in tool && tool.type === 'function';

/** Why a client tool cannot be offered, or null. */
export function clientToolProblem(tool: ClientTool): string | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) return 'name must be 1-64 of [A-Za-z0-9_-]';
  if (tool.parameters) {
    const bad = schemaProblem(tool.parameters);
    if (bad) return `parameters ${bad}`;
  }
  return null;
}

export const toolName = (tool: ToolDefinition): string => (typeof tool === 'string' ? tool : tool.name);

const ANY_OBJECT = { type: 'object', additionalProperties: true };

const BUILTIN_SPECS: Record<
  (typeof BUILTIN_TOOLS)[number],
  { description: string; parameters: Record<string, unknown> }
> = {
  knowledge_search: {
    description: "Searches the agent's knowledge base; returns the best passages with their documents.",
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 4000, description: 'What to look for' },
        topK: { type: 'integer', minimum: 1, maximum: 10, description: 'How many passages (default 4)' },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
  user_profile: {
    description: 'Reads the profile of the user of this conversation: name, email and taste preferences.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  },
  blend_recommendations: {
    description:
      'Recommends fragrance blends for the user of this conversation, from their preferences and the filters.',
    parameters: {
      type: 'object',
      properties: {
        category: { type: 'string', maxLength: 100 },
        mood: { type: 'string', maxLength: 100 },
        occasion: { type: 'string', maxLength: 100 },
      },
      additionalProperties: false,
    },
  },
  memory_append: {
    description:
      'Appends a line to one of your memory blocks (by label), to remember it in later turns and conversations.',
    parameters: {
      type: 'object',
      properties: {
        label: { type: 'string', minLength: 1, maxLength: 64 },
        content: { type: 'string', minLength: 1, maxLength: 20_000 },
      },
      required: ['label', 'content'],
      additionalProperties: false,
    },
  },
  memory_replace: {
    description: 'Replaces text in one of your memory blocks (by label): old_content becomes new_content.',
    parameters: {
      type: 'object',
      properties: {
        label: { type: 'string', minLength: 1, maxLength: 64 },
        old_content: { type: 'string', minLength: 1, maxLength: 20_000 },
        new_content: { type: 'string', maxLength: 20_000 },
      },
      required: ['label', 'old_content', 'new_content'],
      additionalProperties: false,
    },
  },
  archival_memory_insert: {
    description:
      'Stores a passage in your long-term archival memory, to find later with archival_memory_search. ' +
      "scope: 'user' (default when the conversation has a user: only this user's conversations find it), " +
      "'conversation' (only this conversation) or 'agent' (every conversation; only when the conversation " +
      'has no user).',
    parameters: {
      type: 'object',
      properties: {
        content: { type: 'string', minLength: 1, maxLength: 10_000, description: 'What to remember' },
        scope: { type: 'string', enum: ['user', 'conversation', 'agent'] },
      },
      required: ['content'],
      additionalProperties: false,
    },
  },
  archival_memory_search: {
    description:
      'Searches your long-term archival memory (yours, this user’s and this conversation’s passages); ' +
      'returns the best passages with when they were stored.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 4000, description: 'What to look for' },
        topK: { type: 'integer', minimum: 1, maximum: 10, description: 'How many passages (default 5)' },
      },
      required: ['query'],
      additionalProperties: false,
    },
  },
};

/** The function name a model sees: OpenAI allows `[A-Za-z0-9_-]{1,64}`, so `workflow:<id>` becomes `workflow_<id>`. */
function functionNameOf(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

export interface ResolvedTool {
  /** The agent's name for it (`knowledge_search`, `workflow:<id>`, `mcp:<label>/<tool>`). */
  name: string;
  /** For a tool of an MCP server: the agent's tool (`mcp:<label>`) and the server's name for it. */
  mcp?: { server: string; tool: string };
  functionName: string;
  spec: ToolSpec;
  validate: ValidateFunction;
  /** A client's tool: its calls wait for the client's outputs. */
  client?: true;
}

const ajv = new Ajv({ allErrors: false, strict: false, allowUnionTypes: true });
/** Compiled validators by schema text: compiling is slow, and agents reuse theirs every turn. */
const compiled = new LRUCache<string, ValidateFunction>({ max: 500 });

export function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

const MAX_SCHEMA_CHARS = 20_000;
/** Keywords whose regular expressions a caller could make run for ever (no RE2 here). */
const REGEX_KEYWORDS = new Set(['pattern', 'patternProperties', 'format']);

function regexKeyword(value: unknown, depth = 0): string | null {
  if (depth > 32) return 'nests too deep';
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = regexKeyword(v, depth + 1);
      if (found) return found;
    }
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (REGEX_KEYWORDS.has(k)) return `may not use '${k}'`;
      const found = regexKeyword(v, depth + 1);
      if (found) return found;
    }
  }
  return null;
}

/** Why a workflow tool's argument schema is refused, or null. */
export function schemaProblem(schema: Record<string, unknown>): string | null {
  if (JSON.stringify(schema).length > MAX_SCHEMA_CHARS)
    return `must be at most ${MAX_SCHEMA_CHARS} characters`;
  if (schema.type !== 'object') return "must be an object schema (type: 'object')";
  const keyword = regexKeyword(schema);
  if (keyword) return keyword;
  try {
    validatorOf(schema);
  } catch (error) {
    return `is not a valid JSON schema: ${(error as Error).message}`;
  }
  return null;
}

/** A copy of a schema without the keywords whose regular expressions would run here. */
function withoutRegex(value: unknown, depth = 0): unknown {
  if (depth > 32) return {};
  if (Array.isArray(value)) return value.map((v) => withoutRegex(v, depth + 1));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!REGEX_KEYWORDS.has(k)) out[k] = withoutRegex(v, depth + 1);
  return out;
}

/**
 * The validator of an MCP server's input schema: the server chose it, so its regular expressions
 * are dropped (the server checks its own arguments) and one that does not compile checks nothing.
 */
function remoteValidatorOf(schema: Record<string, unknown>): ValidateFunction {
  try {
    return validatorOf(withoutRegex(schema) as Record<string, unknown>);
  } catch {
    return validatorOf(ANY_OBJECT);
  }
}

/** The tools of one MCP server entry, each offered as `<label>_<tool>`. */
function resolveMcp(entry: McpServerTool): ResolvedTool[] {
  const label = entry.name.slice('mcp:'.length);
  const wanted = entry.include ? new Set(entry.include) : null;
  return entry.tools
    .filter((t) => !wanted || wanted.has(t.name))
    .map((t) => {
      const functionName = functionNameOf(`${label}_${t.name}`);
      const parameters = t.inputSchema.type === 'object' ? t.inputSchema : ANY_OBJECT;
      return {
        name: `${entry.name}/${t.name}`,
        functionName,
        mcp: { server: entry.name, tool: t.name },
        spec: {
          type: 'function',
          function: {
            name: functionName,
            description: t.description ?? `The tool ${t.name} of the MCP server ${label}.`,
            parameters,
          },
        },
        validate: remoteValidatorOf(parameters),
      };
    });
}

/** The tools of an agent as the gateway offers them, with their validators. */
export function resolveTools(tools: readonly ToolDefinition[]): ResolvedTool[] {
  return tools.flatMap((tool): ResolvedTool[] => {
    if (isMcpTool(tool)) return resolveMcp(tool);
    if (isClientTool(tool)) {
      const parameters = tool.parameters ?? ANY_OBJECT;
      return [
        {
          name: tool.name,
          functionName: tool.name,
          client: true,
          spec: {
            type: 'function',
            function: {
              name: tool.name,
              ...(tool.description ? { description: tool.description } : {}),
              parameters,
            },
          },
          validate: validatorOf(parameters),
        },
      ];
    }
    const name = toolName(tool);
    const builtin = BUILTIN_SPECS[name as (typeof BUILTIN_TOOLS)[number]];
    const description =
      builtin?.description ??
      (typeof tool !== 'string' && tool.description
        ? tool.description
        : `Runs the workflow ${name.slice('workflow:'.length)} with the arguments as its input; returns its output.`);
    const own = typeof tool === 'string' ? undefined : tool.parameters;
    const parameters = builtin?.parameters ?? own ?? ANY_OBJECT;
    const functionName = functionNameOf(name);
    return [
      {
        name,
        functionName,
        spec: { type: 'function', function: { name: functionName, description, parameters } },
        validate: validatorOf(parameters),
      },
    ];
  });
}
