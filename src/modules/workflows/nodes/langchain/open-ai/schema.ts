import { type Static, Type } from 'typebox';

const Locator = Type.Object(
  {
    __rl: Type.Optional(Type.Boolean()),
    mode: Type.Optional(Type.String()),
    value: Type.String(),
    cachedResultName: Type.Optional(Type.String()),
    cachedResultUrl: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const Message = Type.Object(
  {
    content: Type.String({ default: '', maxLength: 1_000_000 }),
    role: Type.Enum(['user', 'assistant', 'system'] as const, { default: 'user' }),
  },
  { additionalProperties: false },
);

/**
 * Every option of the node's operations (n8n's collections differ per resource and operation; one
 * object here, and each operation reads its own). `maxTokens`: the text and image-analysis options.
 */
const Options = Type.Object(
  {
    // text → message
    frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    maxTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    n: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    reasoning_effort: Type.Optional(Type.Enum(['low', 'medium', 'high'] as const)),
    maxToolsIterations: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000 })),
    // text → classify
    useStableModel: Type.Optional(Type.Boolean()),
    // image → analyze
    detail: Type.Optional(Type.Enum(['auto', 'low', 'high'] as const)),
    // image → generate
    dalleQuality: Type.Optional(Type.Enum(['hd', 'standard'] as const)),
    quality: Type.Optional(Type.Enum(['hd', 'standard', 'high', 'medium', 'low'] as const)),
    size: Type.Optional(Type.String({ maxLength: 20 })),
    style: Type.Optional(Type.Enum(['natural', 'vivid'] as const)),
    returnImageUrls: Type.Optional(Type.Boolean()),
    binaryPropertyOutput: Type.Optional(Type.String({ maxLength: 200 })),
    // audio
    response_format: Type.Optional(Type.Enum(['mp3', 'opus', 'aac', 'flac'] as const)),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
    language: Type.Optional(Type.String({ maxLength: 20 })),
    // assistant and file (refused at save; accepted so the refusal is the one message)
    baseURL: Type.Optional(Type.String()),
    failIfExists: Type.Optional(Type.Boolean()),
    file_ids: Type.Optional(Type.Unknown()),
    preserveOriginalTools: Type.Optional(Type.Boolean()),
    purpose: Type.Optional(Type.String()),
    maxRetries: Type.Optional(Type.Integer()),
    timeout: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false, default: {} },
);

/** n8n's OpenAI node v1–1.8 (`@n8n/n8n-nodes-langchain.openAi`), every resource's parameters. */
export const OpenAiParameters = Type.Object(
  {
    resource: Type.Enum(['text', 'image', 'audio', 'assistant', 'file'] as const, { default: 'text' }),
    /** Its default is the resource's (text: message; image and audio: generate), so no default here. */
    operation: Type.Optional(
      Type.Enum([
        'message',
        'classify',
        'analyze',
        'generate',
        'transcribe',
        'translate',
        'create',
        'update',
        'list',
        'deleteAssistant',
        'upload',
        'deleteFile',
      ] as const),
    ),
    modelId: Type.Optional(Type.Union([Type.String(), Locator])),
    /** image → generate (DALL·E 2 and 3, GPT Image 1) and audio → generate (TTS). */
    model: Type.Optional(Type.String({ maxLength: 100 })),
    messages: Type.Object(
      { values: Type.Optional(Type.Array(Message, { maxItems: 200 })) },
      { additionalProperties: false, default: { values: [{ content: '' }] } },
    ),
    simplify: Type.Optional(Type.Boolean()),
    jsonOutput: Type.Boolean({ default: false }),
    hideTools: Type.Optional(Type.String()),
    // image → analyze / generate, text → classify, audio → generate
    text: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    inputType: Type.Enum(['url', 'base64'] as const, { default: 'url' }),
    imageUrls: Type.String({ default: '', maxLength: 100_000 }),
    binaryPropertyName: Type.String({ default: 'data', maxLength: 1_000 }),
    prompt: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    input: Type.Optional(Type.String({ maxLength: 1_000_000 })),
    voice: Type.String({ default: 'alloy', maxLength: 50 }),
    // assistant (refused at save)
    assistantId: Type.Optional(Type.Union([Type.String(), Locator])),
    memory: Type.Optional(Type.String()),
    threadId: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    instructions: Type.Optional(Type.String()),
    file_ids: Type.Optional(Type.Unknown()),
    knowledgeRetrieval: Type.Optional(Type.Boolean()),
    codeInterpreter: Type.Optional(Type.Boolean()),
    fileId: Type.Optional(Type.Unknown()),
    options: Options,
    // n8n's notices (display only)
    noticeTools: Type.Optional(Type.String()),
    fileSizeLimitNotice: Type.Optional(Type.String()),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

export type OpenAiParams = Static<typeof OpenAiParameters>;
