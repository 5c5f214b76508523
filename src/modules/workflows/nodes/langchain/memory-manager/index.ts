import { Type } from 'typebox';
import { shownWhen } from '../../../engine/display-options.js';
import { defineNode, output } from '../../../engine/node-type.js';
import type { Item, Json } from '../../../engine/types.js';
import { LANGCHAIN, type MemoryMessage, requiredPart } from '../ai-parts.js';

const Parameters = Type.Object(
  {
    mode: Type.Enum(['load', 'insert', 'delete'] as const, { default: 'load' }),
    insertMode: Type.Enum(['insert', 'override'] as const, {
      default: 'insert',
      ...shownWhen({ mode: ['insert'] }),
    }),
    deleteMode: Type.Enum(['lastN', 'all'] as const, {
      default: 'lastN',
      ...shownWhen({ mode: ['delete'] }),
    }),
    messages: Type.Object(
      {
        messageValues: Type.Optional(
          Type.Array(
            Type.Object(
              {
                type: Type.Enum(['ai', 'system', 'user'] as const, { default: 'system' }),
                message: Type.Unknown({ default: '' }),
                hideFromUI: Type.Boolean({ default: false }),
              },
              { additionalProperties: false },
            ),
            { maxItems: 1_000 },
          ),
        ),
      },
      { additionalProperties: false, default: {}, ...shownWhen({ mode: ['insert'] }) },
    ),
    lastMessagesCount: Type.Integer({
      default: 2,
      minimum: 0,
      maximum: 1_000_000,
      ...shownWhen({ mode: ['delete'], deleteMode: ['lastN'] }),
    }),
    simplifyOutput: Type.Boolean({ default: true, ...shownWhen({ mode: ['load'] }) }),
    options: Type.Object(
      { groupMessages: Type.Optional(Type.Boolean()) },
      { additionalProperties: false, default: {}, ...shownWhen({ mode: ['load'] }) },
    ),
  },
  { additionalProperties: false },
);

const TYPE_OF = { ai: 'ai', system: 'system', user: 'human' } as const;
const CLASS_OF = { human: 'HumanMessage', ai: 'AIMessage', system: 'SystemMessage' } as const;

/** LangChain's `message.toJSON()`, as n8n outputs a message it does not simplify. */
function serialized(m: MemoryMessage): Record<string, Json> {
  const kwargs: Record<string, Json> = {
    content: m.content,
    additional_kwargs: m.additionalKwargs,
    response_metadata: {},
  };
  if (m.type === 'ai') Object.assign(kwargs, { tool_calls: [], invalid_tool_calls: [] });
  return { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', CLASS_OF[m.type]], kwargs };
}

/** n8n's simplifyMessages: consecutive messages grouped by type (`{human, ai}`), a repeated type starting a new group. */
function simplified(messages: MemoryMessage[]): Array<Record<string, Json>> {
  const out: Array<Record<string, Json>> = [];
  let group: Record<string, Json> | null = null;
  for (const m of messages) {
    if (!group || m.type in group) {
      group = {};
      out.push(group);
    }
    group[m.type] = m.content;
  }
  return out;
}

/**
 * n8n's Chat Memory Manager (v1, 1.1): reads (`load`), adds to (`insert`, or `override`) or trims
 * (`delete` the last N, or all) the session of the memory attached to it (Simple, Postgres or Redis
 * Chat Memory), through the memory's own history. v1 outputs the messages after an insert or delete,
 * v1.1 `{success: true}`; `load` outputs them simplified (`{human, ai}` pairs) or as LangChain's JSON,
 * grouped into one item unless `groupMessages` is off (v1: off unless set).
 */
export const memoryManagerNode = defineNode({
  type: `${LANGCHAIN}.memoryManager`,
  versions: [1, 1.1],
  schema: Parameters,
  aiInputs: ['ai_memory'],
  async execute(ctx) {
    const version = ctx.node.typeVersion ?? 1;
    // n8n asks its memory once, for the first item.
    const memory = await requiredPart(ctx.subNodes('ai_memory'), 0, 'memory', 'memory');
    const history = memory.history;
    const out: Item[] = [];
    const paired = (json: Record<string, Json>, i: number): Item => ({ json, pairedItem: { item: i } });
    const afterChange = async (i: number) => {
      if (version === 1) out.push(...(await history.all()).map((m) => paired(serialized(m), i)));
      else out.push(paired({ success: true }, i));
    };
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const messages = await history.all();
      if (p.mode === 'delete') {
        if (p.deleteMode === 'all') await history.clear();
        else if (messages.length >= p.lastMessagesCount) {
          await history.clear();
          await history.add(messages.slice(0, messages.length - p.lastMessagesCount));
        }
        await afterChange(i);
      } else if (p.mode === 'insert') {
        if (p.insertMode === 'override') await history.clear();
        await history.add(
          (p.messages.messageValues ?? []).map(
            (m): MemoryMessage => ({
              type: TYPE_OF[m.type],
              content: typeof m.message === 'string' ? m.message : JSON.stringify(m.message ?? ''),
              additionalKwargs: m.hideFromUI ? { hideFromUI: true } : {},
            }),
          ),
        );
        await afterChange(i);
      } else {
        // n8n v1's legacy load answers the first item only.
        if (p.simplifyOutput && messages.length > 0 && version === 1) {
          const groups = simplified(messages);
          const items = p.options.groupMessages
            ? [{ messages: groups, messagesCount: groups.length }]
            : groups;
          return output(items.map((json) => paired(json as Record<string, Json>, i)));
        }
        const group = p.options.groupMessages ?? version !== 1;
        let list: Array<Record<string, Json>> = p.simplifyOutput
          ? simplified(messages)
          : messages.map(serialized);
        if (group) list = [{ messages: list, messagesCount: list.length }];
        out.push(...list.map((json) => paired(json, i)));
      }
    }
    return output(out);
  },
});
