/**
 * Flowise's chunk pages of a document-store loader read only the page: counted per document, then the
 * page's rows (across two or more documents of the loader, in its order); a chunk is found by id among
 * the loader's documents of the account, never by reading them all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentsApi } from '../../src/modules/documents/index.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, expectFlowError } from './support.js';

const PER_PAGE = 50;

interface Loader {
  id: string;
  totalChars: number;
  documentIds: string[];
}
interface Chunk {
  id: string;
  docId: string;
  storeId: string;
  chunkNo: number;
  pageContent: string;
  metadata: { pageNumber: number };
}

const form = (files: Array<[string, string]>, chunkSize: number) => {
  const data = new FormData();
  for (const [name, content] of files)
    data.append('files', new Blob([content], { type: 'text/plain' }), name);
  data.append('splitter', JSON.stringify({ config: { chunkSize } }));
  return data;
};
const lines = (tag: string, n: number) =>
  Array.from(
    { length: n },
    (_, i) => `File ${tag} note ${String(i).padStart(3, '0')}: plan item ${tag}${i}.`,
  ).join('\n\n');

describe.each(await testDialects())('flows: Flowise chunk pages read only the page on %s', (dialect) => {
  let bed: LlmTestbed;
  let stranger: string;
  let api: DocumentsApi;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    stranger = await otherAccountKey(bed.p);
    const documents = bed.p.ctx.apis.documents;
    if (!documents) throw new Error('documents module missing');
    api = documents;
  });
  afterAll(() => bed?.close());

  const upsert = async (key: string, name: string, files: Array<[string, string]>) => {
    const store = (
      await call(bed, 'POST', '/api/v1/document-store/store', { key, body: { name } })
    ).json() as {
      id: string;
    };
    const res = await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
      key,
      body: form(files, 50),
    });
    expect(res.status, res.text).toBe(200);
    return { storeId: store.id, loaderId: (res.json() as { docId: string }).docId };
  };
  const loaderOf = async (storeId: string, loaderId: string, key = bed.p.adminKey) => {
    const got = (await call(bed, 'GET', `/api/v1/document-store/store/${storeId}`, { key })).json() as {
      loaders: Loader[];
    };
    const loader = got.loaders.find((l) => l.id === loaderId);
    if (!loader) throw new Error(`no loader ${loaderId}`);
    return loader;
  };
  /** The account a document belongs to (read from its row: the test names the stranger's account). */
  const accountOf = async (documentId: string) => {
    const row = await bed.p.ctx.db
      .selectFrom('documents')
      .select('account_id')
      .where('id', '=', documentId)
      .executeTakeFirstOrThrow();
    return row.account_id;
  };
  /** The loader's chunks as the documents API lists them, read whole: what the pages must show. */
  const everyChunk = async (storeId: string, loader: Loader, accountId = bed.p.accountId) => {
    const all: Chunk[] = [];
    for (const docId of loader.documentIds) {
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<DocumentsApi['documents']['chunks']>> = await api.documents.chunks(
          accountId,
          docId,
          cursor ? { cursor } : {},
        );
        for (const c of page.data)
          all.push({
            id: c.chunkId,
            docId,
            storeId,
            chunkNo: c.index + 1,
            pageContent: c.text,
            metadata: { pageNumber: c.pageNumber },
          });
        cursor = page.nextCursor;
      } while (cursor);
    }
    return all;
  };
  const page = async (storeId: string, loaderId: string, n: number, key = bed.p.adminKey) => {
    const res = await call(bed, 'GET', `/api/v1/document-store/chunks/${storeId}/${loaderId}/${n}`, { key });
    expect(res.status, res.text).toBe(200);
    return res.json() as { chunks: Chunk[]; count: number } & Record<string, unknown>;
  };
  /** Every page (and the one past the end) against the whole list; the pages' chunks, concatenated. */
  const expectPages = async (storeId: string, loaderId: string) => {
    const loader = await loaderOf(storeId, loaderId);
    const whole = await everyChunk(storeId, loader);
    const pages = Math.ceil(whole.length / PER_PAGE);
    const seen: Chunk[] = [];
    for (let n = 1; n <= pages + 1; n++) {
      const got = await page(storeId, loaderId, n);
      expect(Object.keys(got).sort()).toEqual(
        ['chunks', 'count', 'characters', 'file', 'currentPage', 'storeName', 'description'].sort(),
      );
      expect(got).toMatchObject({
        count: whole.length,
        characters: loader.totalChars,
        file: loader,
        currentPage: n,
      });
      expect(got.chunks).toEqual(whole.slice((n - 1) * PER_PAGE, n * PER_PAGE));
      if (n > pages) expect(got.chunks).toEqual([]);
      seen.push(...got.chunks);
    }
    expect(seen).toEqual(whole);
    return { loader, whole };
  };

  it('pages across the documents of a loader: each the right chunks in order, together the whole', async () => {
    const { storeId, loaderId } = await upsert(bed.p.adminKey, 'paged', [
      ['a.txt', lines('A', 70)],
      ['b.txt', lines('B', 4)],
      ['c.txt', lines('C', 60)],
    ]);
    const { loader, whole } = await expectPages(storeId, loaderId);
    expect(loader.documentIds).toHaveLength(3);
    expect(whole.length).toBeGreaterThan(2 * PER_PAGE);
    // The documents in the loader's order, each in chunk order.
    expect([...new Set(whole.map((c) => c.docId))]).toEqual(loader.documentIds);
    for (const docId of loader.documentIds) {
      const numbers = whole.filter((c) => c.docId === docId).map((c) => c.chunkNo);
      expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    }
    // Some page spans two documents (or more: b.txt is a few chunks).
    const spans = [];
    for (let n = 1; n <= Math.ceil(whole.length / PER_PAGE); n++)
      spans.push(new Set((await page(storeId, loaderId, n)).chunks.map((c) => c.docId)).size);
    expect(Math.max(...spans)).toBeGreaterThanOrEqual(2);
    expect(whole.map((c) => c.pageContent).join(' ')).toContain('plan item B3');
  });

  it('a chunk found by id is edited or deleted; the pages follow', async () => {
    const { storeId, loaderId } = await upsert(bed.p.adminKey, 'edited', [
      ['a.txt', lines('D', 60)],
      ['b.txt', lines('E', 30)],
      ['c.txt', lines('F', 30)],
    ]);
    const { whole } = await expectPages(storeId, loaderId);
    // On the second page, of the middle document.
    const target = whole.slice(PER_PAGE).find((c) => c.pageContent.includes('plan item E20.'));
    if (!target) throw new Error('no E20 chunk');
    const edited = await call(
      bed,
      'PUT',
      `/api/v1/document-store/chunks/${storeId}/${loaderId}/${target.id}`,
      {
        body: { pageContent: 'File E note 020: moved to the harbour office.' },
      },
    );
    expect(edited.status, edited.text).toBe(200);
    expect((edited.json() as { currentPage: number }).currentPage).toBe(1);
    const afterEdit = await expectPages(storeId, loaderId);
    // The document took its place in the loader's order.
    expect(afterEdit.loader.documentIds[0]).toBe(whole[0]?.docId);
    expect(afterEdit.loader.documentIds[1]).not.toBe(target.docId);
    const text = afterEdit.whole.map((c) => c.pageContent).join(' ');
    expect(text).toContain('harbour office');
    expect(text).not.toContain('plan item E20.');

    const last = afterEdit.whole.find((c) => c.pageContent.includes('plan item F29.'));
    if (!last) throw new Error('no F29 chunk');
    const deleted = await call(
      bed,
      'DELETE',
      `/api/v1/document-store/chunks/${storeId}/${loaderId}/${last.id}`,
    );
    expect(deleted.status, deleted.text).toBe(200);
    const afterDelete = await expectPages(storeId, loaderId);
    expect(afterDelete.whole.map((c) => c.pageContent).join(' ')).not.toContain('plan item F29.');
    // The chunk edited away is no longer found.
    expectFlowError(
      await call(bed, 'DELETE', `/api/v1/document-store/chunks/${storeId}/${loaderId}/${target.id}`),
      404,
      'NOT_FOUND',
    );
  });

  it('an edit of a loader naming a missing document is a 404 before it loads or deletes anything', async () => {
    const { storeId, loaderId } = await upsert(bed.p.adminKey, 'broken', [
      ['a.txt', lines('G', 20)],
      ['b.txt', lines('H', 20)],
    ]);
    const loader = await loaderOf(storeId, loaderId);
    const { whole } = await expectPages(storeId, loaderId);
    const kept = whole.find((c) => c.docId === loader.documentIds[0]);
    if (!kept) throw new Error('no chunk of the first document');
    // Gone under the loader (its one hold given back: the documents API refuses a held document).
    await api.documents.release(bed.p.accountId, loader.documentIds[1] as string);
    const inTopic = async () =>
      (
        await bed.p.ctx.db
          .selectFrom('documents')
          .select('id')
          .where('topic', '=', `docstore:${storeId}`)
          .execute()
      ).map((r) => r.id);
    const before = await inTopic();
    expectFlowError(
      await call(bed, 'PUT', `/api/v1/document-store/chunks/${storeId}/${loaderId}/${kept.id}`, {
        body: { pageContent: 'An edit that must not land.' },
      }),
      404,
      'DOCUMENT_NOT_FOUND',
    );
    // Nothing loaded, nothing deleted: the first document is still the one the loader names.
    expect(await inTopic()).toEqual(before);
    expect(before).toContain(loader.documentIds[0]);
  });

  it("another account's chunk is never found, through its store or through this one", async () => {
    const mine = await upsert(bed.p.adminKey, 'mine', [['m.txt', lines('M', 5)]]);
    const theirs = await upsert(stranger, 'theirs', [['t.txt', lines('T', 5)]]);
    const myChunk = (await page(mine.storeId, mine.loaderId, 1)).chunks[0];
    const theirPage = await page(theirs.storeId, theirs.loaderId, 1, stranger);
    const theirChunk = theirPage.chunks[0];
    if (!myChunk || !theirChunk) throw new Error('no chunks');
    // Their chunk id through my loader, and mine through theirs.
    for (const [key, at, chunkId] of [
      [bed.p.adminKey, mine, theirChunk.id],
      [stranger, theirs, myChunk.id],
    ] as const) {
      const path = `/api/v1/document-store/chunks/${at.storeId}/${at.loaderId}/${chunkId}`;
      expectFlowError(
        await call(bed, 'PUT', path, { key, body: { pageContent: 'stolen' } }),
        404,
        'NOT_FOUND',
      );
      expectFlowError(await call(bed, 'DELETE', path, { key }), 404, 'NOT_FOUND');
    }
    expect(await page(theirs.storeId, theirs.loaderId, 1, stranger)).toEqual(theirPage);

    // The documents API itself: the account decides, whatever document ids a caller names.
    const myDocs = (await loaderOf(mine.storeId, mine.loaderId)).documentIds;
    const theirDocs = (await loaderOf(theirs.storeId, theirs.loaderId, stranger)).documentIds;
    const strangerAccount = await accountOf(theirChunk.docId);
    expect(strangerAccount).not.toBe(bed.p.accountId);
    const docs = api.documents;
    expect(await docs.findChunk(bed.p.accountId, theirDocs, theirChunk.id)).toBeNull();
    expect(await docs.findChunk(bed.p.accountId, [...myDocs, ...theirDocs], theirChunk.id)).toBeNull();
    expect(await docs.findChunk(strangerAccount, myDocs, myChunk.id)).toBeNull();
    // Only among the documents named, even of the account.
    expect(await docs.findChunk(strangerAccount, theirDocs, theirChunk.id)).toMatchObject({
      chunkId: theirChunk.id,
      documentId: theirDocs[0],
    });
    expect(await docs.findChunk(strangerAccount, [], theirChunk.id)).toBeNull();
    expect(await docs.findChunk(bed.p.accountId, myDocs, myChunk.id)).toMatchObject({ chunkId: myChunk.id });
    await expect(docs.chunkCounts(bed.p.accountId, theirDocs)).rejects.toMatchObject({
      code: 'DOCUMENT_NOT_FOUND',
    });
    await expect(docs.chunkCounts(bed.p.accountId, [...myDocs, ...theirDocs])).rejects.toMatchObject({
      code: 'DOCUMENT_NOT_FOUND',
    });
    await expect(
      docs.chunkRange(bed.p.accountId, theirDocs[0] ?? '', { from: 0, limit: 10 }),
    ).rejects.toMatchObject({ code: 'DOCUMENT_NOT_FOUND' });
    expect(await docs.chunkCounts(strangerAccount, theirDocs)).toEqual([theirPage.count]);
    expect(await docs.chunkCounts(strangerAccount, [...theirDocs, ...theirDocs])).toEqual([
      theirPage.count,
      theirPage.count,
    ]);
  });
});
