import { type Static, Type } from 'typebox';
import { defineNode, type NodeExecutionContext, NodeOperationError } from '../../../engine/node-type.js';
import type { Json } from '../../../engine/types.js';
import { nodeCredential } from '../../n8n/sql/credential.js';
import { LANGCHAIN, locatorValue } from '../ai-parts.js';
import { runStoreModes, storeInputs, supplyStore } from '../vector-store-modes.js';
import { nameLocator, STORE_MODE_PARAMETERS } from '../vector-store-params.js';
import { type QdrantOptions, qdrantStore } from './store.js';

/** A JSON parameter as n8n's editor saves it: the JSON text, or (from the API) the object itself. */
const JsonObject = Type.Union([
  Type.String({ maxLength: 100_000 }),
  Type.Record(Type.String(), Type.Unknown()),
]);

/** n8n's options across the modes: collectionConfig on insert, searchFilterJson on load/retrieve. */
const Options = Type.Object(
  {
    collectionConfig: Type.Optional(JsonObject),
    searchFilterJson: Type.Optional(JsonObject),
    contentPayloadKey: Type.Optional(Type.String({ maxLength: 200 })),
    metadataPayloadKey: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false, default: {} },
);

const Parameters = Type.Object(
  {
    mode: Type.Enum(['load', 'insert', 'retrieve', 'retrieve-as-tool'] as const, { default: 'retrieve' }),
    qdrantCollection: nameLocator(255),
    ...STORE_MODE_PARAMETERS,
    options: Options,
    notice: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
type Params = Static<typeof Parameters>;

/** A JSON option as an object: '' is none; text must parse to an object (n8n's `validateType: 'object'`). */
function jsonObjectOf(value: unknown, what: string): Record<string, Json> | null {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === ''))
    return null;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw new NodeOperationError(`The ${what} is not valid JSON`, {
        description: (error as Error).message,
      });
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new NodeOperationError(`The ${what} must be a JSON object`);
  return parsed as Record<string, Json>;
}

/** The `qdrantApi` credential's URL (n8n's `qdrantUrl`, or `apiUrl` as another version names it) and key. */
async function targetOf(ctx: NodeExecutionContext<unknown>): Promise<{ base: string; apiKey: string }> {
  const credential = await nodeCredential(ctx, 'qdrantApi');
  const raw = (credential.qdrantUrl || credential.apiUrl || '').trim();
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new NodeOperationError(`Invalid Qdrant URL: ${raw.slice(0, 200)}`, {
      description: 'Give the credential a URL with its protocol (http/https), e.g. http://localhost:6333',
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new NodeOperationError(`The Qdrant URL '${raw.slice(0, 200)}' is not http(s)`);
  return { base: `${url.origin}${url.pathname.replace(/\/+$/, '')}`, apiKey: credential.apiKey ?? '' };
}

function optionsOf(p: Params, target: { base: string; apiKey: string }): QdrantOptions {
  return {
    ...target,
    collection: locatorValue(p.qdrantCollection),
    // n8n passes an empty key as none: LangChain's `content` / `metadata`.
    contentKey: p.options.contentPayloadKey || 'content',
    metadataKey: p.options.metadataPayloadKey || 'metadata',
    collectionConfig: jsonObjectOf(p.options.collectionConfig, 'collection config'),
    filter: jsonObjectOf(p.options.searchFilterJson, 'search filter'),
  };
}

/**
 * n8n's Qdrant Vector Store (vectorStoreQdrant) on a Qdrant server's REST API with the `qdrantApi`
 * credential, behind the same vector store part as the others: `insert` embeds its loader's documents
 * into the collection (created when missing), `load` answers the nearest to a prompt; as a sub-node,
 * `retrieve` is a store for a retriever or a Vector Store tool and `retrieve-as-tool` a tool of an agent.
 */
export const vectorStoreQdrantNode = defineNode({
  type: `${LANGCHAIN}.vectorStoreQdrant`,
  versions: [1, 1.1, 1.2, 1.3],
  schema: Parameters,
  inputs: storeInputs,
  subNode: 'ai_vectorStore',
  alsoSupplies: ['ai_tool'],
  aiInputs: ['ai_embedding', 'ai_document'],
  async execute(ctx) {
    const target = await targetOf(ctx as NodeExecutionContext<unknown>);
    return runStoreModes(ctx, (p, embeddings) =>
      qdrantStore(ctx.deps.http, optionsOf(p, target), embeddings),
    );
  },
  supply(ctx, itemIndex) {
    return supplyStore(ctx, itemIndex, async (p, embeddings) =>
      qdrantStore(
        ctx.deps.http,
        optionsOf(p, await targetOf(ctx as NodeExecutionContext<unknown>)),
        embeddings,
      ),
    );
  },
});
