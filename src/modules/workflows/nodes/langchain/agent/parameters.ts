import { type Static, Type } from 'typebox';
import { NodeOperationError } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';

const Options = Type.Object(
  {
    systemMessage: Type.String({ default: 'You are a helpful assistant', maxLength: 100_000 }),
    maxIterations: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
    returnIntermediateSteps: Type.Boolean({ default: false }),
    passthroughBinaryImages: Type.Boolean({ default: true }),
    enableStreaming: Type.Boolean({ default: true }),
    enableStreamingToolCalls: Type.Optional(Type.Boolean()),
    saveAnnouncements: Type.Optional(Type.Boolean()),
    cleanToolCallContent: Type.Optional(Type.Boolean()),
    batching: Type.Optional(
      Type.Object(
        {
          batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
          delayBetweenBatches: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, default: {} },
);

export const AgentParameters = Type.Object(
  {
    promptType: Type.Enum(['auto', 'define', 'guardrails'] as const, { default: 'auto' }),
    text: Type.String({ default: '={{ $json.chatInput }}', maxLength: 1_000_000 }),
    hasOutputParser: Type.Boolean({ default: false }),
    needsFallback: Type.Boolean({ default: false }),
    options: Options,
    notice: Type.Optional(Type.String()),
    aiAgentStarterCallout: Type.Optional(Type.String()),
    preBuiltAgentsCallout: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export type AgentParams = Static<typeof AgentParameters>;

/** The prompt: the item's `chatInput` (promptType auto, as the Chat Trigger sends it) or the text. */
export function promptOf(p: { promptType: string; text: string }, json: Record<string, Json>): string {
  const prompt = p.promptType === 'auto' ? json.chatInput : p.text;
  if (typeof prompt !== 'string' || prompt.trim() === '')
    throw new NodeOperationError('No prompt specified', {
      description:
        p.promptType === 'auto'
          ? "Expected to find the prompt in an input field called 'chatInput' (this is what the chat trigger node outputs)"
          : 'The prompt (text) is empty',
    });
  return prompt;
}

/** The item's binary images as data URLs, for a model that sees images (at most 20 MB of them). */
export function imagesOf(item: Item | undefined): string[] {
  const out: string[] = [];
  let bytes = 0;
  for (const file of Object.values(item?.binary ?? {})) {
    if (!file?.mimeType?.startsWith('image/') || typeof file.data !== 'string') continue;
    bytes += file.data.length;
    if (bytes > 20 * 1024 * 1024)
      throw new NodeOperationError('The images of the item are over 20 MB together');
    out.push(`data:${file.mimeType};base64,${file.data}`);
  }
  return out;
}
