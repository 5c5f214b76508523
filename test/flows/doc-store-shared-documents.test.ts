/**
 * One content is one document in a store's topic, so loaders (and uploads still loading) share it:
 * each holds a reference, and the document goes with the last one. Before, a loader removed, or an
 * upsert refused, deleted a document an upload still loading had found by its content and was about
 * to save (its loader then named nothing), and a refresh of two loaders of one content answered 404
 * half-way, its first document deleted.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountPrincipal, type Principal } from '../../src/core/auth/principal.js';
import { AppError } from '../../src/core/errors.js';
import type { DocumentsApi } from '../../src/modules/documents/index.js';
import { topicOf } from '../../src/modules/flows/flowise/doc-store.js';
import * as m704 from '../../src/modules/flows/migrations/704-document-store-holds.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, expectFlowError } from './support.js';

interface Loader {
  id: string;
  documentIds: string[];
  totalChunks: number;
}

const TEXT = 'Returns: unopened candles come back within 30 days.\n\nShipping: parcels leave on Mondays.';

describe.each(await testDialects())('flows: documents a store’s loaders share on %s', (dialect) => {
  let bed: LlmTestbed;
  let api: DocumentsApi;
  let caller: Principal;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    const documents = bed.p.ctx.apis.documents;
    if (!documents) throw new Error('documents module missing');
    api = documents;
    caller = accountPrincipal(bed.p.accountId);
  });
  afterAll(() => bed?.close());

  const newStore = async (name: string) =>
    ((await call(bed, 'POST', '/api/v1/document-store/store', { body: { name } })).json() as { id: string })
      .id;
  const upsert = async (storeId: string, text = TEXT) => {
    const res = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text } }, splitter: { config: { chunkSize: 60 } } },
    });
    expect(res.status, res.text).toBe(200);
    return (res.json() as { docId: string }).docId;
  };
  const loaders = async (storeId: string) =>
    ((await call(bed, 'GET', `/api/v1/document-store/store/${storeId}`)).json() as { loaders: Loader[] })
      .loaders;
  const exists = async (documentId: string) =>
    api.documents.get(bed.p.accountId, documentId, false).then(
      () => true,
      (error: unknown) => {
        if (error instanceof AppError && error.code === 'DOCUMENT_NOT_FOUND') return false;
        throw error;
      },
    );
  const holdsOf = async (documentId: string) =>
    (
      await bed.p.ctx.db
        .selectFrom('documents')
        .select('holds')
        .where('id', '=', documentId)
        .executeTakeFirstOrThrow()
    ).holds;
  const page = (storeId: string, loaderId: string) =>
    call(bed, 'GET', `/api/v1/document-store/chunks/${storeId}/${loaderId}/1`);

  it('two loaders of one content name one document; it goes with the second loader, not the first', async () => {
    const storeId = await newStore('shared');
    const first = await upsert(storeId);
    const second = await upsert(storeId);
    const [a, b] = await loaders(storeId);
    expect(a?.documentIds).toHaveLength(1);
    expect(b?.documentIds).toEqual(a?.documentIds);
    const documentId = a?.documentIds[0] ?? '';
    expect(await holdsOf(documentId)).toBe(2);

    const removed = await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${first}`);
    expect(removed.status, removed.text).toBe(200);
    expect(await exists(documentId)).toBe(true);
    expect((await page(storeId, second)).status).toBe(200);

    expect((await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${second}`)).status).toBe(
      200,
    );
    expect(await exists(documentId)).toBe(false);
  });

  it('a loader removed while an upload of its content is still loading leaves that upload its document', async () => {
    const storeId = await newStore('in flight');
    const loaderId = await upsert(storeId);
    const [loader] = await loaders(storeId);
    const documentId = loader?.documentIds[0] ?? '';
    // An upsert of the same text, past its loading and not yet saved: it has found the document.
    const inFlight = await api.ingest(
      caller,
      { source: 'text', content: TEXT, topic: topicOf(storeId) },
      { hold: true },
    );
    expect(inFlight.document.documentId).toBe(documentId);

    expect((await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${loaderId}`)).status).toBe(
      200,
    );
    // Before: no loader named it at that moment, so it went, and the upload saved a loader naming nothing.
    expect(await exists(documentId)).toBe(true);
    expect(await holdsOf(documentId)).toBe(1);
    // The upload refused after all (the store filled up meanwhile) lets go: now it goes.
    await api.documents.release(bed.p.accountId, documentId);
    expect(await exists(documentId)).toBe(false);
  });

  it('refresh processes a document two loaders share once, in place; both loaders still read', async () => {
    const storeId = await newStore('refresh');
    const first = await upsert(storeId);
    const second = await upsert(storeId);
    const before = await loaders(storeId);
    const chunkIds = async () =>
      ((await page(storeId, first)).json() as { chunks: Array<{ id: string }> }).chunks.map((c) => c.id);
    const chunksBefore = await chunkIds();
    const res = await call(bed, 'POST', `/api/v1/document-store/refresh/${storeId}`, { body: {} });
    expect(res.status, res.text).toBe(200);
    const results = res.json() as Array<{ docId: string; numAdded: number }>;
    expect(results.map((r) => r.docId)).toEqual([first, second]);
    expect(results[0]?.numAdded).toBeGreaterThan(0);
    const after = await loaders(storeId);
    expect(after.map((l) => l.documentIds)).toEqual(before.map((l) => l.documentIds));
    expect(after.map((l) => l.totalChunks)).toEqual(results.map((r) => r.numAdded));
    for (const loaderId of [first, second]) {
      const chunks = await page(storeId, loaderId);
      expect(chunks.status, chunks.text).toBe(200);
      expect(chunks.text).toContain('Mondays');
    }
    expect(await holdsOf(after[0]?.documentIds[0] ?? '')).toBe(2);
    // Chunked again: new chunks, as many as before.
    const chunksAfter = await chunkIds();
    expect(chunksAfter).toHaveLength(chunksBefore.length);
    expect(chunksAfter.filter((id) => chunksBefore.includes(id))).toEqual([]);
  });

  it('a loader loaded again without replacing (the same text) keeps one reference, and goes whole', async () => {
    const storeId = await newStore('again');
    const loaderId = await upsert(storeId);
    const documentId = (await loaders(storeId))[0]?.documentIds[0] ?? '';
    const res = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: {
        docId: loaderId,
        replaceExisting: false,
        loader: { name: 'plainText', config: { text: TEXT } },
      },
    });
    expect(res.status, res.text).toBe(200);
    expect((await loaders(storeId))[0]?.documentIds).toEqual([documentId]);
    expect(await holdsOf(documentId)).toBe(1);
    expect((await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${loaderId}`)).status).toBe(
      200,
    );
    expect(await exists(documentId)).toBe(false);
  });

  it('a chunk edit swaps one loader’s reference; the other loader keeps the shared document', async () => {
    const storeId = await newStore('edit');
    const first = await upsert(storeId);
    const second = await upsert(storeId);
    const shared = (await loaders(storeId))[0]?.documentIds[0] ?? '';
    const chunks = (await page(storeId, first)).json() as {
      chunks: Array<{ id: string; pageContent: string }>;
    };
    const shipping = chunks.chunks.find((c) => c.pageContent.includes('Mondays'));
    if (!shipping) throw new Error('no shipping chunk');
    const edited = await call(
      bed,
      'PUT',
      `/api/v1/document-store/chunks/${storeId}/${first}/${shipping.id}`,
      {
        body: { pageContent: 'Shipping: parcels leave on Fridays.' },
      },
    );
    expect(edited.status, edited.text).toBe(200);
    expect(edited.text).toContain('Fridays');
    const [a, b] = await loaders(storeId);
    expect(a?.documentIds).not.toEqual([shared]);
    expect(b?.documentIds).toEqual([shared]);
    expect(await holdsOf(shared)).toBe(1);
    const other = await page(storeId, second);
    expect(other.status, other.text).toBe(200);
    expect(other.text).toContain('Mondays');
  });

  it('an upload does not take a document being deleted: it waits, then answers 409 to load again', async () => {
    const storeId = await newStore('deleting');
    await upsert(storeId);
    const documentId = (await loaders(storeId))[0]?.documentIds[0] ?? '';
    // As a delete leaves it between its first statement and its last (its chunks go in batches).
    await sql`update documents set holds = -1 where id = ${documentId}`.execute(bed.p.ctx.db);
    const again = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text: TEXT } } },
    });
    expectFlowError(again, 409, 'CONFLICT');
    expect(await loaders(storeId)).toHaveLength(1);
    // Not processed again while it goes: a refresh counts it as nothing.
    const refreshed = await call(bed, 'POST', `/api/v1/document-store/refresh/${storeId}`, { body: {} });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect((refreshed.json() as Array<{ numAdded: number }>)[0]?.numAdded).toBe(0);
    // A delete left half-done (its process stopped) is finished when a worker starts; the text loads again.
    await api.documents.recover();
    expect(await exists(documentId)).toBe(false);
    const loaded = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text: TEXT } } },
    });
    expect(loaded.status, loaded.text).toBe(200);
  });

  it('the store deleted lets go of every reference; migration 704 counts the ones saved before it', async () => {
    const storeId = await newStore('counted');
    await upsert(storeId);
    await upsert(storeId);
    await upsert(storeId, 'Opening hours: nine to five.');
    const named = (await loaders(storeId)).flatMap((l) => l.documentIds);
    const [shared, single] = [named[0] ?? '', named[2] ?? ''];
    // As rows written before migration 606 (holds 0), then counted from the loaders.
    await sql`update documents set holds = 0 where id in (${shared}, ${single})`.execute(bed.p.ctx.db);
    await m704.up(bed.p.ctx.db as never);
    expect([await holdsOf(shared), await holdsOf(single)]).toEqual([2, 1]);

    expect((await call(bed, 'DELETE', `/api/v1/document-store/store/${storeId}`)).status).toBe(200);
    expect([await exists(shared), await exists(single)]).toEqual([false, false]);
  });
});

describe('flows: failed store uploads of one content (an embedder that is down)', () => {
  let bed: LlmTestbed;
  beforeAll(async () => {
    bed = await startLlmTestbed(
      'sqlite',
      { KNOWLEDGE_EMBEDDING_MODEL: 'dead-embed' },
      {
        extraModels: () => [
          {
            provider: 'ollama',
            baseUrl: 'http://127.0.0.1:9',
            timeoutMs: 2_000,
            name: 'dead-embed',
            kind: 'embedding',
          },
        ],
      },
    );
  });
  afterAll(() => bed?.close());

  const topicRows = async (storeId: string) =>
    bed.p.ctx.db
      .selectFrom('documents')
      .select(['id', 'holds'])
      .where('topic', '=', topicOf(storeId))
      .execute();
  const upsert = (storeId: string) =>
    call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text: TEXT } } },
    });

  it('uploads of one content at once, processing failing: every document left is named, held once a name', async () => {
    const storeId = (
      (await call(bed, 'POST', '/api/v1/document-store/store', { body: { name: 'failing' } })).json() as {
        id: string;
      }
    ).id;
    const answers = await Promise.all([upsert(storeId), upsert(storeId), upsert(storeId)]);
    // Failed (422), or saved naming the document another upload was processing (200, skipped).
    for (const res of answers) expect([200, 409, 422], res.text).toContain(res.status);
    expect(answers.some((res) => res.status === 422)).toBe(true);
    const store = (await call(bed, 'GET', `/api/v1/document-store/store/${storeId}`)).json() as {
      loaders: Loader[];
    };
    const named = store.loaders.flatMap((l) => l.documentIds);
    expect(store.loaders).toHaveLength(answers.filter((res) => res.status === 200).length);
    // Whichever upload gave its hold back first: no document in the topic that no loader names.
    const rows = await topicRows(storeId);
    expect(rows.map((r) => r.id).sort()).toEqual([...new Set(named)].sort());
    for (const row of rows) expect(row.holds).toBe(named.filter((id) => id === row.id).length);
  });

  it('a failed upload keeps a document of its content that the documents API loaded there', async () => {
    const storeId = (
      (await call(bed, 'POST', '/api/v1/document-store/store', { body: { name: 'kept' } })).json() as {
        id: string;
      }
    ).id;
    const loaded = await call(bed, 'POST', '/api/documents/load', {
      body: { source: 'text', content: TEXT, topic: topicOf(storeId) },
    });
    expect(loaded.status, loaded.text).toBeLessThan(300);
    const res = await upsert(storeId);
    expect(res.status, res.text).toBe(422);
    const rows = await topicRows(storeId);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.holds).toBe(0);
  });
});
