import type { JsonText, Timestamp } from '../../core/db/types.js';

export interface FlowsTable {
  id: string;
  account_id: string;
  name: string;
  kind: string;
  /** The validated definition (JSON of FlowDefinition). */
  definition: JsonText;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FlowMessagesTable {
  id: string;
  flow_id: string;
  /** Flowise's roles: `userMessage` or `apiMessage`. */
  role: string;
  content: string;
  chat_id: string;
  session_id: string;
  memory_type: string | null;
  /** JSON array of the passages an answer used (Flowise stores it as a string too). */
  source_documents: JsonText | null;
  /** JSON array of the tools a Tool Agent's answer used (Flowise's `usedTools`); absent before 703. */
  used_tools?: JsonText | null;
  /** The two messages of a prediction share it; their ids (question first) order them. */
  created_at: Timestamp;
}

/** Flowise's small records by kind (tool, variable, assistant, feedback, lead, upsert). */
export interface FlowiseObjectsTable {
  id: string;
  account_id: string;
  kind: string;
  /** The chatflow a per-flow record (feedback, lead, upsert) belongs to. */
  flow_id: string | null;
  /** The record as Flowise shows it, without id and dates (JSON). */
  body: JsonText;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../core/db/types.js' {
  interface Database {
    flows: FlowsTable;
    flow_messages: FlowMessagesTable;
    flowise_objects: FlowiseObjectsTable;
  }
}
