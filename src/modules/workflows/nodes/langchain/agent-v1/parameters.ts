import { type Static, Type } from 'typebox';
import type { Json } from '../../../engine/types.js';
import { promptOf } from '../agent/parameters.js';

/** n8n's agent types of AI Agent v1; the last two are not served (refused at save). */
export const AGENT_TYPES = [
  'toolsAgent',
  'conversationalAgent',
  'openAiFunctionsAgent',
  'reActAgent',
  'planAndExecuteAgent',
  'sqlAgent',
] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/** What n8n's v1 agents default to (ConversationalAgent's and OpenAiFunctionsAgent's prompt.ts). */
const CONVERSATIONAL_SYSTEM_MESSAGE =
  'Assistant is a large language model trained by OpenAI.\n\nAssistant is designed to be able to assist with a wide range of tasks, from answering simple questions to providing in-depth explanations and discussions on a wide range of topics. As a language model, Assistant is able to generate human-like text based on the input it receives, allowing it to engage in natural-sounding conversations and provide responses that are coherent and relevant to the topic at hand.\n\nAssistant is constantly learning and improving, and its capabilities are constantly evolving. It is able to process and understand large amounts of text, and can use this knowledge to provide accurate and informative responses to a wide range of questions. Additionally, Assistant is able to generate its own text based on the input it receives, allowing it to engage in discussions and provide explanations and descriptions on a wide range of topics.\n\nOverall, Assistant is a powerful system that can help with a wide range of tasks and provide valuable insights and information on a wide range of topics. Whether you need help with a specific question or just want to have a conversation about a particular topic, Assistant is here to assist.';
const SYSTEM_MESSAGES: Record<AgentType, string> = {
  toolsAgent: 'You are a helpful assistant',
  conversationalAgent: CONVERSATIONAL_SYSTEM_MESSAGE,
  openAiFunctionsAgent: 'You are a helpful AI assistant.',
  reActAgent: 'Answer the following questions as best you can.',
  planAndExecuteAgent: '',
  sqlAgent: '',
};

/** n8n's `tracingMetadata` rows: kept for LangSmith there, no tracer here (stored, not sent). */
const TracingMetadata = Type.Object(
  { values: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))) },
  { additionalProperties: false },
);

/** The union of the v1 agent types' options (each type shows its own subset in n8n's editor). */
const Options = Type.Object(
  {
    systemMessage: Type.Optional(Type.String({ maxLength: 100_000 })),
    humanMessage: Type.Optional(Type.String({ maxLength: 100_000 })),
    maxIterations: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    returnIntermediateSteps: Type.Boolean({ default: false }),
    passthroughBinaryImages: Type.Boolean({ default: true }),
    saveAnnouncements: Type.Optional(Type.Boolean()),
    cleanToolCallContent: Type.Optional(Type.Boolean()),
    humanMessageTemplate: Type.Optional(Type.String({ maxLength: 100_000 })),
    prefix: Type.Optional(Type.String({ maxLength: 100_000 })),
    suffix: Type.Optional(Type.String({ maxLength: 100_000 })),
    suffixChat: Type.Optional(Type.String({ maxLength: 100_000 })),
    tracingMetadata: Type.Optional(TracingMetadata),
  },
  { additionalProperties: false, default: {} },
);

export const AgentV1Parameters = Type.Object(
  {
    agent: Type.Optional(Type.Enum(AGENT_TYPES)),
    promptType: Type.Enum(['auto', 'define'] as const, { default: 'auto' }),
    text: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    hasOutputParser: Type.Boolean({ default: false }),
    options: Options,
    // The SQL agent's own parameters, so its exports are refused by what they are, not by shape.
    dataSource: Type.Optional(Type.String()),
    binaryPropertyName: Type.Optional(Type.String()),
    notice: Type.Optional(Type.String()),
    deprecated: Type.Optional(Type.String()),
    aiAgentStarterCallout: Type.Optional(Type.String()),
    preBuiltAgentsCallout: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export type AgentV1Params = Static<typeof AgentV1Parameters>;

/**
 * The agent type a v1 node runs: as stored, else n8n's default for the version (Conversational up to
 * 1.5, Tools from 1.6; from 1.8 the parameter is hidden and always Tools).
 */
export function agentTypeOf(p: Pick<AgentV1Params, 'agent'>, version: number): AgentType {
  if (version >= 1.8) return 'toolsAgent';
  return p.agent ?? (version <= 1.5 ? 'conversationalAgent' : 'toolsAgent');
}

/** The field a v1.0–1.2 agent's `text` reads by default (n8n's per-version default expression). */
const OLD_TEXT_FIELD: Record<string, string> = { '1': 'input', '1.1': 'chat_input', '1.2': 'chatInput' };

/** The prompt: up to 1.2 the `text` (default: the version's input field), then as v2's promptType. */
export function promptOfV1(p: AgentV1Params, version: number, json: Record<string, Json>): string {
  if (version <= 1.2) {
    const field = OLD_TEXT_FIELD[String(version)] ?? 'chatInput';
    const text = p.text ?? json[field];
    return promptOf({ promptType: 'define', text: typeof text === 'string' ? text : '' }, json);
  }
  return promptOf({ promptType: p.promptType, text: p.text ?? '' }, json);
}

/** The system message: the stored option, else the agent type's default (a ReAct agent's prefix). */
export function systemMessageOf(p: AgentV1Params, type: AgentType): string {
  if (type === 'reActAgent') return p.options.prefix ?? p.options.systemMessage ?? SYSTEM_MESSAGES[type];
  return p.options.systemMessage ?? SYSTEM_MESSAGES[type];
}
