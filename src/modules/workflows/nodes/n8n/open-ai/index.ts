import { Type } from 'typebox';
import { binaryOf } from '../../../engine/binary.js';
import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, Json, ValidationProblem } from '../../../engine/types.js';
import { openAiTarget, postJson } from './transport.js';

const Options = Type.Object(
  {
    echo: Type.Optional(Type.Boolean()),
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    // image → create
    quality: Type.Optional(Type.Enum(['hd', 'standard'] as const)),
    size: Type.Optional(Type.String({ maxLength: 20 })),
    style: Type.Optional(Type.Enum(['natural', 'vivid'] as const)),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    resource: Type.Enum(['chat', 'image', 'text'] as const, { default: 'text' }),
    /** chat: complete; image: create; text: complete, edit, moderate. */
    operation: Type.Optional(Type.Enum(['complete', 'create', 'edit', 'moderate'] as const)),
    /** Its default is the operation's (n8n's: gpt-3.5-turbo, dall-e-2, text-davinci-003…). */
    model: Type.Optional(Type.String({ maxLength: 200 })),
    /**
     * v1.1's chat model as n8n 1.x's editor exported it (a parameter of its own, since dropped from
     * n8n's description); it wins over `model` for chat completions, as it did there.
     */
    chatModel: Type.Optional(Type.String({ maxLength: 200 })),
    prompt: Type.Optional(
      Type.Union([
        Type.String({ maxLength: 1_000_000 }),
        Type.Object(
          {
            messages: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    role: Type.Enum(['assistant', 'system', 'user'] as const, { default: 'user' }),
                    content: Type.String({ default: '', maxLength: 1_000_000 }),
                  },
                  { additionalProperties: false },
                ),
                { maxItems: 200 },
              ),
            ),
          },
          { additionalProperties: false },
        ),
      ]),
    ),
    input: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    instruction: Type.Optional(Type.String({ maxLength: 100_000 })),
    responseFormat: Type.Enum(['binaryData', 'imageUrl'] as const, { default: 'binaryData' }),
    simplifyOutput: Type.Boolean({ default: true }),
    options: Options,
    notice: Type.Optional(Type.String()),
    oldVersionNotice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const DEFAULT_MODEL: Record<string, string> = {
  'chat:complete': 'gpt-3.5-turbo',
  'text:complete': 'text-davinci-003',
  'text:edit': 'text-davinci-edit-001',
  'text:moderate': 'text-moderation-latest',
  'image:create': 'dall-e-2',
};
const OPERATIONS: Record<string, readonly string[]> = {
  chat: ['complete'],
  image: ['create'],
  text: ['complete', 'edit', 'moderate'],
};

/**
 * n8n's first OpenAI node (`n8n-nodes-base.openAi` v1, v1.1; hidden in n8n's editor since its AI
 * nodes, still in many templates): chat and text completions, edits, moderations and DALL·E images, on
 * the `openAiApi` credential's server as n8n's declarative routing sends them (the credential's `url`
 * without its last segment, then `/v1/…`), simplified to the answer's choices, results or images.
 */
export const openAiLegacyNode = defineNode({
  type: 'n8n-nodes-base.openAi',
  versions: [1, 1.1],
  schema: Parameters,
  check(p) {
    const problems: ValidationProblem[] = [];
    const served = OPERATIONS[p.resource] ?? [];
    if (p.operation !== undefined && !served.includes(p.operation))
      problems.push({
        path: 'parameters.operation',
        message: `'${p.operation}' is not an operation of the ${p.resource} resource (${served.join(', ')})`,
      });
    return problems;
  },
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const operation = p.operation ?? OPERATIONS[p.resource]?.[0] ?? '';
      const key = `${p.resource}:${operation}`;
      const target = await openAiTarget(ctx.node, (id) => ctx.credential(id));
      // n8n's baseURL: the credential's url without its last segment (`…/v1` → `…`), then `/v1/…`.
      const base = `${target.base.split('/').slice(0, -1).join('/')}/v1`;
      const legacy = { ...target, base };
      const model = (key === 'chat:complete' ? p.chatModel : undefined) ?? p.model ?? DEFAULT_MODEL[key];
      const body: Record<string, unknown> = { model };
      const o = p.options;
      if (key !== 'image:create' && key !== 'text:moderate') {
        if (o.echo !== undefined && key === 'text:complete') body.echo = o.echo;
        if (o.maxTokens !== undefined && key !== 'text:edit') body.max_tokens = o.maxTokens;
        if (o.topP !== undefined) body.top_p = o.topP;
        for (const name of ['frequency_penalty', 'presence_penalty', 'temperature', 'n'] as const)
          if (o[name] !== undefined) body[name] = o[name];
      }
      let items: Item[];
      if (key === 'chat:complete') {
        body.messages = typeof p.prompt === 'object' ? (p.prompt.messages ?? []) : [];
        const answer = await postJson(ctx.deps, legacy, '/chat/completions', body);
        items = p.simplifyOutput ? listOf(answer.choices) : [{ json: answer as Record<string, Json> }];
      } else if (key === 'text:complete' || key === 'text:edit') {
        if (key === 'text:complete') body.prompt = typeof p.prompt === 'string' ? p.prompt : '';
        else Object.assign(body, { input: p.input ?? '', instruction: p.instruction ?? '' });
        const answer = await postJson(
          ctx.deps,
          legacy,
          key === 'text:edit' ? '/edits' : '/completions',
          body,
        );
        items = p.simplifyOutput
          ? listOf(answer.choices).map(({ json }) => ({
              json: { ...json, text: typeof json.text === 'string' ? json.text.trim() : (json.text ?? null) },
            }))
          : [{ json: answer as Record<string, Json> }];
      } else if (key === 'text:moderate') {
        const answer = await postJson(ctx.deps, legacy, '/moderations', { ...body, input: p.input ?? '' });
        items = p.simplifyOutput ? listOf(answer.results) : [{ json: answer as Record<string, Json> }];
      } else if (key === 'image:create') {
        const prompt = typeof p.prompt === 'string' ? p.prompt : '';
        Object.assign(body, {
          prompt,
          response_format: p.responseFormat === 'imageUrl' ? 'url' : 'b64_json',
        });
        for (const name of ['n', 'quality', 'size', 'style'] as const)
          if (o[name] !== undefined) body[name] = o[name];
        const images = listOf((await postJson(ctx.deps, legacy, '/images/generations', body)).data);
        items =
          p.responseFormat === 'imageUrl'
            ? images
            : images.map(({ json }) => {
                if (typeof json.b64_json !== 'string')
                  throw new NodeOperationError('OpenAI answered an image without its data');
                return {
                  json: {},
                  binary: { data: binaryOf(Buffer.from(json.b64_json, 'base64'), 'image/png', 'data') },
                };
              });
      } else throw new NodeOperationError(`The operation "${operation}" is not supported!`);
      for (const item of items) out.push({ ...item, pairedItem: { item: i } });
    }
    return output(out);
  },
});

/** A list in an answer (choices, results, images), each entry an item. */
function listOf(value: unknown): Item[] {
  return Array.isArray(value)
    ? value.filter((v) => v && typeof v === 'object').map((json) => ({ json: json as Record<string, Json> }))
    : [];
}
