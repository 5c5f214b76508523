import type { JsonText, Timestamp } from '../../core/db/types.js';

export interface AgentsTable {
  id: string;
  account_id: string;
  name: string;
  /** The validated definition (JSON of AgentDefinition). */
  definition: JsonText;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ConversationsTable {
  id: string;
  account_id: string;
  agent_id: string | null;
  /** The end user (a customer token's customerId); null for a conversation a key holds alone. */
  user_id: string | null;
  title: string | null;
  metadata: JsonText;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentMessagesTable {
  id: string;
  conversation_id: string;
  role: string;
  content: string;
  steps: JsonText;
  sources: JsonText;
  usage: JsonText | null;
  created_at: Timestamp;
}

export interface AgentRunsTable {
  id: string;
  account_id: string;
  agent_id: string;
  conversation_id: string;
  user_id: string | null;
  status: string;
  /** The turn's options and input (JSON of RunOptions). */
  options: JsonText;
  /** A paused turn's state (JSON of TurnState) and the client calls it waits for (JSON). */
  state: JsonText | null;
  pending: JsonText | null;
  message_id: string | null;
  error: JsonText | null;
  /** 1: a job of the queue (`background: true`). */
  background: number;
  /** Times a worker took the run up (a background run's crash count is this minus one). */
  attempts: number;
  /** Who started it (JSON of RunPrincipal), for the worker that runs it. */
  principal: JsonText | null;
  /** When the first undecided approval of the paused run expires; null when none waits. */
  approval_deadline: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentResponsesTable {
  id: string;
  account_id: string;
  model: string;
  /** The conversation up to this response (JSON of ChatMessage[], no instructions). */
  messages: JsonText;
  /** The response object as answered (JSON). */
  response: JsonText;
  created_at: Timestamp;
}

export interface AgentMemoryBlocksTable {
  id: string;
  account_id: string;
  agent_id: string;
  /** '' for the agent's own blocks, else the conversation's id. */
  scope: string;
  label: string;
  description: string | null;
  value: string;
  char_limit: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AgentMemoryEditsTable {
  id: string;
  block_id: string;
  op: string;
  by: string;
  before: string | null;
  after: string;
  created_at: Timestamp;
}

export interface AgentArchivalPassagesTable {
  id: string;
  account_id: string;
  agent_id: string;
  /** '' for the agent's own passages, else `conversation:<id>` or `user:<id>`. */
  scope: string;
  text: string;
  document_id: string;
  by: string;
  created_at: Timestamp;
}

declare module '../../core/db/types.js' {
  interface Database {
    agents: AgentsTable;
    conversations: ConversationsTable;
    agent_messages: AgentMessagesTable;
    agent_runs: AgentRunsTable;
    agent_responses: AgentResponsesTable;
    agent_memory_blocks: AgentMemoryBlocksTable;
    agent_memory_edits: AgentMemoryEditsTable;
    agent_archival_passages: AgentArchivalPassagesTable;
  }
}
