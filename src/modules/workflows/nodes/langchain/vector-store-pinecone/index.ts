import { type Static, Type } from 'typebox';
import { defineNode, type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { nodeCredential } from '../../n8n/sql/credential.js';
import { LANGCHAIN, locatorValue } from '../ai-parts.js';
import { runStoreModes, storeInputs, supplyStore } from '../vector-store-modes.js';
import { MetadataValues, nameLocator, STORE_MODE_PARAMETERS } from '../vector-store-params.js';
import { type PineconeOptions, pineconeStore } from './store.js';

/** Pinecone's control plane, where an index's host is read (the tests reroute it as any public host). */
const CONTROL_PLANE = 'https://api.pinecone.io';

/** n8n's options across the modes: the namespace everywhere, clearNamespace on insert, the filter on search. */
const Options = Type.Object(
  {
    pineconeNamespace: Type.Optional(Type.String({ maxLength: 500 })),
    clearNamespace: Type.Optional(Type.Boolean()),
    metadata: Type.Optional(MetadataValues),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    mode: Type.Enum(['load', 'insert', 'retrieve', 'retrieve-as-tool', 'update'] as const, {
      default: 'retrieve',
    }),
    pineconeIndex: nameLocator(45),
    ...STORE_MODE_PARAMETERS,
    /** The record `update` replaces (Pinecone ids are at most 512 characters). */
    id: Type.Optional(Type.String({ maxLength: 512 })),
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
type Params = Static<typeof Parameters>;

async function apiKeyOf(ctx: NodeExecutionContext<unknown>): Promise<string> {
  const credential = await nodeCredential(ctx, 'pineconeApi');
  if (!credential.apiKey) throw new NodeOperationError('The pineconeApi credential has no API key');
  return credential.apiKey;
}

function optionsOf(p: Params, apiKey: string): PineconeOptions {
  const filter = p.options.metadata?.metadataValues ?? [];
  return {
    controlPlane: CONTROL_PLANE,
    apiKey,
    index: locatorValue(p.pineconeIndex),
    namespace: p.options.pineconeNamespace ?? '',
    filter:
      filter.length > 0 ? Object.fromEntries(filter.map((f) => [f.name, (f.value ?? null) as Json])) : null,
  };
}

/**
 * n8n's Pinecone Vector Store (vectorStorePinecone) on Pinecone's REST API with the `pineconeApi` key,
 * behind the same vector store part as the others: `insert` (optionally clearing the namespace first),
 * `load`, `update` (one record by id), and as a sub-node `retrieve` and `retrieve-as-tool`.
 */
export const vectorStorePineconeNode = defineNode({
  type: `${LANGCHAIN}.vectorStorePinecone`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  inputs: storeInputs,
  subNode: 'ai_vectorStore',
  alsoSupplies: ['ai_tool'],
  aiInputs: ['ai_embedding', 'ai_document'],
  async execute(ctx) {
    const apiKey = await apiKeyOf(ctx as NodeExecutionContext<unknown>);
    // A namespace is cleared once per run, before its first insert (n8n clears it before each batch).
    const cleared = new Set<string>();
    return runStoreModes(ctx, async (p, embeddings) => {
      const o = optionsOf(p, apiKey);
      const store = pineconeStore(ctx.deps.http, o, embeddings);
      const key = `${o.index}\u0000${o.namespace}`;
      if (p.mode === 'insert' && p.options.clearNamespace && o.namespace && !cleared.has(key)) {
        cleared.add(key);
        await store.clearNamespace();
      }
      return store;
    });
  },
  supply(ctx, itemIndex) {
    return supplyStore(ctx, itemIndex, async (p, embeddings) =>
      pineconeStore(
        ctx.deps.http,
        optionsOf(p, await apiKeyOf(ctx as NodeExecutionContext<unknown>)),
        embeddings,
      ),
    );
  },
});
