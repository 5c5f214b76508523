/**
 * Flowise's last API operations (issue 36): chatflows of an API key, attachments, the document store's
 * file loaders, refresh and chunk edits, each scoped to the caller's account.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import { otherAccountKey } from '../helpers/accounts.js';
import { testDialects } from '../helpers/services.js';
import { type LlmTestbed, startLlmTestbed } from '../llm/support.js';
import { call, createFlow, expectFlowError, expectNamesField, type Flow } from './support.js';

const form = (files: Array<[string, string | Buffer, string]>, fields: Record<string, string> = {}) => {
  const data = new FormData();
  for (const [name, content, type] of files) data.append('files', new Blob([content], { type }), name);
  for (const [k, v] of Object.entries(fields)) data.append(k, v);
  return data;
};

describe.each(await testDialects())('flows: Flowise’s keys, attachments and chunk edits on %s', (dialect) => {
  let bed: LlmTestbed;
  let flow: Flow;
  let stranger: string;

  beforeAll(async () => {
    bed = await startLlmTestbed(dialect);
    flow = await createFlow(bed, { name: 'keys', kind: 'llm', model: 'llama3.2' });
    await createFlow(bed, { name: 'gpt', kind: 'llm', model: 'gpt-4o-mini' });
    stranger = await otherAccountKey(bed.p);
  });
  afterAll(() => bed?.close());

  it('chatflows/apikey: the flows a key of the account may run; another account’s key is a 400', async () => {
    const llamaOnly = await bed.p.createKey({
      name: 'llama',
      type: 'production',
      role: 'Admin',
      services: ['flow'],
      models: ['llama3.2'],
    });
    const mine = await call(bed, 'GET', `/api/v1/chatflows/apikey/${llamaOnly.key}`);
    expect(mine.status, mine.text).toBe(200);
    expect((mine.json() as Array<{ name: string }>).map((f) => f.name)).toEqual(['keys']);
    const all = (await call(bed, 'GET', `/api/v1/chatflows/apikey/${bed.p.adminKey}`)).json() as unknown[];
    expect(all).toHaveLength(2);
    const noFlows = await bed.p.createKey({
      name: 'llm only',
      type: 'production',
      role: 'Admin',
      services: ['llm'],
    });
    expect((await call(bed, 'GET', `/api/v1/chatflows/apikey/${noFlows.key}`)).json()).toEqual([]);
    expectFlowError(await call(bed, 'GET', `/api/v1/chatflows/apikey/${stranger}`), 400, 'VALIDATION_ERROR');
    expectFlowError(await call(bed, 'GET', '/api/v1/chatflows/apikey/not-a-key'), 400, 'VALIDATION_ERROR');
    // The stranger asking about this account's key learns nothing either.
    expectFlowError(
      await call(bed, 'GET', `/api/v1/chatflows/apikey/${bed.p.adminKey}`, { key: stranger }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('attachments: the files’ text in Flowise’s shape (PDF extracted), base64 on request, bounded', async () => {
    const pdf = buildPdf(['Invoice number 4711 is due in May.']);
    const res = await call(bed, 'POST', `/api/v1/attachments/${flow.id}/chat-1`, {
      body: form([
        ['notes.txt', 'The office opens at nine.', 'text/plain'],
        ['prices.csv', 'item,price\ntea,3\n', 'text/csv'],
        ['invoice.pdf', pdf, 'application/pdf'],
      ]),
    });
    expect(res.status, res.text).toBe(200);
    const files = res.json() as Array<{ name: string; mimeType: string; size: number; content: string }>;
    expect(files.map((f) => f.name)).toEqual(['notes.txt', 'prices.csv', 'invoice.pdf']);
    expect(files[0]).toEqual({
      name: 'notes.txt',
      mimeType: 'text/plain',
      size: 25,
      content: 'The office opens at nine.',
    });
    expect(files[1]?.content).toContain('tea,3');
    expect(files[2]?.content).toContain('Invoice number 4711');
    const raw = await call(bed, 'POST', `/api/v1/attachments/${flow.id}/chat-1`, {
      body: form([['a.txt', 'abc', 'text/plain']], { base64: 'true' }),
    });
    expect((raw.json() as Array<{ content: string }>)[0]?.content).toBe(
      Buffer.from('abc').toString('base64'),
    );
    expectNamesField(
      await call(bed, 'POST', `/api/v1/attachments/${flow.id}/chat-1`, {
        body: form([['tool.exe', Buffer.from([0x4d, 0x5a]), 'application/octet-stream']]),
      }),
      'tool.exe',
    );
    expectNamesField(
      await call(bed, 'POST', `/api/v1/attachments/${flow.id}/chat-1`, { body: { files: [] } }),
      'files',
    );
    expectFlowError(
      await call(bed, 'POST', `/api/v1/attachments/${flow.id}/chat-1`, {
        key: stranger,
        body: form([['a.txt', 'abc', 'text/plain']]),
      }),
      404,
      'FLOW_NOT_FOUND',
    );
  });

  it('document store: multipart files (text, CSV, JSON, PDF) and data-URL files go through the loaders', async () => {
    const store = (
      await call(bed, 'POST', '/api/v1/document-store/store', { body: { name: 'files' } })
    ).json() as {
      id: string;
    };
    const upsert = await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
      body: form(
        [
          ['menu.csv', 'dish,price\nramen,12\n', 'text/csv'],
          ['faq.json', JSON.stringify({ parking: 'The garage is on level minus two.' }), 'application/json'],
          ['report.pdf', buildPdf(['Quarterly revenue grew by seventeen percent.']), 'application/pdf'],
        ],
        { splitter: JSON.stringify({ config: { chunkSize: 400 } }) },
      ),
    });
    expect(upsert.status, upsert.text).toBe(200);
    const { docId, numAdded } = upsert.json() as { docId: string; numAdded: number };
    expect(numAdded).toBeGreaterThanOrEqual(3);
    const got = (await call(bed, 'GET', `/api/v1/document-store/store/${store.id}`)).json() as {
      loaders: Array<{ id: string; loaderName: string; documentIds: string[] }>;
    };
    expect(got.loaders[0]).toMatchObject({ id: docId, loaderName: 'csvFile' });
    expect(got.loaders[0]?.documentIds).toHaveLength(3);
    const ask = async (query: string) =>
      (
        (
          await call(bed, 'POST', '/api/v1/document-store/vectorstore/query', {
            body: { storeId: store.id, query },
          })
        ).json() as {
          docs: Array<{ pageContent: string }>;
        }
      ).docs.map((d) => d.pageContent);
    expect((await ask('quarterly revenue')).join(' ')).toContain('seventeen percent');
    expect((await ask('garage level')).join(' ')).toContain('minus two');
    const dataUrl = `data:text/plain;base64,${Buffer.from('Bikes go in the yard.').toString('base64')},filename:bikes.txt`;
    const viaJson = await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
      body: { loader: { name: 'textFile', config: { txtFile: dataUrl } } },
    });
    expect(viaJson.status, viaJson.text).toBe(200);
    expect((await ask('bikes yard')).join(' ')).toContain('Bikes go in the yard');
    expectNamesField(
      await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
        body: form([['x.bin', Buffer.from([1, 2, 3]), 'application/octet-stream']]),
      }),
      'x.bin',
    );
    expectNamesField(
      await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
        body: { loader: { name: 'pdfFile', config: { pdfFile: 'data:application/pdf,notbase64' } } },
      }),
      'loader.config.pdfFile',
    );
  });

  it('document store: chunk edit re-embeds, chunk delete drops it, refresh re-processes; strangers get 404', async () => {
    const store = (
      await call(bed, 'POST', '/api/v1/document-store/store', { body: { name: 'edits' } })
    ).json() as {
      id: string;
    };
    const text = 'Parking: staff park in lot B.\n\nLunch: the canteen opens at noon.';
    const { docId } = (
      await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, {
        body: { loader: { name: 'plainText', config: { text } }, splitter: { config: { chunkSize: 50 } } },
      })
    ).json() as { docId: string };
    const page = async () =>
      (await call(bed, 'GET', `/api/v1/document-store/chunks/${store.id}/${docId}/1`)).json() as {
        count: number;
        chunks: Array<{ id: string; pageContent: string }>;
      };
    const before = await page();
    expect(before.count).toBe(2);
    const parking = before.chunks.find((c) => c.pageContent.includes('lot B'));
    if (!parking) throw new Error('no parking chunk');
    const edited = await call(
      bed,
      'PUT',
      `/api/v1/document-store/chunks/${store.id}/${docId}/${parking.id}`,
      {
        body: { pageContent: 'Parking: staff park in the river garage.' },
      },
    );
    expect(edited.status, edited.text).toBe(200);
    const contents = (edited.json() as { chunks: Array<{ pageContent: string }> }).chunks.map(
      (c) => c.pageContent,
    );
    expect(contents.join(' ')).toContain('river garage');
    expect(contents.join(' ')).not.toContain('lot B');
    const query = async (q: string) =>
      (
        (
          await call(bed, 'POST', '/api/v1/document-store/vectorstore/query', {
            body: { storeId: store.id, query: q },
          })
        ).json() as {
          docs: Array<{ pageContent: string }>;
        }
      ).docs
        .map((d) => d.pageContent)
        .join(' ');
    expect(await query('river garage parking')).toContain('river garage');
    expect(await query('lot B')).not.toContain('lot B');

    const lunch = (await page()).chunks.find((c) => c.pageContent.includes('canteen'));
    if (!lunch) throw new Error('no lunch chunk');
    const paths: Array<[string, string, unknown?]> = [
      ['PUT', `/api/v1/document-store/chunks/${store.id}/${docId}/${lunch.id}`, { pageContent: 'stolen' }],
      ['DELETE', `/api/v1/document-store/chunks/${store.id}/${docId}/${lunch.id}`],
      ['POST', `/api/v1/document-store/refresh/${store.id}`, {}],
    ];
    for (const [method, path, body] of paths)
      expectFlowError(
        await call(bed, method, path, { key: stranger, ...(body ? { body } : {}) }),
        404,
        'NOT_FOUND',
      );
    expectFlowError(
      await call(bed, 'DELETE', `/api/v1/document-store/chunks/${store.id}/${docId}/no-such-chunk`),
      404,
      'NOT_FOUND',
    );
    expectFlowError(
      await call(bed, 'DELETE', `/api/v1/document-store/chunks/${store.id}/no-such-loader/${lunch.id}`),
      404,
      'NOT_FOUND',
    );
    expectNamesField(
      await call(bed, 'PUT', `/api/v1/document-store/chunks/${store.id}/${docId}/${lunch.id}`, { body: {} }),
      'pageContent',
    );
    const deleted = await call(
      bed,
      'DELETE',
      `/api/v1/document-store/chunks/${store.id}/${docId}/${lunch.id}`,
    );
    expect(deleted.status, deleted.text).toBe(200);
    expect(await query('canteen noon')).not.toContain('canteen');
    expect((await page()).chunks.map((c) => c.pageContent).join(' ')).not.toContain('canteen');

    expect(await query('river garage parking')).toContain('river garage');
    const refreshed = await call(bed, 'POST', `/api/v1/document-store/refresh/${store.id}`, { body: {} });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.json()).toEqual([expect.objectContaining({ docId, numAdded: expect.any(Number) })]);
    // A long re-processing answers before it ends (the wait is bounded): searchable once it has.
    await vi.waitFor(async () => expect(await query('river garage parking')).toContain('river garage'), {
      timeout: 20_000,
      interval: 100,
    });
  });
});

describe('flows: Flowise’s multipart uploads are bounded together, not only per file', () => {
  let bed: LlmTestbed;
  let flow: Flow;
  beforeAll(async () => {
    // One file may hold 2,000 bytes; a request's files together twice that.
    bed = await startLlmTestbed('sqlite', { DOCUMENT_MAX_BYTES: '2000' });
    flow = await createFlow(bed, { name: 'bounded', kind: 'llm', model: 'llama3.2' });
  });
  afterAll(() => bed?.close());

  const files = (n: number) =>
    form(
      Array.from(
        { length: n },
        (_, i) => [`f${i}.txt`, 'x'.repeat(1500), 'text/plain'] as [string, string, string],
      ),
    );

  it('attachments: within the total → 200; past it → 413 naming the limit', async () => {
    const ok = await call(bed, 'POST', `/api/v1/attachments/${flow.id}/chat-1`, { body: files(2) });
    expect(ok.status, ok.text).toBe(200);
    const over = await call(bed, 'POST', `/api/v1/attachments/${flow.id}/chat-1`, { body: files(3) });
    expectFlowError(over, 413, 'PAYLOAD_TOO_LARGE');
    expect(over.text).toContain('4000');
  });

  it('document-store upsert: past the total → 413, nothing stored', async () => {
    const store = (
      await call(bed, 'POST', '/api/v1/document-store/store', { body: { name: 'bounded' } })
    ).json() as {
      id: string;
    };
    const over = await call(bed, 'POST', `/api/v1/document-store/upsert/${store.id}`, { body: files(3) });
    expectFlowError(over, 413, 'PAYLOAD_TOO_LARGE');
    const after = (await call(bed, 'GET', `/api/v1/document-store/store/${store.id}`)).json() as {
      loaders?: unknown[];
    };
    expect(after.loaders ?? []).toEqual([]);
  });
});
