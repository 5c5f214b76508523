import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectPinnedOutputs, FIXTURES, loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's own test workflows for its format and file nodes (test/fixtures/n8n/, provenance in
 * SOURCES-files.md): each node named in pinData must output exactly the pinned items.
 */
const RUNNABLE = [
  'html/extractHtmlContent.workflow.json',
  'html-extract/workflow.dotNotation.json',
  'xml/workflow.xml.json',
  'xml/workflow.xml-valid-data.json',
  'markdown/workflow.markdown.json',
  'convert-to-file/toText.workflow.json',
  // n8n's test reads harness/files/sample.json (its `C:\\Test\\` folder) and expects the outputs of
  // harness/expected/ (its test code, not pinData).
  'move-binary-data/MoveBinaryData.workflow.json',
  // n8n's test points Read Binary File at its test folder's lorem.txt (harness/paths.json here) and
  // checks Compression1 in code (harness/expected/).
  'compression/workflow.compression.json',
];

/** Compares the binary outputs a fixture's harness/expected/ holds (n8n's `assertBinaryData`). */
async function comparedBinaries(file: string): Promise<number> {
  const expected = JSON.parse(
    readFileSync(join(FIXTURES, dirname(file), 'harness/expected', basename(file)), 'utf8'),
  ) as { nodeData: Record<string, Array<{ binary?: Record<string, Record<string, string>> }>> };
  const { outcome } = await runFixture(loadFixture(file));
  expect(outcome.state.error).toBeNull();
  let compared = 0;
  for (const [node, items] of Object.entries(expected.nodeData)) {
    const got = outcome.state.runData[node]?.at(-1)?.output[0] ?? [];
    items.forEach((item, i) => {
      if (!item.binary) return;
      compared += 1;
      expect(got[i]?.binary, node).toEqual(item.binary);
    });
  }
  return compared;
}

describe('n8n format and file node fixtures', () => {
  it.each(RUNNABLE)('%s: pinned nodes output exactly the pinned items', (file) => expectPinnedOutputs(file));

  it("MoveBinaryData's binary outputs are n8n's too (its test sets assertBinaryData)", async () => {
    expect(await comparedBinaries('move-binary-data/MoveBinaryData.workflow.json')).toBe(2);
  });

  it("Compression's zip round trip gives back n8n's lorem.txt byte for byte, sized as n8n writes it", async () => {
    expect(await comparedBinaries('compression/workflow.compression.json')).toBe(1);
  });

  it('MoveBinaryData fails without its test folder: the file nodes are off', async () => {
    const def = loadFixture('move-binary-data/MoveBinaryData.workflow.json');
    await expect(runFixture(def, { host: undefined })).rejects.toThrow(/WORKFLOW_FILES_DIR/);
  });

  it("the fixture's absolute path itself stays refused: only the harness maps it into the test folder", async () => {
    const def = loadFixture('compression/workflow.compression.json');
    const read = def.nodes.find((n) => n.name === 'Read Binary File');
    if (!read) throw new Error('no Read Binary File node');
    read.parameters = { filePath: '/home/me/Desktop/lorem.txt' };
    const { outcome } = await runFixture(def);
    expect(outcome.state.error?.message).toMatch(/Access to '\/home\/me\/Desktop\/lorem.txt' is not allowed/);
  });
});
