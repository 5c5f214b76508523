import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOutboundHttp } from '../../src/core/http/outbound.js';
import { buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import type { EngineDeps, Item } from '../../src/modules/workflows/engine/types.js';
import { docxText } from '../../src/modules/workflows/nodes/langchain/document-default-data-loader/binary.js';
import { aiWorkflow, embeddingsOpenAi, LC } from './support/ai-workflow.js';
import { FakeEmbeddings } from './support/fake-embeddings.js';
import { runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's Default Data Loader in binary mode (PDF, CSV, DOCX, JSON, text; `auto` by MIME type; EPUB refused
 * by name) and the Token Splitter, in n8n-shaped workflows that insert a file into the Simple Vector
 * Store and load it back, against a local OpenAI-wire embeddings upstream.
 */

const embed = new FakeEmbeddings();
let deps: Partial<EngineDeps>;

beforeAll(async () => {
  await embed.start();
  deps = {
    http: createOutboundHttp({ allowHosts: [new URL(embed.base).host], timeoutMs: 10_000 }),
    tenant: 'acct_binary_loaders',
    credential: async (id): Promise<Record<string, string>> => {
      if (id === 'embed') return { apiKey: 'embed-key', url: `${embed.base}/v1` };
      throw new Error(`Credential '${id}' not found`);
    },
  };
});
afterAll(() => embed.stop());
beforeEach(() => embed.reset());

const file = (bytes: Buffer, mimeType: string, fileName: string): Item => ({
  json: { name: fileName },
  binary: { data: { data: bytes.toString('base64'), mimeType, fileName } },
});

/** Insert (Simple Vector Store) ← Default Data Loader (binary) ← optional splitter; embeddings attached. */
function insertWorkflow(
  key: string,
  loader: Record<string, unknown>,
  splitter?: { type: string; parameters: Record<string, unknown> },
) {
  return aiWorkflow(
    [
      {
        name: 'Insert',
        type: `${LC}.vectorStoreInMemory`,
        typeVersion: 1.1,
        parameters: { mode: 'insert', memoryKey: { __rl: true, mode: 'list', value: key } },
      },
      {
        name: 'Loader',
        type: `${LC}.documentDefaultDataLoader`,
        typeVersion: 1.1,
        parameters: {
          dataType: 'binary',
          textSplittingMode: splitter ? 'custom' : 'simple',
          options: {},
          ...loader,
        },
      },
      ...(splitter ? [{ name: 'Splitter', typeVersion: 1, ...splitter }] : []),
      embeddingsOpenAi(),
    ],
    [
      ['Trigger', 'Insert'],
      ['Loader', 'Insert', 'ai_document'],
      ...(splitter ? [['Splitter', 'Loader', 'ai_textSplitter'] as [string, string, string]] : []),
      ['Embeddings', 'Insert', 'ai_embedding'],
    ],
  );
}

const loadWorkflow = (key: string, prompt: string, topK = 1) =>
  aiWorkflow(
    [
      {
        name: 'Load',
        type: `${LC}.vectorStoreInMemory`,
        typeVersion: 1,
        parameters: { mode: 'load', memoryKey: key, prompt, topK },
      },
      embeddingsOpenAi(),
    ],
    [
      ['Trigger', 'Load'],
      ['Embeddings', 'Load', 'ai_embedding'],
    ],
  );

type Doc = { pageContent: string; metadata: Record<string, unknown> };

async function insert(
  key: string,
  items: Item[],
  loader: Record<string, unknown> = {},
  splitter?: Parameters<typeof insertWorkflow>[2],
) {
  const run = await runFixture(insertWorkflow(key, loader, splitter), deps, items);
  return { error: run.outcome.state.error, docs: (run.outputs.Insert ?? []) as Doc[] };
}

async function load(key: string, prompt: string, topK = 1): Promise<Doc[]> {
  const { outcome, outputs } = await runFixture(loadWorkflow(key, prompt, topK), deps);
  expect(outcome.state.error).toBeNull();
  return ((outputs.Load ?? []) as Array<{ document: Doc }>).map((o) => o.document);
}

/** A minimal DOCX: two paragraphs (one with a tab and an entity), tab stops in the properties. */
function docx(): Buffer {
  const xml =
    '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>' +
    '<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>Lighthouse</w:t></w:r><w:r><w:tab/><w:t xml:space="preserve">keepers &amp; their lamps</w:t></w:r></w:p>' +
    '<w:p><w:r><w:t>The beacon burns whale oil.</w:t></w:r></w:p></w:body></w:document>';
  return Buffer.from(
    zipSync({ '[Content_Types].xml': strToU8('<Types/>'), 'word/document.xml': strToU8(xml) }),
  );
}

const DOCX_MIME = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('Default Data Loader, binary mode', () => {
  it('a PDF (auto): one document a page with the PDF’s details, stored and loaded back', async () => {
    const pdf = buildPdf(['Otters hold hands while sleeping.', 'Beavers build dams of branches.'], 'Rivers');
    const { error, docs } = await insert('bin-pdf', [file(pdf, 'application/pdf', 'rivers.pdf')]);
    expect(error).toBeNull();
    expect(docs.map((d) => d.pageContent.trim())).toEqual([
      'Otters hold hands while sleeping.',
      'Beavers build dams of branches.',
    ]);
    expect(docs[1]?.metadata).toMatchObject({
      source: 'blob',
      blobType: 'application/pdf',
      pdf: { totalPages: 2, info: { Title: 'Rivers' } },
      loc: { pageNumber: 2 },
    });
    const found = await load('bin-pdf', 'Beavers build dams of branches.');
    expect(found[0]?.pageContent).toContain('Beavers build dams');

    const joined = await insert('bin-pdf-one', [file(pdf, 'application/pdf', 'rivers.pdf')], {
      loader: 'pdfLoader',
      options: { splitPages: false },
    });
    expect(joined.docs).toHaveLength(1);
    expect(joined.docs[0]?.pageContent).toMatch(/Otters[\s\S]*\n\n[\s\S]*Beavers/);
  });

  it('a CSV: a document a row as `header: value` lines, or one column; its row number', async () => {
    const csv = Buffer.from('city;river\nBerlin;Spree\nPrague;Vltava\n');
    const rows = await insert('bin-csv', [file(csv, 'text/csv', 'cities.csv')], {
      loader: 'csvLoader',
      options: { separator: ';' },
    });
    expect(rows.error).toBeNull();
    expect(rows.docs.map((d) => d.pageContent)).toEqual([
      'city: Berlin\nriver: Spree',
      'city: Prague\nriver: Vltava',
    ]);
    expect(rows.docs[1]?.metadata).toMatchObject({ source: 'blob', blobType: 'text/csv', line: 2 });
    const back = await load('bin-csv', 'city: Prague\nriver: Vltava');
    expect(back[0]?.pageContent).toContain('Vltava');

    const column = await insert('bin-csv-col', [file(csv, 'text/csv', 'cities.csv')], {
      options: { separator: ';', column: 'river' },
    });
    expect(column.docs.map((d) => d.pageContent)).toEqual(['Spree', 'Vltava']);
    const missing = await insert('bin-csv-bad', [file(csv, 'text/csv', 'c.csv')], {
      options: { separator: ';', column: 'sea' },
    });
    expect(missing.error?.message).toContain('Column sea not found in CSV file.');
  });

  it('a DOCX: its paragraphs as raw text; JSON with pointers; text', async () => {
    const word = await insert('bin-docx', [file(docx(), DOCX_MIME, 'lamps.docx')]);
    expect(word.error).toBeNull();
    expect(word.docs[0]?.pageContent).toBe(
      'Lighthouse\tkeepers & their lamps\n\nThe beacon burns whale oil.',
    );
    const json = Buffer.from(
      JSON.stringify({ title: 'skip', items: [{ text: 'first' }, { text: 'second' }] }),
    );
    const pointed = await insert('bin-json', [file(json, 'application/json', 'x.json')], {
      options: { pointers: '/items' },
    });
    expect(pointed.docs.map((d) => d.pageContent)).toEqual(['first', 'second']);
    const text = await insert('bin-text', [file(Buffer.from('plain words'), 'text/plain', 'a.txt')], {
      loader: 'textLoader',
    });
    expect(text.docs.map((d) => d.pageContent)).toEqual(['plain words']);
  });

  it('a DOCX of unclosed elements is read in one pass, not rescanned', async () => {
    const xml = `<w:document><w:body>${'<w:p><w:r><w:t>x</w:t>'.repeat(50_000)}</w:body></w:document>`;
    const hostile = Buffer.from(zipSync({ 'word/document.xml': strToU8(xml) }));
    // A rescanning pattern takes minutes here (50,000 unclosed paragraphs): the test's timeout fails it.
    const { error, docs } = await insert('bin-docx-hostile', [file(hostile, DOCX_MIME, 'h.docx')], {
      loader: 'docxLoader',
    });
    expect(error).toBeNull();
    expect(docs.length).toBeGreaterThan(0);
    expect(docs[0]?.pageContent).toMatch(/^x\n\nx\n\n/);
    // Tags that never close (`<w:p ` and no `>`): each scan stops at the next `<`, not at the file's end.
    const open = `<w:document><w:body>${'<w:p '.repeat(200_000)}<w:p><w:t>y</w:t></w:p></w:body></w:document>`;
    expect(docxText(Buffer.from(zipSync({ 'word/document.xml': strToU8(open) })))).toBe('y\n\n');
  });

  it('JSON nested thousands deep is a clear bounded error, not a stack overflow; within the limit it loads', async () => {
    const deep = Buffer.from(`${'['.repeat(100_000)}"core"${']'.repeat(100_000)}`);
    const refused = await insert('bin-json-deep', [file(deep, 'application/json', 'deep.json')]);
    expect(refused.error?.message).toContain('The JSON is nested deeper than 1000 levels');
    const fine = Buffer.from(`${'{"a":'.repeat(900)}"still read"${'}'.repeat(900)}`);
    const loaded = await insert('bin-json-fine', [file(fine, 'application/json', 'fine.json')]);
    expect(loaded.error).toBeNull();
    expect(loaded.docs.map((d) => d.pageContent)).toEqual(['still read']);
  });

  it('refuses by name: EPUB, an unknown loader, a missing binary property, a damaged DOCX', async () => {
    const epub = await insert('bin-epub', [file(Buffer.from('PK'), 'application/epub+zip', 'b.epub')]);
    expect(epub.error?.message).toContain('The EPUB loader is not supported here');
    const unknown = await insert('bin-x', [file(Buffer.from('x'), 'text/plain', 'a.txt')], {
      loader: 'pptxLoader',
    });
    expect(unknown.error?.message).toContain("Loader 'pptxLoader' is not one of");
    const none = await insert('bin-none', [{ json: {} }]);
    expect(none.error?.message).toContain('No binary data set.');
    const broken = await insert('bin-broken', [file(Buffer.from('not a zip'), DOCX_MIME, 'x.docx')]);
    expect(broken.error?.message).toContain('not a valid zip file');
  });
});

describe('Token Splitter', () => {
  it('splits a loaded PDF in an n8n workflow (custom splitting mode)', async () => {
    const pdf = buildPdf(['one two three four five six seven eight nine ten eleven twelve']);
    const { error, docs } = await insert(
      'bin-tokens',
      [file(pdf, 'application/pdf', 'n.pdf')],
      {},
      {
        type: `${LC}.textSplitterTokenSplitter`,
        parameters: { chunkSize: 5, chunkOverlap: 1 },
      },
    );
    expect(error).toBeNull();
    expect(docs.length).toBeGreaterThanOrEqual(3);
    expect(docs[0]?.pageContent.trim()).toBe('one two three four five');
    expect(docs[1]?.pageContent.trim()).toBe('five six seven eight nine');
  });
});
