import type { Principal } from '../../core/auth/principal.js';
import { AppError, validationError } from '../../core/errors.js';
import type { DocumentsApi, IngestInput } from '../documents/index.js';
import type { FlowiseLoader } from './definition.js';
import type { FlowService } from './flow-service.js';
import type { FlowiseObjects } from './flowise/objects.js';
import {
  GITHUB_TOKEN,
  type LoaderKeys,
  loaderBudget,
  runLoaders,
  SEARCHAPI_KEY,
  type WebLoaderConfig,
  withOverrides,
} from './flowise/web-loaders.js';

/** A credential of the account's store, by id or name, if the caller may use it (else it throws 403). */
export type CredentialReveal = (
  caller: Principal,
  ref: string,
) => Promise<{ type: string; data: Record<string, string> } | null>;

/** A file of a multipart upsert (Flowise's `files` field), or of a JSON one, as base64. */
export interface UpsertFile {
  name: string;
  type: string;
  /** base64 */
  data: string;
}

export interface UpsertInput {
  documents?: Array<{ pageContent: string; metadata?: Record<string, unknown> }>;
  files?: UpsertFile[];
  topic?: string;
  /** Flowise's vector store node: its topic. */
  stopNodeId?: string;
  chunkSize?: number;
  metadata?: Record<string, unknown>;
  /** Flowise's: the canvas's loader inputs for this upsert (`url`, `selector`, `headers`…). */
  overrideConfig?: Record<string, unknown>;
}

/** The loader a file goes through, by its extension or media type; null when none reads it. */
function sourceOfFile(file: Pick<UpsertFile, 'name' | 'type'>): IngestInput['source'] | null {
  const name = file.name.toLowerCase();
  const type = file.type.toLowerCase().split(';')[0]?.trim() ?? '';
  if (name.endsWith('.pdf') || type === 'application/pdf') return 'pdf';
  if (name.endsWith('.html') || name.endsWith('.htm') || type === 'text/html') return 'html';
  if (name.endsWith('.md') || name.endsWith('.markdown') || type === 'text/markdown') return 'markdown';
  if (name.endsWith('.txt') || type.startsWith('text/')) return 'text';
  return null;
}

/**
 * Flowise's vector upsert: documents into the flow's topic of the knowledge base, processed before
 * the answer (chunked, embedded, indexed), so the next prediction finds them.
 */
export class UpsertService {
  constructor(
    private readonly flows: FlowService,
    private readonly documents: DocumentsApi | null,
    /** Each upsert is recorded (Flowise's upsert history). */
    private readonly objects: FlowiseObjects,
    /** The web and API loaders' outbound client and bounds. */
    private readonly loaders: WebLoaderConfig,
    /** The account's static Flowise variables (the SearchApi and GitHub loaders' keys). */
    private readonly staticVars: (accountId: string) => Promise<Record<string, string>> = async () => ({}),
    /** A credential of the account's store the caller may use, by id or name (null: no credentials here). */
    private readonly credentials: CredentialReveal | null = null,
  ) {}

  /**
   * The embeddings are charged to the caller's key, within its models (the documents module's ingest).
   * `signal`: the caller went away (a closed connection): the loaders stop, their request in flight too.
   */
  async upsert(caller: Principal, flowId: string, input: UpsertInput, signal?: AbortSignal) {
    const accountId = caller.accountId;
    const { definition } = await this.flows.load(accountId, flowId);
    // A chatflow's vector stores (a Tool Agent's retrievers too) are topics, by node id.
    const stores = definition.flowise?.plan?.stores ?? {};
    const topics = [
      ...new Set([...(definition.kind === 'rag' ? definition.topics : []), ...Object.values(stores)]),
    ];
    if (topics.length === 0)
      throw validationError(
        `Flow '${flowId}' is a ${definition.kind} flow: only a rag flow has topics to load into`,
        [{ field: 'flowId', message: 'is not a rag flow' }],
      );
    const byNode = input.stopNodeId !== undefined ? stores[input.stopNodeId] : undefined;
    if (input.stopNodeId !== undefined && !byNode)
      throw validationError(`Node '${input.stopNodeId}' is not a vector store of the flow`, [
        { field: 'stopNodeId', message: `must be one of: ${Object.keys(stores).join(', ') || '(none)'}` },
      ]);
    const topic = input.topic ?? byNode ?? (topics[0] as string);
    if (!topics.includes(topic))
      throw validationError(`Topic '${topic}' is not one of the flow's topics`, [
        { field: 'topic', message: `must be one of: ${topics.join(', ')}` },
      ]);
    let entries = this.entriesOf(input, topic);
    // No documents sent: the canvas's loaders (web pages, APIs) load them, as Flowise's upsert does.
    const loaders = definition.flowise?.plan?.loaders ?? {};
    const loading = Object.entries(loaders).filter(
      ([store]) => input.stopNodeId === undefined || store === input.stopNodeId,
    );
    if (entries.length === 0 && loading.length > 0) {
      if (!this.documents)
        throw new AppError('SERVICE_UNAVAILABLE', 'The knowledge base is not enabled on this server');
      entries = [];
      // One budget for the whole upsert, however many vector stores have loaders.
      const budget = loaderBudget(this.loaders, signal);
      // A per-node override names a loader of any of the flow's stores, and changes that loader only.
      const known = new Set(Object.values(loaders).flatMap((list) => list.map((l) => l.id)));
      const keys = await this.keysFor(
        caller,
        loading.flatMap(([, list]) => list),
      );
      for (const [store, list] of loading) {
        const docs = await runLoaders(
          this.loaders,
          withOverrides(list, input.overrideConfig ?? {}, known),
          budget,
          keys,
        );
        const into = input.topic ?? stores[store] ?? topic;
        for (const doc of docs) {
          const chunkSize = input.chunkSize ?? doc.chunkSize;
          entries.push({
            topic: into,
            source: doc.source,
            content: doc.content,
            title: doc.title,
            metadata: { ...doc.metadata, ...input.metadata },
            ...(chunkSize !== undefined ? { chunkSize } : {}),
          });
        }
      }
    } else if (input.overrideConfig !== undefined && Object.keys(input.overrideConfig).length > 0)
      throw validationError('overrideConfig changes the canvas’s loaders', [
        {
          field: 'overrideConfig',
          message: 'applies to the loaders the upsert runs: send it without documents or files',
        },
      ]);
    if (entries.length === 0)
      throw validationError('Nothing to upsert', [
        { field: 'documents', message: 'send documents or files' },
      ]);
    if (!this.documents)
      throw new AppError('SERVICE_UNAVAILABLE', 'The knowledge base is not enabled on this server');
    const added = [];
    let skipped = 0;
    let updated = 0;
    let chunks = 0;
    for (const entry of entries) {
      const { created, processed, document } = await this.documents.ingest(caller, entry);
      if (!processed) {
        skipped++;
        continue;
      }
      if (!created) updated++;
      chunks += document.chunkCount;
      added.push({
        documentId: document.documentId,
        title: document.title,
        status: document.status,
        chunkCount: document.chunkCount,
      });
    }
    const result = {
      numAdded: chunks,
      numUpdated: updated,
      numSkipped: skipped,
      numDeleted: 0,
      addedDocs: added,
    };
    await this.objects.create(
      accountId,
      'upsert',
      {
        result: { numAdded: chunks, numUpdated: updated, numSkipped: skipped, numDeleted: 0 },
        flowData: { topic, ...(input.stopNodeId !== undefined ? { stopNodeId: input.stopNodeId } : {}) },
      },
      flowId,
    );
    return result;
  }

  /**
   * Each SearchApi and GitHub loader's key: the credential its node names, when the account's store has
   * it (of the right type, one the caller may use: a 400 or 403 naming it otherwise), else the account's
   * Flowise variable.
   */
  private async keysFor(caller: Principal, loaders: FlowiseLoader[]): Promise<LoaderKeys> {
    const keyed = loaders.filter((l) => l.type === 'searchapi' || l.type === 'github');
    if (keyed.length === 0) return {};
    const vars = await this.staticVars(caller.accountId);
    const keys: Record<string, string> = {};
    for (const loader of keyed) {
      const [type, field, variable] =
        loader.type === 'searchapi'
          ? ['searchApi', 'searchApiKey', SEARCHAPI_KEY]
          : ['githubApi', 'accessToken', GITHUB_TOKEN];
      const bad = (message: string) =>
        validationError(`Loader '${loader.id}': ${message}`, [
          { field: `flowData.${loader.id}.credential`, message },
        ]);
      const found =
        loader.credential !== undefined && this.credentials
          ? await this.credentials(caller, loader.credential)
          : null;
      if (!found) {
        // An exported canvas names Flowise's own credential ids: one this store lacks falls back to the variable.
        if (vars[variable]) keys[loader.id] = vars[variable];
        else if (loader.credential !== undefined && loader.type === 'searchapi')
          throw bad(
            `names credential '${loader.credential}', which this account does not have (/api/v1/credentials), and the account has no ${variable} Flowise variable`,
          );
        continue;
      }
      const key = found.data[field];
      if (found.type !== type || !key)
        throw bad(
          `credential '${loader.credential}' is a ${found.type} credential; the loader needs a ${type} one with ${field}`,
        );
      keys[loader.id] = key;
    }
    return keys;
  }

  private entriesOf(input: UpsertInput, topic: string): IngestInput[] {
    const common = { topic, ...(input.chunkSize !== undefined ? { chunkSize: input.chunkSize } : {}) };
    const entries: IngestInput[] = (input.documents ?? []).map((d) => {
      const metadata = { ...input.metadata, ...d.metadata };
      const title = typeof metadata.title === 'string' ? metadata.title : undefined;
      return { ...common, source: 'text', content: d.pageContent, metadata, ...(title ? { title } : {}) };
    });
    for (const file of input.files ?? []) {
      const source = sourceOfFile(file);
      if (!source)
        throw validationError(`File '${file.name}' is of a type no loader reads`, [
          {
            field: 'files',
            message: `'${file.name}' (${file.type || 'no type'}): send text, markdown, html or pdf`,
          },
        ]);
      const bytes = Buffer.from(file.data, 'base64');
      entries.push({
        ...common,
        source,
        content: source === 'pdf' ? file.data : bytes.toString('utf8'),
        title: file.name,
        metadata: { ...input.metadata, fileName: file.name },
      });
    }
    return entries;
  }
}
