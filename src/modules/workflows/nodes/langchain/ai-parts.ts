import type { ChatMessage, LoopModelAnswer, ToolSpec } from '../../../llm/index.js';
import { NodeOperationError, type SubNodeHandle } from '../../engine/node-type.js';

/**
 * What n8n's AI sub-nodes supply to their root node, in the platform's own terms (the llm module's
 * messages and tool specs): the root nodes are adapters onto the one tool loop (llm `runToolLoop`).
 */

export const LANGCHAIN = '@n8n/n8n-nodes-langchain';

/** A chat model (ai_languageModel): one model call on a conversation, with tools offered or not. */
export interface ChatModel {
  kind: 'chatModel';
  name: string;
  chat(messages: ChatMessage[], tools: ToolSpec[] | undefined): Promise<LoopModelAnswer>;
}

/** A tool (ai_tool) as the model sees it and as it runs. */
export interface AiTool {
  kind: 'tool';
  name: string;
  description: string;
  /** JSON schema of its arguments (an object). */
  parameters: Record<string, unknown>;
  /** Runs it; the answer (text or JSON) is what the model reads. Throws on bad arguments or failure. */
  run(args: Record<string, unknown>): Promise<unknown>;
}

/** A chat memory (ai_memory): the earlier turns of a session. */
export interface ChatMemory {
  kind: 'memory';
  load(): Promise<ChatMessage[]>;
  save(input: string, output: string): Promise<void>;
}

/** An output parser (ai_outputParser): the JSON schema an answer must meet, and the check. */
export interface OutputParser {
  kind: 'outputParser';
  schema: Record<string, unknown>;
  /** The answer as a value meeting the schema; throws naming what is wrong. */
  parse(value: unknown): unknown;
  /** An auto-fixing parser's model: asked once to repair an answer that does not parse. */
  fixWith?: ChatModel;
}

type Part = ChatModel | AiTool | ChatMemory | OutputParser;

/** What `handle` supplies for item `itemIndex`, checked to be a `kind` part. */
export async function supplied<K extends Part['kind']>(
  handle: SubNodeHandle,
  itemIndex: number,
  kind: K,
): Promise<Extract<Part, { kind: K }>> {
  const part = (await handle.supply(itemIndex)) as Part | null;
  if (!part || part.kind !== kind)
    throw new NodeOperationError(`Node '${handle.name}' (${handle.type}) cannot be used as a ${kind}`);
  return part as Extract<Part, { kind: K }>;
}

/** The sub-nodes of a root that are tools, flattened (a toolkit supplies several). */
export async function toolsOf(handles: SubNodeHandle[], itemIndex: number): Promise<AiTool[]> {
  const tools: AiTool[] = [];
  for (const handle of handles) {
    const part = (await handle.supply(itemIndex)) as AiTool | AiTool[];
    for (const tool of Array.isArray(part) ? part : [part]) {
      if (tool?.kind !== 'tool')
        throw new NodeOperationError(`Node '${handle.name}' (${handle.type}) cannot be used as a tool`);
      tools.push(tool);
    }
  }
  return tools;
}

/** The function spec of a tool (OpenAI's shape, which the gateway speaks). */
export function toolSpec(tool: AiTool): ToolSpec {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/** n8n's resource locator (`{__rl: true, mode, value}`) or a plain value, as the string it names. */
export function locatorValue(value: unknown): string {
  if (value && typeof value === 'object' && 'value' in value)
    return String((value as { value: unknown }).value ?? '');
  return value === undefined || value === null ? '' : String(value);
}
