import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnowledgeService } from '../../src/modules/documents/knowledge-service.js';
import { DocumentStore } from '../../src/modules/documents/store.js';
import { type TopicSnapshot, TopicSnapshots } from '../../src/modules/documents/topic-snapshot.js';
import { embedHashedNgrams } from '../../src/modules/llm/builtin/hashed-ngrams.js';
import { createTestPlatform, type TestPlatform } from '../helpers/platform.js';
import { testDialects } from '../helpers/services.js';
import { until } from '../helpers/until.js';
import { loaded, processed } from './support.js';

const MODEL = 'builtin/hashed-ngrams';
const fileOf = (dir: string, accountId: string, topic: string) =>
  path.join(
    dir,
    `${createHash('sha256').update(accountId).update('\u0000').update(topic).digest('hex')}.kbs`,
  );

/**
 * Knowledge snapshots (DATA_DIR/knowledge-cache) never outlive what they copy: a document's delete
 * removes its topic's file even when this process does not hold the topic, a start removes the files
 * of topics with nothing indexed, and the folder stays under its bound.
 */
describe.each(await testDialects())('knowledge snapshots follow deletes on %s', (dialect) => {
  let p: TestPlatform;
  let dataDir: string;
  let dir: string;
  const services: KnowledgeService[] = [];

  /** Another server on the same database and folder, saving at once. */
  const server = () => {
    const service = new KnowledgeService(
      new DocumentStore(p.ctx.db, p.dialect),
      async (texts, model) => ({ vectors: texts.map((t) => Array.from(embedHashedNgrams(t))), model }),
      MODEL,
      64 * 1024 * 1024,
      1,
      { dir, delayMs: 0 },
    );
    services.push(service);
    return service;
  };
  const indexed = async (topic: string, content: string) => {
    const doc = await loaded(p, { source: 'text', content, topic });
    expect((await processed(p, doc.documentId)).status).toBe('indexed');
    return doc.documentId;
  };
  /** Has another server hold and save the topics, then stops it. */
  const saved = async (topics: string[]) => {
    const other = server();
    for (const topic of topics)
      await other.query(p.accountId, { query: 'heron fish', topK: 5, mode: 'hybrid', topics: [topic] });
    await until(() => topics.every((t) => existsSync(fileOf(dir, p.accountId, t))), 'the snapshots');
    await other.close();
  };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'kb-snapshot-life-'));
    dir = path.join(dataDir, 'knowledge-cache');
    // This platform's own knowledge service keeps its snapshots in the same folder.
    p = await createTestPlatform({ dialect, env: { DATA_DIR: dataDir } });
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.close()));
    await p?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("a delete removes the topic's snapshot at once, though this process never held the topic", async () => {
    const gone = await indexed('herons', 'The grey heron waits by the reeds for fish.');
    await indexed('otters', 'Otters eat fish and crabs and sleep on the water.');
    await saved(['herons', 'otters']);
    const res = await p.request({ method: 'DELETE', url: `/api/documents/${gone}` });
    expect(res.statusCode).toBe(204);
    expect(existsSync(fileOf(dir, p.accountId, 'herons'))).toBe(false);
    expect(existsSync(fileOf(dir, p.accountId, 'otters'))).toBe(true);
    // The topic still answers from its rows.
    const left = await server().query(p.accountId, {
      query: 'fish',
      topK: 5,
      mode: 'keyword',
      topics: ['otters'],
    });
    expect(left.results).toHaveLength(1);
  });

  it('a held topic is saved again without the deleted document', async () => {
    const first = await indexed('kingfishers', 'A kingfisher dives for small fish from a perch.');
    const second = await indexed('kingfishers', 'Kingfishers nest in burrows dug into river banks.');
    const holder = server();
    const ask = () =>
      holder.query(p.accountId, { query: 'kingfisher', topK: 5, mode: 'keyword', topics: ['kingfishers'] });
    expect((await ask()).results).toHaveLength(2);
    const file = fileOf(dir, p.accountId, 'kingfishers');
    await until(() => existsSync(file), 'the snapshot');
    // Deleted through this holder's service, as the platform's delete route does.
    await p.request({ method: 'DELETE', url: `/api/documents/${first}` });
    await holder.forget(p.accountId, 'kingfishers');
    expect((await ask()).results.map((r) => r.documentId)).toEqual([second]);
    await until(() => existsSync(file), 'the snapshot written again');
    await holder.close();
    const restarted = server();
    const again = await restarted.query(p.accountId, {
      query: 'kingfisher',
      topK: 5,
      mode: 'keyword',
      topics: ['kingfishers'],
    });
    expect(restarted.snapshotLoads()).toBe(1);
    expect(again.results.map((r) => r.documentId)).toEqual([second]);
  });

  it('a start removes the snapshots of topics with nothing indexed (deleted while it was down)', async () => {
    const id = await indexed('beavers', 'Beavers build dams of branches and mud.');
    await indexed('voles', 'Water voles dig burrows in the banks of slow rivers.');
    await saved(['beavers', 'voles']);
    // Deleted in the database by another process that keeps no snapshots (another data folder).
    await p.ctx.db.deleteFrom('chunk_vectors').where('document_id', '=', id).execute();
    await p.ctx.db.deleteFrom('chunks').where('document_id', '=', id).execute();
    await p.ctx.db.deleteFrom('document_pages').where('document_id', '=', id).execute();
    await p.ctx.db.deleteFrom('documents').where('id', '=', id).execute();
    writeStale(dir);
    const removed = await server().prune();
    expect(removed).toBe(2);
    expect(existsSync(fileOf(dir, p.accountId, 'beavers'))).toBe(false);
    expect(existsSync(fileOf(dir, p.accountId, 'voles'))).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

/** A temporary file a stopped write left (its process is gone). */
function writeStale(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const name = `${'0'.repeat(64)}.kbs.2147483646.tmp`;
  writeFileSync(path.join(dir, name), 'half');
}

function snapshot(topic: string, floats: number): TopicSnapshot {
  return {
    accountId: 'acc_1',
    topic,
    documents: [{ id: 'doc_1', stamp: '1', model: MODEL, ids: ['chk_1'] }],
    keywords: {
      ids: ['chk_1'],
      lengths: new Int32Array([1]),
      terms: ['heron'],
      counts: new Int32Array([1]),
      postings: new Int32Array([0, 1]),
    },
    vectors: { dimensions: floats, ids: ['chk_1'], columns: new Float32Array(floats) },
  };
}

describe('knowledge snapshot folder bound', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'kb-snapshot-bound-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps the folder under its bound, dropping the files used least recently', async () => {
    // Each snapshot is ~40 KB; the bound holds two.
    const snapshots = new TopicSnapshots(dir, 100_000);
    await snapshots.write(snapshot('a', 10_000));
    await snapshots.write(snapshot('b', 10_000));
    const old = new Date(Date.now() - 60_000);
    const older = new Date(Date.now() - 120_000);
    utimesSync(fileOf(dir, 'acc_1', 'a'), older, older);
    utimesSync(fileOf(dir, 'acc_1', 'b'), old, old);
    // Read: `a` is now the most recently used of the two.
    expect((await snapshots.read('acc_1', 'a'))?.topic).toBe('a');
    await snapshots.write(snapshot('c', 10_000));
    expect(existsSync(fileOf(dir, 'acc_1', 'a'))).toBe(true);
    expect(existsSync(fileOf(dir, 'acc_1', 'b'))).toBe(false);
    expect(existsSync(fileOf(dir, 'acc_1', 'c'))).toBe(true);
    expect(await snapshots.bytes()).toBeLessThanOrEqual(100_000);
  });

  it('does not write a snapshot larger than the bound, and removes its older file', async () => {
    const snapshots = new TopicSnapshots(dir, 100_000);
    await snapshots.write(snapshot('d', 1_000));
    expect(existsSync(fileOf(dir, 'acc_1', 'd'))).toBe(true);
    await snapshots.write(snapshot('d', 50_000));
    expect(existsSync(fileOf(dir, 'acc_1', 'd'))).toBe(false);
  });
});
