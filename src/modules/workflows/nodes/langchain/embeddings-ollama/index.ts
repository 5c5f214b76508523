import { Type } from 'typebox';
import { defineSubNode, NodeOperationError } from '../../../engine/node-type.js';
import { credentialRefOf } from '../../../engine/types.js';
import { type Embeddings, LANGCHAIN } from '../ai-parts.js';
import { wireEmbeddings } from '../embeddings-wire.js';

const Parameters = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, default: 'llama3.2' }),
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

/** n8n's Embeddings Ollama: `POST {baseUrl}/api/embed` with the `ollamaApi` credential (or the platform's Ollama surface). */
export const embeddingsOllamaNode = defineSubNode({
  type: `${LANGCHAIN}.embeddingsOllama`,
  versions: [1],
  schema: Parameters,
  subNode: 'ai_embedding',
  async supply(ctx, itemIndex): Promise<Embeddings> {
    const p = await ctx.params(itemIndex);
    const credId = credentialRefOf(ctx.node.credentials?.ollamaApi);
    if (!credId) throw new NodeOperationError('No ollamaApi credential is set on the node');
    const cred = await ctx.credential(credId);
    const base = (cred.baseUrl || 'http://localhost:11434').replace(/\/+$/, '');
    if (!/^https?:\/\//.test(base)) throw new NodeOperationError(`The base URL '${base}' is not http(s)`);
    return wireEmbeddings(ctx.deps, {
      label: 'Ollama',
      url: `${base}/api/embed`,
      headers: cred.apiKey ? { authorization: `Bearer ${cred.apiKey}` } : {},
      credentialHeaders: ['authorization'],
      model: p.model,
      body: {},
      batchSize: 512,
      stripNewLines: true,
      timeoutMs: 120_000,
      wire: 'ollama',
    });
  },
});
