import { describe, expect, it } from 'vitest';
import { buildFlateBombPdf, buildPdf } from '../../src/modules/documents/loaders/pdf-fixture.js';
import { binaryOf } from '../../src/modules/workflows/engine/binary.js';
import { ctx, testDeps, workflow } from '../../src/modules/workflows/engine/testing.js';
import type { Item } from '../../src/modules/workflows/engine/types.js';
import { WorkflowEngine } from '../../src/modules/workflows/engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../src/modules/workflows/nodes/index.js';

/**
 * n8n's PDF reading: Extract from File's `pdf` operation and the legacy Read PDF, with n8n's output
 * shape ({numpages, numrender, info, metadata, text, version}) and its options (joinPages, maxPages,
 * keepSource). The text comes from the documents module's bounded PDF worker.
 */
const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

async function run(items: Item[], type: string, parameters: Record<string, unknown>) {
  const nodes = [
    { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
    { name: 'N', type, typeVersion: 1, parameters },
  ];
  const outcome = await engine.run(workflow(nodes, [['T', 'N']]), { nodeName: 'T', items }, ctx);
  return { outcome, items: outcome.state.runData.N?.at(-1)?.output[0] ?? [] };
}

const pdfItem = (bytes: Buffer): Item => ({
  json: { source: 'upload' },
  binary: { data: binaryOf(bytes, 'application/pdf', 'doc.pdf') },
});

describe("n8n's PDF extraction", () => {
  it('Extract from File reads every page joined, with the page count, info and version', async () => {
    const { items } = await run(
      [pdfItem(buildPdf(['First page', 'Second page'], 'Report'))],
      'n8n-nodes-base.extractFromFile',
      {
        operation: 'pdf',
      },
    );
    expect(items).toHaveLength(1);
    const json = items[0]?.json as Record<string, unknown>;
    expect(json.numpages).toBe(2);
    expect(json.numrender).toBe(2);
    expect(json.text).toBe('First page\n\nSecond page');
    expect((json.info as Record<string, unknown>).Title).toBe('Report');
    expect(typeof json.version).toBe('string');
    expect(json.source).toBeUndefined();
    expect(items[0]?.binary).toBeUndefined();
  });

  it('honours joinPages, maxPages and keepSource as n8n does', async () => {
    const { items } = await run(
      [pdfItem(buildPdf(['One', 'Two', 'Three']))],
      'n8n-nodes-base.extractFromFile',
      {
        operation: 'pdf',
        options: { joinPages: false, maxPages: 2, keepSource: 'both' },
      },
    );
    const json = items[0]?.json as Record<string, unknown>;
    expect(json.text).toEqual(['One', 'Two']);
    expect(json.numpages).toBe(3);
    expect(json.source).toBe('upload');
    expect(items[0]?.binary?.data).toBeDefined();
  });

  it('the legacy Read PDF keeps the file and joins the pages', async () => {
    const { items } = await run([pdfItem(buildPdf(['Alpha', 'Beta']))], 'n8n-nodes-base.readPDF', {
      binaryPropertyName: 'data',
    });
    const json = items[0]?.json as Record<string, unknown>;
    expect(json.text).toBe('Alpha\n\nBeta');
    expect(items[0]?.binary?.data).toBeDefined();
  });

  it('a file that is not a PDF, a missing binary and a decompression bomb fail the node clearly', async () => {
    const junk = await run(
      [{ json: {}, binary: { data: binaryOf(Buffer.from('<html></html>'), 'text/html', 'x.pdf') } }],
      'n8n-nodes-base.readPDF',
      {},
    );
    expect(junk.outcome.status).toBe('error');
    expect(junk.outcome.state.error?.message).toBe('The file is not a PDF');
    const missing = await run([{ json: {} }], 'n8n-nodes-base.extractFromFile', { operation: 'pdf' });
    expect(missing.outcome.status).toBe('error');
    expect(missing.outcome.state.error?.message).toMatch(/data/);
    const bomb = await run(
      [pdfItem(buildFlateBombPdf(512 * 1024 * 1024))],
      'n8n-nodes-base.extractFromFile',
      {
        operation: 'pdf',
      },
    );
    expect(bomb.outcome.status).toBe('error');
    expect(bomb.outcome.state.error?.message).toBe('The PDF expands to more data than can be read safely');
  });
});
