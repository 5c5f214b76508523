import type { ChatMessage, LoopModelAnswer, ToolSpec } from '../../../llm/index.js';
import { NodeOperationError, type SubNodeHandle } from '../../engine/node-type.js';
import type { Json } from '../../engine/types.js';

/**
 * What n8n's AI sub-nodes supply to their root node, in the platform's own terms (the llm module's
 * messages and tool specs): the root nodes are adapters onto the one tool loop (llm `runToolLoop`).
 */

export const LANGCHAIN = '@n8n/n8n-nodes-langchain';

/** A chat model (ai_languageModel): one model call on a conversation, with tools offered or not. */
export interface ChatModel {
  kind: 'chatModel';
  name: string;
  /**
   * `stream`: the answer's text is wanted as the model writes it (a streamed chat answer); a model
   * that cannot stream answers whole, which is the same events at once.
   */
  chat(
    messages: ChatMessage[],
    tools: ToolSpec[] | undefined,
    options?: { stream?: boolean },
  ): Promise<LoopModelAnswer>;
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
  /** The session is the caller's own (the chat input's `sessionId`), not a key fixed in the node. */
  sessionFromInput: boolean;
  load(): Promise<ChatMessage[]>;
  save(input: string, output: string): Promise<void>;
  /** The session's whole history (LangChain's `chatHistory`), as the Chat Memory Manager reads and edits it. */
  history: MemoryHistory;
}

/** A message as LangChain's chat history keeps it: its type, text and extra fields (n8n's `hideFromUI`). */
export interface MemoryMessage {
  type: 'human' | 'ai' | 'system';
  content: string;
  additionalKwargs: Record<string, Json>;
}

/** Bounded: `all` reads at most MAX_HISTORY_MESSAGES, the most recent. */
export interface MemoryHistory {
  all(): Promise<MemoryMessage[]>;
  clear(): Promise<void>;
  add(messages: MemoryMessage[]): Promise<void>;
}

/** Most messages the Chat Memory Manager reads from one session. */
export const MAX_HISTORY_MESSAGES = 10_000;

/** An output parser (ai_outputParser): the JSON schema an answer must meet, and the check. */
export interface OutputParser {
  kind: 'outputParser';
  schema: Record<string, unknown>;
  /** The answer as a value meeting the schema; throws naming what is wrong. */
  parse(value: unknown): unknown;
  /** An auto-fixing parser's model: asked once to repair an answer that does not parse. */
  fixWith?: ChatModel;
  /** The repair prompt (`{instructions}`, `{completion}`, `{error}`); LangChain's by default. */
  fixPrompt?: string;
}

/** An embedding model (ai_embedding): texts to vectors. */
export interface Embeddings {
  kind: 'embeddings';
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

/** A document as n8n's loaders, splitters and vector stores pass it (LangChain's Document). */
export interface AiDocument {
  pageContent: string;
  metadata: Record<string, Json>;
}

/** A text splitter (ai_textSplitter): a text into chunks. */
export interface TextSplitter {
  kind: 'textSplitter';
  split(text: string): string[] | Promise<string[]>;
}

/** A document loader (ai_document): the documents of the root's item it was supplied for. */
export interface DocumentSource {
  kind: 'documents';
  documents: AiDocument[];
}

/** A vector store (ai_vectorStore): documents in, the nearest out. */
export interface VectorStore {
  kind: 'vectorStore';
  /**
   * Stores the documents. `ids` (one per document) are honoured by stores that key their records by id
   * (Pinecone, Qdrant), so an existing record is replaced (n8n's `update` mode); the others ignore them.
   */
  add(documents: AiDocument[], ids?: string[]): Promise<void>;
  search(query: string, topK: number): Promise<Array<{ document: AiDocument; score: number }>>;
}

/** A retriever (ai_retriever): the documents relevant to a query. */
export interface Retriever {
  kind: 'retriever';
  retrieve(query: string): Promise<AiDocument[]>;
}

type Part =
  | ChatModel
  | AiTool
  | ChatMemory
  | OutputParser
  | Embeddings
  | TextSplitter
  | DocumentSource
  | VectorStore
  | Retriever;

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

/** The one sub-node of `type` a root needs, supplied for item `itemIndex` and checked to be a `kind` part. */
export async function requiredPart<K extends Part['kind']>(
  handles: SubNodeHandle[],
  itemIndex: number,
  kind: K,
  what: string,
): Promise<Extract<Part, { kind: K }>> {
  const handle = handles[0];
  if (!handle)
    throw new NodeOperationError(
      `${/^[AEIOU]/.test(what) ? 'An' : 'A'} ${what} sub-node must be connected and enabled`,
    );
  return supplied(handle, itemIndex, kind);
}
