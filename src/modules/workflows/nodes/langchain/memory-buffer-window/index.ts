import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { type ChatMemory, LANGCHAIN, MAX_HISTORY_MESSAGES, type MemoryMessage } from '../ai-parts.js';
import { inputSessionId } from '../memory-session.js';
import { appendSession, clearSession, loadSession, sessionKeyOf } from './session-store.js';

const TYPE_OF = { user: 'human', assistant: 'ai', system: 'system' } as const;
const ROLE_OF: Record<MemoryMessage['type'], 'user' | 'assistant' | 'system'> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
};

const Parameters = Type.Object(
  {
    sessionIdType: Type.Enum(['fromInput', 'customKey'] as const, { default: 'fromInput' }),
    sessionKey: Type.String({ default: '={{ $json.sessionId }}', maxLength: 1_000 }),
    /** n8n sets no maximum (templates use 200); bounded here, and by each memory's own store. */
    contextWindowLength: Type.Integer({ minimum: 1, maximum: 1_000, default: 5 }),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/**
 * n8n's Simple Memory (Window Buffer Memory): the last `contextWindowLength` exchanges of a session. The
 * session is the input's `sessionId` (a Chat Trigger's) or a key of the node's own.
 */
export const memoryBufferWindowNode = defineSubNode({
  type: `${LANGCHAIN}.memoryBufferWindow`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  subNode: 'ai_memory',
  async supply(ctx, itemIndex): Promise<ChatMemory> {
    const p = await ctx.params(itemIndex);
    const fromInput =
      ctx.node.typeVersion !== undefined && ctx.node.typeVersion >= 1.2 && p.sessionIdType === 'fromInput';
    const raw = fromInput ? inputSessionId(ctx.items[itemIndex]) : p.sessionKey;
    const sessionId = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : '';
    if (sessionId === '')
      throw new NodeOperationError('No session ID found', {
        description: fromInput
          ? "Expected the input's 'sessionId' field (as the Chat Trigger sends it), or set a custom key"
          : 'The session key is empty',
      });
    const key = sessionKeyOf(ctx.deps.tenant, ctx.workflow.id, sessionId);
    return {
      kind: 'memory',
      sessionFromInput: fromInput,
      load: async () => loadSession(key, p.contextWindowLength * 2),
      history: {
        // The whole session as this memory keeps it (at most its MAX_MESSAGES); extra fields are not kept.
        all: async () =>
          loadSession(key, MAX_HISTORY_MESSAGES).flatMap((m) =>
            m.role === 'user' || m.role === 'assistant' || m.role === 'system'
              ? [{ type: TYPE_OF[m.role], content: m.content, additionalKwargs: {} }]
              : [],
          ),
        clear: async () => clearSession(key),
        add: async (messages) =>
          appendSession(
            key,
            messages.map((m) => ({ role: ROLE_OF[m.type], content: m.content })),
          ),
      },
      save: async (input, output) =>
        appendSession(key, [
          { role: 'user', content: input },
          { role: 'assistant', content: output },
        ]),
    };
  },
});
