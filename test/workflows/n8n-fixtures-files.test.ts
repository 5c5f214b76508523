import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  expectedOutputs,
  expectPinnedOutputs,
  FIXTURES,
  loadFixture,
  runFixture,
} from './support/n8n-fixtures.js';

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
];

/** Fixtures the platform cannot pass yet; each must still fail today (the test says why). */
const AWAITING: Array<{ file: string; reason: string }> = [
  {
    file: 'compression/workflow.compression.json',
    reason:
      'reads /home/me/Desktop/lorem.txt through Read/Write Files from Disk (not built); n8n checks the result in its test code, not in pinData',
  },
];

describe('n8n format and file node fixtures', () => {
  it.each(RUNNABLE)('%s: pinned nodes output exactly the pinned items', (file) => expectPinnedOutputs(file));

  it("MoveBinaryData's binary outputs are n8n's too (its test sets assertBinaryData)", async () => {
    const file = 'move-binary-data/MoveBinaryData.workflow.json';
    const expected = JSON.parse(
      readFileSync(join(FIXTURES, 'move-binary-data/harness/expected', basename(file)), 'utf8'),
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
    expect(compared).toBe(2);
  });

  it('MoveBinaryData fails without its test folder: the file nodes are off', async () => {
    const def = loadFixture('move-binary-data/MoveBinaryData.workflow.json');
    await expect(runFixture(def, { host: undefined })).rejects.toThrow(/WORKFLOW_FILES_DIR/);
  });

  it.each(AWAITING)('$file awaits: $reason', async ({ file }) => {
    const def = loadFixture(file);
    const expected = expectedOutputs(def);
    const result = await runFixture(def).then(
      ({ outcome, outputs }) =>
        outcome.status === 'success' &&
        Object.entries(expected).every(
          ([node, items]) => JSON.stringify(outputs[node]) === JSON.stringify(items),
        ),
      () => false,
    );
    expect(result).toBe(false);
  });
});
