import { defineNode, NodeOperationError, output } from '../../../engine/node-type.js';
import type { Item, ValidationProblem } from '../../../engine/types.js';
import { openAiTarget } from '../../n8n/open-ai/transport.js';
import { LANGCHAIN } from '../ai-parts.js';
import { analyzeImage, generateAudio, generateImage, readRecording } from './media.js';
import { OpenAiParameters, type OpenAiParams } from './schema.js';
import { classifyText, messageModel } from './text.js';

/** Each resource's operations here and its default (n8n's). */
const OPERATIONS: Record<'text' | 'image' | 'audio', { served: readonly string[]; default: string }> = {
  text: { served: ['message', 'classify'], default: 'message' },
  image: { served: ['analyze', 'generate'], default: 'generate' },
  audio: { served: ['generate', 'transcribe', 'translate'], default: 'generate' },
};

const operationOf = (p: Pick<OpenAiParams, 'resource' | 'operation'>): string =>
  p.operation ?? (p.resource in OPERATIONS ? OPERATIONS[p.resource as keyof typeof OPERATIONS].default : '');

/**
 * n8n's OpenAI node v1–1.8 (the app node, not the chat model sub-node): message a model (with tools
 * attached), classify text, analyze and generate images, generate, transcribe and translate audio — on
 * the `openAiApi` credential's server: OpenAI, a compatible server, or this platform's gateway. OpenAI's
 * Assistants and Files APIs (which OpenAI is retiring) are not served: refused at save.
 */
export const openAiNode = defineNode({
  type: `${LANGCHAIN}.openAi`,
  versions: [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8],
  schema: OpenAiParameters,
  aiInputs: ['ai_tool'],
  check(p) {
    const problems: ValidationProblem[] = [];
    if (p.resource === 'assistant' || p.resource === 'file')
      problems.push({
        path: 'parameters.resource',
        message: `OpenAI's ${p.resource === 'assistant' ? 'Assistants' : 'Files'} API is not served here: use the Text resource (Message a Model) or an AI Agent`,
      });
    else if (typeof p.operation === 'string' && !OPERATIONS[p.resource].served.includes(p.operation))
      problems.push({
        path: 'parameters.operation',
        message: `'${p.operation}' is not an operation of the ${p.resource} resource (${OPERATIONS[p.resource].served.join(', ')})`,
      });
    return problems;
  },
  async execute(ctx) {
    const out: Item[] = [];
    for (let i = 0; i < ctx.items.length; i++) {
      const p = await ctx.params(i);
      const target = await openAiTarget(ctx.node, (id) => ctx.credential(id));
      const operation = operationOf(p);
      const key = `${p.resource}:${operation}`;
      let items: Item[];
      if (key === 'text:message') items = await messageModel(ctx, p, i, target);
      else if (key === 'text:classify') items = await classifyText(ctx, p, target);
      else if (key === 'image:analyze') items = await analyzeImage(ctx, p, i, target);
      else if (key === 'image:generate') items = await generateImage(ctx, p, target);
      else if (key === 'audio:generate') items = await generateAudio(ctx, p, target);
      else if (key === 'audio:transcribe' || key === 'audio:translate')
        items = await readRecording(ctx, p, i, target, operation as 'transcribe' | 'translate');
      else throw new NodeOperationError(`The operation "${operation}" is not supported!`);
      for (const item of items) out.push({ ...item, pairedItem: { item: i } });
    }
    return output(out);
  },
});
