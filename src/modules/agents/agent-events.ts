import type { Principal } from '../../core/auth/principal.js';
import type { FileInput } from '../llm/index.js';
import type { ToolChoice } from './agent-runner.js';
import type { FileRef, PartRef } from './content-parts.js';
import type { ResponseFormat } from './structured-output.js';
import type { ClientTool } from './tool-specs.js';

/** A stored message of a conversation, as the API answers it. */
export interface MessageView {
  id: string;
  conversationId: string;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  steps: StepView[];
  sources: SourceView[];
  usage: Usage | null;
  createdAt: string;
}

export interface StepView {
  type: 'retrieval' | 'tool_call' | 'model';
  name: string;
  input: unknown;
  output: unknown;
  ms: number;
}

export interface SourceView {
  documentId: string;
  title: string | null;
  topic: string;
  pageNumber: number;
  score: number;
  text: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** A client tool call a paused run waits for. */
export interface PendingCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** How a turn ended: its stored answer, or the client tool calls it waits for. */
export type TurnOutcome =
  | {
      status: 'completed';
      runId: string;
      message: MessageView;
      usage: Usage;
      sources: SourceView[];
      /** The answer parsed, when the turn asked for a response format. */
      output?: unknown;
    }
  | {
      status: 'requires_action';
      runId: string;
      /** Client tool calls waiting for their outputs. */
      toolCalls: PendingCall[];
      /** Server tool calls waiting for approval (`requiresApproval`). */
      approvals: PendingCall[];
      usage: Usage;
      sources: SourceView[];
    };

/** What an agent's turn emits, in order: SSE and WebSocket both carry these. */
export type AgentEvent =
  | { type: 'message.created'; conversationId: string; message: MessageView }
  | { type: 'message.delta'; conversationId: string; delta: string }
  | { type: 'tool.call'; conversationId: string; id: string; name: string; arguments: unknown }
  | { type: 'tool.result'; conversationId: string; id: string; name: string; output: unknown }
  | ({ type: 'message.completed'; conversationId: string } & Omit<
      Extract<TurnOutcome, { status: 'completed' }>,
      'status'
    >)
  | ({ type: 'run.requires_action'; conversationId: string } & Omit<
      Extract<TurnOutcome, { status: 'requires_action' }>,
      'status'
    >)
  | { type: 'error'; conversationId: string; code: string; message: string };

/** A turn's options beyond its agent's definition. */
export interface TurnRequest {
  /** Function tools the client runs itself, offered with the agent's. */
  tools?: ClientTool[];
  toolChoice?: ToolChoice;
  responseFormat?: ResponseFormat;
}

export interface SendInput extends TurnRequest {
  conversationId?: string;
  content: string;
  /** Base64 images of the message (content parts reduced by content-parts.ts). */
  images?: string[];
  /** Documents (PDF) of the message. */
  files?: FileInput[];
  /** The first image's and document's parts, named when the agent's model does not read them. */
  firstImage?: PartRef;
  firstFile?: FileRef;
  /** What the transcript keeps of the images and documents (type and size). */
  attachmentNotes?: string[];
}

/** Sending a message to an agent: the one entry point of the HTTP route, SSE and the WebSocket. */
export interface AgentMessaging {
  /**
   * Checks access and the input, stores the user's message, and returns the turn's events (the first is
   * `message.created`). What fails before that throws an AppError (404 unknown agent or conversation,
   * 403, 400); what fails after is an `error` event, the last. Aborting `signal` stops the model call.
   */
  send(
    principal: Principal,
    agentId: string,
    input: SendInput,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<AgentEvent>>;
  /**
   * Records approval decisions on a paused run (the account's keys and members); once no call waits,
   * the turn continues and these are its events (no `message.created`: the user's message is stored).
   */
  approveRun(
    principal: Principal,
    agentId: string,
    runId: string,
    decisions: Array<{ toolCallId: string; approve: boolean; reason?: string }>,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<AgentEvent>>;
}
