import { createGzip } from 'node:zlib';
import { Zip, ZipDeflate } from 'fflate';
import { describe, expect, it } from 'vitest';
import { binaryOf } from '../../../engine/binary.js';
import { ctx, testDeps, workflow } from '../../../engine/testing.js';
import type { Item } from '../../../engine/types.js';
import { WorkflowEngine } from '../../../engine/workflow-engine.js';
import { defaultNodeRegistry } from '../../index.js';

const engine = new WorkflowEngine(testDeps(), defaultNodeRegistry);

async function runNodes(items: Item[], ...steps: Array<Record<string, unknown>>) {
  const nodes = [
    { name: 'T', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1 },
    ...steps.map((parameters, i) => ({
      name: `N${i}`,
      type: 'n8n-nodes-base.compression',
      typeVersion: 1.1,
      parameters,
    })),
  ];
  const edges = steps.map((_, i): [string, string] => [i === 0 ? 'T' : `N${i - 1}`, `N${i}`]);
  const outcome = await engine.run(workflow(nodes, edges), { nodeName: 'T', items }, ctx);
  const last = outcome.state.runData[`N${steps.length - 1}`]?.at(-1);
  return { outcome, items: last?.output[0] ?? [] };
}

const MB = 1024 * 1024;
const zeros = Buffer.alloc(MB);

/** A zip holding `mb` megabytes of zeros, built in slices so the test never holds them whole. */
function zipBomb(mb: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Uint8Array[] = [];
    const zip = new Zip((error, chunk, final) => {
      if (error) return reject(error);
      chunks.push(chunk);
      if (final) resolve(Buffer.concat(chunks));
    });
    const entry = new ZipDeflate('zeros.bin', { level: 1 });
    zip.add(entry);
    for (let i = 0; i < mb; i++) entry.push(zeros, i === mb - 1);
    zip.end();
  });
}

function gzipBomb(mb: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const gz = createGzip({ level: 1 });
    const chunks: Buffer[] = [];
    gz.on('data', (c: Buffer) => chunks.push(c));
    gz.on('end', () => resolve(Buffer.concat(chunks)));
    gz.on('error', reject);
    for (let i = 0; i < mb; i++) gz.write(zeros);
    gz.end();
  });
}

describe('n8n-nodes-base.compression', () => {
  const files = {
    a: binaryOf(Buffer.from('hello'), 'text/plain', 'a.txt'),
    b: binaryOf(Buffer.from('{"x":1}'), 'application/json', 'b.json'),
  };

  it('zips several binary properties into one archive and unzips them again', async () => {
    const { outcome, items } = await runNodes(
      [{ json: { id: 1 }, binary: files }],
      { operation: 'compress', outputFormat: 'zip', binaryPropertyName: 'a, b', fileName: 'out.zip' },
      { operation: 'decompress', binaryPropertyName: 'data' },
    );
    expect(outcome.status).toBe('success');
    const binary = items[0]?.binary ?? {};
    expect(Object.keys(binary).sort()).toEqual(['file_0', 'file_1']);
    const byName = Object.fromEntries(
      Object.values(binary).map((b) => [b.fileName, Buffer.from(b.data, 'base64').toString()]),
    );
    expect(byName).toEqual({ 'a.txt': 'hello', 'b.json': '{"x":1}' });
    expect(items[0]?.json).toEqual({ id: 1 });
  });

  it('gzips each file and gunzips it back', async () => {
    const { items } = await runNodes(
      [{ json: {}, binary: { a: files.a } }],
      { operation: 'compress', outputFormat: 'gzip', binaryPropertyName: 'a' },
      { operation: 'decompress', binaryPropertyName: 'file_0' },
    );
    const out = items[0]?.binary?.file_0;
    expect(out?.fileName).toBe('a.txt');
    expect(Buffer.from(out?.data ?? '', 'base64').toString()).toBe('hello');
  });

  it('stops a zip bomb at the decompressed-size cap with a clear error', async () => {
    const bomb = await zipBomb(110);
    expect(bomb.length).toBeLessThan(MB);
    const started = Date.now();
    const { outcome } = await runNodes(
      [{ json: {}, binary: { data: binaryOf(bomb, 'application/zip', 'bomb.zip') } }],
      {
        operation: 'decompress',
        binaryPropertyName: 'data',
      },
    );
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toBe('The zip file decompresses to more than 100 MB');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stops a gzip bomb at the same cap', async () => {
    const bomb = await gzipBomb(110);
    const { outcome } = await runNodes(
      [{ json: {}, binary: { data: binaryOf(bomb, 'application/gzip', 'bomb.gz') } }],
      {
        operation: 'decompress',
        binaryPropertyName: 'data',
      },
    );
    expect(outcome.status).toBe('error');
    expect(outcome.state.error?.message).toBe('The gzip file decompresses to more than 100 MB');
  });
});
