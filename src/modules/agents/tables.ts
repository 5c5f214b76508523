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

declare module '../../core/db/types.js' {
  interface Database {
    agents: AgentsTable;
    conversations: ConversationsTable;
    agent_messages: AgentMessagesTable;
  }
}
