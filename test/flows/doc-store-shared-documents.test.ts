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
import { STORE_TOPIC_PREFIX, topicOf } from '../../src/modules/flows/flowise/doc-store.js';
import { FlowiseObjects } from '../../src/modules/flows/flowise/objects.js';
import { storeReferences } from '../../src/modules/flows/flowise/store-holds.js';
import * as m704 from '../../src/modules/flows/migrations/704-document-store-holds.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, expectFlowError } from './support.js';

interface Loader {
  id: string;
  documentIds: string[];
  totalChunks: number;
  totalChars: number;
}

const TEXT = 'Returns: unopened candles come back within 30 days.\n\nShipping: parcels leave on Mondays.';
const OTHER = 'Opening hours: nine to five, Monday to Saturday.';

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
  /** The loader loaded again with `text`, adding to what it named (`replaceExisting: false`). */
  const addTo = (storeId: string, loaderId: string, text: string) =>
    call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { docId: loaderId, replaceExisting: false, loader: { name: 'plainText', config: { text } } },
    });
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
  /** Rewrites a store's saved body, as an older version or a stopped process could have left it. */
  const editStore = async (
    storeId: string,
    edit: (body: Record<string, unknown>) => Record<string, unknown>,
  ) => {
    const row = await bed.p.ctx.db
      .selectFrom('flowise_objects')
      .select('body')
      .where('id', '=', storeId)
      .executeTakeFirstOrThrow();
    await bed.p.ctx.db
      .updateTable('flowise_objects')
      .set({ body: JSON.stringify(edit(JSON.parse(row.body) as Record<string, unknown>)) })
      .where('id', '=', storeId)
      .execute();
  };
  const editLoaders = (storeId: string, edit: (loaders: Loader[]) => Loader[]) =>
    editStore(storeId, (body) => ({ ...body, loaders: edit(body.loaders as Loader[]) }));
  /** The platform's clock (the testbed's, not the wall's). */
  const nowMs = () => bed.p.ctx.clock.now().getTime();
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

  it('a refresh stopped by a failing loader still writes what the others hold', async () => {
    const storeId = await newStore('refresh stopped');
    const [first, failing, last] = [
      await upsert(storeId),
      await upsert(storeId, OTHER),
      await upsert(storeId, 'Gift cards never expire.'),
    ];
    const real = (await loaders(storeId)).map((l) => l.totalChunks);
    // Stale totals on the first and last, and a loader whose processing is refused (chunk size 0).
    await editLoaders(storeId, (all) =>
      all.map((l) => (l.id === failing ? { ...l, chunkSize: 0 } : { ...l, totalChunks: 999 })),
    );

    const res = await call(bed, 'POST', `/api/v1/document-store/refresh/${storeId}`, { body: {} });
    expect(res.status, res.text).toBe(400);
    const after = await loaders(storeId);
    expect(after.map((l) => l.id)).toEqual([first, failing, last]);
    // The first was processed before the failure, the last not: both say what they hold.
    expect([after[0]?.totalChunks, after[2]?.totalChunks]).toEqual([real[0], real[2]]);
    expect(real[0]).toBeGreaterThan(0);
  });

  it('a loader loaded again without replacing (the same text) keeps one reference, and goes whole', async () => {
    const storeId = await newStore('again');
    const loaderId = await upsert(storeId);
    const documentId = (await loaders(storeId))[0]?.documentIds[0] ?? '';
    const res = await addTo(storeId, loaderId, TEXT);
    expect(res.status, res.text).toBe(200);
    expect((await loaders(storeId))[0]?.documentIds).toEqual([documentId]);
    expect(await holdsOf(documentId)).toBe(1);
    expect((await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${loaderId}`)).status).toBe(
      200,
    );
    expect(await exists(documentId)).toBe(false);
  });

  it('a loader loaded again without replacing (other text) names what it kept too; all of it goes with it', async () => {
    const storeId = await newStore('kept');
    const loaderId = await upsert(storeId);
    const [before] = await loaders(storeId);
    const earlier = before?.documentIds[0] ?? '';
    const res = await addTo(storeId, loaderId, OTHER);
    expect(res.status, res.text).toBe(200);
    const added = (res.json() as { numAdded: number }).numAdded;
    expect(added).toBeGreaterThan(0);
    const [after] = await loaders(storeId);
    // Before: only the new document was named, the earlier one held by nothing any store change reached.
    expect(after?.documentIds).toHaveLength(2);
    const later = after?.documentIds[0] ?? '';
    expect(after?.documentIds).toEqual([later, earlier]);
    expect(after?.totalChunks).toBe((before?.totalChunks ?? 0) + added);
    expect(after?.totalChars).toBe(TEXT.length + OTHER.length);
    expect([await holdsOf(earlier), await holdsOf(later)]).toEqual([1, 1]);

    const removed = await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${loaderId}`);
    expect(removed.status, removed.text).toBe(200);
    expect([await exists(earlier), await exists(later)]).toEqual([false, false]);
  });

  it('a store kept past 4,000 documents is refused (409), and what that upload loaded goes', async () => {
    const storeId = await newStore('bounded');
    const loaderId = await upsert(storeId);
    let real = '';
    await editLoaders(storeId, (all) => {
      real = all[0]?.documentIds[0] ?? '';
      // As if 3,999 more loads had been kept (ids of no document: a release of them finds nothing).
      const ids = [real, ...Array.from({ length: 3_999 }, (_, i) => `doc_gone${i}`)];
      return all.map((l) => ({ ...l, documentIds: ids }));
    });

    const res = await addTo(storeId, loaderId, OTHER);
    expect(expectFlowError(res, 409, 'CONFLICT').message).toContain('at most 4000 documents');
    const inTopic = await bed.p.ctx.db
      .selectFrom('documents')
      .select('id')
      .where('topic', '=', topicOf(storeId))
      .execute();
    expect(inTopic.map((r) => r.id)).toEqual([real]);
    expect((await loaders(storeId))[0]?.documentIds).toHaveLength(4_000);

    // A new loader beside it is refused the same way: the bound is the store's, however it grew.
    const beside = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text: OTHER } } },
    });
    expect(expectFlowError(beside, 409, 'CONFLICT').message).toContain('at most 4000 documents');
    expect(await loaders(storeId)).toHaveLength(1);
    const stillInTopic = await bed.p.ctx.db
      .selectFrom('documents')
      .select('id')
      .where('topic', '=', topicOf(storeId))
      .execute();
    expect(stillInTopic.map((r) => r.id)).toEqual([real]);
  });

  it('two deletes of one topic at once delete each document once; one being deleted is left to its deleter', async () => {
    const topic = `race-${dialect}`;
    const ids: string[] = [];
    for (const content of [TEXT, OTHER, 'Gift cards never expire.', 'Candles burn for forty hours.'])
      ids.push(
        (await api.ingest(caller, { source: 'text', content, topic }, { hold: true })).document.documentId,
      );
    // Another's delete under way: marked, not this pass's.
    const theirs = ids[3] ?? '';
    await sql`update documents set holds = -1 where id = ${theirs}`.execute(bed.p.ctx.db);
    const counts = await Promise.all([
      api.documents.deleteInTopic(bed.p.accountId, topic, 'all'),
      api.documents.deleteInTopic(bed.p.accountId, topic, 'all'),
    ]);
    expect(counts[0] + counts[1]).toBe(3);
    expect(await Promise.all(ids.map(exists))).toEqual([false, false, false, true]);
    expect(await api.documents.finishDeletes()).toBe(1);
    expect(await exists(theirs)).toBe(false);
  });

  it('a store over the bound from before can still replace a loader, not grow', async () => {
    const storeId = await newStore('over the bound');
    const big = await upsert(storeId);
    const small = await upsert(storeId, OTHER);
    // As an older version let it grow: 4,101 documents named.
    await editLoaders(storeId, (all) =>
      all.map((l) =>
        l.id === big
          ? {
              ...l,
              documentIds: [...l.documentIds, ...Array.from({ length: 4_099 }, (_, i) => `doc_gone${i}`)],
            }
          : l,
      ),
    );
    const replaced = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: {
        docId: small,
        loader: { name: 'plainText', config: { text: 'Candles burn for forty hours.' } },
      },
    });
    expect(replaced.status, replaced.text).toBe(200);
    const grown = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text: 'Gift cards never expire.' } } },
    });
    expect(expectFlowError(grown, 409, 'CONFLICT').message).toContain('at most 4000 documents');
  });

  it('an emptied index takes what nobody holds in its topic; the store deleted takes the rest', async () => {
    const storeId = await newStore('topic');
    await upsert(storeId);
    const named = (await loaders(storeId))[0]?.documentIds[0] ?? '';
    // Loaded into the store's topic by the documents API: held by nothing.
    const unheld = (await api.ingest(caller, { source: 'text', content: OTHER, topic: topicOf(storeId) }))
      .document.documentId;
    // An upload into the store still loading: held, not yet named.
    const inFlight = (
      await api.ingest(
        caller,
        { source: 'text', content: 'Gift cards never expire.', topic: topicOf(storeId) },
        { hold: true },
      )
    ).document.documentId;

    const emptied = await call(bed, 'DELETE', `/api/v1/document-store/vectorstore/${storeId}`);
    expect(emptied.status, emptied.text).toBe(200);
    expect((emptied.json() as { deleted: number }).deleted).toBe(2);
    expect([await exists(named), await exists(unheld), await exists(inFlight)]).toEqual([false, false, true]);

    const again = (await api.ingest(caller, { source: 'text', content: OTHER, topic: topicOf(storeId) }))
      .document.documentId;
    expect((await call(bed, 'DELETE', `/api/v1/document-store/store/${storeId}`)).status).toBe(200);
    // Before: both stayed in the topic of a store that no longer existed.
    expect([await exists(inFlight), await exists(again)]).toEqual([false, false]);
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
    // A delete left half-done (its process stopped) is finished when a worker starts, once it is older
    // than any delete runs (a recent one may be another process's, still running); the text loads again.
    await api.documents.recover();
    expect(await exists(documentId)).toBe(true);
    const old = new Date(nowMs() - 10 * 60_000).toISOString();
    await sql`update documents set held_at = ${old} where id = ${documentId}`.execute(bed.p.ctx.db);
    await api.documents.recover();
    expect(await exists(documentId)).toBe(false);
    const loaded = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text: TEXT } } },
    });
    expect(loaded.status, loaded.text).toBe(200);
  });

  it('the documents API refuses (409) to delete a document a loader names; the loader still reads it', async () => {
    const storeId = await newStore('api delete');
    const loaderId = await upsert(storeId);
    const documentId = (await loaders(storeId))[0]?.documentIds[0] ?? '';
    const res = await call(bed, 'DELETE', `/api/documents/${documentId}`);
    expect(res.status, res.text).toBe(409);
    expect(res.json()).toMatchObject({ error: true, code: 'CONFLICT' });
    expect((res.json() as { message: string }).message).toContain(topicOf(storeId));
    expect((await page(storeId, loaderId)).status).toBe(200);
    expect(await holdsOf(documentId)).toBe(1);
    // Named by nothing once its loader goes: then it is gone (a second delete finds nothing).
    expect((await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${loaderId}`)).status).toBe(
      200,
    );
    expect((await call(bed, 'DELETE', `/api/documents/${documentId}`)).status).toBe(404);
  });

  it('holds are set to what the loaders name once they have settled; an upload still loading keeps its hold', async () => {
    const storeId = await newStore('reconciled');
    await upsert(storeId);
    await upsert(storeId, OTHER);
    const [first = '', second = ''] = (await loaders(storeId)).map((l) => l.documentIds[0] ?? '');
    const gone = await newStore('gone');
    await upsert(gone);
    const orphan = (await loaders(gone))[0]?.documentIds[0] ?? '';
    const changed = await newStore('changed');
    await upsert(changed);
    const releasing = (await loaders(changed))[0]?.documentIds[0] ?? '';
    // As a process stopped mid-way leaves them: a hold never given back, one given back twice, and a
    // store deleted before its references were let go; all an hour and more ago.
    const old = new Date(nowMs() - 2 * 3_600_000).toISOString();
    const db = bed.p.ctx.db;
    await sql`update documents set holds = 3, held_at = ${old} where id = ${first}`.execute(db);
    await sql`update documents set holds = 0, held_at = ${old} where id = ${second}`.execute(db);
    // Its loaders let go of nothing for an hour and more; saved since (a refresh's counts, a rename)
    // all the same: those saves let go of no reference.
    await editStore(storeId, (body) => ({ ...body, referencesDroppedAt: old }));
    expect(
      (await call(bed, 'PUT', `/api/v1/document-store/store/${storeId}`, { body: { name: 'renamed' } }))
        .status,
    ).toBe(200);
    await sql`delete from flowise_objects where id = ${gone}`.execute(db);
    await sql`update documents set held_at = ${old} where id = ${orphan}`.execute(db);
    // A store changed since (a loader removed, its holds still being given back): left for later.
    await sql`update documents set holds = 2, held_at = ${old} where id = ${releasing}`.execute(db);
    // An upload into the store still loading: held just now, named by no loader yet.
    const inFlight = (
      await api.ingest(
        caller,
        { source: 'text', content: 'Gift cards never expire.', topic: topicOf(storeId) },
        { hold: true },
      )
    ).document.documentId;

    const objects = new FlowiseObjects(db, bed.p.ctx.clock);
    const before = new Date(nowMs() - 3_600_000).toISOString();
    const owner = (accountId: string, topic: string) => storeReferences(objects, accountId, topic, before);
    expect(await api.documents.reconcileHolds(STORE_TOPIC_PREFIX, before, owner)).toEqual({
      corrected: 3,
      deleted: 1,
    });
    expect([
      await holdsOf(first),
      await holdsOf(second),
      await holdsOf(releasing),
      await holdsOf(inFlight),
    ]).toEqual([1, 1, 2, 1]);
    // The deleted store's document, made by its upload, went as the store's delete would have taken it.
    expect(await exists(orphan)).toBe(false);
    // Settled now: a second pass finds nothing to correct.
    expect(await api.documents.reconcileHolds(STORE_TOPIC_PREFIX, before, owner)).toEqual({
      corrected: 0,
      deleted: 0,
    });
  });

  it('a holds pass over many interleaved topics reads each topic’s owner once, one at a time', async () => {
    const db = bed.p.ctx.db;
    const prefix = `bound-${dialect}:`;
    const at = new Date(nowMs()).toISOString();
    // 300 topics, two documents each; in id order every topic's first, then every topic's second.
    const row = (round: string, i: number) => ({
      id: `doc_bound_${round}_${String(i).padStart(3, '0')}`,
      account_id: bed.p.accountId,
      topic: `${prefix}${i}`,
      source: 'text',
      url: null,
      title: null,
      mime_type: 'text/plain',
      content_hash: `bound-${round}-${i}`,
      char_count: 1,
      page_count: 1,
      metadata: '{}',
      status: 'indexed',
      error: null,
      chunk_count: 0,
      embedding_model: null,
      language: 'none',
      processing: null,
      revision: 0,
      holds: 1,
      held_at: null,
      made_held: 0,
      created_at: at,
      updated_at: at,
    });
    const rows = ['a', 'b'].flatMap((round) => Array.from({ length: 300 }, (_, i) => row(round, i)));
    await db.insertInto('documents').values(rows).execute();
    let reads = 0;
    // Each topic's owner names its first document only: the second's hold is dropped.
    const owner = async (_accountId: string, topic: string) => {
      reads++;
      const i = Number(topic.slice(prefix.length));
      return { gone: false, references: new Map([[row('a', i).id, 1]]) };
    };
    const before = new Date(nowMs() - 3_600_000).toISOString();
    expect(await api.documents.reconcileHolds(prefix, before, owner)).toEqual({ corrected: 300, deleted: 0 });
    // Topic by topic, whatever the order of the documents' ids: one read each, none held after its topic.
    expect(reads).toBe(300);
    const holds = await db
      .selectFrom('documents')
      .select(['id', 'holds'])
      .where('id', 'like', 'doc_bound_%')
      .execute();
    expect(holds.filter((r) => Number(r.holds) === (r.id.includes('_a_') ? 1 : 0))).toHaveLength(600);
    await db.deleteFrom('documents').where('id', 'like', 'doc_bound_%').execute();
  });

  it('a store notes when its loaders let go of references: a removal and a replacement do, a refresh not', async () => {
    const storeId = await newStore('noted');
    const first = await upsert(storeId);
    await upsert(storeId, OTHER);
    const marked = async () =>
      (
        JSON.parse(
          (
            await bed.p.ctx.db
              .selectFrom('flowise_objects')
              .select('body')
              .where('id', '=', storeId)
              .executeTakeFirstOrThrow()
          ).body,
        ) as { referencesDroppedAt?: string }
      ).referencesDroppedAt;
    const now = new Date(nowMs()).toISOString();
    expect(await marked()).toBe(now);
    const old = new Date(nowMs() - 2 * 3_600_000).toISOString();
    await editStore(storeId, (body) => ({ ...body, referencesDroppedAt: old }));
    expect((await call(bed, 'POST', `/api/v1/document-store/refresh/${storeId}`, { body: {} })).status).toBe(
      200,
    );
    await upsert(storeId, 'Gift cards never expire.');
    expect(await marked()).toBe(old);
    const replaced = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: {
        docId: first,
        loader: { name: 'plainText', config: { text: 'Candles burn for forty hours.' } },
      },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(await marked()).toBe(now);
    await editStore(storeId, (body) => ({ ...body, referencesDroppedAt: old }));
    expect((await call(bed, 'DELETE', `/api/v1/document-store/loader/${storeId}/${first}`)).status).toBe(200);
    expect(await marked()).toBe(now);
  });

  it('a topic named like a store’s that never was one keeps the documents API’s documents', async () => {
    const topic = topicOf('never-a-store');
    const loaded = await api.ingest(caller, { source: 'text', content: OTHER, topic });
    const old = new Date(nowMs() - 2 * 3_600_000).toISOString();
    await sql`update documents set held_at = ${old} where id = ${loaded.document.documentId}`.execute(
      bed.p.ctx.db,
    );
    const objects = new FlowiseObjects(bed.p.ctx.db, bed.p.ctx.clock);
    const before = new Date(nowMs() - 3_600_000).toISOString();
    await api.documents.reconcileHolds(STORE_TOPIC_PREFIX, before, (accountId, t) =>
      storeReferences(objects, accountId, t, before),
    );
    expect(await exists(loaded.document.documentId)).toBe(true);
  });

  it('a delete left half-way is finished by a later pass, not one another process is still running', async () => {
    const storeId = await newStore('half deleted');
    await upsert(storeId);
    await upsert(storeId, OTHER);
    const [stale = '', live = ''] = (await loaders(storeId)).map((l) => l.documentIds[0] ?? '');
    const old = new Date(nowMs() - 10 * 60_000).toISOString();
    const now = new Date(nowMs()).toISOString();
    await sql`update documents set holds = -1, held_at = ${old} where id = ${stale}`.execute(bed.p.ctx.db);
    await sql`update documents set holds = -1, held_at = ${now} where id = ${live}`.execute(bed.p.ctx.db);
    const before = new Date(nowMs() - 5 * 60_000).toISOString();
    // Two passes at once in a process (one outlasting the sweep's period): the second does nothing.
    expect(
      await Promise.all([api.documents.finishDeletes(before), api.documents.finishDeletes(before)]),
    ).toEqual([1, 0]);
    expect([await exists(stale), await exists(live)]).toEqual([false, true]);
    // The upload of the stale one's content no longer waits for it: a new document.
    const res = await call(bed, 'POST', `/api/v1/document-store/upsert/${storeId}`, {
      body: { loader: { name: 'plainText', config: { text: TEXT } } },
    });
    expect(res.status, res.text).toBe(200);
    await sql`update documents set holds = 1 where id = ${live}`.execute(bed.p.ctx.db);
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

  it('uploads failing at once never delete a document the documents API loaded, whichever ends first', async () => {
    const api = bed.p.ctx.apis.documents;
    if (!api) throw new Error('documents module missing');
    const accountId = bed.p.accountId;
    const page = (text: string) => ({
      title: null,
      mimeType: 'text/plain',
      pages: [{ pageNumber: 1, text }],
    });
    const input = (topic: string) => ({ source: 'text', topic, metadata: {} });
    // Two uploads find the documents API's document before either fails: neither takes it as a
    // store's. Before, the second did (held twice), and deleted it if it gave its hold back last.
    const topic = topicOf('api-made');
    await api.documents.create(accountId, input(topic), page(TEXT));
    const first = await api.documents.create(accountId, input(topic), page(TEXT), { hold: true });
    const second = await api.documents.create(accountId, input(topic), page(TEXT), { hold: true });
    expect([first.created, first.shared, second.created, second.shared]).toEqual([
      false,
      undefined,
      false,
      undefined,
    ]);
    // As ingest then gives them back (unhold for a document it did not make and shares with no store).
    await api.documents.unhold(accountId, first.document.documentId);
    await api.documents.unhold(accountId, second.document.documentId);
    const [row] = await bed.p.ctx.db
      .selectFrom('documents')
      .select('holds')
      .where('topic', '=', topic)
      .execute();
    expect(row?.holds).toBe(0);

    // One an upload made is a store's: found by another upload while held, it is shared.
    const storeTopic = topicOf('upload-made');
    const made = await api.documents.create(accountId, input(storeTopic), page(TEXT), { hold: true });
    const found = await api.documents.create(accountId, input(storeTopic), page(TEXT), { hold: true });
    expect([made.created, found.created, found.shared]).toEqual([true, false, true]);
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
