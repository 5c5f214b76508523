import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DummyJson, startDummyJson } from './support/dummyjson-mock.js';
import { expectedOutputs, loadFixture, runFixture } from './support/n8n-fixtures.js';

/**
 * n8n's own HTTP Request test workflows (test/fixtures/n8n/http-request/, sources in SOURCES-http.md),
 * run unmodified. Their URLs point at https://dummyjson.com; a local server answers as n8n's test mocks
 * do (support/dummyjson-mock.ts).
 */

const READY = [
  'workflow.get.json',
  'workflow.post.json',
  'workflow.put.json',
  'workflow.patch.json',
  'workflow.delete.json',
  'workflow.deleteWithBody.json',
  // onError 'continueErrorOutput': the failing requests' items leave on the error output.
  'workflow.use_error_output.json',
];

let mock: DummyJson;

beforeAll(async () => {
  mock = await startDummyJson();
});

afterAll(() => mock.close());

describe('n8n HTTP Request fixtures', () => {
  it.each(READY)('%s gives the pinned output of every pinned node', async (file) => {
    const def = loadFixture(`http-request/${file}`);
    const expected = expectedOutputs(def);
    const { outcome, outputs } = await runFixture(def, mock.deps());
    expect(outcome.state.error).toBeNull();
    expect(Object.keys(expected).length).toBeGreaterThan(0);
    for (const [node, items] of Object.entries(expected)) expect(outputs[node], node).toEqual(items);
  });
});
