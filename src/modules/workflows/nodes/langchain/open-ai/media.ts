import { binaryBytes, binaryOf } from '../../../engine/binary.js';
import { type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import type { BinaryData, Item, Json } from '../../../engine/types.js';
import { type OpenAiTarget, postForBytes, postJson, postMultipart } from '../../n8n/open-ai/transport.js';
import { locatorValue } from '../ai-parts.js';
import type { OpenAiParams } from './schema.js';

/** What OpenAI takes per image or recording; bigger inputs fail their item before the upload. */
const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const MAX_AUDIO_BYTES = 25 * 1024 * 1024;
const MAX_IMAGES = 10;

/** Image → Analyze Image: a chat completion with the image(s) as `image_url` parts. */
export async function analyzeImage(
  ctx: NodeExecutionContext<OpenAiParams>,
  p: OpenAiParams,
  i: number,
  target: OpenAiTarget,
): Promise<Item[]> {
  const version = ctx.node.typeVersion ?? 1;
  const model = version >= 1.4 ? locatorValue(p.modelId) || 'gpt-4o' : 'gpt-4-vision-preview';
  const text = p.text ?? "What's in this image?";
  if (!text.trim()) throw new NodeOperationError('A non-empty prompt is required.');
  const detail = p.options.detail ?? 'auto';
  const content: Array<Record<string, unknown>> = [{ type: 'text', text }];
  const urls =
    p.inputType === 'url'
      ? p.imageUrls.split(',').map((url) => url.trim())
      : p.binaryPropertyName.split(',').map((name) => {
          const { bytes, meta } = binaryBytes(ctx.items[i], name.trim(), i);
          if (bytes.length > MAX_IMAGE_BYTES)
            throw new NodeOperationError(
              `The image '${name.trim()}' is over ${MAX_IMAGE_BYTES / 1024 / 1024} MB`,
            );
          return `data:${meta.mimeType};base64,${meta.data}`;
        });
  if (urls.length > MAX_IMAGES)
    throw new NodeOperationError(`At most ${MAX_IMAGES} images are analyzed at once`);
  for (const url of urls) content.push({ type: 'image_url', image_url: { url, detail } });
  const response = await postJson(ctx.deps, target, '/chat/completions', {
    model,
    messages: [{ role: 'user', content }],
    max_completion_tokens: p.options.maxTokens || 300,
  });
  const choices = response.choices as Array<{ message?: { content?: Json } }> | undefined;
  if ((p.simplify ?? true) && choices) return [{ json: { content: choices[0]?.message?.content ?? null } }];
  return [{ json: response as Record<string, Json> }];
}

/** Image → Generate an Image: OpenAI's image generations, as binary files or as URLs. */
export async function generateImage(
  ctx: NodeExecutionContext<OpenAiParams>,
  p: OpenAiParams,
  target: OpenAiTarget,
): Promise<Item[]> {
  const model = p.model ?? 'dall-e-3';
  const prompt = p.prompt ?? '';
  if (!prompt.trim()) throw new NodeOperationError('A non-empty prompt is required.');
  const o = p.options;
  const asUrls = o.returnImageUrls === true && model !== 'gpt-image-1';
  const body: Record<string, unknown> = { prompt, model };
  if (model !== 'gpt-image-1') body.response_format = asUrls ? 'url' : 'b64_json';
  const quality = o.dalleQuality ?? o.quality;
  if (quality !== undefined) body.quality = quality;
  if (o.n !== undefined) body.n = o.n;
  if (o.size !== undefined) body.size = o.size;
  if (o.style !== undefined) body.style = o.style;
  const answer = await postJson(ctx.deps, target, '/images/generations', body);
  const data = Array.isArray(answer.data) ? (answer.data as Array<Record<string, Json>>) : [];
  if (asUrls) return data.map((entry) => ({ json: entry }));
  const field = o.binaryPropertyOutput || 'data';
  return data.map((entry) => {
    if (typeof entry.b64_json !== 'string')
      throw new NodeOperationError('OpenAI answered an image without its data');
    return fileItem(binaryOf(Buffer.from(entry.b64_json, 'base64'), 'image/png', 'data'), field);
  });
}

/** Audio → Generate Audio: OpenAI's text to speech, as a binary file. */
export async function generateAudio(
  ctx: NodeExecutionContext<OpenAiParams>,
  p: OpenAiParams,
  target: OpenAiTarget,
): Promise<Item[]> {
  const format = p.options.response_format ?? 'mp3';
  const bytes = await postForBytes(ctx.deps, target, '/audio/speech', {
    model: p.model ?? 'tts-1',
    input: p.input ?? '',
    voice: p.voice,
    response_format: format,
    speed: p.options.speed || 1,
  });
  const file = binaryOf(bytes, `audio/${format}`, `audio.${format}`);
  return [fileItem(file, p.options.binaryPropertyOutput || 'data')];
}

/** Audio → Transcribe / Translate a Recording: Whisper on the item's binary file. */
export async function readRecording(
  ctx: NodeExecutionContext<OpenAiParams>,
  p: OpenAiParams,
  i: number,
  target: OpenAiTarget,
  operation: 'transcribe' | 'translate',
): Promise<Item[]> {
  const { bytes, meta } = binaryBytes(ctx.items[i], p.binaryPropertyName, i);
  if (bytes.length > MAX_AUDIO_BYTES)
    throw new NodeOperationError('OpenAI takes audio files of at most 25 MB');
  const fields: Array<[string, unknown]> = [['model', 'whisper-1']];
  if (operation === 'transcribe' && p.options.language) fields.push(['language', p.options.language]);
  if (p.options.temperature) fields.push(['temperature', String(p.options.temperature)]);
  fields.push([
    'file',
    {
      file: {
        bytes,
        mimeType: meta.mimeType,
        fileName: meta.fileName ?? `audio.${meta.fileExtension ?? 'mp3'}`,
      },
    },
  ]);
  const path = operation === 'transcribe' ? '/audio/transcriptions' : '/audio/translations';
  return [{ json: (await postMultipart(ctx.deps, target, path, fields)) as Record<string, Json> }];
}

/** n8n's file item: the file's metadata as the JSON, the file under `field`. */
function fileItem(file: BinaryData, field: string): Item {
  const { data: _bytes, ...meta } = file;
  return { json: meta as Record<string, Json>, binary: { [field]: file } };
}
